/* build.c: extension builds. Generates build.ninja in the build directory and runs ninja:
 *   kernel .cu  --fatbuild compile (NVRTC), one edge per (file, target)-->  obj/K.sm_86.fatbin
 *               --fatbuild embed --merge-->  obj/K.fatbin  (one container per kernel source)
 *   all K.fatbin --fatbuild embed --hidden --symbol fbrt_fatbin-->  obj/fatbin.o
 *   host .c/.cpp --$CC/$CXX -fPIC -MD-->  obj/H.o;  --backend nvcc: .cu --nvcc -c gencode-->  obj/K.o
 *   link: objects + libfatbuild_runtime.a --$CXX -shared-->  OUT.tmp, renamed to OUT
 * With rdc/lto (relocatable device code) the kernels are compiled --rdc/--lto and device-linked
 * before the embed, per target (dlink.c): obj/K.sm_86.fatbin of every kernel --fatbuild dlink-->
 * obj/dlink.sm_86.fatbin, all targets --embed --merge--> obj/dlink.fatbin; with nvcc the -rdc=true
 * objects --nvcc -dlink--> obj/dlink.o, and the link adds -lcudadevrt.
 * Every edge carries its own command ($cmd), so ninja rebuilds exactly the edges whose command
 * changed (a flag, the arch list) or whose inputs did (depfiles for headers). */
#define _GNU_SOURCE /* pipe2 */
#include <ctype.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fatbuild.h"
#include "common/error_priv.h"
#include "builddir.h"
#include "dlink.h"
#include "repro.h"
#include "backend.h"
#include "flags.h"
#include "torch.h"

extern char **environ;

#define PATHMAX 4096

/* snprintf that reports truncation (-1) instead of warning about it. */
static int
bfmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
bfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

/* ---- small string helpers ---- */

struct str {
	char *s;
	size_t len, cap;
	bool oom;
};

static void
sput(struct str *b, const char *s)
{
	size_t n = strlen(s);
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

/* Appends one shell word (quoted when needed), preceded by a space unless first. */
static int
sarg(struct str *b, const char *arg, struct fb_error *err)
{
	char *q;
	int rc = fb_shell_quote(arg, &q, err);
	if (rc)
		return rc;
	if (b->len)
		sput(b, " ");
	sput(b, q);
	free(q);
	return 0;
}

/* Appends the blank-separated words of s as separate arguments. */
static int
swords(struct str *b, const char *s, struct fb_error *err)
{
	if (!s)
		return 0;
	char *copy = strdup(s);
	if (!copy)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = 0;
	for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w && !rc; w = strtok_r(NULL, " \t\n", &save))
		rc = sarg(b, w, err);
	free(copy);
	return rc;
}

struct list {
	char **v;
	size_t n, cap;
	bool oom;
};

static const char *
ladd(struct list *l, const char *s)
{
	if (l->oom)
		return NULL;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->oom = true;
			return NULL;
		}
		l->v = v;
		l->cap = cap;
	}
	char *d = strdup(s);
	if (!d) {
		l->oom = true;
		return NULL;
	}
	l->v[l->n++] = d;
	return d;
}

static void
lfree(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- paths and tools ---- */

/* An absolute, normalised path for an existing file. */
static int
abs_existing(const char *path, char *out, struct fb_error *err)
{
	if (!realpath(path, out))
		return fb_seterr(err, FB_EIO, "%s: %s", path, strerror(errno));
	return 0;
}

/* An absolute path for a file that may not exist yet: its directory must. */
static int
abs_output(const char *path, char *out, struct fb_error *err)
{
	char dir[PATHMAX], real[PATHMAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!base[0])
		return fb_seterr(err, FB_EINVAL, "output '%s' names a directory", path);
	if (slash) {
		size_t n = (size_t)(slash - path);
		if (n >= sizeof(dir))
			return fb_seterr(err, FB_EINVAL, "%s: path too long", path);
		memcpy(dir, path, n);
		dir[n] = 0;
		if (n == 0)
			strcpy(dir, "/");
	} else {
		strcpy(dir, ".");
	}
	if (!realpath(dir, real))
		return fb_seterr(err, FB_EIO, "output directory %s: %s", dir, strerror(errno));
	if (bfmt(out, PATHMAX, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base) < 0)
		return fb_seterr(err, FB_EINVAL, "%s: path too long", path);
	return 0;
}

/* Searches PATH for an executable; returns 0 and fills out. */
static int
which(const char *prog, char *out)
{
	if (strchr(prog, '/')) {
		if (access(prog, X_OK) != 0)
			return -1;
		return realpath(prog, out) ? 0 : -1;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		char cand[PATHMAX];
		if (n && bfmt(cand, sizeof(cand), "%.*s/%s", (int)n, path, prog) >= 0 &&
		    access(cand, X_OK) == 0) {
			if (realpath(cand, out))
				return 0;
		}
		path += n + (end ? 1 : 0);
	}
	return -1;
}

static bool __attribute__((unused))
exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

enum lang { L_KERNEL, L_C, L_CXX, L_NVCC };

static int
classify(const char *src, enum fb_backend backend, enum lang *out)
{
	const char *dot = strrchr(src, '.');
	const char *slash = strrchr(src, '/');
	if (!dot || (slash && dot < slash))
		return -1;
	if (strcmp(dot, ".cu") == 0)
		*out = backend == FB_BACKEND_NVCC ? L_NVCC : L_KERNEL;
	else if (strcmp(dot, ".c") == 0)
		*out = L_C;
	else if (strcmp(dot, ".cc") == 0 || strcmp(dot, ".cpp") == 0 || strcmp(dot, ".cxx") == 0 ||
	         strcmp(dot, ".C") == 0)
		*out = L_CXX;
	else
		return -1;
	return 0;
}

/* "obj/3_saxpy.cu" style stem: index plus the base name with odd bytes replaced. */
static void
stem(size_t i, const char *src, char *out, size_t size)
{
	const char *base = strrchr(src, '/');
	base = base ? base + 1 : src;
	int n = snprintf(out, size, "%zu_", i);
	for (const char *p = base; *p && (size_t)n + 1 < size; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		      c == '_'))
			c = '_';
		out[n++] = c;
	}
	out[n] = 0;
}

static void
default_name(const char *output, char *out, size_t size)
{
	const char *base = strrchr(output, '/');
	base = base ? base + 1 : output;
	if (strncmp(base, "lib", 3) == 0 && base[3] && base[3] != '.')
		base += 3;
	size_t n = strcspn(base, ".");
	if (n == 0)
		n = strlen(base);
	bfmt(out, size, "%.*s", (int)n, base);
	for (char *p = out; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-'))
			*p = '_';
	if (!out[0])
		bfmt(out, size, "ext");
}

/* The fatbuild program, its runtime library and the runtime header's directory. */
struct tools {
	char fatbuild[PATHMAX];
	char runtime[PATHMAX];
	char include[PATHMAX];
	char ninja[PATHMAX];
	char cc[PATHMAX], cxx[PATHMAX];
	char cuda_home[PATHMAX];
};

static int
find_tools(const struct fb_build_opts *o, bool need_nvcc, struct tools *t, struct fb_error *err)
{
	const char *fb = o->fatbuild ? o->fatbuild : getenv("FATBUILD_PROGRAM");
	if (!fb || !fb[0])
		fb = "fatbuild";
	if (which(fb, t->fatbuild) != 0)
		return fb_seterr(err, FB_ENOTOOL, "cannot find the fatbuild program '%s' (set FATBUILD_PROGRAM or put it on PATH)", fb);
	char dir[PATHMAX];
	bfmt(dir, sizeof(dir), "%s", t->fatbuild);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	const char *rt = o->runtime_lib ? o->runtime_lib : getenv("FATBUILD_RUNTIME");
	char cand[PATHMAX];
	if (rt && rt[0]) {
		bfmt(cand, sizeof(cand), "%s", rt);
	} else {
		bfmt(cand, sizeof(cand), "%s/../lib/libfatbuild_runtime.a", dir);
#ifdef FB_RUNTIME_BUILD_PATH
		if (!exists(cand))
			bfmt(cand, sizeof(cand), "%s", FB_RUNTIME_BUILD_PATH);
#endif
	}
	if (!realpath(cand, t->runtime))
		return fb_seterr(err, FB_ENOTOOL, "cannot find libfatbuild_runtime.a (tried %s; set FATBUILD_RUNTIME)", cand);
	const char *inc = o->include_dir ? o->include_dir : getenv("FATBUILD_INCLUDE");
	if (inc && inc[0]) {
		bfmt(cand, sizeof(cand), "%s", inc);
	} else {
		bfmt(cand, sizeof(cand), "%s/../include", dir);
		char h[PATHMAX + 32];
		bfmt(h, sizeof(h), "%s/fatbuild_runtime.h", cand);
#ifdef FB_INCLUDE_BUILD_DIR
		if (!exists(h))
			bfmt(cand, sizeof(cand), "%s", FB_INCLUDE_BUILD_DIR);
#endif
	}
	if (!realpath(cand, t->include))
		return fb_seterr(err, FB_ENOTOOL, "cannot find the directory of fatbuild_runtime.h (tried %s; set FATBUILD_INCLUDE)",
		            cand);
	const char *nj = o->ninja ? o->ninja : getenv("FATBUILD_NINJA");
	if (!nj || !nj[0])
		nj = "ninja";
	if (which(nj, t->ninja) != 0)
		return fb_seterr(err, FB_ENOTOOL,
		            "ninja not found ('%s'): install it (apt-get install ninja-build, pip install ninja) or set "
		            "FATBUILD_NINJA",
		            nj);
	const char *cc = getenv("CC"), *cxx = getenv("CXX");
	bfmt(t->cc, sizeof(t->cc), "%s", cc && cc[0] ? cc : "cc");
	bfmt(t->cxx, sizeof(t->cxx), "%s", cxx && cxx[0] ? cxx : "c++");
	t->cuda_home[0] = 0;
	if (need_nvcc) {
		struct ap_error ae = {0};
		if (ap_cuda_home(t->cuda_home, sizeof(t->cuda_home), &ae) != 0)
			return fb_seterr(err, FB_ENOTOOL, "--backend nvcc: %s", ae.msg);
		char nv[PATHMAX + 16];
		bfmt(nv, sizeof(nv), "%s/bin/nvcc", t->cuda_home);
		if (access(nv, X_OK) != 0)
			return fb_seterr(err, FB_ENOTOOL, "--backend nvcc: %s not found (set CUDA_HOME)", nv);
	}
	return 0;
}

/* $CC / $CXX may be a command with words ("ccache gcc", "gcc -m64"): its first word must be a
 * program on PATH (or a path), else the build would stop at the first host edge with a
 * shell's "not found". */
static int
check_compiler(const char *var, const char *value, struct fb_error *err)
{
	char **w = NULL, found[PATHMAX];
	size_t n = 0;
	int rc = fb_words_split(value, &w, &n, err);
	if (rc)
		return rc;
	if (n == 0)
		rc = fb_seterr(err, FB_ENOTOOL, "%s is blank: set it to a compiler command, e.g. %s=%s", var, var,
		          strcmp(var, "CC") == 0 ? "cc" : "c++");
	else if (which(w[0], found) != 0)
		rc = fb_seterr(err, FB_ENOTOOL, "%s='%.300s': '%.300s' %s", var, value, w[0],
		          strchr(w[0], '/') ? "is not an executable file" : "is not on PATH");
	fb_words_free(w);
	return rc;
}

/* ---- the generator ---- */

struct gen {
	const struct fb_build_opts *o;
	struct tools t;
	struct fb_ninja *nj;
	char dir[PATHMAX];     /* build dir */
	char out[PATHMAX];     /* absolute output */
	struct ap_archlist *archs;
	struct list objects;   /* link inputs */
	struct list fatbins;   /* per-kernel-source merged fatbins */
	bool any_cxx, any_nvcc, any_cu;
	bool reloc;            /* rdc or lto: device link before the embed */
	struct list *tparts;   /* reloc, nvrtc: per target, every kernel's obj/K.TARGET.fatbin */
	size_t ntparts;
	struct list nvcc_objs; /* reloc, nvcc: the -rdc=true objects */
	enum lang *langs;      /* per source: --backend auto decided in fb_build */
	struct fb_torch *torch; /* --torch: what torch said; else NULL */
	char name[256];
};

static int
edge(struct gen *g, const char *rule, const char *out, const char *const *in, size_t nin, const char *const *implicit,
     size_t nimplicit, const char *cmd, const char *desc, const char *dep, struct fb_error *err)
{
	const char *vars[6] = {"cmd", cmd, "desc", desc, "dep", dep};
	struct fb_ninja_edge e = {rule, &out, 1, in, nin, implicit, nimplicit, NULL, 0, vars, dep ? 3 : 2};
	return fb_ninja_edge(g->nj, &e, err);
}

/* The launcher words (ccache, sccache, distcc) that go before a host compiler or nvcc. */
static int
add_launcher(struct gen *g, struct str *c, struct fb_error *err)
{
	const char *l = g->o->launcher ? g->o->launcher : getenv("FATBUILD_LAUNCHER");
	return l && *l ? swords(c, l, err) : 0;
}

/* -I and -D words for a compiler command. */
static int
add_includes_defines(struct gen *g, struct str *c, struct fb_error *err)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < g->o->ninclude_dirs; i++) {
		char abs[PATHMAX], arg[PATHMAX + 3];
		if (!realpath(g->o->include_dirs[i], abs))
			bfmt(abs, sizeof(abs), "%s", g->o->include_dirs[i]);
		bfmt(arg, sizeof(arg), "-I%s", abs);
		rc = sarg(c, arg, err);
	}
	for (size_t i = 0; !rc && i < g->o->ndefines; i++) {
		char arg[1024];
		bfmt(arg, sizeof(arg), "-D%s", g->o->defines[i]);
		rc = sarg(c, arg, err);
	}
	return rc;
}

/* Each word of s as `-Xnvrtc WORD` (fatbuild compile hands it to NVRTC). */
static int
add_xnvrtc(struct str *b, const char *s, struct fb_error *err)
{
	if (!s)
		return 0;
	char *copy = strdup(s);
	if (!copy)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = 0;
	for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w && !rc; w = strtok_r(NULL, " \t\n", &save)) {
		rc = sarg(b, "-Xnvrtc", err);
		if (!rc)
			rc = sarg(b, w, err);
	}
	free(copy);
	return rc;
}

/* Appends each word of a NULL-terminated vector (NULL: out of memory). */
static int
svec(struct str *b, char **v, struct fb_error *err)
{
	if (!v)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; !rc && v[i]; i++)
		rc = sarg(b, v[i], err);
	fb_torch_words_free(v);
	return rc;
}

static int
gen_kernel(struct gen *g, size_t idx, const char *src, struct fb_error *err)
{
	char st[256], merged[PATHMAX + 300];
	stem(idx, src, st, sizeof(st));
	bfmt(merged, sizeof(merged), "%s/obj/%s.fatbin", g->dir, st);
	struct list parts = {0};
	int rc = 0;
	size_t n = ap_archlist_count(g->archs);
	for (size_t i = 0; !rc && i < n; i++) {
		char tname[32], out[PATHMAX + 400], dep[PATHMAX + 400], desc[512];
		ap_target_name(ap_archlist_get(g->archs, i), tname, sizeof(tname));
		bfmt(out, sizeof(out), "%s/obj/%s.%s.fatbin", g->dir, st, tname);
		bfmt(dep, sizeof(dep), "%s.d", out);
		struct str c = {0};
		rc = sarg(&c, g->t.fatbuild, err);
		if (!rc)
			rc = sarg(&c, "compile", err);
		if (!rc && g->reloc)
			rc = sarg(&c, g->o->lto ? "--lto" : "--rdc", err);
		if (!rc)
			rc = sarg(&c, "--arch-list", err);
		if (!rc)
			rc = sarg(&c, tname, err);
		if (!rc)
			rc = add_includes_defines(g, &c, err);
		if (!rc)
			rc = add_xnvrtc(&c, g->o->cuda_flags, err);
		if (!rc)
			rc = sarg(&c, "--depfile", err);
		if (!rc)
			rc = sarg(&c, dep, err);
		if (!rc)
			rc = sarg(&c, "-o", err);
		if (!rc)
			rc = sarg(&c, out, err);
		if (!rc)
			rc = sarg(&c, src, err);
		bfmt(desc, sizeof(desc), "NVRTC %s %s", tname, strrchr(src, '/') ? strrchr(src, '/') + 1 : src);
		if (!rc && c.oom)
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		/* In the nvrtc pool: -j may be sized for host compiles a launcher farms out. */
		const char *vars[8] = {"cmd", c.s, "desc", desc, "dep", dep, "pool", "nvrtc"};
		struct fb_ninja_edge ke = {"kernel", (const char *const[]){out}, 1, &src, 1, NULL, 0, NULL, 0, vars, 4};
		if (!rc)
			rc = fb_ninja_edge(g->nj, &ke, err);
		free(c.s);
		ladd(&parts, out);
		if (g->reloc)
			ladd(&g->tparts[i], out);
	}
	if (g->reloc) {
		lfree(&parts);
		return rc; /* linked per target by gen_dlink */
	}
	struct str c = {0};
	if (!rc)
		rc = sarg(&c, g->t.fatbuild, err);
	if (!rc)
		rc = sarg(&c, "embed", err);
	if (!rc)
		rc = sarg(&c, "--merge", err);
	if (!rc)
		rc = sarg(&c, "-o", err);
	if (!rc)
		rc = sarg(&c, merged, err);
	for (size_t i = 0; !rc && i < parts.n; i++)
		rc = sarg(&c, parts.v[i], err);
	if (!rc && (c.oom || parts.oom))
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	char desc[512];
	bfmt(desc, sizeof(desc), "MERGE %s", strrchr(merged, '/') + 1);
	if (!rc)
		rc = edge(g, "merge", merged, (const char *const *)parts.v, parts.n, NULL, 0, c.s, desc, NULL, err);
	free(c.s);
	lfree(&parts);
	ladd(&g->fatbins, merged);
	return rc;
}

/* -ffile-prefix-map for the directory above every source and for the build directory (the
 * compiler's working directory): debug info and __FILE__ name paths relative to them, so an
 * object does not depend on where the checkout lies. Through nvcc as -Xcompiler words. */
static int
prefix_maps(struct gen *g, struct str *c, bool via_nvcc, struct fb_error *err)
{
	char root[PATHMAX], arg[2 * PATHMAX + 32];
	fb_repro_root(g->o->sources, g->o->nsources, root, sizeof(root));
	const char *from[2] = {root, g->dir};
	int rc = 0;
	for (int i = 0; i < 2 && !rc; i++) {
		if (strcmp(from[i], "/") == 0 || (i == 1 && strcmp(from[1], from[0]) == 0))
			continue;
		if (via_nvcc && strpbrk(from[i], " ,\t"))
			continue; /* nvcc splits -Xcompiler values at commas and blanks */
		if (bfmt(arg, sizeof(arg), "-ffile-prefix-map=%s=.", from[i]) < 0)
			continue;
		if (via_nvcc)
			rc = sarg(c, "-Xcompiler", err);
		if (!rc)
			rc = sarg(c, arg, err);
	}
	return rc;
}

/* -Xcudafe --frandom-seed=SEED: nvcc's front end would otherwise put its process id into the
 * names of internal symbols (repro.c). */
static int
nvcc_seed(struct gen *g, const char *src, const char *gencode, struct str *c, struct fb_error *err)
{
	char dir[PATHMAX], cudainc[PATHMAX + 16], seed[17];
	const char *dirs[66];
	size_t nd = 0;
	bfmt(dir, sizeof(dir), "%s", src);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	dirs[nd++] = dir;
	for (size_t i = 0; i < g->o->ninclude_dirs && nd < 64; i++)
		dirs[nd++] = g->o->include_dirs[i];
	bfmt(cudainc, sizeof(cudainc), "%s/include", g->t.cuda_home);
	dirs[nd++] = cudainc;
	struct str flags = {0};
	sput(&flags, gencode);
	sput(&flags, " | ");
	sput(&flags, g->o->cxxflags ? g->o->cxxflags : "");
	for (size_t i = 0; i < g->o->ndefines; i++) {
		sput(&flags, " -D");
		sput(&flags, g->o->defines[i]);
	}
	if (flags.oom) {
		free(flags.s);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	int rc = fb_repro_seed(src, dirs, nd, flags.s, seed, err);
	free(flags.s);
	char arg[64];
	bfmt(arg, sizeof(arg), "--frandom-seed=%s", seed);
	if (!rc)
		rc = sarg(c, "-Xcudafe", err);
	if (!rc)
		rc = sarg(c, arg, err);
	/* Both front ends hash the absolute source path into internal names: give them the path
	 * below the sources' common directory instead. */
	char root[PATHMAX], name[PATHMAX + 32];
	fb_repro_root(g->o->sources, g->o->nsources, root, sizeof(root));
	size_t rl = strlen(root);
	const char *rel = strncmp(src, root, rl) == 0 && src[rl] == '/' ? src + rl + 1 : src;
	bfmt(name, sizeof(name), "--orig_src_path_name=%s", rel);
	if (!rc)
		rc = sarg(c, "-Xcudafe", err);
	if (!rc)
		rc = sarg(c, name, err);
	if (!rc)
		rc = sarg(c, "-Xcicc", err);
	if (!rc)
		rc = sarg(c, name, err);
	return rc;
}

static int
gen_host(struct gen *g, size_t idx, const char *src, enum lang lang, struct fb_error *err)
{
	char st[256], out[PATHMAX + 300], dep[PATHMAX + 310], desc[512];
	stem(idx, src, st, sizeof(st));
	bfmt(out, sizeof(out), "%s/obj/%s.o", g->dir, st);
	bfmt(dep, sizeof(dep), "%s.d", out);
	struct str c = {0};
	int rc = 0;
	if (lang == L_NVCC) {
		char nvcc[PATHMAX + 16];
		bfmt(nvcc, sizeof(nvcc), "%s/bin/nvcc", g->t.cuda_home);
		char *gencode = NULL;
		struct ap_error ae = {0};
		if (ap_archlist_format(g->archs, AP_FMT_NVCC, &gencode, &ae) != 0)
			return fb_seterr(err, FB_EARCH, "%s", ae.msg);
		rc = add_launcher(g, &c, err);
		/* $CXX's words: launchers (ccache) run nvcc itself, the compiler is -ccbin, the
		 * options after it go to the host compiler ("ccache g++ -m64": ccache nvcc ... -ccbin
		 * g++ -Xcompiler -m64). */
		char **w = NULL;
		size_t nw = 0, k = 0;
		if (!rc)
			rc = fb_words_split(g->t.cxx, &w, &nw, err);
		while (!rc && k < nw && w[k][0] != '-')
			k++;
		for (size_t i = 0; !rc && i + 1 < k; i++)
			rc = sarg(&c, w[i], err);
		if (!rc)
			rc = sarg(&c, nvcc, err);
		if (!rc)
			rc = swords(&c, "-c -O2 -Xcompiler -fPIC", err);
		if (!rc && g->reloc)
			rc = sarg(&c, "-rdc=true", err);
		if (!rc && g->o->lto) {
			char *lto = NULL;
			rc = fb_dlink_nvcc_lto_gencode(gencode, &lto, err);
			if (!rc)
				rc = swords(&c, lto, err);
			free(lto);
		} else if (!rc)
			rc = swords(&c, gencode, err);
		if (!rc)
			rc = nvcc_seed(g, src, gencode, &c, err);
		free(gencode);
		if (!rc)
			rc = sarg(&c, "-ccbin", err);
		if (!rc)
			rc = sarg(&c, k ? w[k - 1] : "c++", err);
		for (size_t i = k; !rc && i < nw; i++) {
			rc = sarg(&c, "-Xcompiler", err);
			if (!rc)
				rc = sarg(&c, w[i], err);
		}
		fb_words_free(w);
		if (!rc && g->torch)
			rc = svec(&c, fb_torch_nvcc_words(g->torch, g->name, g->t.cuda_home, g->o->nvcc_flags), err);
		/* Host-compiler flags through -Xcompiler; nvcc's own and the shared CUDA flags raw. */
		char *host = rc ? NULL : fb_nvcc_host_words(g->o->cxxflags);
		if (!rc && !host)
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		if (!rc)
			rc = swords(&c, host, err);
		free(host);
		if (!rc)
			rc = swords(&c, g->o->cuda_flags, err);
		if (!rc)
			rc = swords(&c, g->o->nvcc_flags, err);
		g->any_nvcc = true;
	} else {
		rc = add_launcher(g, &c, err);
		if (!rc)
			rc = swords(&c, lang == L_C ? g->t.cc : g->t.cxx, err); /* each word of $CC on its own */
		if (!rc)
			rc = swords(&c, "-c -O2 -fPIC", err);
		if (!rc && g->torch && lang == L_CXX)
			rc = svec(&c, fb_torch_cxx_words(g->torch, g->name, g->t.cuda_home, g->o->cxxflags), err);
		if (!rc)
			rc = swords(&c, lang == L_C ? g->o->cflags : g->o->cxxflags, err);
		if (lang == L_CXX)
			g->any_cxx = true;
	}
	if (!rc)
		rc = prefix_maps(g, &c, lang == L_NVCC, err);
	char inc[PATHMAX + 3];
	bfmt(inc, sizeof(inc), "-I%s", g->t.include);
	if (!rc)
		rc = sarg(&c, inc, err);
	if (!rc)
		rc = add_includes_defines(g, &c, err);
	if (!rc)
		rc = swords(&c, "-MD -MF", err);
	if (!rc)
		rc = sarg(&c, dep, err);
	if (!rc)
		rc = sarg(&c, "-o", err);
	if (!rc)
		rc = sarg(&c, out, err);
	if (!rc)
		rc = sarg(&c, src, err);
	if (!rc && lang == L_NVCC) {
		/* nvcc names its temporary files tmpxft_<pid>_...; the host compiler records that
		 * name in the object's file symbol. Same length replaced, nothing else moves. */
		struct str q = {0};
		rc = sarg(&q, out, err);
		sput(&c, " && LC_ALL=C sed -i 's/tmpxft_[0-9a-f]\\{8\\}_/tmpxft_00000000_/g' ");
		sput(&c, q.s ? q.s : "");
		free(q.s);
	}
	if (!rc && c.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	bfmt(desc, sizeof(desc), "%s %s", lang == L_NVCC ? "NVCC" : lang == L_C ? "CC" : "CXX",
	         strrchr(src, '/') ? strrchr(src, '/') + 1 : src);
	if (!rc)
		rc = edge(g, "cc", out, &src, 1, NULL, 0, c.s, desc, dep, err);
	free(c.s);
	ladd(&g->objects, out);
	if (lang == L_NVCC && g->reloc)
		ladd(&g->nvcc_objs, out);
	return rc;
}

/* The device link of relocatable code: per target with fatbuild dlink (nvrtc), merged into one
 * container for the embed; or one nvcc -dlink object (nvcc). */
static int
gen_dlink(struct gen *g, struct fb_error *err)
{
	int rc = 0;
	size_t n = g->ntparts;
	struct list linked = {0};
	for (size_t i = 0; !rc && i < n; i++) {
		const struct ap_target *t = ap_archlist_get(g->archs, i);
		char tname[32], out[PATHMAX + 64], desc[96];
		ap_target_name(t, tname, sizeof(tname));
		if (!g->tparts[i].n)
			continue;
		bfmt(out, sizeof(out), "%s/obj/dlink.%s.fatbin", g->dir, tname);
		struct fb_dlink_edge e = {(const char *const *)g->tparts[i].v, g->tparts[i].n, out, g->o->lto,
		                          t->kind == AP_SASS};
		char *cmd = NULL;
		rc = fb_dlink_nvrtc_cmd(g->t.fatbuild, tname, &e, &cmd, err);
		bfmt(desc, sizeof(desc), "DLINK %s", tname);
		if (!rc)
			rc = edge(g, "dlink", out, e.inputs, e.ninputs, NULL, 0, cmd, desc, NULL, err);
		free(cmd);
		ladd(&linked, out);
	}
	if (!rc && linked.n) {
		char merged[PATHMAX + 32];
		bfmt(merged, sizeof(merged), "%s/obj/dlink.fatbin", g->dir);
		struct str c = {0};
		rc = sarg(&c, g->t.fatbuild, err);
		if (!rc)
			rc = swords(&c, "embed --merge -o", err);
		if (!rc)
			rc = sarg(&c, merged, err);
		for (size_t i = 0; !rc && i < linked.n; i++)
			rc = sarg(&c, linked.v[i], err);
		if (!rc && (c.oom || linked.oom))
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		if (!rc)
			rc = edge(g, "merge", merged, (const char *const *)linked.v, linked.n, NULL, 0, c.s, "MERGE dlink.fatbin",
			          NULL, err);
		free(c.s);
		ladd(&g->fatbins, merged);
	}
	lfree(&linked);
	if (!rc && g->nvcc_objs.n && g->o->lto)
		rc = fb_dlink_nvcc_lto_check(g->t.cuda_home, err);
	if (!rc && g->nvcc_objs.n) {
		char out[PATHMAX + 32];
		bfmt(out, sizeof(out), "%s/obj/dlink.o", g->dir);
		char *gencode = NULL, *cmd = NULL;
		struct ap_error ae = {0};
		if (ap_archlist_format(g->archs, AP_FMT_NVCC, &gencode, &ae) != 0)
			return fb_seterr(err, FB_EARCH, "%s", ae.msg);
		struct fb_dlink_edge e = {(const char *const *)g->nvcc_objs.v, g->nvcc_objs.n, out, g->o->lto, true};
		rc = fb_dlink_nvcc_cmd(g->t.cuda_home, gencode, g->t.cxx, &e, &cmd, err);
		free(gencode);
		if (!rc)
			rc = edge(g, "dlink", out, e.inputs, e.ninputs, NULL, 0, cmd, "NVCC -dlink", NULL, err);
		free(cmd);
		ladd(&g->objects, out);
	}
	if (!rc && g->nvcc_objs.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	return rc;
}

/* BUILD_DIR/out/BASENAME: what the link edge writes. */
static void
staged_path(const struct gen *g, char *buf, size_t size)
{
	bfmt(buf, size, "%s/out/%s", g->dir, strrchr(g->out, '/') + 1);
}

static int
gen_link(struct gen *g, struct fb_error *err)
{
	int rc = 0;
	if (g->fatbins.n) {
		char obj[PATHMAX + 32];
		bfmt(obj, sizeof(obj), "%s/obj/fatbin.o", g->dir);
		struct str c = {0};
		rc = sarg(&c, g->t.fatbuild, err);
		if (!rc)
			rc = swords(&c, "embed --hidden --symbol fbrt_fatbin -o", err);
		if (!rc)
			rc = sarg(&c, obj, err);
		for (size_t i = 0; !rc && i < g->fatbins.n; i++)
			rc = sarg(&c, g->fatbins.v[i], err);
		if (!rc && c.oom)
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		if (!rc)
			rc = edge(g, "embed", obj, (const char *const *)g->fatbins.v, g->fatbins.n, NULL, 0, c.s, "EMBED fatbin.o",
			          NULL, err);
		free(c.s);
		ladd(&g->objects, obj);
	}
	if (rc)
		return rc;
	/* Linked inside the build dir (private), then copied to OUT by fb_builddir_publish. */
	char staged[PATHMAX + 16], tmp[PATHMAX + 32];
	staged_path(g, staged, sizeof(staged));
	bfmt(tmp, sizeof(tmp), "%s.tmp.fb", staged);
	struct str c = {0};
	rc = swords(&c, g->any_cxx || g->any_nvcc ? g->t.cxx : g->t.cc, err);
	if (!rc && !g->o->executable)
		rc = sarg(&c, "-shared", err);
	if (!rc)
		rc = sarg(&c, "-o", err);
	if (!rc)
		rc = sarg(&c, tmp, err);
	for (size_t i = 0; !rc && i < g->objects.n; i++)
		rc = sarg(&c, g->objects.v[i], err);
	if (!rc)
		rc = sarg(&c, g->t.runtime, err);
	if (!rc && g->torch) {
		/* torch's libraries; cudart shared, the one torch itself loaded. */
		bool with_cuda = g->o->torch_cuda > 0 || (g->o->torch_cuda == 0 && g->any_cu);
		rc = svec(&c, fb_torch_link_words(g->torch, g->t.cuda_home, with_cuda && g->torch->cuda[0]), err);
	} else if (!rc && g->any_nvcc) {
		char lib[PATHMAX + 16];
		bfmt(lib, sizeof(lib), "-L%s/lib64", g->t.cuda_home);
		rc = sarg(&c, lib, err);
		if (!rc && g->reloc)
			rc = sarg(&c, "-lcudadevrt", err);
		if (!rc)
			rc = swords(&c, "-lcudart_static -lrt", err);
	}
	if (!rc)
		rc = swords(&c, "-ldl -lpthread", err);
	if (!rc)
		rc = swords(&c, g->o->ldflags, err);
	/* Atomic replacement: link to a temporary name, rename on success, remove on failure. */
	if (!rc) {
		struct str q = {0};
		sarg(&q, tmp, err);
		sput(&c, " && mv -f ");
		sput(&c, q.s ? q.s : "");
		sput(&c, " ");
		free(q.s);
		q = (struct str){0};
		sarg(&q, staged, err);
		sput(&c, q.s ? q.s : "");
		free(q.s);
		q = (struct str){0};
		sarg(&q, tmp, err);
		sput(&c, " || { rm -f ");
		sput(&c, q.s ? q.s : "");
		sput(&c, "; exit 1; }");
		free(q.s);
	}
	if (!rc && (c.oom || g->objects.oom))
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	const char *implicit[1] = {g->t.runtime};
	char desc[PATHMAX + 8];
	bfmt(desc, sizeof(desc), "LINK %s", strrchr(g->out, '/') + 1);
	if (!rc)
		rc = edge(g, "link", staged, (const char *const *)g->objects.v, g->objects.n, implicit, 1, c.s, desc, NULL,
		          err);
	free(c.s);
	return rc;
}

static int
generate(struct gen *g, struct fb_error *err)
{
	int rc = fb_ninja_var(g->nj, "builddir", g->dir, err);
	if (!rc)
		rc = fb_ninja_rule(g->nj, "kernel", "$cmd", "$desc", "$dep", "gcc", err);
	if (!rc)
		rc = fb_ninja_rule(g->nj, "merge", "$cmd", "$desc", NULL, NULL, err);
	if (!rc)
		rc = fb_ninja_rule(g->nj, "cc", "$cmd", "$desc", "$dep", "gcc", err);
	if (!rc)
		rc = fb_ninja_rule(g->nj, "embed", "$cmd", "$desc", NULL, NULL, err);
	if (!rc)
		rc = fb_ninja_rule(g->nj, "link", "$cmd", "$desc", NULL, NULL, err);
	if (!rc && g->reloc)
		rc = fb_ninja_rule(g->nj, "dlink", "$cmd", "$desc", NULL, NULL, err);
	/* NVRTC jobs run here whatever -j says: at most one per CPU (MAX_JOBS), and no more than -j. */
	int depth = fb_compile_default_jobs();
	if (g->o->jobs > 0 && g->o->jobs < depth)
		depth = g->o->jobs;
	if (!rc)
		rc = fb_ninja_pool(g->nj, "nvrtc", depth, err);
	for (size_t i = 0; !rc && i < g->o->nsources; i++) {
		char src[PATHMAX];
		enum lang lang = g->langs[i];
		rc = abs_existing(g->o->sources[i], src, err);
		if (!rc)
			rc = lang == L_KERNEL ? gen_kernel(g, i, src, err) : gen_host(g, i, src, lang, err);
	}
	if (!rc && g->fatbins.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	if (!rc && g->reloc)
		rc = gen_dlink(g, err);
	if (!rc)
		rc = gen_link(g, err);
	return rc;
}

/* ---- running ninja ---- */

/* The first character of path that ninja (1.11) cannot read back from a gcc-style depfile, or
 * 0. Its depfile lexer takes [A-Za-z0-9+,/_:.~()}{%=@[]!-] and bytes >= 0x80 as they are, and
 * space, '#', '$' and '\\' in the escaped forms gcc and fb_depfile_write use; anything else
 * makes it drop the deps log entry, and the edge reruns on every build. */
static char
depfile_unsafe(const char *path)
{
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		if (!(isalnum(*c) || *c >= 0x80 || strchr("+,/_:.~(){}%=@[]!- #$\\", *c)))
			return (char)*c;
	return 0;
}

/* Says so, once, when a path the depfiles name holds such a character: the build is right, only
 * not incremental. */
static void
note_depfile_paths(const struct fb_build_opts *o, const char *dir, struct fb_build_result *result)
{
	char abs[PATHMAX];
	const char *bad = NULL;
	char c = 0;
	if ((c = depfile_unsafe(dir)))
		bad = dir;
	for (size_t i = 0; !bad && i < o->nsources; i++)
		if (realpath(o->sources[i], abs) && (c = depfile_unsafe(abs)))
			bad = abs;
	for (size_t i = 0; !bad && i < o->ninclude_dirs; i++)
		if (realpath(o->include_dirs[i], abs) && (c = depfile_unsafe(abs)))
			bad = abs;
	if (!bad || !result)
		return;
	size_t len = strlen(result->warnings);
	snprintf(result->warnings + len, sizeof(result->warnings) - len,
	         "%.300s: ninja cannot read a path containing %c back from dependency files, so the compile "
	         "steps rerun on every build; paths without ' \" ; & * ? ` < > ^ keep builds incremental\n",
	         bad, c);
}

static bool
log_stamp(const char *dir, struct stat *st)
{
	char p[PATHMAX + 16];
	bfmt(p, sizeof(p), "%s/.ninja_log", dir);
	return stat(p, st) == 0;
}

static bool
cancelled(const struct fb_build_opts *o)
{
	return o->cancel && *o->cancel;
}

/* Takes an exclusive lock on fd, waiting while another process holds it: flock(2) for the
 * build lock (held by the fatbuild process of a build), a POSIX record lock for the run lock
 * (held by ninja: record locks belong to one process, survive exec and are not inherited, so
 * the edges ninja starts, or a compiler server one of them leaves, never hold it). A record
 * lock is only probed: released at once, ninja takes it for itself. Polls, so that a stop
 * request is seen whether or not a signal interrupts the wait. */
static int
lock_wait(struct gen *g, int fd, const char *path, bool record, struct fb_error *err)
{
	for (;;) {
		int r;
		if (record) {
			struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
			r = fcntl(fd, F_SETLK, &fl);
			if (r == 0) {
				fl.l_type = F_UNLCK;
				fcntl(fd, F_SETLK, &fl);
			}
		} else {
			r = flock(fd, LOCK_EX | LOCK_NB);
		}
		if (r == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EAGAIN && errno != EACCES && errno != EINTR)
			return fb_seterr(err, FB_EIO, "cannot lock %s: %s", path, strerror(errno));
		if (cancelled(g->o))
			return fb_seterr(err, FB_ECANCELED, "build stopped while waiting for %s", path);
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* fork + exec rather than posix_spawn: the child sets PR_SET_PDEATHSIG (SIGTERM: ninja then
 * stops its edges as on a Ctrl-C) and takes the run lock before it becomes ninja. */
static int
spawn_ninja(struct gen *g, const char **argv, int lock, const char *runpath, pid_t *pid)
{
	pid_t parent = getpid();
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return errno;
	*pid = fork();
	if (*pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (*pid == 0) {
		int e = 0;
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(128 + SIGTERM); /* the caller is already gone */
		/* The caller's handlers do not apply to ninja (exec resets them); its blocked mask would. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Closing any descriptor of a file drops this process's record locks on it: close the
		 * build lock's first (exec would), then take the run lock on a descriptor exec keeps. */
		close(lock);
		int run = open(runpath, O_RDWR | O_NOFOLLOW);
		if (run >= 0) {
			struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
			fcntl(run, F_SETLK, &fl);
		}
		if (g->o->log && g->o->log[0]) {
			int fd = open(g->o->log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd < 0 || dup2(fd, 1) < 0 || dup2(1, 2) < 0)
				e = errno;
		}
		if (!e) {
			/* TMPDIR=BUILD_DIR/tmp: the compilers' temporaries stay in the private build dir */
			char **envp = fb_builddir_env(g->dir);
			execve(g->t.ninja, (char *const *)argv, envp ? envp : environ);
			e = errno;
		}
		ssize_t w = write(p[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(p[1]);
	int e = 0;
	ssize_t r;
	while ((r = read(p[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (r == (ssize_t)sizeof(e) && e) {
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		return e;
	}
	return 0;
}

/* The link writes BUILD_DIR/out/NAME.tmp.fb and renames it; a link stopped in between leaves it. */
static void
remove_link_temp(struct gen *g)
{
	char staged[PATHMAX + 16], tmp[PATHMAX + 32];
	staged_path(g, staged, sizeof(staged));
	bfmt(tmp, sizeof(tmp), "%s.tmp.fb", staged);
	unlink(tmp);
}

static int
run_ninja(struct gen *g, bool *no_work, struct fb_error *err)
{
	int rc;
	char jobs[32];
	const char *argv[8];
	int a = 0;
	argv[a++] = g->t.ninja;
	argv[a++] = "-C";
	argv[a++] = g->dir;
	/* Always -j: ninja's own default reads neither MAX_JOBS nor the cgroup's CPU quota. */
	bfmt(jobs, sizeof(jobs), "-j%d", g->o->jobs > 0 ? g->o->jobs : fb_compile_default_jobs());
	argv[a++] = jobs;
	if (g->o->verbose)
		argv[a++] = "-v";
	argv[a] = NULL;
	/* One ninja per build dir at a time: a second build of the same dir waits here (two ninjas
	 * would write the same objects, .ninja_log and OUT.tmp at once). The kernel drops the lock
	 * when the holder dies; ninja's own lock (below) covers the time it outlives us. */
	char lockpath[PATHMAX + 16], runpath[PATHMAX + 24];
	bfmt(lockpath, sizeof(lockpath), "%s/.fatbuild.lock", g->dir);
	bfmt(runpath, sizeof(runpath), "%s/.fatbuild.running", g->dir);
	int lock = open(lockpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0)
		return fb_seterr(err, FB_EIO, "cannot create the build lock %s: %s", lockpath, strerror(errno));
	rc = lock_wait(g, lock, lockpath, false, err);
	int run = -1;
	if (!rc && (run = open(runpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		rc = fb_seterr(err, FB_EIO, "cannot create %s: %s", runpath, strerror(errno));
	if (!rc)
		rc = lock_wait(g, run, runpath, true, err); /* an earlier build's ninja still stopping */
	if (run >= 0)
		close(run);
	if (!rc && cancelled(g->o))
		rc = fb_seterr(err, FB_ECANCELED, "build stopped before ninja started");
	if (rc) {
		close(lock);
		return rc;
	}
	struct stat before, after;
	bool had = log_stamp(g->dir, &before);
	pid_t pid = -1;
	rc = spawn_ninja(g, argv, lock, runpath, &pid);
	if (rc != 0) {
		close(lock);
		return fb_seterr(err, FB_ENOTOOL, "cannot run %s: %s", g->t.ninja, strerror(rc));
	}
	int status;
	bool forwarded = false;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			close(lock);
			return fb_seterr(err, FB_EIO, "waitpid(ninja): %s", strerror(errno));
		}
		if (cancelled(g->o) && !forwarded) {
			/* ninja stops its edges, waits for them and deletes what they had begun */
			kill(pid, *g->o->cancel > 0 && *g->o->cancel < 65 ? *g->o->cancel : SIGTERM);
			forwarded = true;
		}
	}
	if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0 || cancelled(g->o))
		remove_link_temp(g); /* a link stopped between writing and renaming */
	if (cancelled(g->o)) {
		close(lock);
		return fb_seterr(err, FB_ECANCELED, "build stopped (build dir %s)", g->dir);
	}
	close(lock);
	if (WIFSIGNALED(status))
		return fb_seterr(err, FB_ECOMPILE, "ninja was killed by signal %d (build dir %s)", WTERMSIG(status), g->dir);
	if (WEXITSTATUS(status) != 0) {
		if (!(g->o->log && g->o->log[0]))
			return fb_seterr(err, FB_ECOMPILE,
			            "build failed (ninja exited with status %d; the messages above say why; build dir %s)",
			            WEXITSTATUS(status), g->dir);
		/* The output of the first failed command in the log, as far as the message holds. */
		char tail[640] = "";
		FILE *f = fopen(g->o->log, "r");
		if (f) {
			char line[1024];
			size_t n = 0;
			int on = 0; /* 1: the command line after "FAILED: outputs" (skipped); 2: its output */
			while (fgets(line, sizeof(line), f)) {
				if (!on && strncmp(line, "FAILED: ", 8) == 0)
					on = 1;
				else if (on == 1)
					on = 2;
				else if (on == 2 && strncmp(line, "ninja: build stopped", 20) != 0) {
					line[strcspn(line, "\n")] = 0;
					int w = snprintf(tail + n, sizeof(tail) - n, "%s%s", n ? " | " : "", line);
					if (w < 0 || (size_t)w >= sizeof(tail) - n)
						break;
					n += (size_t)w;
				}
			}
			fclose(f);
		}
		return fb_seterr(err, FB_ECOMPILE, "build failed (log %s): %s", g->o->log, tail[0] ? tail : "see the log");
	}
	bool has = log_stamp(g->dir, &after);
	*no_work = had && has && before.st_size == after.st_size && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
	           before.st_mtim.tv_nsec == after.st_mtim.tv_nsec;
	return 0;
}

/* Appends one line to a result's notes or warnings buffer. */
static void
note(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
note(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 2 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len - 1, fmt, ap);
	va_end(ap);
	len = strlen(buf);
	buf[len] = '\n';
	buf[len + 1] = 0;
}

/* mkdir -p for an output directory the user named (-o DIR/ of a Python module): new components
 * get 0777 through the umask, like any directory the user makes; it is not read back. */
static int
make_output_dir(const char *path, struct fb_error *err)
{
	char p[PATHMAX];
	if (bfmt(p, sizeof(p), "%s", path) < 0)
		return fb_seterr(err, FB_EINVAL, "%s: path too long", path);
	for (char *c = p + 1;; c++) {
		if (*c == '/' || !*c) {
			char keep = *c;
			*c = 0;
			if (mkdir(p, 0777) != 0 && errno != EEXIST)
				return fb_seterr(err, FB_EIO, "cannot create %s: %s", p, strerror(errno));
			*c = keep;
			if (!keep)
				break;
		}
	}
	return 0;
}

/* Whether output names a directory: a trailing '/' or an existing one. */
static bool
output_is_dir(const char *output)
{
	struct stat st;
	size_t n = strlen(output);
	return (n && output[n - 1] == '/') || (stat(output, &st) == 0 && S_ISDIR(st.st_mode));
}

int
fb_build(const struct fb_build_opts *o, struct fb_build_result *result, struct fb_error *err)
{
	if (result)
		memset(result, 0, sizeof(*result));
	if (!o || !o->output || !o->output[0])
		return fb_seterr(err, FB_EINVAL, "build: -o OUTPUT is required");
	if (o->nsources == 0)
		return fb_seterr(err, FB_EINVAL, "build: no source files given (kernels .cu, host .c .cc .cpp .cxx)");
	bool out_dir = o->torch && output_is_dir(o->output);
	if (out_dir && !(o->name && o->name[0]))
		return fb_seterr(err, FB_EINVAL, "build: -o %s is a directory: --name NAME says what to call the module in it",
		            o->output);
	enum lang *langs = calloc(o->nsources, sizeof(*langs));
	if (!langs)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	bool need_nvcc = false, any_kernel = false, any_c = false, any_cxx = false;
	for (size_t i = 0; i < o->nsources; i++) {
		enum lang l;
		if (!o->sources[i] || classify(o->sources[i], o->backend, &l) != 0) {
			free(langs);
			return fb_seterr(err, FB_EINVAL,
			            "build: %s: unknown source type (kernels: .cu; host code: .c .cc .cpp .cxx .C)",
			            o->sources[i] ? o->sources[i] : "(null)");
		}
		if (access(o->sources[i], R_OK) != 0) {
			free(langs);
			return fb_seterr(err, FB_EIO, "build: %s: %s", o->sources[i], strerror(errno));
		}
		if (l == L_KERNEL && o->backend == FB_BACKEND_AUTO) {
			char why[700];
			l = fb_cu_needs_nvcc(o->sources[i], o->include_dirs, o->ninclude_dirs, why, sizeof(why)) ? L_NVCC
			                                                                                         : L_KERNEL;
			if (result)
				note(result->notes, sizeof(result->notes), "backend %s: %s", l == L_NVCC ? "nvcc" : "nvrtc", why);
		}
		langs[i] = l;
		need_nvcc |= l == L_NVCC;
		any_c |= l == L_C;
		any_cxx |= l == L_CXX || l == L_NVCC;
		any_kernel |= l == L_KERNEL || l == L_NVCC;
	}
	struct gen g = {0};
	g.o = o;
	g.langs = langs;
	g.any_cu = any_kernel;
	int rc = find_tools(o, need_nvcc, &g.t, err);
	if (!rc && (any_c || !any_cxx))
		rc = check_compiler("CC", g.t.cc, err);
	if (!rc && any_cxx)
		rc = check_compiler("CXX", g.t.cxx, err);
	if (rc) {
		free(langs);
		return rc;
	}
	if (o->torch && !g.t.cuda_home[0]) {
		struct ap_error ae = {0};
		if (ap_cuda_home(g.t.cuda_home, sizeof(g.t.cuda_home), &ae) != 0)
			g.t.cuda_home[0] = 0;
	}
	if (!out_dir && (rc = abs_output(o->output, g.out, err))) {
		free(langs);
		return rc;
	}
	char *name = g.name;
	if (o->name && o->name[0])
		default_name(o->name, name, sizeof(g.name));
	else
		default_name(g.out, name, sizeof(g.name));
	char dir[PATHMAX];
	rc = fb_builddir_prepare(o->build_dir, name, dir, sizeof(dir), err);
	if (rc) {
		free(langs);
		return rc;
	}
	if (!realpath(dir, g.dir)) {
		free(langs);
		return fb_seterr(err, FB_EIO, "build dir %s: %s", dir, strerror(errno));
	}
	note_depfile_paths(o, g.dir, result);

	if (o->torch) {
		g.torch = calloc(1, sizeof(*g.torch));
		if (!g.torch)
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		else
			rc = fb_torch_query(o->python, g.dir, g.torch, err);
		if (!rc && result)
			note(result->notes, sizeof(result->notes), "torch %s (CUDA %s, %s, %s ABI) from %s%s", g.torch->version,
			     g.torch->cuda[0] ? g.torch->cuda : "none", g.torch->std, g.torch->cxx11_abi ? "cxx11" : "pre-cxx11",
			     g.torch->python, g.torch->cached ? " (cached)" : "");
		if (!rc && result && any_kernel && !g.torch->cuda[0])
			note(result->warnings, sizeof(result->warnings),
			     "--torch: torch %s is a CPU-only build: its CUDA libraries are not linked", g.torch->version);
		if (!rc && out_dir)
			rc = make_output_dir(o->output, err);
		if (!rc && out_dir) {
			char file[PATHMAX];
			if (bfmt(file, sizeof(file), "%s/%s%s", o->output, name,
			         o->python_module ? g.torch->ext_suffix : ".so") < 0)
				rc = fb_seterr(err, FB_EINVAL, "%s: path too long", o->output);
			else
				rc = abs_output(file, g.out, err);
		}
		if (rc) {
			free(g.torch);
			free(langs);
			return rc;
		}
	}
	if (result)
		bfmt(result->output, sizeof(result->output), "%s", g.out);

	if (any_kernel) {
		const char *text = o->arch_list;
		if (!text)
			text = getenv("TORCH_CUDA_ARCH_LIST");
		struct ap_resolve_opts ro = {0};
		ro.toolkit = o->toolkit;
		struct ap_error ae = {0};
		if (ap_archlist_resolve(text, &ro, &g.archs, &ae) != 0) {
			fb_seterr(err, FB_EARCH, "%s", ae.msg[0] ? ae.msg : ap_strerror(ae.code));
			if (err)
				err->ap_code = ae.code;
			free(g.torch);
			free(langs);
			return FB_EARCH;
		}
		for (size_t i = 0; result && i < ap_archlist_nwarnings(g.archs); i++) {
			size_t len = strlen(result->warnings);
			snprintf(result->warnings + len, sizeof(result->warnings) - len, "%s\n", ap_archlist_warning(g.archs, i));
		}
		if (ap_archlist_count(g.archs) == 0) {
			ap_archlist_free(g.archs);
			free(g.torch);
			free(langs);
			return fb_seterr(err, FB_EARCH, "the arch list '%s' resolves to no target", text ? text : "auto");
		}
		if (g.torch && result) {
			const struct ap_toolkit *tk = ap_archlist_toolkit(g.archs);
			char w[1024];
			fb_torch_cuda_check(g.torch, tk ? tk->version : 0, g.t.cuda_home, w, sizeof(w));
			if (w[0])
				note(result->warnings, sizeof(result->warnings), "%s", w);
		}
	}
	g.reloc = o->rdc || o->lto;
	if (g.reloc && g.archs) {
		g.ntparts = ap_archlist_count(g.archs);
		if (!(g.tparts = calloc(g.ntparts, sizeof(*g.tparts)))) {
			ap_archlist_free(g.archs);
			free(g.torch);
			free(langs);
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
	}
	g.nj = fb_ninja_new();
	if (!g.nj) {
		free(g.tparts);
		ap_archlist_free(g.archs);
		free(g.torch);
		free(langs);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	rc = generate(&g, err);
	char ninja_file[PATHMAX + 16];
	bfmt(ninja_file, sizeof(ninja_file), "%s/build.ninja", g.dir);
	bool changed = false;
	if (!rc)
		rc = fb_ninja_write(g.nj, ninja_file, &changed, err);
	if (result) {
		bfmt(result->build_dir, sizeof(result->build_dir), "%s", g.dir);
		bfmt(result->ninja_file, sizeof(result->ninja_file), "%s", ninja_file);
		result->ninja_changed = changed;
		result->ntargets = g.archs ? ap_archlist_count(g.archs) : 0;
		size_t off = 0;
		for (size_t i = 0; g.archs && i < result->ntargets && off + 20 < sizeof(result->targets); i++) {
			char t[32];
			ap_target_name(ap_archlist_get(g.archs, i), t, sizeof(t));
			off += (size_t)snprintf(result->targets + off, sizeof(result->targets) - off, "%s%s", i ? " " : "", t);
		}
	}
	if (!rc && !o->emit_ninja_only) {
		bool no_work = false, copied = false;
		char staged[PATHMAX + 16];
		staged_path(&g, staged, sizeof(staged));
		fb_builddir_unstage_stale(staged, g.out);
		rc = run_ninja(&g, &no_work, err);
		if (!rc)
			rc = fb_builddir_publish(staged, g.out, &copied, err);
		if (result)
			result->up_to_date = !rc && no_work && !copied;
	}
	fb_ninja_free(g.nj);
	ap_archlist_free(g.archs);
	lfree(&g.objects);
	lfree(&g.fatbins);
	for (size_t i = 0; g.tparts && i < g.ntparts; i++)
		lfree(&g.tparts[i]);
	free(g.tparts);
	lfree(&g.nvcc_objs);
	free(g.torch);
	free(langs);
	return rc;
}

int
fb_load(const struct fb_build_opts *o, void **handle, struct fb_error *err)
{
	if (!handle)
		return fb_seterr(err, FB_EINVAL, "fb_load: NULL handle");
	*handle = NULL;
	if (o && o->executable)
		return fb_seterr(err, FB_EINVAL, "fb_load: cannot dlopen a program (executable is set)");
	struct fb_build_result *res = malloc(sizeof(*res));
	if (!res)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = fb_build(o, res, err);
	char out[PATHMAX];
	bfmt(out, sizeof(out), "%s", res->output);
	free(res);
	if (rc)
		return rc;
	void *h = dlopen(out, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		return fb_seterr(err, FB_EIO, "dlopen %s: %s", out, why ? why : "unknown error");
	}
	*handle = h;
	return 0;
}
