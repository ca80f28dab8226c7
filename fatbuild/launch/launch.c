/* launch.c: one nvcc compile run as nvcc's own steps (docs/launcher.md). The plan (plan.c)
 * runs in order, except that its device steps (per virtual arch a preprocess and cicc, per
 * real arch ptxas) run side by side, one chain per virtual arch, at most jobs at once; each
 * cicc and ptxas is first looked up in the compile cache (stepcache.c) and kept there after
 * it ran. What the steps print is kept and handed back in the plan's order, so the caller
 * prints what nvcc would have. A step that fails ends the split: the caller then runs nvcc as
 * it is, whose output and exit status are nvcc's own. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/cpus.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "plumbing.h"
#include "projroot.h"
#include "stepcache.h"

/* A chain: steps [first, last] of the plan that run one after the other. */
struct chain {
	size_t first, last;
};

struct run {
	const struct fb_plan *p;
	const struct fb_config *cfg;
	const volatile sig_atomic_t *cancel; /* the stopping signal, or 0 (fb_launch_opts.cancel) */
	struct fb_step *steps;        /* the plan's, then the depfile's nvcc -M when asked for */
	size_t n;
	struct fb_cache *cache;
	pthread_mutex_t lock;         /* the cache, next, failed, the counts */
	struct fb_launch_out *outs;   /* per step */
	const char **tag;             /* per step: "hit", "hit remote", "miss", NULL (not cached) */
	struct chain *chains;
	size_t nchains, next;
	int failed;                   /* the first failed step + 1 */
	char why[256];
	char root[PATH_MAX];          /* the project's (projroot.h); "" when none */
	const char *modid_file;       /* cicc's --module_id_file_name, NULL when none */
	char *modid;                  /* its content, read before the device steps; NULL: none */
	unsigned hits, misses;
	struct fb_cache_by_kind kinds; /* the same, per kind, for the cache's counters */
	char note[256];
};

struct check_ctx {
	const struct fb_step *s;
	const struct fb_step_seen *seen;
	struct run *r;
	bool exact;                   /* the based key held the marker FB_STEP_EXACT */
};

static int
entry_fits(void *ctx, const struct fb_cache_entry *e, struct fb_error *err)
{
	struct check_ctx *c = ctx;
	if (fb_step_is_exact(e->cubin, e->cubin_size)) { /* no entry for this step: not a hit */
		c->exact = true;
		return FB_ENOIMAGE;
	}
	return fb_step_unpack(c->s, c->seen, e->cubin, e->cubin_size, false, err);
}

/* The first thing the cache tells is the run's note (it reaches the log). */
static void
on_event(void *ctx, enum fb_cache_event ev, const char *msg)
{
	struct run *r = ctx;
	(void)ev;
	if (!r->note[0])
		snprintf(r->note, sizeof(r->note), "%.250s", msg);
}

static void
on_get_event(void *ctx, enum fb_cache_event ev, const char *msg)
{
	on_event(((struct check_ctx *)ctx)->r, ev, msg);
}

/* The entry under key into e: its tier, FB_CACHE_MISS when none fits the step. */
static int
lookup(struct run *r, struct check_ctx *cc, const char *key, struct fb_cache_entry *e)
{
	struct fb_cache_hooks h = {entry_fits, on_get_event, cc};
	pthread_mutex_lock(&r->lock);
	int tier = fb_cache_get(r->cache, key, &h, e);
	pthread_mutex_unlock(&r->lock);
	return tier;
}

/* A hit of step i: its files written, its stderr kept. true when served. The based key first
 * when the step has one: an entry there, or the marker that sends the lookup to key (the
 * marker is no hit: the cache counts none for it). */
static bool
serve(struct run *r, size_t i, const char *key, const struct fb_step_seen *seen)
{
	const struct fb_step *s = &r->steps[i];
	struct check_ctx cc = {s, seen, r, false};
	struct fb_cache_entry e = {0};
	int tier = seen->based ? lookup(r, &cc, seen->based_key, &e) : FB_CACHE_MISS;
	if (!seen->based || cc.exact)
		tier = lookup(r, &cc, key, &e);
	bool ok = tier != FB_CACHE_MISS && fb_step_unpack(s, seen, e.cubin, e.cubin_size, true, NULL) == 0;
	if (ok) {
		r->outs[i].err = strdup(e.log ? e.log : "");
		r->outs[i].err_size = r->outs[i].err ? strlen(r->outs[i].err) : 0;
		r->tag[i] = tier == FB_CACHE_REMOTE ? "hit remote" : "hit";
		ok = r->outs[i].err != NULL;
	}
	fb_cache_entry_clear(&e);
	return ok;
}

static void
put(struct run *r, const char *key, struct fb_cache_entry *e)
{
	struct fb_cache_hooks h = {NULL, on_event, r};
	pthread_mutex_lock(&r->lock);
	fb_cache_put(r->cache, key, e, &h);
	pthread_mutex_unlock(&r->lock);
}

/* Keeps what step i made: under the based key when its files allow it; else under key, and
 * the marker under the based key. */
static void
keep(struct run *r, size_t i, const char *key, const struct fb_step_seen *seen)
{
	struct fb_cache_entry e = {0};
	if (r->outs[i].out_size || !(e.log = strdup(r->outs[i].err ? r->outs[i].err : "")))
		return;
	if (seen->based && fb_step_pack(r->p, &r->steps[i], seen, true, &e.cubin, &e.cubin_size) == 0) {
		put(r, seen->based_key, &e);
	} else if (fb_step_pack(r->p, &r->steps[i], seen, false, &e.cubin, &e.cubin_size) == 0) {
		put(r, key, &e);
		if (seen->based) {
			struct fb_cache_entry m = {.cubin = (unsigned char *)FB_STEP_EXACT,
			                           .cubin_size = strlen(FB_STEP_EXACT), .log = ""};
			put(r, seen->based_key, &m);
		}
	}
	fb_cache_entry_clear(&e);
}

/* The plan's rm of a temporary nvcc may not have made (fatbinary writes only the C file when
 * asked for --embedded-fatbin): removed here, a missing one being fine, as nvcc does. false
 * when it names something outside the run's temp dir. */
static bool
remove_temps(const struct run *r, const struct fb_step *s)
{
	size_t n = strlen(r->p->tmpdir);
	for (int i = 1; i < s->argc; i++)
		if (strncmp(s->argv[i], r->p->tmpdir, n) != 0 || s->argv[i][n] != '/' || strstr(s->argv[i], "/../"))
			return false;
	for (int i = 1; i < s->argc; i++)
		unlink(s->argv[i]);
	return true;
}

/* Whether the command was signalled: then no step starts, and the run ends as a failed one. */
static bool
stopped(struct run *r, size_t i)
{
	if (!r->cancel || !*r->cancel)
		return false;
	pthread_mutex_lock(&r->lock);
	if (!r->failed) {
		r->failed = (int)i + 1;
		snprintf(r->why, sizeof(r->why), "stopped by signal %d before step %zu", (int)*r->cancel, i + 1);
	}
	pthread_mutex_unlock(&r->lock);
	return true;
}

/* Step i, from the cache or run: 0, or -1 when it failed (r->failed, r->why set). */
static int
run_step(struct run *r, size_t i)
{
	const struct fb_step *s = &r->steps[i];
	if (stopped(r, i))
		return -1;
	struct fb_step_seen seen = {0};
	char key[65];
	bool keyed = (s->kind == FB_STEP_CICC || s->kind == FB_STEP_PTXAS) && fb_cache_on(r->cache) &&
	             fb_step_key(r->p, s, r->cfg, r->root[0] ? r->root : NULL, r->modid, key, &seen) == 0;
	int kind = s->kind == FB_STEP_CICC ? FB_CACHE_KIND_CICC : FB_CACHE_KIND_PTXAS; /* when cached */
	if (keyed && serve(r, i, key, &seen)) {
		fb_step_seen_free(&seen);
		pthread_mutex_lock(&r->lock);
		r->hits++;
		r->kinds.hits[kind]++;
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	struct fb_error err = {0};
	pthread_mutex_lock(&r->lock);
	fb_cache_idle(r->cache);
	pthread_mutex_unlock(&r->lock);
	int rc = 0;
	if (strcmp(s->argv[0], "rm") == 0)
		r->outs[i].status = remove_temps(r, s) ? 0 : 1;
	else
		rc = fb_launch_run(s->prog, s->argv, r->p->env, r->p->tmpdir, r->cancel, &r->outs[i], &err);
	bool ok = !rc && r->outs[i].status == 0 && (i < r->p->n || (!r->outs[i].out_size && !r->outs[i].err_size));
	if (ok && keyed)
		keep(r, i, key, &seen);
	fb_step_seen_free(&seen);
	pthread_mutex_lock(&r->lock);
	if (s->kind == FB_STEP_CICC || s->kind == FB_STEP_PTXAS) {
		r->misses++;
		r->kinds.misses[kind]++;
		r->tag[i] = "miss";
	}
	if (!ok && !r->failed) {
		r->failed = (int)i + 1;
		if (rc)
			snprintf(r->why, sizeof(r->why), "%.250s", err.msg);
		else
			snprintf(r->why, sizeof(r->why), "step %zu (%.40s) %s %d", i + 1, s->argv[0],
			         r->outs[i].status ? "exited" : "printed, status", r->outs[i].status);
	}
	pthread_mutex_unlock(&r->lock);
	return ok ? 0 : -1;
}

/* A worker: takes chains until none is left or a step failed. */
static void *
worker(void *arg)
{
	struct run *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->lock);
		size_t c = r->next < r->nchains && !r->failed ? r->next++ : r->nchains;
		pthread_mutex_unlock(&r->lock);
		if (c == r->nchains)
			return NULL;
		for (size_t i = r->chains[c].first; i <= r->chains[c].last; i++)
			if (run_step(r, i) != 0)
				break;
	}
}

/* Runs the chains [0, nchains) on jobs threads (this one among them). */
static void
run_chains(struct run *r, int jobs)
{
	pthread_t t[64];
	int started = 0;
	r->next = 0;
	for (int k = 1; k < jobs && k < 64 && (size_t)k < r->nchains; k++)
		if (pthread_create(&t[started], NULL, worker, r) == 0)
			started++;
	worker(r);
	for (int k = 0; k < started; k++)
		pthread_join(t[k], NULL);
}

/* Splits the device steps [i, end) into chains: a new one at each device preprocess, and at a
 * cicc no preprocess comes before. */
static void
make_chains(struct run *r, size_t i, size_t end)
{
	r->nchains = 0;
	for (size_t k = i; k < end; k++) {
		int kind = r->steps[k].kind;
		bool head = k == i || kind == FB_STEP_DEVPP || (kind == FB_STEP_CICC && r->steps[k - 1].kind != FB_STEP_DEVPP);
		if (head)
			r->chains[r->nchains++] = (struct chain){k, k};
		else
			r->chains[r->nchains - 1].last = k;
	}
}

/* The plan in order, its device steps as chains side by side; the depfile's step (r->n >
 * p->n) beside the first chains. */
static void
run_plan(struct run *r, int jobs)
{
	bool dep = r->n > r->p->n;
	for (size_t i = 0; i < r->p->n && !r->failed;) {
		if (r->steps[i].kind == FB_STEP_OTHER) {
			run_step(r, i++);
			continue;
		}
		size_t end = i;
		while (end < r->p->n && r->steps[end].kind != FB_STEP_OTHER)
			end++;
		size_t size;
		if (!r->modid && r->modid_file && fb_read_file(r->modid_file, &r->modid, &size, NULL) != 0)
			r->modid = NULL;
		if (r->modid && strlen(r->modid) != size) { /* a NUL inside: no module id this reads */
			free(r->modid);
			r->modid = NULL;
		}
		make_chains(r, i, end);
		if (dep)
			r->chains[r->nchains++] = (struct chain){r->p->n, r->p->n};
		dep = false;
		run_chains(r, jobs);
		i = end;
	}
	if (dep && !r->failed)
		run_step(r, r->p->n);
}

/* The arch a cicc or ptxas step is for ("compute_80", "sm_90"), for the log. */
static const char *
step_arch(const struct fb_step *s)
{
	for (int i = 1; i < s->argc; i++) {
		if (strcmp(s->argv[i], "-arch") == 0 && i + 1 < s->argc)
			return s->argv[i + 1];
		if (strncmp(s->argv[i], "-arch=", 6) == 0)
			return s->argv[i] + 6;
	}
	return "?";
}

/* What the steps printed, and the log's words, into res. */
static int
collect(const struct run *r, struct fb_launch_result *res)
{
	struct fb_buf out = {0}, errb = {0}, log = {0};
	fb_buf_puts(&errb, r->p->msgs ? r->p->msgs : "");
	for (size_t i = 0; i < r->n; i++) {
		fb_buf_put(&out, r->outs[i].out ? r->outs[i].out : "", r->outs[i].out_size);
		fb_buf_put(&errb, r->outs[i].err ? r->outs[i].err : "", r->outs[i].err_size);
		if (r->tag[i])
			fb_buf_printf(&log, "%s%s %s %s", log.len ? ", " : "", r->steps[i].kind == FB_STEP_CICC ? "cicc" : "ptxas",
			              step_arch(&r->steps[i]), r->tag[i]);
	}
	fb_buf_puts(&out, "");
	fb_buf_puts(&errb, "");
	fb_buf_puts(&log, "");
	res->out = out.s;
	res->out_size = out.len;
	res->err = errb.s;
	res->err_size = errb.len;
	res->steps = log.s;
	return out.oom || errb.oom || log.oom ? FB_ENOMEM : 0;
}

/* The cache this run uses, as o names it; none when its directory fails its checks. */
static struct fb_cache *
cache_open(const struct fb_launch_opts *o, const struct fb_config *cfg, struct run *r)
{
	char dir[PATH_MAX];
	struct fb_error e = {0};
	struct fb_cache *c = NULL;
	if (o->no_cache)
		return NULL;
	bool local = fb_cache_local_dir(cfg, o->cache_dir, dir, sizeof(dir), &e) == 0;
	if (!local)
		snprintf(r->note, sizeof(r->note), "%.250s", e.msg);
	struct fb_cache_opts co = {local ? dir : NULL, &o->remote, cfg};
	struct fb_cache_hooks h = {NULL, on_event, r};
	fb_cache_open(&co, &h, &c, NULL); /* out of memory: no cache, the steps run */
	return c;
}

/* The project's root, from the source's path as cicc is given it (--orig_src_path_name), and
 * the module id's file, from cicc's first step. */
static void
find_root(struct run *r)
{
	for (size_t i = 0; i < r->p->n; i++) {
		const struct fb_step *s = &r->p->steps[i];
		for (int k = 1; s->kind == FB_STEP_CICC && k + 1 < s->argc; k++)
			if (strcmp(s->argv[k], "--orig_src_path_name") == 0 &&
			    fb_project_root(r->cfg, s->argv[k + 1], r->root, sizeof(r->root)) != 0)
				r->root[0] = 0;
			else if (strcmp(s->argv[k], "--module_id_file_name") == 0)
				r->modid_file = s->argv[k + 1];
		if (s->kind == FB_STEP_CICC)
			return;
	}
}

/* The steps: the plan's, then the depfile's `nvcc -M` when dep is not NULL. */
static int
steps_of(struct run *r, const char *nvcc, char **dep)
{
	r->n = r->p->n + (dep != NULL);
	r->steps = calloc(r->n, sizeof(*r->steps));
	r->outs = calloc(r->n, sizeof(*r->outs));
	r->tag = calloc(r->n, sizeof(*r->tag));
	r->chains = calloc(r->n + 1, sizeof(*r->chains));
	if (!r->steps || !r->outs || !r->tag || !r->chains)
		return FB_ENOMEM;
	memcpy(r->steps, r->p->steps, r->p->n * sizeof(*r->steps));
	if (!dep)
		return 0;
	struct fb_step *s = &r->steps[r->p->n];
	size_t n = 0;
	while (dep[n])
		n++;
	s->argv = calloc(n + 2, sizeof(char *));
	if (!s->argv)
		return FB_ENOMEM;
	s->argv[0] = (char *)nvcc;
	memcpy(s->argv + 1, dep, n * sizeof(char *));
	s->argc = (int)n + 1;
	s->kind = FB_STEP_OTHER;
	snprintf(s->prog, sizeof(s->prog), "%s", nvcc);
	return 0;
}

static void
run_free(struct run *r)
{
	for (size_t i = 0; r->outs && i < r->n; i++)
		fb_launch_out_clear(&r->outs[i]);
	if (r->steps && r->n > r->p->n)
		free(r->steps[r->p->n].argv); /* its words are dep's */
	free(r->steps);
	free(r->outs);
	free(r->tag);
	free(r->chains);
	free(r->modid);
	fb_cache_close(r->cache);
	pthread_mutex_destroy(&r->lock);
}

/* The steps at once: --threads N (0: the job budget), never more than the job budget; one,
 * as nvcc runs them, when the command does not ask. */
static int
jobs_for(const struct fb_config *cfg, int threads)
{
	struct fb_jobs_info ji;
	fb_jobs_default(NULL, NULL, 0, cfg->max_jobs, FB_JOBS_MAX, &ji);
	int most = ji.jobs > 0 ? ji.jobs : 1;
	if (threads < 0)
		return 1;
	return threads == 0 || threads > most ? most : threads;
}

int
fb_launch_nvcc(const struct fb_launch_opts *o, struct fb_launch_result *res, struct fb_error *err)
{
	struct fb_config local;
	const struct fb_config *cfg = fb_config_or_read(o->config, &local);
	int threads;
	char **plan = NULL, **dep = NULL;
	memset(res, 0, sizeof(*res));
	if (!fb_launch_words_ok(o->words, &threads, &plan, &dep, res->why, sizeof(res->why)))
		return 0;
	struct fb_plan p;
	int rc = fb_plan_make(o->nvcc, plan, cfg, o->cancel, &p, res->why, sizeof(res->why), err);
	fb_words_free(plan);
	if (rc && rc != FB_EFORMAT)
		snprintf(res->why, sizeof(res->why), "%.250s", err ? err->msg : "no plan");
	struct run r = {.p = &p, .cfg = cfg, .cancel = o->cancel};
	pthread_mutex_init(&r.lock, NULL);
	if (!rc && steps_of(&r, o->nvcc, dep) != 0) {
		snprintf(res->why, sizeof(res->why), "out of memory");
		rc = FB_ENOMEM;
	}
	if (!rc) {
		r.cache = cache_open(o, cfg, &r);
		find_root(&r);
		res->jobs = jobs_for(cfg, threads);
		run_plan(&r, res->jobs);
		fb_cache_record(r.cache, r.misses, &r.kinds, NULL);
		if (r.failed)
			snprintf(res->why, sizeof(res->why), "%s", r.why);
		res->split = !r.failed && collect(&r, res) == 0;
		res->hits = r.hits;
		res->misses = r.misses;
		snprintf(res->note, sizeof(res->note), "%s", r.note);
	}
	run_free(&r);
	fb_plan_free(&p);
	fb_words_free(dep);
	return 0;
}

bool
fb_launch_splits(char *const *words)
{
	char **plan = NULL, **dep = NULL, why[256];
	int threads;
	bool yes = fb_launch_words_ok(words, &threads, &plan, &dep, why, sizeof(why)) == 1;
	fb_words_free(plan);
	fb_words_free(dep);
	return yes;
}

void
fb_launch_result_clear(struct fb_launch_result *r)
{
	free(r->out);
	free(r->err);
	free(r->steps);
	memset(r, 0, sizeof(*r));
}
