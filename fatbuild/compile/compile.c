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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile.h"

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
	const char *mj = getenv("MAX_JOBS");
	if (mj && *mj && strspn(mj, "0123456789") == strlen(mj)) {
		long v = strtol(mj, NULL, 10);
		if (v == 0 || v > 1024)
			return 1024; /* ninja -j 0: no limit */
		return (int)v;
	}
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
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
	char base[PATH_MAX];        /* paths below it enter the key relative to it (key.c) */
	int exact;                  /* the output may depend on paths: the key spells them exactly */
};

enum { J_PENDING, J_RUNNING, J_DONE };

struct job {
	size_t src;
	size_t sass, ptx;           /* indexes into the target list, NONE if not served */
	char arch[32];              /* what NVRTC is asked for: "sm_90a", "compute_120" */
	char key[65];
	int state;
	pid_t pid;
	int fd;
	unsigned char *rx;          /* bytes from the child */
	size_t rxn, rxcap;
	double t0, secs;
	int cached;                 /* 1: local cache, 2: remote cache */
	int result;                 /* nvrtcResult */
	struct fb_cache_entry e;
};

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
	size_t *order;
	struct pollfd *pfd;
	struct job **pj;
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
			j->sass = j->ptx = NONE;
			j->fd = -1;
			if (tg->kind == AP_SASS) {
				j->sass = t;
				for (size_t u = 0; u < o->ntargets; u++)
					if (o->targets[u].kind == AP_PTX && same_slot(tg, &o->targets[u]))
						j->ptx = u;
			} else {
				int sibling = 0;
				for (size_t u = 0; u < o->ntargets; u++)
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
			fb_sha256_str(&h, "fatbuild-compile-v1");
			snprintf(ver, sizeof(ver), "nvrtc %d", fb_nvrtc_version(r->nv));
			fb_sha256_str(&h, ver);
			/* the library itself (patch releases), by content so that machines share keys */
			fb_sha256_str(&h, r->nvrtc_key[0] ? r->nvrtc_key : fb_nvrtc_ident(r->nv));
			fb_sha256_str(&h, j->arch);
			fb_sha256_str(&h, j->ptx != NONE ? "ptx" : "-");
			fb_sha256_str(&h, j->sass != NONE ? "cubin" : "-");
			key_path(&h, &r->src[s], r->src[s].dir);
			for (size_t k = 0; k < r->ncommon; k++)
				key_path(&h, &r->src[s], r->common[k]);
			fb_sha256_update(&h, r->src[s].key, 32);
			fb_sha256_final(&h, d);
			fb_sha256_hex(d, j->key);
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

/* The child: one NVRTC compile; the answer is 40 bytes (status, nvrtcResult, three sizes)
 * then log, PTX and cubin. Returns the exit code for _exit. (Not _Noreturn: a noreturn
 * function need not preserve the caller's registers, and memory checkers that follow the
 * fork would then see the parent's blocks as lost.) */
static int
child(struct run *r, struct job *j, int fd)
{
	struct source *s = &r->src[j->src];
	size_t nopts = r->ncommon + 2;
	const char **opts = calloc(nopts, sizeof(*opts));
	char arch[64], inc[PATH_MAX + 3];
	struct fb_nvrtc_out out = {0};
	struct fb_error e = {0};
	int rc = FB_ENOMEM;
	if (opts) {
		snprintf(arch, sizeof(arch), "-arch=%s", j->arch);
		snprintf(inc, sizeof(inc), "-I%s", s->dir);
		opts[0] = arch;
		opts[1] = inc;
		for (size_t k = 0; k < r->ncommon; k++)
			opts[k + 2] = r->common[k];
		rc = fb_nvrtc_compile(r->nv, s->text, s->path, opts, (int)nopts, j->ptx != NONE, j->sass != NONE, &out, &e);
	}
	const char *log = rc ? e.msg : out.log ? out.log : "";
	unsigned char hdr[40];
	put64(hdr, (uint64_t)rc);
	put64(hdr + 8, (uint64_t)(int64_t)out.result);
	put64(hdr + 16, strlen(log));
	put64(hdr + 24, rc ? 0 : out.ptx_size);
	put64(hdr + 32, rc ? 0 : out.cubin_size);
	int bad = write_all(fd, hdr, sizeof(hdr)) || write_all(fd, log, strlen(log));
	if (!bad && !rc && out.ptx_size)
		bad = write_all(fd, out.ptx, out.ptx_size);
	if (!bad && !rc && out.cubin_size)
		bad = write_all(fd, out.cubin, out.cubin_size);
	fb_nvrtc_out_clear(&out);
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

/* Parses a finished child's bytes into j->e / j->result. */
static int
collect(struct run *r, struct job *j, int status, struct fb_error *err)
{
	const char *src = r->src[j->src].path;
	if (WIFSIGNALED(status))
		return seterr(err, FB_ECOMPILE, "%s: NVRTC died with signal %d compiling for %s", src,
		              WTERMSIG(status), j->arch);
	/* A complete answer counts even with a nonzero exit (a memory checker following the fork
	 * may set one); an incomplete one is a failure. */
	uint64_t rc = 0, res = 0, nl = 0, np = 0, nc = 0;
	if (j->rxn >= 40) {
		rc = get64(j->rx);
		res = get64(j->rx + 8);
		nl = get64(j->rx + 16);
		np = get64(j->rx + 24);
		nc = get64(j->rx + 32);
	}
	if (j->rxn < 40 || nl > j->rxn || np > j->rxn || nc > j->rxn || 40 + nl + np + nc != j->rxn)
		return seterr(err, FB_ECOMPILE, "%s: the NVRTC process for %s ended without an answer (exit %d)", src,
		              j->arch, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	const unsigned char *p = j->rx + 40;
	if (rc != 0)
		return seterr(err, (int)rc, "%s: %s: %.*s", src, j->arch, (int)nl, (const char *)p);
	j->result = (int)(int64_t)res;
	j->e.log = (char *)dup_bytes(p, nl);
	if (np)
		j->e.ptx = dup_bytes(p + nl, np);
	if (nc)
		j->e.cubin = dup_bytes(p + nl + np, nc);
	j->e.ptx_size = np;
	j->e.cubin_size = nc;
	if (!j->e.log || (np && !j->e.ptx) || (nc && !j->e.cubin))
		return seterr(err, FB_ENOMEM, "out of memory");
	if (j->result == 0 && ((j->ptx != NONE && !np) || (j->sass != NONE && !nc)))
		return seterr(err, FB_ECOMPILE, "%s: NVRTC returned no %s for %s", src, nc ? "PTX" : "cubin", j->arch);
	return 0;
}

static void
kill_all(struct run *r)
{
	for (size_t i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];
		if (j->state != J_RUNNING)
			continue;
		kill(j->pid, SIGKILL);
		close(j->fd);
		j->fd = -1;
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
		j->state = J_DONE;
	}
}

static int
start(struct run *r, struct job *j, struct fb_error *err)
{
	int p[2];
	if (pipe(p) != 0)
		return seterr(err, FB_EIO, "pipe failed: %s", strerror(errno));
	pid_t pid = fork(); /* the child leaves with _exit: no stdio buffer is flushed twice */
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return seterr(err, FB_EIO, "fork failed: %s", strerror(e));
	}
	if (pid == 0) {
		close(p[0]);
		signal(SIGPIPE, SIG_DFL);
		_exit(child(r, j, p[1]));
	}
	close(p[1]);
	j->pid = pid;
	j->fd = p[0];
	j->state = J_RUNNING;
	j->t0 = now();
	return 0;
}

/* A job's expected cost: the headers its source reads; SASS costs more than PTX alone. */
static size_t
weight(const struct run *r, size_t i)
{
	const struct job *j = &r->jobs[i];
	return 2 * (r->src[j->src].deps.n + 1) + (j->sass != NONE);
}

/* Runs the pending jobs; on the first failure kills the rest. *failed: that job. */
static int
run_jobs(struct run *r, int maxjobs, struct job **failed, struct fb_error *err)
{
	size_t next = 0, running = 0;
	struct pollfd *pfd = r->pfd = calloc(r->njobs ? r->njobs : 1, sizeof(*pfd));
	struct job **pj = r->pj = calloc(r->njobs ? r->njobs : 1, sizeof(*pj));
	/* Longest first: a source that reads more headers (CUB) starts before small ones, which
	 * then fill the gaps. Stable, so the launch order is deterministic. */
	size_t *order = r->order = calloc(r->njobs ? r->njobs : 1, sizeof(*order));
	int rc = 0;
	*failed = NULL;
	if (!pfd || !pj || !order) {
		rc = seterr(err, FB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r->njobs; i++)
		order[i] = i;
	for (size_t i = 1; i < r->njobs; i++)
		for (size_t k = i; k > 0 && weight(r, order[k]) > weight(r, order[k - 1]); k--) {
			size_t t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	for (;;) {
		while (!rc && running < (size_t)maxjobs && next < r->njobs) {
			struct job *j = &r->jobs[order[next++]];
			if (j->state != J_PENDING)
				continue;
			if ((rc = start(r, j, err)))
				break;
			running++;
		}
		if (rc || running == 0)
			break;
		size_t n = 0;
		for (size_t i = 0; i < r->njobs; i++)
			if (r->jobs[i].state == J_RUNNING) {
				pfd[n].fd = r->jobs[i].fd;
				pfd[n].events = POLLIN;
				pj[n++] = &r->jobs[i];
			}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = seterr(err, FB_EIO, "poll failed: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < n && !rc; i++) {
			struct job *j = pj[i];
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (j->rxcap - j->rxn < 65536) {
				size_t cap = j->rxcap ? 2 * j->rxcap : 262144;
				unsigned char *b = realloc(j->rx, cap);
				if (!b) {
					rc = seterr(err, FB_ENOMEM, "out of memory");
					break;
				}
				j->rx = b;
				j->rxcap = cap;
			}
			ssize_t k = read(j->fd, j->rx + j->rxn, j->rxcap - j->rxn);
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k > 0) {
				j->rxn += (size_t)k;
				continue;
			}
			/* EOF (or a read error): the child is done. */
			close(j->fd);
			j->fd = -1;
			int status = 0;
			while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
				;
			j->state = J_DONE;
			j->secs = now() - j->t0;
			running--;
			rc = collect(r, j, status, err);
			free(j->rx);
			j->rx = NULL;
			j->rxn = j->rxcap = 0;
			if (!rc && j->result != 0) {
				*failed = j;
				rc = FB_ECOMPILE;
			}
			if (!rc)
				report(r, j);
		}
		if (rc)
			break;
	}
	if (rc)
		kill_all(r);
out:
	free(order);
	free(pfd);
	free(pj);
	r->order = NULL;
	r->pfd = NULL;
	r->pj = NULL;
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
			if (o->targets[t].kind == AP_SASS) {
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
	for (size_t i = 0; i < r->njobs; i++) {
		free(r->jobs[i].rx);
		fb_cache_entry_clear(&r->jobs[i].e);
	}
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
	if (r.use_cache && fb_key_nvrtc(r.cache_dir, fb_nvrtc_ident(r.nv), r.nvrtc_key, sizeof(r.nvrtc_key)) != 0)
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
		if (got == 0 && ((j->sass != NONE && !j->e.cubin_size) || (j->ptx != NONE && !j->e.ptx_size))) {
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
	struct job *failed = NULL;
	rc = run_jobs(&r, maxjobs, &failed, err);
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
