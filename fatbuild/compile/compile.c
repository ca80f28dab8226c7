/* compile.c: fb_compile, the parallel, cached NVRTC driver.
 *
 * Steps: load NVRTC; read each source and find every header it reads (depfile.c); make one
 * job per (source, SASS target) and per (source, PTX target without a SASS sibling); key each
 * job by SHA-256 over everything that decides its output and look it up in the cache
 * (cache/cache.h: the local store, then the remote); run the misses, at most `jobs` at a time, each in a forked child that calls
 * NVRTC once and streams status, log, PTX and cubin back through a pipe. Processes rather than
 * threads because NVRTC serialises compiles within one process (measured with NVRTC 13.0: two
 * CUB BlockRadixSort compiles on two threads 4.0 s, one after the other 3.8 s, in two
 * processes 2.5 s). A child is also the unit of cancellation: on the first failure the other
 * children are killed and nothing is written. Results are assembled in source x target-list
 * order, so the output does not depend on -j or on which job finishes first.
 *
 * This file drives the steps, looks jobs up in the caches and assembles the result; prepare.c
 * makes the options, sources, keys and jobs. Below the two (HACKING.md "Layout", the ranks of
 * compile/): the process side, run.h (schedule.c runs the worker processes, child.c is the
 * worker and its answers, server.c and client.c the build's compile server); below it the NVRTC
 * loader (nvrtc.h); at the bottom the include scan (depfile.h). Nothing below calls back up. The
 * cache is a part of its own, reached only through cache/cache.h (keys, digests, one get and one
 * put over the local and the remote tier). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "run.h"
#include "base/dlload.h"
#include "fatbin/elfid.h"
#include "base/cpus.h"
#include "base/config.h"

/* fb_compile_jobs with the configuration read (MAX_JOBS): asked when > 0 (at most
 * FB_JOBS_MAX), else MAX_JOBS, else the CPUs this process may use. */
static int
jobs_of(const struct fb_config *cfg, int asked)
{
	if (asked > 0)
		return asked > FB_JOBS_MAX ? FB_JOBS_MAX : asked;
	struct fb_jobs_info ji;
	fb_jobs_default(NULL, NULL, 0, cfg->max_jobs, FB_JOBS_MAX, &ji);
	return ji.jobs;
}

int
fb_compile_default_jobs(void)
{
	return fb_compile_jobs(0);
}

int
fb_compile_jobs(int asked)
{
	struct fb_config cfg = {0};
	if (asked <= 0) /* the only case that reads it */
		fb_config_read(&cfg);
	return jobs_of(&cfg, asked);
}

int
fb_nvrtc_info(const char *cuda_home, struct fb_nvrtc_info *out, struct fb_error *err)
{
	struct fb_nvrtc *n;
	memset(out, 0, sizeof(*out));
	int rc = fb_nvrtc_open(cuda_home, &n, err);
	if (rc)
		return rc;
	out->version = fb_nvrtc_version(n);
	snprintf(out->path, sizeof(out->path), "%s", fb_nvrtc_path(n));
	out->narchs = fb_nvrtc_archs(n, out->archs, 64);
	fb_nvrtc_close(n);
	return 0;
}

/* ---- the run ------------------------------------------------------------------------- */
/* ---- results ------------------------------------------------------------------------- */

static void
log_append(char **log, const char *text)
{
	size_t a = *log ? strlen(*log) : 0, b = strlen(text);
	char *n = realloc(*log, a + b + 2);
	if (!n)
		return;
	memcpy(n + a, text, b + 1);
	if (b && text[b - 1] != '\n') {
		n[a + b] = '\n';
		n[a + b + 1] = 0;
	}
	*log = n;
}

/* One line of res->cache_note: made one printable line first, since it names a source path,
 * and the caller prints the note line by line. */
static void
note_append(char **log, char *line)
{
	fb_text_oneline(line);
	log_append(log, line);
}

static int
blank(const char *s)
{
	for (; s && *s; s++)
		if (*s != ' ' && *s != '\n' && *s != '\t' && *s != '\r')
			return 0;
	return 1;
}

static int
assemble(struct run *r, struct fb_compile_result *res, struct fb_error *err)
{
	const struct fb_compile_opts *o = r->o;
	size_t cap = r->nsrc * o->ntargets;
	res->images = calloc(cap ? cap : 1, sizeof(*res->images));
	if (!res->images)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (size_t s = 0; s < r->nsrc; s++)
		for (size_t t = 0; t < o->ntargets; t++) {
			struct job *j = NULL;
			for (size_t k = 0; k < r->njobs && !j; k++)
				if (r->jobs[k].src == s && (r->jobs[k].sass == t || r->jobs[k].ptx == t))
					j = &r->jobs[k];
			if (!j)
				return fb_seterr(err, FB_EINVAL, "internal error: no job for target %zu", t);
			if (j->state != J_DONE) /* never an empty image for a job no round ran */
				return fb_seterr(err, FB_EINVAL, "internal error: %s for %s was not compiled", r->src[s].path,
				                 j->arch);
			struct fb_compile_image *im = &res->images[res->nimages];
			im->source = s;
			im->target = o->targets[t];
			im->cached = j->cached != 0;
			if (j->lto) {
				im->kind = FB_KIND_LTO;
				im->data = fb_dup_bytes(j->e.cubin, j->e.cubin_size);
				im->size = j->e.cubin_size;
			} else if (o->targets[t].kind == AP_SASS) {
				im->kind = FB_KIND_ELF;
				im->data = fb_dup_bytes(j->e.cubin, j->e.cubin_size);
				im->size = j->e.cubin_size;
			} else {
				im->kind = FB_KIND_PTX;
				im->data = fb_dup_bytes(j->e.ptx, j->e.ptx_size);
				im->size = j->e.ptx_size;
			}
			res->nimages++;
			if (!im->data)
				return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
	/* Warnings: each distinct log of a source once, tagged with the first target that gave it. */
	for (size_t k = 0; k < r->njobs; k++) {
		struct job *j = &r->jobs[k];
		if (blank(j->e.log))
			continue;
		int dup = 0;
		for (size_t m = 0; m < k && !dup; m++)
			dup = r->jobs[m].src == j->src && r->jobs[m].e.log && strcmp(r->jobs[m].e.log, j->e.log) == 0;
		if (dup)
			continue;
		char *rw = fb_nvrtc_log_rewrite(j->e.log, j->arch);
		if (rw)
			log_append(&res->log, rw);
		free(rw);
	}
	return 0;
}

static int
add_deps(struct run *r, struct fb_compile_result *res, struct fb_error *err)
{
	struct fb_strlist all = {0};
	for (size_t s = 0; s < r->nsrc; s++)
		if (fb_strlist_add(&all, r->src[s].path))
			goto oom;
	for (size_t s = 0; s < r->nsrc; s++)
		for (size_t k = 0; k < r->src[s].deps.n; k++) {
			const char *d = r->src[s].deps.v[k];
			int seen = 0;
			for (size_t m = 0; m < all.n && !seen; m++)
				seen = strcmp(all.v[m], d) == 0;
			if (!seen && fb_strlist_add(&all, d))
				goto oom;
		}
	res->deps = all.v;
	res->ndeps = all.n;
	return 0;
oom:
	fb_strlist_free(&all);
	return fb_seterr(err, FB_ENOMEM, "out of memory");
}

void
fb_compile_result_free(struct fb_compile_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nimages; i++)
		free(r->images[i].data);
	free(r->images);
	for (size_t i = 0; i < r->ndeps; i++)
		free(r->deps[i]);
	free(r->deps);
	free(r->log);
	free(r->cache_note);
	free(r);
}

static void
run_free(struct run *r)
{
	for (size_t i = 0; r->src && i < r->nsrc; i++) {
		free(r->src[i].text);
		fb_strlist_free(&r->src[i].deps);
		fb_strlist_free(&r->src[i].extra);
	}
	free(r->src);
	for (size_t i = 0; i < r->njobs; i++)
		fb_cache_entry_clear(&r->jobs[i].e);
	for (size_t i = 0; i < r->nunits; i++)
		free(r->units[i].rx);
	free(r->units);
	free(r->order);
	free(r->wjob);
	free(r->ujobs);
	if (r->pch_dir[0])
		fb_pch_dir_remove(r->pch_dir);
	free(r->jobs);
	for (size_t i = 0; i < r->ndig; i++)
		free(r->dig[i].path);
	free(r->dig);
	for (size_t i = 0; i < r->ncommon; i++)
		free(r->common[i]);
	free(r->common);
	fb_nvrtc_close(r->nv);
	fb_cache_close(r->cache);
	fb_offload_free(r);
}

/* What the cache's hooks reach: the run, and the job looked up or kept (NULL while the cache
 * opens). */
struct lookup {
	struct run *r;
	const struct job *j;
};

/* Whether an entry found for a job is what its key claims (fatbin/elfid.c): the cubin, or the
 * LTO-IR, of its SASS target and the PTX of its PTX target; FB_ENOIMAGE (a plain miss) when it
 * lacks what the job makes. The cache asks this of a local and a remote entry alike before it
 * is used or kept, since a remote's may have been written by anyone (docs/remote-cache.md §5). */
static int
entry_fits(void *ctx, const struct fb_cache_entry *e, struct fb_error *err)
{
	const struct lookup *l = ctx;
	return fb_job_check(l->r, l->j, e, err);
}

/* A damaged entry (where: "" or "remote "): one line, counted; the job is compiled. */
static void
note_corrupt(struct run *r, const struct job *j, const char *where, const char *done, const char *why)
{
	char line[sizeof(((struct fb_error *)0)->msg) + 600];
	snprintf(line, sizeof(line), "corrupt %scache entry for %s (%s) %s and recompiled: %s", where, r->src[j->src].path,
	         j->arch, done, why);
	note_append(&r->res->cache_note, line);
	r->res->ncorrupt++;
}

/* What the cache tells (cache.h): one line of cache_note each; a local put that failed costs
 * only the caching. */
static void
on_cache_event(void *ctx, enum fb_cache_event ev, const char *msg)
{
	const struct lookup *l = ctx;
	const char *tail = NULL;
	switch (ev) {
	case FB_CACHE_LOCAL_DAMAGED:
		note_corrupt(l->r, l->j, "", "removed", msg);
		return;
	case FB_CACHE_REMOTE_DAMAGED:
		note_corrupt(l->r, l->j, "remote ", "ignored", msg);
		return;
	case FB_CACHE_REMOTE_OFF:
		tail = "compiling locally";
		break;
	case FB_CACHE_REMOTE_FAILED:
		tail = "remote cache off for this run, compiling locally";
		break;
	case FB_CACHE_UPLOAD_FAILED:
		tail = "results not uploaded";
		break;
	case FB_CACHE_LOCAL_UNKEPT:
		return;
	}
	char line[sizeof(((struct fb_error *)0)->msg) + 64];
	snprintf(line, sizeof(line), "%s; %s", msg, tail);
	note_append(&l->r->res->cache_note, line);
}

/* The run's cache (cache.h): the local store, and the remote when one is asked for. */
static void
cache_start(struct run *r)
{
	const struct fb_compile_opts *o = r->o;
	if (!r->use_cache)
		return;
	struct fb_cache_opts co = {.dir = r->cache_dir, .remote = &o->remote, .config = r->cfg};
	struct lookup l = {r, NULL};
	struct fb_cache_hooks h = {NULL, on_cache_event, &l};
	fb_cache_open(&co, &h, &r->cache, NULL); /* out of memory: no cache, every get a miss */
}

/* Turns the PCH on when two pending jobs share an option set, NVRTC has the PCH API and a
 * private directory could be made; otherwise res->pch_off says why (a PCH problem never
 * fails a build). */
static void
setup_pch(struct run *r, struct fb_compile_result *res)
{
	struct fb_error e = {0};
	const char *parent = r->use_cache ? r->cache_dir : r->o->pch_parent;
	int shared = 0;
	r->parent = getpid();
	if (r->o->no_pch)
		return;
	for (size_t i = 0; i < r->njobs && !shared; i++)
		for (size_t k = i + 1; k < r->njobs && !shared; k++)
			shared = r->jobs[i].state == J_PENDING && r->jobs[k].state == J_PENDING &&
			         fb_run_same_options(r, &r->jobs[i], &r->jobs[k]);
	if (!shared)
		return;
	if (!fb_nvrtc_has_pch(r->nv)) {
		snprintf(res->pch_off, sizeof(res->pch_off), "PCH off: %.400s has no automatic-PCH API", fb_nvrtc_path(r->nv));
		res->pch_unsupported = true;
	} else if (!parent || !*parent)
		snprintf(res->pch_off, sizeof(res->pch_off), "PCH off: no private directory for it (no cache directory)");
	else if (fb_pch_dir_new(parent, r->pch_dir, sizeof(r->pch_dir), &e) != 0) {
		r->pch_dir[0] = 0;
		snprintf(res->pch_off, sizeof(res->pch_off), "PCH off: %.480s", e.msg);
	} else
		r->pch = 1;
}

/* NVRTC, the cache directory (a directory others can write into is refused; one that cannot
 * be used only costs the caching) and the base directory of the keys. */
static int
open_run(struct run *r, const char *home, struct fb_error *err)
{
	const struct fb_compile_opts *o = r->o;
	int rc = fb_nvrtc_open(home, &r->nv, err);
	if (rc)
		return rc;
	r->use_cache = !o->no_cache;
	if (r->use_cache) {
		struct fb_error ce = {0};
		int cc = fb_cache_local_dir(r->cfg, o->cache_dir, r->cache_dir, sizeof(r->cache_dir), &ce);
		if (cc == FB_EUNSAFE)
			return fb_seterr(err, cc, "%s", ce.msg);
		if (cc)
			r->use_cache = 0; /* no HOME, or a directory that cannot be used: compile without a cache */
	}
	if (r->use_cache &&
	    fb_key_nvrtc(r->cfg, fb_nvrtc_ident(r->nv), o->cancel, r->nvrtc_key, sizeof(r->nvrtc_key)) != 0)
		r->nvrtc_key[0] = 0;
	if (o->cache_basedir && *o->cache_basedir && !realpath(o->cache_basedir, r->basedir))
		snprintf(r->basedir, sizeof(r->basedir), "%s", o->cache_basedir);
	if (!(r->src = calloc(r->nsrc, sizeof(*r->src))))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	return 0;
}

/* Cache hits first: local, then remote (cache.h). */
static void
cache_lookup(struct run *r, struct fb_compile_result *res)
{
	for (size_t i = 0; r->cache && i < r->njobs; i++) {
		struct job *j = &r->jobs[i];
		struct lookup l = {r, j};
		struct fb_cache_hooks h = {entry_fits, on_cache_event, &l};
		int got = fb_cache_get(r->cache, j->key, &h, &j->e);
		if (got == FB_CACHE_MISS)
			continue;
		j->state = J_DONE;
		j->cached = got;
		res->ncached++;
		res->nremote += got == FB_CACHE_REMOTE;
		fb_run_job_done(r, j);
	}
}

/* The cache-missed jobs go to the build's compile server when the build names one (and it is
 * not turned off); what it does not answer well is compiled here. */
static void
server_jobs(struct run *r, const char *home, struct fb_compile_result *res)
{
	const char *sock = r->cfg->compile_socket;
	if (!sock || !*sock || r->cfg->compile_server == 0)
		return;
	for (size_t i = 0; i < r->njobs; i++)
		if (r->jobs[i].state == J_PENDING) {
			fb_server_run(r, home, sock, res->server_note, sizeof(res->server_note));
			return;
		}
}

/* The error for the first failing job: its first diagnostic, or the NVRTC result. */
static int
describe_failure(struct run *r, struct job *failed, struct fb_compile_result *res, struct fb_error *err)
{
	char *rw = fb_nvrtc_log_rewrite(failed->e.log, failed->arch);
	char first[sizeof(err->msg)];
	fb_nvrtc_log_first(rw, first, sizeof(first));
	if (blank(failed->e.log))
		snprintf(first, sizeof(first), "%s: %s for %s", r->src[failed->src].path,
		         fb_nvrtc_result_name(failed->result), failed->arch);
	free(res->log);
	res->log = rw;
	snprintf(res->failed_target, sizeof(res->failed_target), "%s", failed->arch);
	return fb_seterr(err, failed->result == FB_NVRTC_INVALID_OPTION ? FB_EINVAL : FB_ECOMPILE, "%s", first);
}

/* The compiled jobs: counted and kept in the caches (best effort). */
static void
cache_store(struct run *r, struct fb_compile_result *res)
{
	for (size_t i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];
		if (j->cached)
			continue;
		res->pch_made += (j->pch & FB_PCH_MADE) != 0;
		res->pch_used += (j->pch & FB_PCH_USED) != 0;
		res->pch_refused += (j->pch & FB_PCH_REFUSED) != 0;
		res->ncompiled++;
		struct lookup l = {r, j};
		struct fb_cache_hooks h = {NULL, on_cache_event, &l};
		fb_cache_put(r->cache, j->key, &j->e, &h);
	}
}

static int
check_args(const char *const *sources, size_t nsources, const struct fb_compile_opts *opts, struct fb_error *err)
{
	if (!opts || !sources || nsources == 0)
		return fb_seterr(err, FB_EINVAL, "no sources to compile");
	if (!opts->targets || opts->ntargets == 0)
		return fb_seterr(err, FB_EINVAL, "no targets to compile for (the arch list is empty)");
	for (size_t i = 0; i < nsources; i++)
		for (size_t k = 0; k < i; k++)
			if (strcmp(sources[i], sources[k]) == 0)
				return fb_seterr(err, FB_EINVAL, "%s given twice", sources[i]);
	return 0;
}

/* Everything after the jobs are made: caches, the build's server, the local workers, the
 * result. */
static int
run_jobs(struct run *r, const char *home, struct fb_compile_result *res, struct fb_error *err)
{
	const struct fb_compile_opts *opts = r->o;
	res->nvrtc_version = fb_nvrtc_version(r->nv);
	res->njobs = r->njobs;
	int rc = add_deps(r, res, err);
	if (rc)
		return rc;
	cache_start(r);
	cache_lookup(r, res);
	fb_cache_idle(r->cache); /* the jobs are forked next (cache.h) */
	struct job *failed = NULL;
	/* remote execution, when asked for: many more jobs at once than CPUs here; what it leaves
	 * goes to the build's compile server, then to local workers */
	int rjobs = opts->remote.jobs > 0 ? opts->remote.jobs : 4 * jobs_of(r->cfg, 0);
	rc = fb_offload_begin(r) ? fb_run_jobs(r, rjobs > FB_JOBS_MAX ? FB_JOBS_MAX : rjobs, &failed, err) : 0;
	rc = fb_offload_end(r, rc);
	int maxjobs = jobs_of(r->cfg, opts->jobs);
	if (!rc) {
		server_jobs(r, home, res);
		setup_pch(r, res);
		rc = fb_run_jobs(r, maxjobs, &failed, err);
	}
	if (opts->cancel && *opts->cancel) /* jobs killed by the stopping signal are no failure */
		return fb_seterr(err, FB_ECANCELED, "compile stopped");
	if (rc == FB_ECOMPILE && failed)
		return describe_failure(r, failed, res, err);
	if (rc)
		return rc;
	cache_store(r, res);
	rc = assemble(r, res, err);
	if (!rc)
		fb_cache_record(r->cache, res->ncompiled, NULL, NULL); /* the counters: best effort */
	return rc;
}

int
fb_compile(const char *const *sources, size_t nsources, const struct fb_compile_opts *opts,
           struct fb_compile_result **out, struct fb_error *err)
{
	struct run r = {0};
	struct fb_compile_result *res = NULL;
	char home[PATH_MAX] = "";
	struct fb_config local;
	*out = NULL;
	int rc = check_args(sources, nsources, opts, err);
	if (rc)
		return rc;
	r.o = opts;
	r.cfg = fb_config_or_read(opts->config, &local);
	r.srcpaths = sources;
	r.nsrc = nsources;
	fb_dl_home(opts->cuda_home, ap_cuda_home, home, sizeof(home));
	snprintf(r.home, sizeof(r.home), "%s", home);
	if ((rc = open_run(&r, home, err)) || (rc = fb_run_options(&r, home, err)) || (rc = fb_run_load_sources(&r, err)) ||
	    (rc = fb_run_make_jobs(&r, err)))
		goto out;
	if (!(res = r.res = calloc(1, sizeof(*res)))) {
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		goto out;
	}
	rc = run_jobs(&r, home, res, err);
out:
	if (rc && rc != FB_ECOMPILE) { /* a bad -Xnvrtc option (FB_EINVAL) included: usage, no result */
		fb_compile_result_free(res);
		res = NULL;
	}
	*out = res;
	run_free(&r);
	return rc;
}

int
fb_compile_pack(const struct fb_compile_result *r, const struct fb_compile_opts *opts, enum fb_compress compress,
                bool compress_elf, unsigned char **out, size_t *size, struct fb_error *err)
{
	*out = NULL;
	*size = 0;
	struct fb_fatbin *fb = fb_fatbin_new();
	if (!fb)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	fb_fatbin_set_options(fb, (compress_elf ? 0 : FB_WRITE_COMPRESS_TEXT) |
	                              (opts && opts->device_debug ? FB_WRITE_DEBUG : 0));
	int rc = 0;
	const char *ptxopts = opts && opts->device_debug ? " -g --dont-merge-basicblocks --return-at-end " : NULL;
	for (size_t i = 0; i < r->nimages && !rc; i++) {
		const struct fb_compile_image *im = &r->images[i];
		const char *ident = NULL;
		if (opts && (opts->device_debug || opts->lineinfo) && r->deps && im->source < r->ndeps)
			ident = r->deps[im->source]; /* the source name, as nvcc records it */
		rc = fb_fatbin_add(fb, im->kind, &im->target, im->data, im->size, ident,
		                   im->kind == FB_KIND_PTX ? ptxopts : NULL, err);
	}
	if (!rc)
		rc = fb_fatbin_write(fb, compress, out, size, err);
	fb_fatbin_free(fb);
	return rc;
}
