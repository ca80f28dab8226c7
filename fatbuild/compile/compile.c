/* compile.c: fb_compile, the parallel, cached NVRTC driver.
 *
 * Steps: load NVRTC; read each source and find every header it reads (depfile.c); make one
 * job per (source, SASS target) and per (source, PTX target without a SASS sibling); key each
 * job by SHA-256 over everything that decides its output and look it up in the cache
 * (cache/store.c); run the misses, at most `jobs` at a time, each in a forked child that calls
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
 * loader (nvrtc.h) and the cache (cache.h); at the bottom the digests (hash.h) and the include
 * scan (depfile.h). Nothing below calls back up. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "run.h"
#include "fatbin/elfid.h"

int
fb_compile_default_jobs(void)
{
	struct fb_jobs_info ji;
	fb_jobs_default(NULL, NULL, 0, getenv("MAX_JOBS"), &ji);
	return ji.jobs;
}

int
fb_compile_jobs(int asked)
{
	if (asked <= 0)
		return fb_compile_default_jobs();
	return asked > FB_JOBS_MAX ? FB_JOBS_MAX : asked;
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
	fb_remote_close(r->remote);
}

/* The remote cache for this run, when one is asked for; trouble only leaves a note. */
static void
remote_start(struct run *r, struct fb_compile_result *res)
{
	const struct fb_compile_opts *o = r->o;
	if (!r->use_cache || !o->remote_cache || !*o->remote_cache)
		return;
	struct fb_remote_opts ro = {o->remote_cache, o->remote_header, !o->remote_read_only,
	                            o->remote_timeout_ms, o->remote_state, o->remote_tmpdir};
	struct fb_error e = {0};
	if (fb_remote_open(&ro, &r->remote, &e) != 0) {
		char line[sizeof(e.msg) + 64];
		snprintf(line, sizeof(line), "%s; compiling locally", e.msg);
		note_append(&res->cache_note, line);
	}
}

/* Whether j's cache entry is what its key claims (fatbin/elfid.c): the cubin, or the LTO-IR,
 * of its SASS target and the PTX of its PTX target. An entry is checked before it is used or
 * kept, since a remote's may have been written by anyone (docs/remote-cache.md §5). */
static int
entry_fits(const struct run *r, const struct job *j, const struct fb_cache_entry *e, struct fb_error *err)
{
	const struct ap_target *tg = r->o->targets;
	if (j->lto)
		return fb_image_check(FB_KIND_LTO, &tg[j->sass != NONE ? j->sass : j->ptx], e->cubin, e->cubin_size, err);
	int rc = j->sass != NONE ? fb_image_check(FB_KIND_ELF, &tg[j->sass], e->cubin, e->cubin_size, err) : 0;
	if (!rc && j->ptx != NONE)
		rc = fb_image_check(FB_KIND_PTX, &tg[j->ptx], e->ptx, e->ptx_size, err);
	return rc;
}

/* A damaged entry (where: "" or "remote "): one line, counted; the job is compiled. */
static void
note_corrupt(struct run *r, const struct job *j, struct fb_compile_result *res, const char *where, const char *done,
             const char *why)
{
	char line[sizeof(((struct fb_error *)0)->msg) + 600];
	snprintf(line, sizeof(line), "corrupt %scache entry for %s (%s) %s and recompiled: %s", where, r->src[j->src].path,
	         j->arch, done, why);
	note_append(&res->cache_note, line);
	res->ncorrupt++;
}

/* A remote hit for j: verified by fb_remote_get (blobs) and entry_fits (what they are), then
 * kept in the local cache; what fails either is never kept. */
static int
remote_get(struct run *r, struct job *j, struct fb_compile_result *res)
{
	if (!r->remote || fb_remote_broken(r->remote, NULL))
		return 0;
	struct fb_error e = {0};
	int got = fb_remote_get(r->remote, j->key, &j->e, &e);
	if (got == FB_EFORMAT) {
		note_corrupt(r, j, res, "remote ", "ignored", e.msg);
	} else if (got == FB_EIO && !fb_remote_quiet(r->remote)) {
		char line[sizeof(e.msg) + 64];
		snprintf(line, sizeof(line), "%s; remote cache off for this run, compiling locally", e.msg);
		note_append(&res->cache_note, line);
	}
	if (got != 0)
		return 0;
	if ((j->sass != NONE && !j->e.cubin_size) || (j->ptx != NONE && !j->e.ptx_size)) {
		fb_cache_entry_clear(&j->e);
		return 0;
	}
	if (entry_fits(r, j, &j->e, &e) != 0) {
		char why[sizeof(e.msg) + 100];
		snprintf(why, sizeof(why), "remote action record ac/%s: %s", j->key, e.msg);
		fb_remote_reject(r->remote);
		note_corrupt(r, j, res, "remote ", "ignored", why);
		fb_cache_entry_clear(&j->e);
		return 0;
	}
	fb_store_put(r->cache_dir, j->key, &j->e, NULL); /* best effort */
	return 1;
}

static void
remote_put(struct run *r, struct job *j, struct fb_compile_result *res)
{
	if (!r->remote || fb_remote_broken(r->remote, NULL))
		return;
	struct fb_error e = {0};
	if (fb_remote_put(r->remote, j->key, &j->e, &e) == FB_EIO && !fb_remote_quiet(r->remote)) {
		char line[sizeof(e.msg) + 64];
		snprintf(line, sizeof(line), "%s; results not uploaded", e.msg);
		note_append(&res->cache_note, line);
	}
}

/* Adds this run's numbers to the cache directory's counters (stats.c); best effort. */
static void
count_run(struct run *r, const struct fb_compile_result *res)
{
	if (!r->use_cache)
		return;
	struct fb_cache_counters c = {0};
	c.local_hits = res->ncached - res->nremote;
	c.remote_hits = res->nremote;
	c.misses = res->ncompiled;
	c.local_corrupt = res->ncorrupt;
	if (r->remote) {
		const struct fb_remote_counts *n = fb_remote_counts(r->remote);
		c.remote_misses = n->misses;
		c.remote_errors = n->errors;
		c.remote_corrupt = n->corrupt;
		c.local_corrupt -= n->corrupt < c.local_corrupt ? n->corrupt : c.local_corrupt;
		c.uploads = n->uploads;
		c.bytes_down = n->bytes_down;
		c.bytes_up = n->bytes_up;
	}
	fb_cache_count(r->cache_dir, &c, NULL);
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
		if (o->cache_dir && *o->cache_dir)
			snprintf(r->cache_dir, sizeof(r->cache_dir), "%s", o->cache_dir);
		else if (fb_cache_dir(r->cache_dir, sizeof(r->cache_dir), NULL) != 0)
			r->use_cache = 0; /* no HOME: compile without a cache */
	}
	if (r->use_cache) {
		struct fb_error ce = {0};
		int cc = fb_cache_check(r->cache_dir, o->cache_dir && *o->cache_dir, &ce);
		if (cc == FB_EUNSAFE)
			return fb_seterr(err, cc, "%s", ce.msg);
		if (cc)
			r->use_cache = 0;
	}
	if (r->use_cache &&
	    fb_key_nvrtc(fb_nvrtc_ident(r->nv), o->cancel, r->nvrtc_key, sizeof(r->nvrtc_key)) != 0)
		r->nvrtc_key[0] = 0;
	if (o->cache_basedir && *o->cache_basedir && !realpath(o->cache_basedir, r->basedir))
		snprintf(r->basedir, sizeof(r->basedir), "%s", o->cache_basedir);
	if (!(r->src = calloc(r->nsrc, sizeof(*r->src))))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	return 0;
}

/* Cache hits first: local, then remote. */
static void
cache_lookup(struct run *r, struct fb_compile_result *res)
{
	for (size_t i = 0; r->use_cache && i < r->njobs; i++) {
		struct job *j = &r->jobs[i];
		struct fb_error ce = {0};
		int got = fb_store_get(r->cache_dir, j->key, &j->e, &ce);
		bool hit = got == 0;
		if (got == FB_EFORMAT)
			note_corrupt(r, j, res, "", "removed", ce.msg);
		if (hit &&
		    (j->lto ? !j->e.cubin_size : (j->sass != NONE && !j->e.cubin_size) || (j->ptx != NONE && !j->e.ptx_size))) {
			fb_cache_entry_clear(&j->e); /* an entry without what the job makes: a miss */
			hit = false;
		}
		if (hit && entry_fits(r, j, &j->e, &ce) != 0) {
			char why[sizeof(ce.msg) + 100];
			snprintf(why, sizeof(why), "cache entry %s: %s", j->key, ce.msg);
			fb_store_remove(r->cache_dir, j->key);
			note_corrupt(r, j, res, "", "removed", why);
			fb_cache_entry_clear(&j->e);
			hit = false;
		}
		if (!hit && !remote_get(r, j, res))
			continue;
		j->state = J_DONE;
		j->cached = hit ? 1 : 2;
		res->ncached++;
		res->nremote += j->cached == 2;
		fb_run_job_done(r, j);
	}
}

/* The cache-missed jobs go to the build's compile server when the build names one (and it is
 * not turned off); what it does not answer well is compiled here. */
static void
server_jobs(struct run *r, const char *home, struct fb_compile_result *res)
{
	const char *sock = getenv(FB_SERVER_ENV);
	if (!sock || !*sock || fb_env_switch(FB_SERVER_OFF_ENV) == 0)
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
		res->pch_made += strncmp(j->pch_note, "PCH made", 8) == 0;
		res->pch_used += strstr(j->pch_note, "PCH used") != NULL;
		res->pch_refused += strncmp(j->pch_note, "PCH refused", 11) == 0;
		res->ncompiled++;
		if (r->use_cache)
			fb_store_put(r->cache_dir, j->key, &j->e, NULL);
		remote_put(r, j, res);
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
	remote_start(r, res);
	cache_lookup(r, res);
	fb_remote_idle(r->remote); /* the jobs are forked next (cache.h) */
	server_jobs(r, home, res);
	int maxjobs = fb_compile_jobs(opts->jobs);
	setup_pch(r, res);
	struct job *failed = NULL;
	rc = fb_run_jobs(r, maxjobs, &failed, err);
	if (opts->cancel && *opts->cancel) /* jobs killed by the stopping signal are no failure */
		return fb_seterr(err, FB_ECANCELED, "compile stopped");
	if (rc == FB_ECOMPILE && failed)
		return describe_failure(r, failed, res, err);
	if (rc)
		return rc;
	cache_store(r, res);
	rc = assemble(r, res, err);
	if (!rc)
		count_run(r, res);
	return rc;
}

int
fb_compile(const char *const *sources, size_t nsources, const struct fb_compile_opts *opts,
           struct fb_compile_result **out, struct fb_error *err)
{
	struct run r = {0};
	struct fb_compile_result *res = NULL;
	char home[PATH_MAX] = "";
	*out = NULL;
	int rc = check_args(sources, nsources, opts, err);
	if (rc)
		return rc;
	r.o = opts;
	r.srcpaths = sources;
	r.nsrc = nsources;
	if (opts->cuda_home && *opts->cuda_home) {
		snprintf(home, sizeof(home), "%s", opts->cuda_home);
	} else {
		struct ap_error aerr = {0};
		if (ap_cuda_home(home, sizeof(home), &aerr) != 0)
			home[0] = 0;
	}
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
