/* nvrtc.c: NVRTC loaded with dlopen from the toolkit in use, one compile at a time, and the
 * rewriting of its logs into compiler-style "file:line:col: error: msg [sm_90]" lines.
 *
 * The NVRTC C API is declared here (no CUDA headers at build time): nvrtcResult is an int
 * (0 = NVRTC_SUCCESS), nvrtcProgram an opaque pointer. The files tried are archprobe's
 * ap_nvrtc_candidates (FATBUILD_NVRTC, else <cuda_home>/{lib64,lib,targets/<triple>/lib} and
 * pip wheel trees; only when no toolkit is found at all, the bare sonames through the loader's
 * search path): one list for the arch checks and the compiler. NVRTC serialises much of a compile inside one
 * process (a global lock in the front end: two CUB compiles on two threads take as long as
 * one after the other), so compile.c runs each job in its own forked process. */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nvrtc.h"
#include "base/dlload.h"
#include "base/error.h"
#include "base/strbuf.h"

typedef void *nvrtc_program;
typedef int (*version_fn)(int *, int *);
typedef int (*num_archs_fn)(int *);
typedef int (*archs_fn)(int *);
typedef int (*create_fn)(nvrtc_program *, const char *, const char *, int, const char *const *,
                         const char *const *);
typedef int (*compile_fn)(nvrtc_program, int, const char *const *);
typedef int (*destroy_fn)(nvrtc_program *);
typedef int (*size_fn)(nvrtc_program, size_t *);
typedef int (*get_fn)(nvrtc_program, char *);

struct fb_nvrtc {
	void *dl;
	char path[1024];
	char ident[1400];       /* version + the file loaded, its size and mtime: patch releases differ */
	int version;
	version_fn version_;
	num_archs_fn num_archs;
	archs_fn archs;
	create_fn create;
	compile_fn compile;
	destroy_fn destroy;
	size_fn log_size, ptx_size, cubin_size;
	get_fn log, ptx, cubin;
	size_fn lto_size;       /* nvrtcGetLTOIRSize (12.0+), NULL when absent */
	get_fn lto;
	/* automatic PCH (NVRTC 12.8+); NULL when the library lacks them */
	int (*pch_status)(nvrtc_program);
	int (*pch_required)(nvrtc_program, size_t *);
	int (*pch_set_heap)(size_t);
	int (*pch_get_heap)(size_t *);
};


/* Resolves every entry point; false (with the missing name in why) if one is absent. */
static int
bind(struct fb_nvrtc *n, char *why, size_t whysize)
{
	const struct fb_dl_sym syms[] = {
		{"nvrtcVersion", (void **)&n->version_},
		{"nvrtcGetNumSupportedArchs", (void **)&n->num_archs},
		{"nvrtcGetSupportedArchs", (void **)&n->archs},
		{"nvrtcCreateProgram", (void **)&n->create},
		{"nvrtcCompileProgram", (void **)&n->compile},
		{"nvrtcDestroyProgram", (void **)&n->destroy},
		{"nvrtcGetProgramLogSize", (void **)&n->log_size},
		{"nvrtcGetProgramLog", (void **)&n->log},
		{"nvrtcGetPTXSize", (void **)&n->ptx_size},
		{"nvrtcGetPTX", (void **)&n->ptx},
		{"nvrtcGetCUBINSize", (void **)&n->cubin_size},
		{"nvrtcGetCUBIN", (void **)&n->cubin},
	};
	if (!fb_dl_bind(n->dl, n->path, syms, sizeof(syms) / sizeof(syms[0]), why, whysize))
		return 0;
	void *lsz = dlsym(n->dl, "nvrtcGetLTOIRSize"), *lget = dlsym(n->dl, "nvrtcGetLTOIR");
	if (lsz && lget) {
		memcpy(&n->lto_size, &lsz, sizeof(lsz));
		memcpy(&n->lto, &lget, sizeof(lget));
	}
	int major = 0, minor = 0;
	if (n->version_(&major, &minor) != 0) {
		snprintf(why, whysize, "%.200s: nvrtcVersion failed", n->path);
		return 0;
	}
	n->version = 1000 * major + 10 * minor;
	struct {
		const char *name;
		void **slot;
	} pch[] = {
		{"nvrtcGetPCHCreateStatus", (void **)&n->pch_status},
		{"nvrtcGetPCHHeapSizeRequired", (void **)&n->pch_required},
		{"nvrtcSetPCHHeapSize", (void **)&n->pch_set_heap},
		{"nvrtcGetPCHHeapSize", (void **)&n->pch_get_heap},
	};
	int all = 1;
	for (size_t i = 0; i < sizeof(pch) / sizeof(pch[0]); i++) {
		void *p = dlsym(n->dl, pch[i].name);
		all &= p != NULL;
		memcpy(pch[i].slot, &p, sizeof(p));
	}
	if (!all)
		n->pch_status = NULL; /* all four or none */
	return 1;
}

/* Loads the libnvrtc-builtins.so.X.Y beside the NVRTC at path (n->version known). NVRTC opens
 * it by soname and counts on its own $ORIGIN run path to find it; a dlopen made through an
 * interposer (a sanitizer runtime's dlopen interceptor is one) loses that, and a pip wheel's
 * folder is on no other search path. Once loaded, the soname lookup finds it whoever asks. */
static void
preload_builtins(const struct fb_nvrtc *n)
{
	const char *slash = strrchr(n->path, '/');
	char b[1200];
	if (!slash)
		return;
	snprintf(b, sizeof(b), "%.*s/libnvrtc-builtins.so.%d.%d", (int)(slash - n->path), n->path, n->version / 1000,
	         n->version % 1000 / 10);
	struct stat st;
	if (stat(b, &st) == 0)
		(void)dlopen(b, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE); /* kept loaded, as NVRTC is */
}

/* The file the handle loaded (the link map's name, so that a preloaded library wrapping a
 * symbol, such as a test's call counter, cannot stand in for NVRTC); NULL if unknown. */
static const char *
loaded_file(const struct fb_nvrtc *n)
{
	struct link_map *lm = NULL;
	if (dlinfo(n->dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
		return lm->l_name;
	return NULL;
}

int
fb_nvrtc_open(const char *cuda_home, struct fb_nvrtc **out, struct fb_error *err)
{
	char home[1024] = "", tried[768] = "", why[256] = "";
	size_t used = 0;
	*out = NULL;
	fb_dl_home(cuda_home, ap_cuda_home, home, sizeof(home));
	struct fb_nvrtc *n = calloc(1, sizeof(*n));
	char (*cand)[AP_PATH_MAX] = malloc(AP_MAX_NVRTC_CANDIDATES * sizeof(*cand));
	if (!n || !cand) {
		free(n);
		free(cand);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	int ncand = ap_nvrtc_candidates(home, cand, AP_MAX_NVRTC_CANDIDATES);
	for (int c = 0; c < ncand; c++) {
		snprintf(n->path, sizeof(n->path), "%s", cand[c]);
		n->dl = dlopen(n->path, RTLD_NOW | RTLD_LOCAL);
		if (!n->dl) {
			/* name the main places, not every variant */
			if (c == 0 || !strchr(n->path, '/') || strstr(n->path, "/lib64/libnvrtc.so.1")) {
				fb_dl_tried(tried, sizeof(tried), &used, n->path);
			}
			continue;
		}
		if (bind(n, why, sizeof(why))) {
			preload_builtins(n);
			struct stat st;
			const char *file = loaded_file(n);
			if (!file)
				file = n->path;
			if (stat(file, &st) != 0)
				memset(&st, 0, sizeof(st));
			snprintf(n->ident, sizeof(n->ident), "nvrtc %d %s %lld %lld", n->version, file,
			         (long long)st.st_size, (long long)st.st_mtime);
			free(cand);
			*out = n;
			return 0;
		}
		dlclose(n->dl);
		n->dl = NULL;
	}
	free(cand);
	free(n);
	if (why[0])
		return fb_seterr(err, FB_ENOTOOL, "cannot use NVRTC: %s", why);
	return fb_seterr(err, FB_ENOTOOL, "NVRTC not found (tried %s%s); set CUDA_HOME to a CUDA 12 or 13 toolkit (or FATBUILD_NVRTC to a libnvrtc.so)",
	              tried, home[0] ? "" : "; no CUDA toolkit found");
}

void
fb_nvrtc_close(struct fb_nvrtc *n)
{
	if (!n)
		return;
	/* NVRTC is not meant to be unloaded while its threads and allocations live; keep it
	 * mapped (dlclose would make a second open in the same process fragile). */
	free(n);
}

const char *
fb_nvrtc_path(const struct fb_nvrtc *n)
{
	return n->path;
}

const char *
fb_nvrtc_ident(const struct fb_nvrtc *n)
{
	return n->ident;
}

int
fb_nvrtc_version(const struct fb_nvrtc *n)
{
	return n->version;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int
fb_nvrtc_archs(const struct fb_nvrtc *n, int *archs, int max)
{
	int count = 0;
	if (n->num_archs(&count) != 0 || count <= 0)
		return 0;
	int *all = calloc((size_t)count, sizeof(int));
	if (!all || n->archs(all) != 0) {
		free(all);
		return 0;
	}
	qsort(all, (size_t)count, sizeof(int), cmp_int);
	int k = count < max ? count : max;
	memcpy(archs, all, (size_t)k * sizeof(int));
	free(all);
	return k;
}

const char *
fb_nvrtc_result_name(int result)
{
	static const char *const names[] = {
		"NVRTC_SUCCESS", "NVRTC_ERROR_OUT_OF_MEMORY", "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
		"NVRTC_ERROR_INVALID_INPUT", "NVRTC_ERROR_INVALID_PROGRAM", "NVRTC_ERROR_INVALID_OPTION",
		"NVRTC_ERROR_COMPILATION", "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
		"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
		"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", "NVRTC_ERROR_INTERNAL_ERROR",
		"NVRTC_ERROR_TIME_FILE_WRITE_FAILED", "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
		"NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", "NVRTC_ERROR_PCH_CREATE", "NVRTC_ERROR_CANCELLED",
		"NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
	};
	if (result < 0 || (size_t)result >= sizeof(names) / sizeof(names[0]))
		return "NVRTC_ERROR_UNKNOWN";
	return names[result];
}

void
fb_nvrtc_out_clear(struct fb_nvrtc_out *o)
{
	free(o->log);
	free(o->ptx);
	free(o->cubin);
	memset(o, 0, sizeof(*o));
}

/* Fetches one output: size, then the bytes. */
static int
fetch(nvrtc_program p, size_fn sz, get_fn get, unsigned char **data, size_t *size)
{
	size_t n = 0;
	if (sz(p, &n) != 0)
		return FB_EFORMAT;
	*data = malloc(n + 1);
	if (!*data)
		return FB_ENOMEM;
	if (n && get(p, (char *)*data) != 0) {
		free(*data);
		*data = NULL;
		return FB_EFORMAT;
	}
	(*data)[n] = 0;
	*size = n;
	return 0;
}

int
fb_nvrtc_compile(const struct fb_nvrtc *n, const char *src, const char *name, const char *const *opts, int nopts,
                 int want_ptx, int want_cubin, struct fb_nvrtc_out *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	nvrtc_program p = NULL;
	int r = n->create(&p, src, name, 0, NULL, NULL);
	if (r != 0)
		return fb_seterr(err, FB_ECOMPILE, "nvrtcCreateProgram failed: %s", fb_nvrtc_result_name(r));
	out->result = n->compile(p, nopts, opts);
	out->pch_status = -1;
	if (n->pch_status) {
		out->pch_status = n->pch_status(p);
		if (out->pch_status == 0 || out->pch_status == 14 /* HEAP_EXHAUSTED */)
			if (n->pch_required(p, &out->pch_heap_required) != 0)
				out->pch_heap_required = 0;
	}
	size_t loglen = 0;
	unsigned char *log = NULL;
	int rc = fetch(p, n->log_size, n->log, &log, &loglen);
	if (rc == 0) {
		while (loglen && log[loglen - 1] == 0)
			loglen--;
		log[loglen] = 0;
		out->log = (char *)log;
	}
	if (rc == 0 && out->result == 0 && want_ptx) {
		rc = fetch(p, n->ptx_size, n->ptx, &out->ptx, &out->ptx_size);
		while (rc == 0 && out->ptx_size && out->ptx[out->ptx_size - 1] == 0)
			out->ptx_size--;
	}
	if (rc == 0 && out->result == 0 && want_cubin == FB_NVRTC_LTOIR) {
		if (!n->lto_size)
			rc = FB_EUNSUPPORTED;
		else
			rc = fetch(p, n->lto_size, n->lto, &out->cubin, &out->cubin_size);
	} else if (rc == 0 && out->result == 0 && want_cubin)
		rc = fetch(p, n->cubin_size, n->cubin, &out->cubin, &out->cubin_size);
	n->destroy(&p);
	if (rc) {
		fb_nvrtc_out_clear(out);
		return fb_seterr(err, rc, rc == FB_ENOMEM        ? "out of memory"
		                          : rc == FB_EUNSUPPORTED ? "this NVRTC has no nvrtcGetLTOIR (LTO needs CUDA 12 or later)"
		                                                  : "cannot fetch NVRTC output");
	}
	return 0;
}

int
fb_nvrtc_has_pch(const struct fb_nvrtc *n)
{
	return n->pch_status != NULL;
}

int
fb_nvrtc_pch_heap(const struct fb_nvrtc *n, size_t *size, size_t set)
{
	if (!n->pch_status)
		return FB_EUNSUPPORTED;
	if (set && n->pch_set_heap(set) != 0)
		return FB_ENOMEM;
	if (size && n->pch_get_heap(size) != 0)
		*size = 0;
	return 0;
}

/* ---- log rewriting --------------------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
};

static void
sb_put(struct sbuf *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + len + 1)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = 0;
}

/* A diagnostic header "path(LINE): KIND: msg"; on a match fills the pieces. */
static int
parse_diag(const char *l, size_t len, size_t *path_len, long *line, size_t *rest)
{
	/* find "(digits): " */
	for (size_t i = 0; i + 3 < len; i++) {
		if (l[i] != '(' || i == 0)
			continue;
		size_t j = i + 1;
		long v = 0;
		while (j < len && l[j] >= '0' && l[j] <= '9' && v < 100000000)
			v = v * 10 + (l[j++] - '0');
		if (j == i + 1 || j + 2 >= len || l[j] != ')' || l[j + 1] != ':' || l[j + 2] != ' ')
			continue;
		*path_len = i;
		*line = v;
		*rest = j + 3;
		return 1;
	}
	return 0;
}

char *
fb_nvrtc_log_rewrite(const char *log, const char *tag)
{
	struct sbuf b = {0};
	const char *p = log ? log : "";
	sb_put(&b, "", 0);
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		size_t plen, rest;
		long line;
		if (parse_diag(p, len, &plen, &line, &rest)) {
			/* The source line and the caret line follow; the caret's offset in the copy
			 * (two leading spaces, tabs kept as tabs) is the column. */
			long col = 0;
			const char *l2 = e ? e + 1 : NULL;
			const char *l3 = l2 ? strchr(l2, '\n') : NULL;
			if (l3) {
				l3++;
				const char *q = l3;
				while (*q == ' ' || *q == '\t')
					q++;
				if (*q == '^' && q - l3 >= 2)
					col = (long)(q - l3) - 2 + 1;
			}
			char head[64];
			sb_put(&b, p, plen);
			if (col > 0)
				snprintf(head, sizeof(head), ":%ld:%ld: ", line, col);
			else
				snprintf(head, sizeof(head), ":%ld: ", line);
			sb_put(&b, head, strlen(head));
			sb_put(&b, p + rest, len - rest);
			if (tag && *tag) {
				sb_put(&b, " [", 2);
				sb_put(&b, tag, strlen(tag));
				sb_put(&b, "]", 1);
			}
		} else {
			sb_put(&b, p, len);
		}
		sb_put(&b, "\n", 1);
		p = e ? e + 1 : p + len;
	}
	/* Drop trailing blank lines. */
	while (!b.oom && b.n >= 2 && b.p[b.n - 1] == '\n' && b.p[b.n - 2] == '\n')
		b.p[--b.n] = 0;
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

void
fb_nvrtc_log_first(const char *rewritten, char *buf, size_t size)
{
	/* Prefer a line that says error. */
	static const char *const needles[] = {" error:", "error: ", NULL};
	fb_log_first_line(rewritten, needles, "compilation failed", buf, size);
}
