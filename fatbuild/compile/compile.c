/* compile.c: fb_compile, the parallel, cached NVRTC driver.
 *
 * Steps: load NVRTC; read each source and find every header it reads (depfile.c); make one
 * job per (source, SASS target) and per (source, PTX target without a SASS sibling); key each
 * job by SHA-256 over everything that decides its output and look it up in the cache
 * (cache.c); run the misses, at most `jobs` at a time, each in a forked child that calls
 * NVRTC once and streams status, log, PTX and cubin back through a pipe. Processes rather than
 * threads because NVRTC serialises compiles within one process (measured with NVRTC 13.0: two
 * CUB BlockRadixSort compiles on two threads 4.0 s, one after the other 3.8 s, in two
 * processes 2.5 s). A child is also the unit of cancellation: on the first failure the other
 * children are killed and nothing is written. Results are assembled in source x target-list
 * order, so the output does not depend on -j or on which job finishes first. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile.h"
#include "worker.h"

#define NONE ((size_t)-1)

static int
seterr(struct fb_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
fb_compile_default_jobs(void)
{
	struct fb_jobs_info ji;
	fb_jobs_default(NULL, NULL, 0, getenv("MAX_JOBS"), &ji);
	return ji.jobs;
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

struct digest {
	char *path;
	unsigned char d[32];
	int names_file;             /* fb_key_names_file */
};

struct source {
	const char *path;
	char *text;
	size_t size;
	char dir[PATH_MAX];
	struct fb_strlist deps;     /* headers, in discovery order */
	unsigned char key[32];      /* source + headers */
	unsigned char content[32];  /* basename, source and headers by content only */
	char base[PATH_MAX];        /* paths below it enter the key relative to it (key.c) */
	int exact;                  /* the output may depend on paths: the key spells them exactly */
};

enum { J_PENDING, J_RUNNING, J_DONE };

struct job {
	size_t src;
	size_t sass, ptx;           /* indexes into the target list, NONE if not served */
	char arch[32];              /* what NVRTC is asked for: "sm_90a", "compute_120" */
	int lto;                    /* -dlto: LTO-IR (in e.cubin) instead of cubin/PTX */
	char key[65];
	char seed[17];              /* --frandom-seed: path-independent, from the content */
	int state;
	size_t unit;                /* the worker that runs it (NONE: not scheduled) */
	double secs;
	char pch_note[256];         /* the worker's PCH verdict, "" without PCH */
	int cached;                 /* 1: local cache, 2: remote cache */
	int result;                 /* nvrtcResult */
	struct fb_cache_entry e;
};

/* One worker process: the jobs it runs, in order, and what it has answered so far. */
struct unit {
	size_t *jobs;               /* into run.jobs */
	size_t n, done;
	size_t weight;
	int pch;
	int state;
	pid_t pid;
	int fd;
	unsigned char *rx;          /* bytes from the child not yet parsed */
	size_t rxn, rxcap;
	double t0, tlast;
};

#define ANSWER 48               /* the fixed part of one answer from a worker */

struct run {
	const struct fb_compile_opts *o;
	struct fb_nvrtc *nv;
	const char *const *srcpaths;
	struct source *src;
	size_t nsrc;
	struct job *jobs;
	size_t njobs, done;
	struct digest *dig;
	size_t ndig, capdig;
	char **common;              /* options shared by all jobs, after -arch and -I<srcdir> */
	size_t ncommon;
	char cache_dir[PATH_MAX];
	int use_cache;
	struct fb_remote *remote;
	char basedir[PATH_MAX];
	char nvrtc_key[128];        /* fb_key_nvrtc, or empty */
	/* Kept here rather than in locals so that a forked child, which leaves with _exit, still
	 * reaches every block through the run (memory checkers follow the fork). */
	size_t *order, *wjob, *ujobs, *uorder, *uw;
	struct pollfd *pfd;
	struct unit **pu;
	struct unit *units;         /* one worker process each */
	size_t nunits;
	int pch;                    /* units of one option set share an NVRTC PCH */
	char pch_dir[PATH_MAX];     /* private to this run (worker.c) */
	const char *pch_note;       /* why the PCH is off, for the caller; NULL when on or unasked */
	pid_t parent;
	struct fb_compile_result *res;
};

static int
add_opt(struct run *r, const char *fmt, ...)
{
	char buf[PATH_MAX + 64];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof(buf))
		return FB_EINVAL;
	char **v = realloc(r->common, (r->ncommon + 1) * sizeof(*v));
	if (!v)
		return FB_ENOMEM;
	r->common = v;
	if (!(v[r->ncommon] = strdup(buf)))
		return FB_ENOMEM;
	r->ncommon++;
	return 0;
}

static int
is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The NVRTC options every job shares. */
static int
build_options(struct run *r, const char *home, struct fb_error *err)
{
	const struct fb_compile_opts *o = r->o;
	int rc = 0;
	const char *std = o->std && *o->std ? o->std : "c++17";
	if (strcmp(std, "c++11") && strcmp(std, "c++14") && strcmp(std, "c++17") && strcmp(std, "c++20") &&
	    strcmp(std, "c++03"))
		return seterr(err, FB_EINVAL, "unsupported --std '%s' (use c++17 or c++20)", std);
	rc |= add_opt(r, "-std=%s", std);
	for (size_t i = 0; i < o->ninclude_dirs; i++)
		rc |= add_opt(r, "-I%s", o->include_dirs[i]);
	if (home && *home) {
		char d[PATH_MAX];
		snprintf(d, sizeof(d), "%s/include/cccl", home);
		if (is_dir(d))
			rc |= add_opt(r, "-I%s", d);
		snprintf(d, sizeof(d), "%s/include", home);
		if (is_dir(d))
			rc |= add_opt(r, "-I%s", d);
	}
	for (size_t i = 0; i < o->ndefines; i++)
		rc |= add_opt(r, "-D%s", o->defines[i]);
	if (o->fast_math)
		rc |= add_opt(r, "--use_fast_math");
	if (o->device_debug)
		rc |= add_opt(r, "--device-debug");
	if (o->lineinfo)
		rc |= add_opt(r, "--generate-line-info");
	if (o->maxrregcount > 0)
		rc |= add_opt(r, "--maxrregcount=%d", o->maxrregcount);
	if (o->rdc || o->lto)
		rc |= add_opt(r, "-rdc=true");
	if (o->lto)
		rc |= add_opt(r, "-dlto");
	for (size_t i = 0; i < o->nnvrtc_opts; i++)
		rc |= add_opt(r, "%s", o->nvrtc_opts[i]);
	if (rc)
		return seterr(err, FB_ENOMEM, "out of memory building options");
	return 0;
}

/* Content digest of a header, computed once per run. */
static int
file_digest(struct run *r, const char *path, unsigned char d[32], int *names_file, struct fb_error *err)
{
	for (size_t i = 0; i < r->ndig; i++)
		if (strcmp(r->dig[i].path, path) == 0) {
			memcpy(d, r->dig[i].d, 32);
			*names_file = r->dig[i].names_file;
			return 0;
		}
	char *text;
	size_t size;
	int rc = fb_read_file(path, &text, &size, err);
	if (rc)
		return rc;
	struct fb_sha256 s;
	fb_sha256_init(&s);
	fb_sha256_update(&s, text, size);
	fb_sha256_final(&s, d);
	*names_file = fb_key_names_file(text, size);
	free(text);
	if (r->ndig == r->capdig) {
		size_t cap = r->capdig ? 2 * r->capdig : 64;
		struct digest *v = realloc(r->dig, cap * sizeof(*v));
		if (!v)
			return seterr(err, FB_ENOMEM, "out of memory");
		r->dig = v;
		r->capdig = cap;
	}
	if (!(r->dig[r->ndig].path = strdup(path)))
		return seterr(err, FB_ENOMEM, "out of memory");
	r->dig[r->ndig].names_file = *names_file;
	memcpy(r->dig[r->ndig++].d, d, 32);
	return 0;
}

/* What the output can depend on, without the paths: the source's base name (NVRTC builds
 * internal names from it), its text and the text of every header it reads, in discovery
 * order. The seed of every job is derived from it, so that two checkouts in two places give
 * the same bytes; called after every header of s has its digest. */
static void
content_digest(struct run *r, struct source *s)
{
	struct fb_sha256 h;
	unsigned char d[32];
	int names;
	const char *base = strrchr(s->path, '/');
	fb_sha256_init(&h);
	fb_sha256_str(&h, base ? base + 1 : s->path);
	fb_sha256_update(&h, s->text, s->size);
	for (size_t k = 0; k < s->deps.n; k++)
		if (file_digest(r, s->deps.v[k], d, &names, NULL) == 0)
			fb_sha256_update(&h, d, 32);
	fb_sha256_final(&h, s->content);
}

/* The caller chose a seed of its own (-Xnvrtc --frandom-seed=...). */
static int
user_seed(const struct run *r)
{
	for (size_t k = 0; k < r->ncommon; k++)
		if (strncmp(r->common[k], "--frandom-seed", 14) == 0 || strncmp(r->common[k], "-frandom-seed", 13) == 0)
			return 1;
	return 0;
}

/* Hashes a path (or "-I<path>") as the key spells it: relative to the source's base unless the
 * output may depend on it (key.c). */
static void
key_path(struct fb_sha256 *h, const struct source *s, const char *str)
{
	char buf[PATH_MAX + 8];
	int inc = strncmp(str, "-I", 2) == 0;
	if (s->exact || fb_key_path(s->base, str + (inc ? 2 : 0), buf + inc, sizeof(buf) - 2) != 0) {
		fb_sha256_str(h, str);
		return;
	}
	if (inc)
		memcpy(buf, "-I", 2);
	fb_sha256_str(h, buf);
}

static int
load_sources(struct run *r, struct fb_error *err)
{
	for (size_t i = 0; i < r->nsrc; i++) {
		struct source *s = &r->src[i];
		s->path = r->srcpaths[i];
		int rc = fb_read_file(s->path, &s->text, &s->size, err);
		if (rc)
			return rc;
		if (memchr(s->text, 0, s->size))
			return seterr(err, FB_EINVAL, "%s: contains a NUL byte; not a CUDA source", s->path);
		const char *slash = strrchr(s->path, '/');
		if (!slash)
			snprintf(s->dir, sizeof(s->dir), ".");
		else if (slash == s->path)
			snprintf(s->dir, sizeof(s->dir), "/");
		else
			snprintf(s->dir, sizeof(s->dir), "%.*s", (int)(slash - s->path), s->path);
		/* Search order as NVRTC will see it: the source's directory, then the shared -I list. */
		size_t ndirs = 0;
		const char **dirs = calloc(r->ncommon + 1, sizeof(*dirs));
		if (!dirs)
			return seterr(err, FB_ENOMEM, "out of memory");
		dirs[ndirs++] = s->dir;
		for (size_t k = 0; k < r->ncommon; k++)
			if (strncmp(r->common[k], "-I", 2) == 0)
				dirs[ndirs++] = r->common[k] + 2;
		rc = fb_deps_scan(s->path, dirs, ndirs, &s->deps, err);
		free(dirs);
		if (rc)
			return rc;
		snprintf(s->base, sizeof(s->base), "%s", r->basedir[0] ? r->basedir : s->dir);
		char rel[PATH_MAX + 8];
		s->exact = r->o->device_debug || r->o->lineinfo || fb_key_names_file(s->text, s->size);
		for (size_t k = 0; k < s->deps.n && !s->exact; k++) {
			unsigned char d[32];
			int names = 0;
			if ((rc = file_digest(r, s->deps.v[k], d, &names, err)))
				return rc;
			s->exact = names && fb_key_path(s->base, s->deps.v[k], rel, sizeof(rel)) == 0 && rel[0] == '@';
		}
		struct fb_sha256 h;
		unsigned char d[32];
		int names;
		fb_sha256_init(&h);
		fb_sha256_str(&h, s->exact ? "paths exact" : "paths below base relative");
		key_path(&h, s, s->path);
		fb_sha256_update(&h, s->text, s->size);
		for (size_t k = 0; k < s->deps.n; k++) {
			if ((rc = file_digest(r, s->deps.v[k], d, &names, err)))
				return rc;
			key_path(&h, s, s->deps.v[k]);
			fb_sha256_update(&h, d, 32);
		}
		fb_sha256_final(&h, s->key);
		content_digest(r, s);
	}
	return 0;
}

static int
same_slot(const struct ap_target *a, const struct ap_target *b)
{
	return a->sm == b->sm && a->variant == b->variant;
}

static int
make_jobs(struct run *r, struct fb_error *err)
{
	const struct fb_compile_opts *o = r->o;
	r->jobs = calloc(r->nsrc * o->ntargets, sizeof(*r->jobs));
	if (!r->jobs)
		return seterr(err, FB_ENOMEM, "out of memory");
	for (size_t s = 0; s < r->nsrc; s++)
		for (size_t t = 0; t < o->ntargets; t++) {
			const struct ap_target *tg = &o->targets[t];
			struct job *j = &r->jobs[r->njobs];
			j->src = s;
			j->sass = j->ptx = j->unit = NONE;
			/* Relocatable code: a PTX target is LTO-IR of its own (fb_dlink makes it one
			 * linked PTX), so it never rides on its SASS sibling. */
			int reloc = o->rdc || o->lto;
			j->lto = o->lto || (reloc && tg->kind == AP_PTX);
			if (tg->kind == AP_SASS) {
				j->sass = t;
				for (size_t u = 0; !reloc && u < o->ntargets; u++)
					if (o->targets[u].kind == AP_PTX && same_slot(tg, &o->targets[u]))
						j->ptx = u;
			} else {
				int sibling = 0;
				for (size_t u = 0; !reloc && u < o->ntargets; u++)
					if (o->targets[u].kind == AP_SASS && same_slot(tg, &o->targets[u]))
						sibling = 1;
				if (sibling)
					continue;
				j->ptx = t;
			}
			ap_target_name(tg, j->arch, sizeof(j->arch));
			/* key: everything that decides the output */
			struct fb_sha256 h;
			unsigned char d[32];
			char ver[32];
			fb_sha256_init(&h);
			fb_sha256_str(&h, "fatbuild-compile-v2"); /* v2: seeded */
			snprintf(ver, sizeof(ver), "nvrtc %d", fb_nvrtc_version(r->nv));
			fb_sha256_str(&h, ver);
			/* the library itself (patch releases), by content so that machines share keys */
			fb_sha256_str(&h, r->nvrtc_key[0] ? r->nvrtc_key : fb_nvrtc_ident(r->nv));
			fb_sha256_str(&h, j->arch);
			fb_sha256_str(&h, j->ptx != NONE ? "ptx" : "-");
			fb_sha256_str(&h, j->sass != NONE ? "cubin" : "-");
			if (j->lto)
				fb_sha256_str(&h, "ltoir");
			key_path(&h, &r->src[s], r->src[s].dir);
			for (size_t k = 0; k < r->ncommon; k++)
				key_path(&h, &r->src[s], r->common[k]);
			fb_sha256_update(&h, r->src[s].key, 32);
			fb_sha256_final(&h, d);
			fb_sha256_hex(d, j->key);
			/* seed: the same for the same content, options and target wherever it lies;
			 * different across translation units (internal names stay unique). */
			char hex[65];
			fb_sha256_init(&h);
			fb_sha256_str(&h, "fatbuild-seed-v1");
			fb_sha256_str(&h, ver);
			fb_sha256_str(&h, j->arch);
			fb_sha256_str(&h, j->ptx != NONE ? "ptx" : "-");
			fb_sha256_str(&h, j->sass != NONE ? "cubin" : "-");
			for (size_t k = 0; k < r->ncommon; k++)
				if (strncmp(r->common[k], "-I", 2) != 0)
					fb_sha256_str(&h, r->common[k]);
			fb_sha256_update(&h, r->src[s].content, 32);
			fb_sha256_final(&h, d);
			fb_sha256_hex(d, hex);
			if (!user_seed(r))
				memcpy(j->seed, hex, 16);
			r->njobs++;
		}
	return 0;
}

static void
report(struct run *r, struct job *j)
{
	r->done++;
	if (!r->o->progress)
		return;
	struct fb_compile_progress p = {
		.done = r->done, .total = r->njobs, .source = r->src[j->src].path, .target = j->arch,
		.seconds = j->cached ? 0 : j->secs, .cached = j->cached != 0, .remote = j->cached == 2,
		.pch = j->pch_note[0] ? j->pch_note : NULL,
	};
	r->o->progress(r->o->progress_ctx, &p);
}

/* ---- children -------------------------------------------------------------------------- */

static int
write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

static void
put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t
get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The child: a worker running the jobs of one unit in order, each one NVRTC compile; each
 * answer is 48 bytes (status, nvrtcResult, four sizes) then log, PCH note, PTX and cubin.
 * With u->pch the jobs share one option set and NVRTC's automatic PCH (worker.c): the first
 * parses the headers and keeps them in the PCH heap, the others reuse them. Returns the exit
 * code for _exit. (Not _Noreturn: a noreturn function need not preserve the caller's
 * registers, and memory checkers that follow the fork would then see the parent's blocks as
 * lost.) */
static int
child(struct run *r, struct unit *u, int fd)
{
	size_t maxopts = r->ncommon + 6;
	const char **opts = calloc(maxopts, sizeof(*opts));
	char arch[64], inc[PATH_MAX + 3], seed[40], pchopt[PATH_MAX + 16], wdir[PATH_MAX], why[PATH_MAX + 64] = "";
	struct fb_pch_state ps = {0};
	int bad = 0;
	if (u->pch) {
		fb_worker_child_init(r->parent);
		if (fb_pch_worker_dir(r->pch_dir, (size_t)(u - r->units), wdir, sizeof(wdir), why, sizeof(why)) != 0)
			ps.off = 1; /* said in the first job's note */
	}
	for (size_t k = 0; k < u->n && !bad; k++) {
		struct job *j = &r->jobs[u->jobs[k]];
		struct source *s = &r->src[j->src];
		struct fb_nvrtc_out out = {0};
		struct fb_error e = {0};
		char note[256] = "";
		int rc = FB_ENOMEM, pch = u->pch && !ps.off;
		size_t heap = 0, nopts = 0;
		if (opts) {
			snprintf(arch, sizeof(arch), "-arch=%s", j->arch);
			snprintf(inc, sizeof(inc), "-I%s", s->dir);
			opts[nopts++] = arch;
			opts[nopts++] = inc;
			for (size_t m = 0; m < r->ncommon; m++)
				opts[nopts++] = r->common[m];
			if (j->seed[0]) {
				snprintf(seed, sizeof(seed), "--frandom-seed=%s", j->seed);
				opts[nopts++] = seed;
			}
			if (j->lto && !r->o->lto)
				opts[nopts++] = "-dlto";
			if (pch && fb_pch_options(wdir, pchopt, sizeof(pchopt), opts + nopts) == 0)
				nopts += 2;
			else
				pch = 0;
			if (pch && ps.heap) {
				fb_nvrtc_pch_heap(r->nv, NULL, ps.heap);
				ps.heap = 0;
			}
			if (pch)
				fb_nvrtc_pch_heap(r->nv, &heap, 0);
			rc = fb_nvrtc_compile(r->nv, s->text, s->path, opts, (int)nopts, j->ptx != NONE && !j->lto,
			                      j->lto ? FB_NVRTC_LTOIR : j->sass != NONE, &out, &e);
			if (pch && (rc || out.result != 0)) {
				/* never let the PCH fail a job: the same compile without it decides */
				fb_nvrtc_out_clear(&out);
				rc = fb_nvrtc_compile(r->nv, s->text, s->path, opts, (int)nopts - 2, j->ptx != NONE && !j->lto,
				                      j->lto ? FB_NVRTC_LTOIR : j->sass != NONE, &out, &e);
				if (!rc && out.result == 0) {
					ps.off = 1;
					snprintf(note, sizeof(note), "PCH refused: the compile failed with it and passed without; "
					                             "plain compiles from here");
				}
				pch = 0;
			}
		}
		if (k == 0 && why[0])
			snprintf(note, sizeof(note), "PCH refused: %.200s", why);
		if (!rc && pch) {
			int used = 0;
			if (out.log)
				fb_pch_log_strip(out.log, &used);
			fb_pch_verdict(&ps, out.pch_status, out.pch_heap_required, used, heap, note, sizeof(note));
		}
		const char *log = rc ? e.msg : out.log ? out.log : "";
		unsigned char hdr[ANSWER];
		put64(hdr, (uint64_t)rc);
		put64(hdr + 8, (uint64_t)(int64_t)out.result);
		put64(hdr + 16, strlen(log));
		put64(hdr + 24, strlen(note));
		put64(hdr + 32, rc ? 0 : out.ptx_size);
		put64(hdr + 40, rc ? 0 : out.cubin_size);
		bad = write_all(fd, hdr, sizeof(hdr)) || write_all(fd, log, strlen(log)) || write_all(fd, note, strlen(note));
		if (!bad && !rc && out.ptx_size)
			bad = write_all(fd, out.ptx, out.ptx_size);
		if (!bad && !rc && out.cubin_size)
			bad = write_all(fd, out.cubin, out.cubin_size);
		fb_nvrtc_out_clear(&out);
		if (rc)
			break; /* NVRTC could not be driven: the parent stops the run */
	}
	free(opts);
	close(fd);
	return bad ? 3 : 0;
}

static unsigned char *
dup_bytes(const unsigned char *p, size_t n)
{
	unsigned char *d = malloc(n + 1);
	if (d) {
		memcpy(d, p, n);
		d[n] = 0;
	}
	return d;
}

/* The size of the complete answer at the start of p[0..n), or 0 while it is incomplete. */
static size_t
answer_size(const unsigned char *p, size_t n)
{
	if (n < ANSWER)
		return 0;
	uint64_t t = ANSWER;
	for (int i = 2; i < 6; i++) {
		uint64_t v = get64(p + 8 * i);
		if (v > ((uint64_t)1 << 40))
			return (size_t)-1; /* garbage: caught by collect */
		t += v;
	}
	return t <= n ? (size_t)t : 0;
}

/* Parses one answer p[0..n) into j->e / j->result / j->pch_note. */
static int
collect(struct run *r, struct job *j, const unsigned char *p, size_t n, struct fb_error *err)
{
	const char *src = r->src[j->src].path;
	uint64_t rc = get64(p), res = get64(p + 8), nl = get64(p + 16), nn = get64(p + 24), np = get64(p + 32),
	         nc = get64(p + 40);
	if (n < ANSWER || nl > n || nn > n || np > n || nc > n || ANSWER + nl + nn + np + nc != n)
		return seterr(err, FB_ECOMPILE, "%s: the NVRTC process for %s gave a malformed answer", src, j->arch);
	p += ANSWER;
	if (rc != 0)
		return seterr(err, (int)rc, "%s: %s: %.*s", src, j->arch, (int)nl, (const char *)p);
	j->result = (int)(int64_t)res;
	j->e.log = (char *)dup_bytes(p, nl);
	snprintf(j->pch_note, sizeof(j->pch_note), "%.*s", (int)nn, (const char *)p + nl);
	p += nl + nn;
	if (np)
		j->e.ptx = dup_bytes(p, np);
	if (nc)
		j->e.cubin = dup_bytes(p + np, nc);
	j->e.ptx_size = np;
	j->e.cubin_size = nc;
	if (!j->e.log || (np && !j->e.ptx) || (nc && !j->e.cubin))
		return seterr(err, FB_ENOMEM, "out of memory");
	if (j->result == 0 && j->lto && !nc)
		return seterr(err, FB_ECOMPILE, "%s: NVRTC returned no LTO-IR for %s", src, j->arch);
	if (j->result == 0 && !j->lto && ((j->ptx != NONE && !np) || (j->sass != NONE && !nc)))
		return seterr(err, FB_ECOMPILE, "%s: NVRTC returned no %s for %s", src, nc ? "PTX" : "cubin", j->arch);
	return 0;
}

static void
kill_all(struct run *r)
{
	for (size_t i = 0; i < r->nunits; i++) {
		struct unit *u = &r->units[i];
		if (u->state != J_RUNNING)
			continue;
		kill(u->pid, SIGKILL);
		close(u->fd);
		u->fd = -1;
		while (waitpid(u->pid, NULL, 0) < 0 && errno == EINTR)
			;
		u->state = J_DONE;
	}
}

static int
start(struct run *r, struct unit *u, struct fb_error *err)
{
	int p[2];
	if (pipe(p) != 0)
		return seterr(err, FB_EIO, "pipe failed: %s", strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork(); /* the child leaves with _exit: no stdio buffer is flushed twice */
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return seterr(err, FB_EIO, "fork failed: %s", strerror(e));
	}
	if (pid == 0) {
		close(p[0]);
		/* A job dies with its parent, even a SIGKILLed one, and of a stopping signal: it has
		 * nothing to clean up, and the caller's handlers are the caller's. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(3);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		_exit(child(r, u, p[1]));
	}
	close(p[1]);
	u->pid = pid;
	u->fd = p[0];
	u->state = J_RUNNING;
	u->t0 = now();
	for (size_t k = 0; k < u->n; k++)
		r->jobs[u->jobs[k]].state = J_RUNNING;
	return 0;
}

/* A job's expected cost: the headers its source reads; SASS costs more than PTX alone. */
static size_t
weight(const struct run *r, size_t i)
{
	const struct job *j = &r->jobs[i];
	return 2 * (r->src[j->src].deps.n + 1) + (j->sass != NONE);
}

/* Sorts idx[0..n) by key descending, stably (insertion sort: short lists). */
static void
sort_desc(size_t *idx, size_t n, const size_t *key)
{
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && key[idx[k]] > key[idx[k - 1]]; k--) {
			size_t t = idx[k];
			idx[k] = idx[k - 1];
			idx[k - 1] = t;
		}
}

static int
same_options(const struct run *r, const struct job *a, const struct job *b)
{
	return strcmp(a->arch, b->arch) == 0 && strcmp(r->src[a->src].dir, r->src[b->src].dir) == 0;
}

/* Splits the pending jobs into units, each run by one process: without PCH one job each;
 * with it the jobs of one option set (arch, include path) together, and the largest of those
 * split in two while a slot would otherwise stay idle. Longest first throughout: a source
 * that reads more headers (CUB) starts before small ones, which then fill the gaps. Stable,
 * so the launch order is deterministic. */
static int
make_units(struct run *r, int slots, struct fb_error *err)
{
	size_t *w = r->wjob = calloc(r->njobs ? r->njobs : 1, sizeof(*w));
	size_t *order = r->order = calloc(r->njobs ? r->njobs : 1, sizeof(*order));
	size_t *all = r->ujobs = calloc(r->njobs ? r->njobs : 1, sizeof(*all));
	r->units = calloc(r->njobs ? r->njobs : 1, sizeof(*r->units));
	if (!w || !order || !all || !r->units)
		return seterr(err, FB_ENOMEM, "out of memory");
	size_t np = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		w[i] = weight(r, i);
		if (r->jobs[i].state == J_PENDING)
			order[np++] = i;
	}
	sort_desc(order, np, w);
	/* group: jobs of one option set are contiguous in all[], longest first within */
	size_t na = 0;
	r->nunits = 0;
	for (size_t i = 0; i < np; i++) {
		struct job *j = &r->jobs[order[i]];
		if (j->unit != NONE)
			continue;
		struct unit *u = &r->units[r->nunits];
		u->jobs = all + na;
		u->fd = -1;
		for (size_t k = i; k < np; k++) {
			struct job *m = &r->jobs[order[k]];
			if (m->unit != NONE || (k != i && !(r->pch && same_options(r, j, m))))
				continue;
			m->unit = r->nunits;
			all[na++] = order[k];
			u->n++;
			u->weight += w[order[k]];
		}
		r->nunits++;
	}
	/* idle slots: halve the largest unit */
	while (r->pch && r->nunits < (size_t)slots) {
		size_t big = NONE;
		for (size_t i = 0; i < r->nunits; i++)
			if (r->units[i].n >= 2 && (big == NONE || r->units[i].n > r->units[big].n))
				big = i;
		if (big == NONE)
			break;
		struct unit *a = &r->units[big], *b = &r->units[r->nunits];
		size_t half = a->n / 2;
		/* alternate, so that both halves get long and short jobs */
		size_t *tmp = calloc(a->n, sizeof(*tmp));
		if (!tmp)
			return seterr(err, FB_ENOMEM, "out of memory");
		size_t ka = 0, kb = 0;
		for (size_t k = 0; k < a->n; k++)
			if (k % 2 == 0)
				tmp[ka++] = a->jobs[k];
			else
				tmp[a->n - half + kb++] = a->jobs[k];
		memcpy(a->jobs, tmp, a->n * sizeof(*tmp));
		free(tmp);
		*b = (struct unit){.jobs = a->jobs + (a->n - half), .n = half, .fd = -1};
		a->n -= half;
		a->weight = b->weight = 0;
		for (size_t k = 0; k < a->n; k++)
			a->weight += w[a->jobs[k]];
		for (size_t k = 0; k < b->n; k++) {
			b->weight += w[b->jobs[k]];
			r->jobs[b->jobs[k]].unit = r->nunits;
		}
		r->nunits++;
	}
	for (size_t i = 0; i < r->nunits; i++)
		r->units[i].pch = r->pch && r->units[i].n >= 2;
	return 0;
}

/* Runs the units, at most maxjobs at a time, longest first; on the first failure kills the
 * rest. *failed: that job. */
static int
run_jobs(struct run *r, int maxjobs, struct job **failed, struct fb_error *err)
{
	size_t next = 0, running = 0;
	int rc = make_units(r, maxjobs, err);
	*failed = NULL;
	if (rc)
		return rc;
	struct pollfd *pfd = r->pfd = calloc(r->nunits ? r->nunits : 1, sizeof(*pfd));
	struct unit **pu = r->pu = calloc(r->nunits ? r->nunits : 1, sizeof(*pu));
	size_t *uorder = r->uorder = calloc(r->nunits ? r->nunits : 1, sizeof(*uorder));
	size_t *uw = r->uw = calloc(r->nunits ? r->nunits : 1, sizeof(*uw));
	if (!pfd || !pu || !uorder || !uw) {
		rc = seterr(err, FB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r->nunits; i++) {
		uorder[i] = i;
		uw[i] = r->units[i].weight;
	}
	sort_desc(uorder, r->nunits, uw);
	for (;;) {
		if (!rc && r->o->cancel && *r->o->cancel)
			rc = seterr(err, FB_ECANCELED, "compile stopped");
		while (!rc && running < (size_t)maxjobs && next < r->nunits) {
			if ((rc = start(r, &r->units[uorder[next++]], err)))
				break;
			running++;
		}
		if (rc || running == 0)
			break;
		size_t n = 0;
		for (size_t i = 0; i < r->nunits; i++)
			if (r->units[i].state == J_RUNNING) {
				pfd[n].fd = r->units[i].fd;
				pfd[n].events = POLLIN;
				pu[n++] = &r->units[i];
			}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue; /* the loop's top looks at the stop flag */
			rc = seterr(err, FB_EIO, "poll failed: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < n && !rc; i++) {
			struct unit *u = pu[i];
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (u->rxcap - u->rxn < 65536) {
				size_t cap = u->rxcap ? 2 * u->rxcap : 262144;
				unsigned char *b = realloc(u->rx, cap);
				if (!b) {
					rc = seterr(err, FB_ENOMEM, "out of memory");
					break;
				}
				u->rx = b;
				u->rxcap = cap;
			}
			ssize_t k = read(u->fd, u->rx + u->rxn, u->rxcap - u->rxn);
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k > 0)
				u->rxn += (size_t)k;
			/* every complete answer: its job is done */
			size_t sz;
			while (!rc && u->done < u->n && (sz = answer_size(u->rx, u->rxn)) != 0) {
				struct job *j = &r->jobs[u->jobs[u->done++]];
				double t = now();
				j->state = J_DONE;
				j->secs = t - (u->tlast > 0 ? u->tlast : u->t0);
				u->tlast = t;
				rc = collect(r, j, u->rx, sz == (size_t)-1 ? u->rxn : sz, err);
				if (sz == (size_t)-1)
					sz = u->rxn;
				memmove(u->rx, u->rx + sz, u->rxn - sz);
				u->rxn -= sz;
				if (!rc && j->result != 0) {
					*failed = j;
					rc = FB_ECOMPILE;
				}
				if (!rc)
					report(r, j);
			}
			if (rc || k > 0)
				continue;
			/* EOF (or a read error): the worker is done. */
			close(u->fd);
			u->fd = -1;
			int status = 0;
			while (waitpid(u->pid, &status, 0) < 0 && errno == EINTR)
				;
			u->state = J_DONE;
			running--;
			free(u->rx);
			u->rx = NULL;
			u->rxn = u->rxcap = 0;
			/* A complete answer counts even with a nonzero exit (a memory checker following
			 * the fork may set one); a missing one is a failure. */
			if (u->done < u->n) {
				struct job *j = &r->jobs[u->jobs[u->done]];
				if (WIFSIGNALED(status))
					rc = seterr(err, FB_ECOMPILE, "%s: NVRTC died with signal %d compiling for %s",
					            r->src[j->src].path, WTERMSIG(status), j->arch);
				else
					rc = seterr(err, FB_ECOMPILE, "%s: the NVRTC process for %s ended without an answer (exit %d)",
					            r->src[j->src].path, j->arch, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			}
		}
		if (rc)
			break;
	}
	if (rc)
		kill_all(r);
out:
	free(pfd);
	free(pu);
	free(uorder);
	free(uw);
	r->pfd = NULL;
	r->pu = NULL;
	r->uorder = NULL;
	r->uw = NULL;
	return rc;
}

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
		return seterr(err, FB_ENOMEM, "out of memory");
	for (size_t s = 0; s < r->nsrc; s++)
		for (size_t t = 0; t < o->ntargets; t++) {
			struct job *j = NULL;
			for (size_t k = 0; k < r->njobs && !j; k++)
				if (r->jobs[k].src == s && (r->jobs[k].sass == t || r->jobs[k].ptx == t))
					j = &r->jobs[k];
			if (!j)
				return seterr(err, FB_EINVAL, "internal error: no job for target %zu", t);
			struct fb_compile_image *im = &res->images[res->nimages];
			im->source = s;
			im->target = o->targets[t];
			im->cached = j->cached != 0;
			if (j->lto) {
				im->kind = FB_KIND_LTO;
				im->data = dup_bytes(j->e.cubin, j->e.cubin_size);
				im->size = j->e.cubin_size;
			} else if (o->targets[t].kind == AP_SASS) {
				im->kind = FB_KIND_ELF;
				im->data = dup_bytes(j->e.cubin, j->e.cubin_size);
				im->size = j->e.cubin_size;
			} else {
				im->kind = FB_KIND_PTX;
				im->data = dup_bytes(j->e.ptx, j->e.ptx_size);
				im->size = j->e.ptx_size;
			}
			res->nimages++;
			if (!im->data)
				return seterr(err, FB_ENOMEM, "out of memory");
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
	return seterr(err, FB_ENOMEM, "out of memory");
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
	struct fb_remote_opts ro = {o->remote_cache, o->remote_header, !o->remote_read_only, o->remote_timeout_ms};
	struct fb_error e = {0};
	if (fb_remote_open(&ro, &r->remote, &e) != 0) {
		char line[sizeof(e.msg) + 64];
		snprintf(line, sizeof(line), "%s; compiling locally", e.msg);
		log_append(&res->cache_note, line);
	}
}

/* A remote hit for j: verified by fb_remote_get, then kept in the local cache. */
static int
remote_get(struct run *r, struct job *j, struct fb_compile_result *res)
{
	if (!r->remote || fb_remote_broken(r->remote, NULL))
		return 0;
	struct fb_error e = {0};
	int got = fb_remote_get(r->remote, j->key, &j->e, &e);
	if (got == FB_EFORMAT) {
		char line[sizeof(e.msg) + 512];
		snprintf(line, sizeof(line), "corrupt remote cache entry for %s (%s) ignored and recompiled: %s",
		         r->src[j->src].path, j->arch, e.msg);
		log_append(&res->cache_note, line);
		res->ncorrupt++;
	} else if (got == FB_EIO) {
		char line[sizeof(e.msg) + 64];
		snprintf(line, sizeof(line), "%s; remote cache off for this run, compiling locally", e.msg);
		log_append(&res->cache_note, line);
	}
	if (got != 0)
		return 0;
	if ((j->sass != NONE && !j->e.cubin_size) || (j->ptx != NONE && !j->e.ptx_size)) {
		fb_cache_entry_clear(&j->e);
		return 0;
	}
	fb_cache_put(r->cache_dir, j->key, &j->e, NULL); /* best effort */
	return 1;
}

static void
remote_put(struct run *r, struct job *j, struct fb_compile_result *res)
{
	if (!r->remote || fb_remote_broken(r->remote, NULL))
		return;
	struct fb_error e = {0};
	if (fb_remote_put(r->remote, j->key, &j->e, &e) == FB_EIO) {
		char line[sizeof(e.msg) + 64];
		snprintf(line, sizeof(line), "%s; results not uploaded", e.msg);
		log_append(&res->cache_note, line);
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
			         same_options(r, &r->jobs[i], &r->jobs[k]);
	if (!shared)
		return;
	if (!fb_nvrtc_has_pch(r->nv))
		snprintf(res->pch_off, sizeof(res->pch_off), "PCH off: %.400s has no automatic-PCH API", fb_nvrtc_path(r->nv));
	else if (!parent || !*parent)
		snprintf(res->pch_off, sizeof(res->pch_off), "PCH off: no private directory for it (no cache directory)");
	else if (fb_pch_dir_new(parent, r->pch_dir, sizeof(r->pch_dir), &e) != 0) {
		r->pch_dir[0] = 0;
		snprintf(res->pch_off, sizeof(res->pch_off), "PCH off: %.480s", e.msg);
	} else
		r->pch = 1;
}

int
fb_compile(const char *const *sources, size_t nsources, const struct fb_compile_opts *opts,
           struct fb_compile_result **out, struct fb_error *err)
{
	struct run r = {0};
	struct fb_compile_result *res = NULL;
	char home[PATH_MAX] = "";
	int rc;
	*out = NULL;
	if (!opts || !sources || nsources == 0)
		return seterr(err, FB_EINVAL, "no sources to compile");
	if (!opts->targets || opts->ntargets == 0)
		return seterr(err, FB_EINVAL, "no targets to compile for (the arch list is empty)");
	for (size_t i = 0; i < nsources; i++)
		for (size_t k = 0; k < i; k++)
			if (strcmp(sources[i], sources[k]) == 0)
				return seterr(err, FB_EINVAL, "%s given twice", sources[i]);
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
	if ((rc = fb_nvrtc_open(home, &r.nv, err)))
		goto out;
	r.use_cache = !opts->no_cache;
	if (r.use_cache) {
		if (opts->cache_dir && *opts->cache_dir)
			snprintf(r.cache_dir, sizeof(r.cache_dir), "%s", opts->cache_dir);
		else if (fb_cache_dir(r.cache_dir, sizeof(r.cache_dir), NULL) != 0)
			r.use_cache = 0; /* no HOME: compile without a cache */
	}
	if (r.use_cache) {
		/* a directory others can write into is refused; one that cannot be used only costs the caching */
		struct fb_error ce = {0};
		int cc = fb_cache_check(r.cache_dir, opts->cache_dir && *opts->cache_dir, &ce);
		if (cc == FB_EUNSAFE) {
			rc = seterr(err, cc, "%s", ce.msg);
			goto out;
		}
		if (cc)
			r.use_cache = 0;
	}
	if (r.use_cache && fb_key_nvrtc(r.cache_dir, fb_nvrtc_ident(r.nv), opts->cancel, r.nvrtc_key, sizeof(r.nvrtc_key)) != 0)
		r.nvrtc_key[0] = 0;
	if (opts->cache_basedir && *opts->cache_basedir && !realpath(opts->cache_basedir, r.basedir))
		snprintf(r.basedir, sizeof(r.basedir), "%s", opts->cache_basedir);
	if (!(r.src = calloc(nsources, sizeof(*r.src)))) {
		rc = seterr(err, FB_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = build_options(&r, home, err)) || (rc = load_sources(&r, err)) || (rc = make_jobs(&r, err)))
		goto out;
	if (!(res = r.res = calloc(1, sizeof(*res)))) {
		rc = seterr(err, FB_ENOMEM, "out of memory");
		goto out;
	}
	res->nvrtc_version = fb_nvrtc_version(r.nv);
	res->njobs = r.njobs;
	if ((rc = add_deps(&r, res, err)))
		goto out;
	remote_start(&r, res);
	/* Cache hits first: local, then remote. */
	for (size_t i = 0; r.use_cache && i < r.njobs; i++) {
		struct job *j = &r.jobs[i];
		struct fb_error ce = {0};
		int got = fb_cache_get(r.cache_dir, j->key, &j->e, &ce);
		if (got == FB_EFORMAT) {
			char line[sizeof(ce.msg) + 512];
			snprintf(line, sizeof(line), "corrupt cache entry for %s (%s) removed and recompiled: %s",
			         r.src[j->src].path, j->arch, ce.msg);
			log_append(&res->cache_note, line);
			res->ncorrupt++;
		}
		if (got == 0 &&
		    (j->lto ? !j->e.cubin_size : (j->sass != NONE && !j->e.cubin_size) || (j->ptx != NONE && !j->e.ptx_size))) {
			fb_cache_entry_clear(&j->e);
			got = FB_ENOIMAGE;
		}
		if (got != 0 && !remote_get(&r, j, res))
			continue;
		j->state = J_DONE;
		j->cached = got == 0 ? 1 : 2;
		res->ncached++;
		res->nremote += j->cached == 2;
		report(&r, j);
	}
	int maxjobs = opts->jobs > 0 ? opts->jobs : fb_compile_default_jobs();
	setup_pch(&r, res);
	struct job *failed = NULL;
	rc = run_jobs(&r, maxjobs, &failed, err);
	if (opts->cancel && *opts->cancel) { /* jobs killed by the stopping signal are no failure */
		rc = seterr(err, FB_ECANCELED, "compile stopped");
		goto out;
	}
	if (rc == FB_ECOMPILE && failed) {
		char *rw = fb_nvrtc_log_rewrite(failed->e.log, failed->arch);
		char first[sizeof(err->msg)];
		fb_nvrtc_log_first(rw, first, sizeof(first));
		if (blank(failed->e.log))
			snprintf(first, sizeof(first), "%s: %s for %s", r.src[failed->src].path,
			         fb_nvrtc_result_name(failed->result), failed->arch);
		res->log = rw;
		snprintf(res->failed_target, sizeof(res->failed_target), "%s", failed->arch);
		rc = seterr(err, failed->result == 5 /* NVRTC_ERROR_INVALID_OPTION */ ? FB_EINVAL : FB_ECOMPILE, "%s",
		            first);
		if (rc == FB_EINVAL) {
			/* a bad -Xnvrtc option: usage, not a build failure; no result */
			fb_compile_result_free(res);
			res = NULL;
		}
		goto out;
	}
	if (rc)
		goto out;
	for (size_t i = 0; i < r.njobs; i++) {
		struct job *j = &r.jobs[i];
		if (j->cached)
			continue;
		res->pch_made += strncmp(j->pch_note, "PCH made", 8) == 0;
		res->pch_used += strstr(j->pch_note, "PCH used") != NULL;
		res->pch_refused += strncmp(j->pch_note, "PCH refused", 11) == 0;
		res->ncompiled++;
		if (r.use_cache)
			fb_cache_put(r.cache_dir, j->key, &j->e, NULL); /* best effort */
		remote_put(&r, j, res);
	}
	rc = assemble(&r, res, err);
	if (!rc)
		count_run(&r, res);
out:
	if (rc && rc != FB_ECOMPILE) {
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
		return seterr(err, FB_ENOMEM, "out of memory");
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
