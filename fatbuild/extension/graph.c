/* graph.c: the ninja graph of a build (the edges build.c's header describes): one command per
 * edge, NVRTC kernel edges and their merge, host and nvcc compiles, the device link, the embed
 * and the link. */
#define _GNU_SOURCE /* strtok_r, realpath */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "build.h"
#include "dlink.h"
#include "hostpch.h"
#include "repro.h"
#include "flags.h"
#include "torch.h"
#include "base/env.h"
#include "base/safefs.h"
#include "base/words.h"

/* ---- command lines ---- */

/* A command line being built. Appends stop at the first failure, which sticks in rc (and err);
 * cmd_end reports it, or an out-of-memory of any append: one check per command. */
struct cmd {
	struct fb_buf b;
	int rc;
	struct fb_error *err;
};

static void
cmd_oom(struct cmd *c)
{
	if (!c->rc)
		c->rc = fb_seterr(c->err, FB_ENOMEM, "out of memory");
}

/* Appends text as it is (shell syntax of our own). */
static void
raw(struct cmd *c, const char *s)
{
	if (!c->rc)
		fb_buf_puts(&c->b, s);
}

/* Appends one shell word (quoted when needed), preceded by a space unless first. */
static void
arg(struct cmd *c, const char *a)
{
	char *q;
	if (c->rc || (c->rc = fb_shell_quote(a, &q, c->err)))
		return;
	if (c->b.len)
		fb_buf_puts(&c->b, " ");
	fb_buf_puts(&c->b, q);
	free(q);
}

/* Appends the blank-separated words of s as separate arguments, each after prefix if any. */
static void
words(struct cmd *c, const char *s, const char *prefix)
{
	if (!s || c->rc)
		return;
	char *copy = strdup(s);
	if (!copy) {
		cmd_oom(c);
		return;
	}
	for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w && !c->rc; w = strtok_r(NULL, " \t\n", &save)) {
		if (prefix)
			arg(c, prefix);
		arg(c, w);
	}
	free(copy);
}

static void
swords(struct cmd *c, const char *s)
{
	words(c, s, NULL);
}

/* Appends each word of a NULL-terminated vector (NULL: out of memory) and frees it. */
static void
svec(struct cmd *c, char **v)
{
	if (!v)
		cmd_oom(c);
	for (size_t i = 0; v && v[i]; i++)
		arg(c, v[i]);
	fb_torch_words_free(v);
}

/* The first failure of the appends, else 0; c->b.s is the command. */
static int
cmd_end(struct cmd *c)
{
	if (c->b.oom)
		cmd_oom(c);
	return c->rc;
}

/* An absolute, normalised path for an existing file. */
static int
abs_existing(const char *path, char *out, struct fb_error *err)
{
	if (!realpath(path, out))
		return fb_seterr(err, FB_EIO, "%s: %s", path, strerror(errno));
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

/* An edge's description, which ninja prints as it is on its status line: one printable line
 * whatever the file names hold. */
static void describe(char *desc, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
describe(char *desc, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(desc, size, fmt, ap);
	va_end(ap);
	fb_text_oneline(desc);
}

static int
edge(struct gen *g, const char *rule, const char *out, const char *const *in, size_t nin, const char *const *implicit,
     size_t nimplicit, const char *cmd, const char *desc, const char *dep, struct fb_error *err)
{
	const char *vars[6] = {"cmd", cmd, "desc", desc, "dep", dep};
	struct fb_ninja_edge e = {rule, &out, 1, in, nin, implicit, nimplicit, NULL, 0, vars, dep ? 3 : 2};
	return fb_ninja_edge(g->nj, &e, err);
}

/* The launcher words (ccache, sccache, distcc) that go before a host compiler or nvcc. */
static void
add_launcher(struct gen *g, struct cmd *c)
{
	const char *l = g->o->launcher ? g->o->launcher : fb_env_get("FATBUILD_LAUNCHER");
	if (l && *l)
		swords(c, l);
}

/* -I and -D words for a compiler command. */
static void
add_includes_defines(struct gen *g, struct cmd *c)
{
	for (size_t i = 0; !c->rc && i < g->o->ninclude_dirs; i++) {
		char abs[PATHMAX], a[PATHMAX + 3];
		if (!realpath(g->o->include_dirs[i], abs))
			bfmt(abs, sizeof(abs), "%s", g->o->include_dirs[i]);
		bfmt(a, sizeof(a), "-I%s", abs);
		arg(c, a);
	}
	for (size_t i = 0; !c->rc && i < g->o->ndefines; i++) {
		char a[1024];
		bfmt(a, sizeof(a), "-D%s", g->o->defines[i]);
		arg(c, a);
	}
}

/* fatbuild embed --merge of parts into one container, merged, which the embed then takes. */
static int
gen_merge(struct gen *g, const char *merged, const struct fb_strlist *parts, struct fb_error *err)
{
	struct cmd c = {.err = err};
	arg(&c, g->t.fatbuild);
	swords(&c, "embed --merge -o");
	arg(&c, merged);
	for (size_t i = 0; i < parts->n; i++)
		arg(&c, parts->v[i]);
	if (parts->oom)
		cmd_oom(&c);
	int rc = cmd_end(&c);
	char desc[512];
	describe(desc, sizeof(desc), "MERGE %s", strrchr(merged, '/') + 1);
	if (!rc)
		rc = edge(g, "merge", merged, (const char *const *)parts->v, parts->n, NULL, 0, c.b.s, desc, NULL, err);
	free(c.b.s);
	fb_strlist_add(&g->fatbins, merged);
	return rc;
}

static int
gen_kernel(struct gen *g, size_t idx, const char *src, struct fb_error *err)
{
	char st[256], merged[PATHMAX + 300];
	stem(idx, src, st, sizeof(st));
	bfmt(merged, sizeof(merged), "%s/obj/%s.fatbin", g->dir, st);
	struct fb_strlist parts = {0};
	int rc = 0;
	size_t n = ap_archlist_count(g->archs);
	for (size_t i = 0; !rc && i < n; i++) {
		char tname[32], out[PATHMAX + 400], dep[PATHMAX + 400], desc[512];
		ap_target_name(ap_archlist_get(g->archs, i), tname, sizeof(tname));
		bfmt(out, sizeof(out), "%s/obj/%s.%s.fatbin", g->dir, st, tname);
		bfmt(dep, sizeof(dep), "%s.d", out);
		/* exec: ninja then waits for fatbuild itself, not for a shell that a stopping signal
		 * kills at once while the compile is still cleaning up */
		struct cmd c = {.err = err};
		raw(&c, "exec ");
		arg(&c, g->t.fatbuild);
		arg(&c, "compile");
		if (g->reloc)
			arg(&c, g->o->lto ? "--lto" : "--rdc");
		arg(&c, "--arch-list");
		arg(&c, tname);
		add_includes_defines(g, &c);
		words(&c, g->o->cuda_flags, "-Xnvrtc"); /* fatbuild compile hands each to NVRTC */
		arg(&c, "--depfile");
		arg(&c, dep);
		arg(&c, "-o");
		arg(&c, out);
		arg(&c, src);
		describe(desc, sizeof(desc), "NVRTC %s %s", tname, strrchr(src, '/') ? strrchr(src, '/') + 1 : src);
		rc = cmd_end(&c);
		/* In the nvrtc pool: -j may be sized for host compiles a launcher farms out. */
		const char *vars[8] = {"cmd", c.b.s, "desc", desc, "dep", dep, "pool", "nvrtc"};
		struct fb_ninja_edge ke = {"kernel", (const char *const[]){out}, 1, &src, 1, NULL, 0, NULL, 0, vars, 4};
		if (!rc)
			rc = fb_ninja_edge(g->nj, &ke, err);
		free(c.b.s);
		fb_strlist_add(&parts, out);
		if (g->reloc)
			fb_strlist_add(&g->tparts[i], out);
	}
	if (g->reloc) {
		fb_strlist_free(&parts);
		return rc; /* linked per target by gen_dlink */
	}
	if (!rc)
		rc = gen_merge(g, merged, &parts, err);
	fb_strlist_free(&parts);
	return rc;
}

/* FATBUILD_CACHE_BASEDIR, realpath'ed as the NVRTC cache reads it (docs/remote-cache.md §3),
 * into out; "" when unset. */
static void
cache_basedir(char *out, size_t size)
{
	const char *b = fb_env_get("FATBUILD_CACHE_BASEDIR");
	char abs[PATHMAX];
	out[0] = 0;
	if (b && *b)
		bfmt(out, size, "%s", realpath(b, abs) ? abs : b);
}

/* The directory torch is installed in (its lib dir's parent) into out; "" without --torch. */
static void
torch_dir(const struct gen *g, char *out, size_t size)
{
	out[0] = 0;
	if (!g->torch)
		return;
	bfmt(out, size, "%s", g->torch->lib_dir);
	char *slash = strrchr(out, '/');
	if (slash && slash != out)
		*slash = 0;
}

/* -ffile-prefix-map=FROM=TO into c (through nvcc as -Xcompiler words); false when FROM is
 * the root or a path nvcc would split (it splits -Xcompiler values at commas and blanks). */
static bool
add_map(struct cmd *c, const char *from, const char *to, bool via_nvcc)
{
	char a[PATHMAX + 64];
	if (!from[0] || strcmp(from, "/") == 0 || (via_nvcc && strpbrk(from, " ,\t")))
		return false;
	if (bfmt(a, sizeof(a), "-ffile-prefix-map=%s=%s", from, to) < 0)
		return false;
	if (via_nvcc)
		arg(c, "-Xcompiler");
	arg(c, a);
	return true;
}

/* The -ffile-prefix-map of the directory which names (0: FATBUILD_CACHE_BASEDIR, mapped to
 * "."; 1: torch's install dir, mapped to "torch") into c, and the directory into bases (may be
 * NULL) when it was mapped: the edge cache spells a base @Bn (edgecache.c), which is sound only
 * where the object does not name it. */
static void
base_map(struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases, int which)
{
	char based[PATHMAX], tdir[PATHMAX];
	cache_basedir(based, sizeof(based));
	torch_dir(g, tdir, sizeof(tdir));
	if (which == 1 && strcmp(tdir, based) == 0)
		return;
	const char *from = which == 0 ? based : tdir;
	if (add_map(c, from, which == 0 ? "." : "torch", via_nvcc) && bases)
		fb_strlist_add(bases, from);
}

/* -ffile-prefix-map for FATBUILD_CACHE_BASEDIR, the directory above every source, the build
 * directory (the compiler's working directory) and torch's install dir: debug info and
 * __FILE__ name paths relative to them, so an object does not depend on where the checkout,
 * the build dir or the venv lies. gcc takes the last map that matches and clang the longest,
 * so the base goes first (the sources' dir and the build dir lie below it) and torch last (a
 * venv may lie below the sources' dir), which also spells torch's headers as a torch PCH does
 * (pch_flags: their inline functions spell __FILE__ when the PCH is made). Through nvcc as
 * -Xcompiler words. The base and torch's dir go into bases (base_map). */
static void
prefix_maps(struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases)
{
	char root[PATHMAX];
	fb_repro_root(g->o->sources, g->o->nsources, root, sizeof(root));
	base_map(g, c, via_nvcc, bases, 0);
	add_map(c, root, ".", via_nvcc);
	if (strcmp(g->dir, root) != 0)
		add_map(c, g->dir, ".", via_nvcc);
	base_map(g, c, via_nvcc, bases, 1);
}

/* -Xcudafe --frandom-seed=SEED: nvcc's front end would otherwise put its process id into the
 * names of internal symbols (repro.c). gencode: the arch words (fatbuild's, or the project's
 * nvcc flags when they name the arches). */
static void
nvcc_seed(struct gen *g, const char *src, const char *gencode, struct cmd *c)
{
	if (c->rc)
		return;
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
	struct fb_buf flags = {0};
	fb_buf_puts(&flags, gencode);
	fb_buf_puts(&flags, " | ");
	fb_buf_puts(&flags, g->o->cxxflags ? g->o->cxxflags : "");
	for (size_t i = 0; i < g->o->ndefines; i++) {
		fb_buf_puts(&flags, " -D");
		fb_buf_puts(&flags, g->o->defines[i]);
	}
	if (flags.oom) {
		free(flags.s);
		cmd_oom(c);
		return;
	}
	c->rc = fb_repro_seed(src, dirs, nd, flags.s, seed, c->err);
	free(flags.s);
	char a[64];
	bfmt(a, sizeof(a), "--frandom-seed=%s", seed);
	arg(c, "-Xcudafe");
	arg(c, a);
	/* Both front ends hash the absolute source path into internal names: give them the path
	 * below the sources' common directory instead. */
	char root[PATHMAX], name[PATHMAX + 32];
	fb_repro_root(g->o->sources, g->o->nsources, root, sizeof(root));
	size_t rl = strlen(root);
	const char *rel = strncmp(src, root, rl) == 0 && src[rl] == '/' ? src + rl + 1 : src;
	bfmt(name, sizeof(name), "--orig_src_path_name=%s", rel);
	arg(c, "-Xcudafe");
	arg(c, name);
	arg(c, "-Xcicc");
	arg(c, name);
}

/* Whether the blank-separated words of s hold nvcc's -t/--threads (the user's choice wins). */
static bool
has_threads(const char *s)
{
	for (const char *p = s; p && *p;) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t");
		if ((n >= 2 && strncmp(p, "-t", 2) == 0 && (n == 2 || (p[2] >= '0' && p[2] <= '9'))) ||
		    (n >= 9 && strncmp(p, "--threads", 9) == 0 && (n == 9 || p[9] == '=')))
			return true;
		p += n;
	}
	return false;
}

/* The optimisation words of a compile of lang (fb_build_opts.host_opt, default -O2): none when
 * the flags that compile gets state an -O of their own. The project's choice stands, as with
 * torch's builder, and a second -O on nvcc's line draws "incompatible redefinition for option
 * 'optimize'". nvcc gets --cxxflags (through -Xcompiler) only without --torch. */
static const char *
host_opt(const struct gen *g, enum lang lang)
{
	const struct fb_build_opts *o = g->o;
	bool stated = lang == L_NVCC ? fb_flags_have_opt(o->nvcc_flags) || fb_flags_have_opt(o->cuda_flags) ||
	                                   (!g->torch && fb_flags_have_opt(o->cxxflags))
	                             : fb_flags_have_opt(lang == L_C ? o->cflags : o->cxxflags);
	return stated ? "" : o->host_opt ? o->host_opt : "-O2";
}

/* Whether torch's CUDA headers and libraries are used: --with-cuda, or .cu sources without
 * --no-cuda (torch's with_cuda). */
static bool
torch_cuda(const struct gen *g)
{
	return g->o->torch_cuda > 0 || (g->o->torch_cuda == 0 && g->any_cu);
}

/* nvcc --threads N: the host pass and each target's cicc and ptxas run in parallel inside the
 * one nvcc process, so a file for N targets is not N arches in turn. One call keeps the images
 * those of a serial nvcc, byte for byte (__CUDA_ARCH_LIST__ stays the whole list, which CUB
 * names its namespace after; docs/fatbuild-build.md "Arches in parallel"). Sized to the slots
 * the other nvcc edges leave free, at least 2: ninja cannot count threads, and an edge that
 * runs alone at the end of the build then still uses two cores. 0: no --threads. */
static long
nvcc_threads(struct gen *g)
{
	if (g->o->no_nvcc_threads || has_threads(g->o->nvcc_flags) || has_threads(g->o->cuda_flags))
		return 0;
	/* nvcc 13.0 with --threads cannot open its own temporaries when TMPDIR (BUILD_DIR/tmp, run.c)
	 * holds a blank: "Could not open input file .../tmpxft_..._stdout". */
	if (strpbrk(g->dir, " \t"))
		return 0;
	size_t ntargets = g->project_archs ? fb_flags_ntargets(g->o->nvcc_flags) : ap_archlist_count(g->archs), nedges = 0,
	       nhost = 0;
	for (size_t i = 0; i < g->o->nsources; i++) {
		nedges += g->langs[i] == L_NVCC;
		nhost += g->langs[i] == L_C || g->langs[i] == L_CXX;
	}
	long jobs = fb_compile_jobs(g->o->jobs);
	/* Beside host compiles, only slots no edge takes from the start: when the edges fill every
	 * slot (a torch extension's .cpp and .cu files on 2 cores), a thread more only takes from
	 * them, nice or not (torch_cub cold on 2 cores: the nvcc files 41.3, 39.6, 28.7 s with
	 * --threads 2 against 24.4, 25.3, 26.1 s serial, the build 85.2 s against torch's 79.9 s at
	 * the same CPU; docs/pytorch.md "Speed"). */
	if (nhost && jobs <= (long)(nedges + nhost))
		return 0;
	long t = jobs - (long)(nedges + nhost) + 1;
	if (t < 2)
		t = 2;
	if (t > (long)ntargets + 1)
		t = (long)ntargets + 1;
	/* -j 1 asks for one process at a time; one target has nothing to run beside the host pass
	 * worth a thread (a 22 KB templated file for sm_80: 101.6 and 109.0 s with --threads 2,
	 * 105.9 and 104.9 s without, the same CPU), only cores to take from the host compiles */
	return jobs < 2 || ntargets < 2 ? 0 : t;
}

/* Whether the build also compiles C or C++ (a --torch source with torch's headers is the
 * longest edge of a cold build). nvcc's extra threads then run at a lower priority (nice 5),
 * so they fill cores the host compiles leave idle instead of taking a share of theirs: with
 * three CUB files and one torch .cpp on 2 cores, the .cpp took 37.7 s beside nvcc --threads 2
 * at equal priority, 27.4 s beside serial nvcc (docs/fatbuild-build.md "Arches in parallel"). */
static bool
has_host_edges(const struct gen *g)
{
	for (size_t i = 0; i < g->o->nsources; i++)
		if (g->langs[i] == L_C || g->langs[i] == L_CXX)
			return true;
	return false;
}

/* nvcc's host compiler: with --torch, as torch's builder, $CC when set (-ccbin $CC), else
 * nvcc's own default (none); else $CXX's: launchers (ccache) run nvcc itself, the compiler is
 * -ccbin, the options after it go to the host compiler ("ccache g++ -m64": ccache nvcc ...
 * -ccbin g++ -Xcompiler -m64). *pre: the launcher words to put before nvcc (NULL with --torch;
 * fb_words_free). */
static void
nvcc_host(struct gen *g, struct cmd *c, char ***pre)
{
	*pre = NULL;
	if (g->torch) {
		if (g->t.cc_set) {
			arg(c, "-ccbin");
			swords(c, g->t.cc);
		}
		return;
	}
	char **w = NULL;
	size_t nw = 0, k = 0;
	if (!c->rc)
		c->rc = fb_words_split(g->t.cxx, &w, &nw, c->err);
	while (!c->rc && k < nw && w[k][0] != '-')
		k++;
	arg(c, "-ccbin");
	arg(c, k ? w[k - 1] : "c++");
	for (size_t i = k; !c->rc && i < nw; i++) {
		arg(c, "-Xcompiler");
		arg(c, w[i]);
	}
	/* the launcher words are w[0..k-2]: the rest is freed and the list ends there */
	for (size_t i = k ? k - 1 : 0; w && i < nw; i++) {
		free(w[i]);
		w[i] = NULL;
	}
	*pre = w;
}

/* The nvcc compile's words up to its own flags: launcher, nvcc, the arches (fatbuild's, unless
 * the project's nvcc flags name them, as torch's builder does), seed, where its intermediates go
 * (keep), host compiler. */
static int
nvcc_words(struct gen *g, const char *src, const char *keep, struct cmd *c)
{
	char nvcc[PATHMAX + 16];
	bfmt(nvcc, sizeof(nvcc), "%s/bin/nvcc", g->t.cuda_home);
	char *gencode = NULL;
	struct ap_error ae = {0};
	if (!g->project_archs && ap_archlist_format(g->archs, AP_FMT_NVCC, &gencode, &ae) != 0)
		return fb_seterr(c->err, FB_EARCH, "%s", ae.msg);
	long threads = nvcc_threads(g);
	add_launcher(g, c);
	struct cmd host = {.err = c->err};
	char **pre = NULL;
	nvcc_host(g, &host, &pre);
	for (size_t i = 0; pre && pre[i]; i++)
		arg(c, pre[i]);
	fb_words_free(pre);
	arg(c, nvcc);
	arg(c, "-c");
	swords(c, host_opt(g, L_NVCC));
	if (!fb_flags_have_pic(g->o->nvcc_flags) && !fb_flags_have_pic(g->o->cuda_flags))
		swords(c, "-Xcompiler -fPIC");
	if (g->reloc)
		arg(c, "-rdc=true");
	if (g->o->lto && gencode) {
		char *lto = NULL;
		if (!c->rc)
			c->rc = fb_dlink_nvcc_lto_gencode(gencode, &lto, c->err);
		swords(c, lto);
		free(lto);
	} else {
		swords(c, gencode);
	}
	nvcc_seed(g, src, gencode ? gencode : g->o->nvcc_flags ? g->o->nvcc_flags : "", c);
	free(gencode);
	if (threads > 1) {
		char a[32];
		bfmt(a, sizeof(a), "%ld", threads);
		arg(c, "--threads");
		arg(c, a);
	}
	swords(c, "-keep -keep-dir");
	arg(c, keep);
	if (host.rc && !c->rc)
		c->rc = host.rc;
	raw(c, host.b.s && host.b.s[0] ? " " : "");
	raw(c, host.b.s ? host.b.s : "");
	free(host.b.s);
	return 0;
}

/* Whether the first word of a $CC-style command is a compiler launcher. */
static bool
launcher_word(const char *cmd)
{
	static const char *const names[] = {"ccache", "sccache", "distcc", "icecc"};
	const char *p = cmd ? cmd + strspn(cmd, " \t\n") : "";
	size_t n = strcspn(p, " \t\n");
	const char *base = p;
	for (const char *q = p; q < p + n; q++)
		if (*q == '/')
			base = q + 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((size_t)(p + n - base) == strlen(names[i]) && strncmp(base, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

/* Whether host and nvcc edges go through `fatbuild edge`: not with --no-edge-cache or
 * FATBUILD_EDGE_CACHE=0, nor with a launcher (--launcher, or ccache, sccache, distcc as
 * $CC's or $CXX's first word: those do their own caching or compile elsewhere). */
static bool
edge_cache_on(const struct gen *g)
{
	const char *l = g->o->launcher ? g->o->launcher : fb_env_get("FATBUILD_LAUNCHER");
	return !g->o->no_edge_cache && !(l && *l) && fb_env_switch("FATBUILD_EDGE_CACHE") != 0 &&
	       !launcher_word(g->t.cc) && !launcher_word(g->t.cxx);
}

/* Appends the words of v but those that name the extension (-DTORCH_EXTENSION_NAME=...: no
 * torch header reads it, so one PCH serves every extension) and a -c (BuildExtension's flags
 * hold one, as torch's setup.py builds have it twice). */
static void
words_but_name(struct cmd *c, char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strncmp(v[i], "-DTORCH_EXTENSION_NAME=", 23) != 0 && strcmp(v[i], "-c") != 0)
			arg(c, v[i]);
}

/* The C++ compile's flags before its own: opt, -fPIC, torch's words (none with
 * --no-torch-flags: the caller's flags hold them), --cxxflags; with for_pch, without the
 * extension's name. */
static void
cxx_flags(struct gen *g, struct cmd *c, bool for_pch)
{
	swords(c, host_opt(g, L_CXX));
	if (!fb_flags_have_pic(g->o->cxxflags))
		arg(c, "-fPIC");
	if (g->torch && !g->o->torch_no_flags) {
		char **v = fb_torch_cxx_words(g->torch, g->o->executable ? NULL : g->name,
		                              torch_cuda(g) ? g->t.cuda_home : NULL);
		if (!v)
			cmd_oom(c);
		if (for_pch)
			words_but_name(c, v);
		else
			for (size_t i = 0; v && v[i]; i++)
				arg(c, v[i]);
		fb_torch_words_free(v);
	}
	char **u = NULL;
	if (!c->rc)
		c->rc = fb_words_split(g->o->cxxflags, &u, NULL, c->err);
	if (for_pch)
		words_but_name(c, u);
	else
		for (size_t i = 0; u && u[i]; i++)
			arg(c, u[i]);
	fb_words_free(u);
}

/* The words of a --torch C++ compile that its PCH must share: the compiler, its flags
 * (cxx_flags, without the extension's name), the runtime header's and the user's -I and -D,
 * the maps of the base and of torch's dir (prefix_maps). Into c. */
static void
pch_flags(struct gen *g, struct cmd *c)
{
	swords(c, g->t.cxx);
	cxx_flags(g, c, true);
	char inc[PATHMAX + 3];
	bfmt(inc, sizeof(inc), "-I%s", g->t.include);
	arg(c, inc);
	add_includes_defines(g, c);
	base_map(g, c, false, NULL, 0);
	base_map(g, c, false, NULL, 1);
}

/* The command that makes p's PCH: the compiler's -x c++-header with -MD into temporaries,
 * renamed into place; the header list stays beside it, and the PCH's size, inode and mtime go
 * into its stamp (hostpch.c). Into *out (malloc'd). */
static int
pch_cmd(const struct fb_hostpch *p, const char *flags, char **out, struct fb_error *err)
{
	struct cmd c = {.err = err};
	raw(&c, flags);
	swords(&c, "-x c++-header");
	arg(&c, p->header);
	swords(&c, "-MD -MF");
	arg(&c, p->dep);
	raw(&c, ".tmp.$$ -o ");
	arg(&c, p->gch);
	raw(&c, ".tmp.$$ && mv -f ");
	arg(&c, p->dep);
	raw(&c, ".tmp.$$ ");
	arg(&c, p->dep);
	raw(&c, " && mv -f ");
	arg(&c, p->gch);
	raw(&c, ".tmp.$$ ");
	arg(&c, p->gch);
	raw(&c, " && stat -c '%s %i %.9Y' ");
	arg(&c, p->gch);
	raw(&c, " > ");
	arg(&c, p->stamp);
	raw(&c, ".tmp.$$ && mv -f ");
	arg(&c, p->stamp);
	raw(&c, ".tmp.$$ ");
	arg(&c, p->stamp);
	raw(&c, " || { rm -f ");
	arg(&c, p->gch);
	raw(&c, ".tmp.$$ ");
	arg(&c, p->dep);
	raw(&c, ".tmp.$$; exit 1; }");
	int rc = cmd_end(&c);
	if (rc)
		free(c.b.s);
	else
		*out = c.b.s;
	return rc;
}

/* The edge that makes p's PCH, once per graph (no deps rule: ninja would delete the header
 * list it keeps beside the PCH). */
static int
gen_pch_edge(struct gen *g, const struct fb_hostpch *p, const char *flags, struct fb_error *err)
{
	for (size_t i = 0; i < g->pchs.n; i++)
		if (strcmp(g->pchs.v[i], p->gch) == 0)
			return 0;
	fb_strlist_add(&g->pchs, p->gch);
	char *cmd = NULL;
	int rc = pch_cmd(p, flags, &cmd, err);
	const char *in = p->header;
	char desc[400];
	describe(desc, sizeof(desc), "PCH torch headers (%.300s)", p->why);
	if (!rc)
		rc = edge(g, "pch", p->gch, &in, 1, NULL, 0, cmd, desc, NULL, err);
	free(cmd);
	return rc;
}

/* With the edge cache, the compile itself makes a missing PCH first (the build dir's pch.sh,
 * fb_hostpch_script: under a lock, when an earlier compile wanted it, not once the build has
 * failed), so a build whose compiles are all cache hits makes none: "{ [ -f LINK/h.h.gch ] ||
 * /bin/sh LINK/pch.sh; } && ". Without the PCH, the compiler reads -include h.h as a plain
 * header: the same object. So the words are the same whether the PCH is there or not (they are
 * in the cache key), and a no-op build stays one; LINK is in the build dir (fb_hostpch_link), so
 * they stay the same with another cache dir too. The first build that wants a PCH compiles
 * without it and leaves its making to the background maker (run.c): g->pch_bg. */
static int
lazy_pch(struct gen *g, struct fb_hostpch *p, const char *flags, bool eager, char **prefix, struct fb_error *err)
{
	char failed[PATHMAX + 32], *script = NULL;
	fb_build_failed_path(g, failed, sizeof(failed));
	int rc = fb_hostpch_script(p, flags, failed, eager, &script, err);
	if (!rc)
		rc = fb_hostpch_link(p, g->dir, script, err);
	free(script);
	if (rc)
		return rc;
	char gch[FB_HOSTPCH_PATH + 16], sh[FB_HOSTPCH_PATH + 16];
	bfmt(gch, sizeof(gch), "%s/h.h%s", p->link, strrchr(p->gch, '.'));
	bfmt(sh, sizeof(sh), "%s/pch.sh", p->link);
	struct cmd c = {.err = err};
	raw(&c, "{ [ -f");
	arg(&c, gch);
	raw(&c, " ] || /bin/sh");
	arg(&c, sh);
	raw(&c, "; } && ");
	if (!p->use && p->stale) {
		bool have = false;
		for (size_t i = 0; i < g->pch_bg.n; i++)
			have |= strcmp(g->pch_bg.v[i], sh) == 0;
		if (!have)
			fb_strlist_add(&g->pch_bg, sh);
	}
	rc = cmd_end(&c);
	if (rc)
		free(c.b.s);
	else
		*prefix = c.b.s;
	return rc;
}

/* The build keeps p's hold on its PCH dir until ninja is done (gen_free closes it). */
static int
keep_hold(struct gen *g, struct fb_hostpch *p, struct fb_error *err)
{
	int *v = realloc(g->pch_holds, (g->npch_holds + 1) * sizeof(*v));
	if (!v)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	g->pch_holds = v;
	g->pch_holds[g->npch_holds++] = p->hold;
	p->hold = -1;
	return 0;
}

/* --torch C++ source: its PCH (hostpch.c; gcc's or clang's), which the compile reads
 * (-include) and refuses when the compiler finds it invalid. With the edge cache the compile
 * makes it when missing (*prefix, malloc'd: the words that go first; lazy_pch), and `fatbuild
 * edge` puts the headers it was made from (*deps_of, malloc'd) into the object's depfile;
 * without, an edge makes it when stale, an implicit input of the compile (*implicit). */
static int
use_host_pch(struct gen *g, const char *src, struct cmd *c, const char **implicit, char **prefix, char **deps_of,
             struct fb_error *err)
{
	*implicit = NULL;
	*prefix = NULL;
	*deps_of = NULL;
	const char *l = g->o->launcher ? g->o->launcher : fb_env_get("FATBUILD_LAUNCHER");
	bool eager = false;
	if (!g->torch || g->o->no_host_pch || (l && *l) || !fb_hostpch_enabled(&eager))
		return 0; /* a launcher may compile elsewhere (distcc) or not cache PCH users (ccache) */
	char *block = NULL;
	int rc = fb_hostpch_block(src, &block, err);
	if (rc || !block)
		return rc;
	struct cmd f = {.err = err};
	pch_flags(g, &f);
	char **w = NULL, tdir[PATHMAX];
	size_t nw = 0;
	rc = cmd_end(&f);
	if (!rc)
		rc = fb_words_split(g->t.cxx, &w, &nw, err);
	torch_dir(g, tdir, sizeof(tdir));
	struct fb_hostpch *p = calloc(1, sizeof(*p));
	if (p)
		p->hold = -1;
	else if (!rc)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	if (!rc && nw)
		rc = fb_hostpch_prepare(block, w[0], f.b.s, g->torch->version, tdir, eager, p, err);
	bool lazy = edge_cache_on(g);
	if (!rc && nw && p->flavor == FB_HOSTPCH_NONE)
		nw = 0; /* a compiler of no known flavor: no PCH */
	if (!rc && nw && !lazy && !p->use)
		nw = 0; /* the first build that wants it: compiled without, made by the next */
	if (!rc && nw && lazy)
		rc = lazy_pch(g, p, f.b.s, eager, prefix, err);
	else if (!rc && nw && p->stale)
		rc = gen_pch_edge(g, p, f.b.s, err);
	if (!rc && nw) {
		char hdr[FB_HOSTPCH_PATH + 8], d[FB_HOSTPCH_PATH + 8];
		bfmt(hdr, sizeof(hdr), "%s/h.h", lazy ? p->link : p->dir);
		bfmt(d, sizeof(d), "%s/h.h.d", p->link);
		swords(c, "-Winvalid-pch -Werror=invalid-pch -include");
		arg(c, hdr);
		fb_strlist_add(&g->pchs_used, p->gch);
		if (!lazy)
			*implicit = g->pchs_used.v ? g->pchs_used.v[g->pchs_used.n - 1] : NULL;
		else if (!(*deps_of = strdup(d)))
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (!rc && nw && p->hold >= 0)
		rc = keep_hold(g, p, err);
	if (p)
		fb_hostpch_release(p);
	fb_words_free(w);
	free(f.b.s);
	free(block);
	free(p);
	return rc;
}

/* --tool words for the programs a compile runs: $CC's or $CXX's words that are not options;
 * for nvcc also its own stages and $CXX (its -ccbin). */
static void
edge_tools(struct gen *g, enum lang lang, struct cmd *c)
{
	char **w = NULL;
	size_t nw = 0;
	/* nvcc's host compiler: --torch without $CC leaves it to nvcc, which runs gcc */
	const char *host = lang == L_C || (lang == L_NVCC && g->torch) ? g->t.cc : g->t.cxx;
	if (lang == L_NVCC && g->torch && !g->t.cc_set)
		host = "gcc";
	if (!c->rc)
		c->rc = fb_words_split(host, &w, &nw, c->err);
	for (size_t i = 0; i < nw; i++)
		if (w[i][0] != '-') {
			arg(c, "--tool");
			arg(c, w[i]);
		}
	fb_words_free(w);
	static const char *const nv[] = {"bin/nvcc", "bin/ptxas", "bin/cudafe++", "bin/fatbinary", "nvvm/bin/cicc"};
	for (size_t i = 0; lang == L_NVCC && i < sizeof(nv) / sizeof(nv[0]); i++) {
		char p[PATHMAX + 32];
		bfmt(p, sizeof(p), "%s/%s", g->t.cuda_home, nv[i]);
		arg(c, "--tool");
		arg(c, p);
	}
}

/* *cmd run by `fatbuild edge` (edgecache.c), which serves the object from the compile or
 * remote cache when it can; bases: the directories besides the build dir it spells @Bn
 * (prefix_maps); deps_of: the header list of the PCH the compile reads (BUILD_DIR/pch/ID/h.h.d),
 * which joins the key, as gcc's depfile names none of the headers inside a PCH (clang's does). */
static int
cache_edge(struct gen *g, enum lang lang, const char *out, const char *dep, const struct fb_strlist *bases,
           const char *deps_of, char **cmd, struct fb_error *err)
{
	struct cmd c = {.err = err};
	raw(&c, "exec");
	arg(&c, g->t.fatbuild);
	arg(&c, "edge");
	arg(&c, "-o");
	arg(&c, out);
	arg(&c, "--depfile");
	arg(&c, dep);
	arg(&c, "--base");
	arg(&c, g->dir);
	for (size_t i = 0; i < bases->n; i++) {
		arg(&c, "--base");
		arg(&c, bases->v[i]);
	}
	edge_tools(g, lang, &c);
	if (deps_of) {
		arg(&c, "--deps-of");
		arg(&c, deps_of);
	}
	swords(&c, "-- /bin/sh -c");
	arg(&c, *cmd);
	int rc = cmd_end(&c);
	if (rc) {
		free(c.b.s);
		return rc;
	}
	free(*cmd);
	*cmd = c.b.s;
	return 0;
}

/* A C or C++ compile's words up to the shared tail: launcher, $CC/$CXX, the flags (cxx_flags),
 * and for C++ the torch PCH (*pch: the implicit input an edge that makes it needs; *prefix:
 * the words that make it first, malloc'd; *deps_of: its header list, malloc'd). */
static int
host_words(struct gen *g, const char *src, enum lang lang, struct cmd *c, const char **pch, char **prefix,
           char **deps_of, struct fb_error *err)
{
	add_launcher(g, c);
	swords(c, lang == L_C ? g->t.cc : g->t.cxx); /* each word of $CC on its own */
	arg(c, "-c");
	if (lang == L_C) {
		swords(c, host_opt(g, L_C));
		if (!fb_flags_have_pic(g->o->cflags))
			arg(c, "-fPIC");
		swords(c, g->o->cflags);
		return 0;
	}
	cxx_flags(g, c, false);
	g->any_cxx = true;
	return use_host_pch(g, src, c, pch, prefix, deps_of, err);
}

/* The nvcc compile's words (nvcc_words, torch's, the host flags, the CUDA and nvcc flags). */
static int
nvcc_line(struct gen *g, const char *src, const char *keep, struct cmd *c)
{
	int rc = nvcc_words(g, src, keep, c);
	if (rc)
		return rc;
	if (g->torch && !g->o->torch_no_flags) {
		struct fb_buf user = {0};
		fb_buf_puts(&user, g->o->nvcc_flags ? g->o->nvcc_flags : "");
		fb_buf_puts(&user, " ");
		fb_buf_puts(&user, g->o->cuda_flags ? g->o->cuda_flags : "");
		if (user.oom)
			cmd_oom(c);
		svec(c, fb_torch_nvcc_words(g->torch, g->o->executable ? NULL : g->name, g->t.cuda_home, user.s));
		free(user.s);
	}
	if (!g->torch) {
		/* Host-compiler flags through -Xcompiler; nvcc's own and the shared CUDA flags raw. With
		 * --torch, as with torch's builder, C++ flags are the C++ compiles' alone. */
		char *host = fb_nvcc_host_words(g->o->cxxflags);
		if (!host)
			cmd_oom(c);
		swords(c, host);
		free(host);
	}
	swords(c, g->o->cuda_flags);
	swords(c, g->o->nvcc_flags);
	g->any_nvcc = true;
	return 0;
}

/* The command ninja runs for a compile whose compiler words are core: nvcc's in a keep dir of
 * its own (removed after), at a lower priority when its --threads run beside host compiles;
 * C++ after its PCH prefix; through `fatbuild edge` with the edge cache. Into *cmd (malloc'd). */
static int
wrap_compile(struct gen *g, enum lang lang, const char *core, const char *keep, const char *prefix, const char *out,
             const char *dep, const struct fb_strlist *bases, const char *deps_of, char **cmd, struct fb_error *err)
{
	struct cmd c = {.err = err};
	if (lang == L_NVCC) {
		/* nvcc's intermediates get fixed names in a directory of their own (-keep): unnamed, they
		 * are tmpxft_<pid>_..., and the host compiler's debug line strings are ordered by a
		 * hash of those names, so a -g object would differ from one process to the next. */
		raw(&c, "mkdir -p");
		arg(&c, keep);
		raw(&c, " && ");
		if (nvcc_threads(g) > 1 && has_host_edges(g))
			raw(&c, "nice -n 5 ");
		raw(&c, core);
		raw(&c, "; s=$?; rm -rf");
		arg(&c, keep);
		raw(&c, "; exit $s");
	} else {
		raw(&c, prefix ? prefix : "");
		raw(&c, core);
	}
	int rc = cmd_end(&c);
	if (!rc && edge_cache_on(g))
		rc = cache_edge(g, lang, out, dep, bases, deps_of, &c.b.s, err);
	if (rc)
		free(c.b.s);
	else
		*cmd = c.b.s;
	return rc;
}

static int
gen_host(struct gen *g, size_t idx, const char *src, enum lang lang, struct fb_error *err)
{
	char st[256], out[PATHMAX + 300], dep[PATHMAX + 310], keep[PATHMAX + 310], desc[512];
	stem(idx, src, st, sizeof(st));
	bfmt(out, sizeof(out), "%s/obj/%s.o", g->dir, st);
	bfmt(dep, sizeof(dep), "%s.d", out);
	bfmt(keep, sizeof(keep), "%s.keep", out);
	struct cmd c = {.err = err};
	const char *pch = NULL;
	char *prefix = NULL, *deps_of = NULL, *cmd = NULL;
	int rc = lang == L_NVCC ? nvcc_line(g, src, keep, &c) : host_words(g, src, lang, &c, &pch, &prefix, &deps_of, err);
	struct fb_strlist bases = {0};
	prefix_maps(g, &c, lang == L_NVCC, &bases);
	if (bases.oom)
		cmd_oom(&c);
	char inc[PATHMAX + 3];
	bfmt(inc, sizeof(inc), "-I%s", g->t.include);
	arg(&c, inc);
	add_includes_defines(g, &c);
	swords(&c, "-MD -MF");
	arg(&c, dep);
	arg(&c, "-o");
	arg(&c, out);
	arg(&c, src);
	if (!rc)
		rc = cmd_end(&c);
	if (!rc)
		rc = wrap_compile(g, lang, c.b.s, keep, prefix, out, dep, &bases, deps_of, &cmd, err);
	fb_strlist_free(&bases);
	describe(desc, sizeof(desc), "%s %s", lang == L_NVCC ? "NVCC" : lang == L_C ? "CC" : "CXX",
	         strrchr(src, '/') ? strrchr(src, '/') + 1 : src);
	if (!rc)
		rc = edge(g, "cc", out, &src, 1, pch ? &pch : NULL, pch ? 1 : 0, cmd, desc, dep, err);
	if (!rc) {
		fb_strlist_add(&g->shown, cmd);
		fb_strlist_add(&g->shown, c.b.s);
	}
	free(c.b.s);
	free(cmd);
	free(prefix);
	free(deps_of);
	fb_strlist_add(&g->objects, out);
	if (lang == L_NVCC && g->reloc)
		fb_strlist_add(&g->nvcc_objs, out);
	return rc;
}

/* The device link of relocatable code: per target with fatbuild dlink (nvrtc), merged into one
 * container for the embed; or one nvcc -dlink object (nvcc). */
static int
gen_dlink(struct gen *g, struct fb_error *err)
{
	int rc = 0;
	size_t n = g->ntparts;
	struct fb_strlist linked = {0};
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
		describe(desc, sizeof(desc), "DLINK %s", tname);
		if (!rc)
			rc = edge(g, "dlink", out, e.inputs, e.ninputs, NULL, 0, cmd, desc, NULL, err);
		free(cmd);
		fb_strlist_add(&linked, out);
	}
	if (!rc && linked.n) {
		char merged[PATHMAX + 32];
		bfmt(merged, sizeof(merged), "%s/obj/dlink.fatbin", g->dir);
		rc = gen_merge(g, merged, &linked, err);
	}
	fb_strlist_free(&linked);
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
		fb_strlist_add(&g->objects, out);
	}
	if (!rc && g->nvcc_objs.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	return rc;
}

void
fb_build_failed_path(const struct gen *g, char *buf, size_t size)
{
	bfmt(buf, size, "%s/.fatbuild.failed", g->dir);
}

/* BUILD_DIR/out/BASENAME: what the link edge writes. */
void
fb_build_staged_path(const struct gen *g, char *buf, size_t size)
{
	bfmt(buf, size, "%s/out/%s", g->dir, strrchr(g->out, '/') + 1);
}

/* obj/fatbin.o: every kernel source's container, embedded as the runtime's fbrt_fatbin. */
static int
gen_embed(struct gen *g, struct fb_error *err)
{
	char obj[PATHMAX + 32];
	bfmt(obj, sizeof(obj), "%s/obj/fatbin.o", g->dir);
	struct cmd c = {.err = err};
	arg(&c, g->t.fatbuild);
	swords(&c, "embed --hidden --symbol fbrt_fatbin -o");
	arg(&c, obj);
	for (size_t i = 0; i < g->fatbins.n; i++)
		arg(&c, g->fatbins.v[i]);
	int rc = cmd_end(&c);
	if (!rc)
		rc = edge(g, "embed", obj, (const char *const *)g->fatbins.v, g->fatbins.n, NULL, 0, c.b.s, "EMBED fatbin.o",
		          NULL, err);
	free(c.b.s);
	fb_strlist_add(&g->objects, obj);
	return rc;
}

static int
gen_link(struct gen *g, struct fb_error *err)
{
	int rc = g->fatbins.n ? gen_embed(g, err) : 0;
	if (rc)
		return rc;
	/* Linked inside the build dir (private), then copied to OUT by fb_builddir_publish. */
	char staged[PATHMAX + 16], tmp[PATHMAX + 32];
	fb_build_staged_path(g, staged, sizeof(staged));
	bfmt(tmp, sizeof(tmp), "%s.tmp.fb", staged);
	struct cmd c = {.err = err};
	swords(&c, g->any_cxx || g->any_nvcc ? g->t.cxx : g->t.cc);
	if (!g->o->executable)
		arg(&c, "-shared");
	arg(&c, "-o");
	arg(&c, tmp);
	for (size_t i = 0; i < g->objects.n; i++)
		arg(&c, g->objects.v[i]);
	arg(&c, g->t.runtime);
	if (g->torch && !g->o->torch_no_flags) {
		/* torch's libraries; cudart shared, the one torch itself loaded. */
		svec(&c, fb_torch_link_words(g->torch, g->t.cuda_home, torch_cuda(g) && g->torch->cuda[0], g->o->executable));
	} else if (g->torch) {
		/* the caller's ldflags name torch's libraries */
	} else if (g->any_nvcc) {
		char lib[PATHMAX + 16];
		bfmt(lib, sizeof(lib), "-L%s/lib64", g->t.cuda_home);
		arg(&c, lib);
		if (g->reloc)
			arg(&c, "-lcudadevrt");
		swords(&c, "-lcudart_static -lrt");
	}
	swords(&c, "-ldl -lpthread");
	swords(&c, g->o->ldflags);
	/* Atomic replacement: link to a temporary name, rename on success, remove on failure. */
	raw(&c, " && mv -f");
	arg(&c, tmp);
	arg(&c, staged);
	raw(&c, " || { rm -f");
	arg(&c, tmp);
	raw(&c, "; exit 1; }");
	if (g->objects.oom)
		cmd_oom(&c);
	rc = cmd_end(&c);
	const char *implicit[1] = {g->t.runtime};
	char desc[PATHMAX + 8];
	describe(desc, sizeof(desc), "LINK %s", strrchr(g->out, '/') + 1);
	if (!rc)
		rc = edge(g, "link", staged, (const char *const *)g->objects.v, g->objects.n, implicit, 1, c.b.s, desc, NULL,
		          err);
	free(c.b.s);
	return rc;
}

int
fb_build_generate(struct gen *g, struct fb_error *err)
{
	/* Every rule runs its edge's own $cmd; the compiles also read back a gcc-style depfile. */
	static const struct {
		const char *name;
		bool deps;
	} rules[] = {{"kernel", true}, {"merge", false}, {"cc", true}, {"embed", false}, {"link", false}, {"pch", false},
	             {"dlink", false}};
	size_t nrules = sizeof(rules) / sizeof(rules[0]) - (g->reloc ? 0 : 1); /* dlink: relocatable code only */
	int rc = fb_ninja_var(g->nj, "builddir", g->dir, err);
	for (size_t i = 0; !rc && i < nrules; i++)
		rc = fb_ninja_rule(g->nj, rules[i].name, "$cmd", "$desc", rules[i].deps ? "$dep" : NULL,
		                   rules[i].deps ? "gcc" : NULL, err);
	/* NVRTC jobs run here whatever -j says: at most one per CPU (MAX_JOBS), and no more than -j. */
	int depth = fb_compile_default_jobs();
	if (g->o->jobs > 0 && fb_compile_jobs(g->o->jobs) < depth)
		depth = fb_compile_jobs(g->o->jobs);
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
