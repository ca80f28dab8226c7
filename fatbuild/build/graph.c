/* graph.c: the ninja graph of a build (the edges build.c's header describes): one command per
 * edge, NVRTC kernel edges and their merge, host and nvcc compiles, the device link, the embed
 * and the link. */
#define _GNU_SOURCE /* strtok_r, realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "common/error_priv.h"
#include "build.h"
#include "dlink.h"
#include "repro.h"
#include "flags.h"
#include "torch.h"

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

/* fatbuild embed --merge of parts into one container, merged, which the embed then takes. */
static int
gen_merge(struct gen *g, const char *merged, const struct list *parts, struct fb_error *err)
{
	struct str c = {0};
	int rc = sarg(&c, g->t.fatbuild, err);
	if (!rc)
		rc = swords(&c, "embed --merge -o", err);
	if (!rc)
		rc = sarg(&c, merged, err);
	for (size_t i = 0; !rc && i < parts->n; i++)
		rc = sarg(&c, parts->v[i], err);
	if (!rc && (c.oom || parts->oom))
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	char desc[512];
	bfmt(desc, sizeof(desc), "MERGE %s", strrchr(merged, '/') + 1);
	if (!rc)
		rc = edge(g, "merge", merged, (const char *const *)parts->v, parts->n, NULL, 0, c.s, desc, NULL, err);
	free(c.s);
	ladd(&g->fatbins, merged);
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
		/* exec: ninja then waits for fatbuild itself, not for a shell that a stopping signal
		 * kills at once while the compile is still cleaning up */
		struct str c = {0};
		sput(&c, "exec ");
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
	if (!rc)
		rc = gen_merge(g, merged, &parts, err);
	lfree(&parts);
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
		rc = gen_merge(g, merged, &linked, err);
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
void
fb_build_staged_path(const struct gen *g, char *buf, size_t size)
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
	fb_build_staged_path(g, staged, sizeof(staged));
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
		struct str qt = {0}, qs = {0};
		rc = sarg(&qt, tmp, err);
		if (!rc)
			rc = sarg(&qs, staged, err);
		if (!rc && !qt.oom && !qs.oom) {
			sput(&c, " && mv -f ");
			sput(&c, qt.s);
			sput(&c, " ");
			sput(&c, qs.s);
			sput(&c, " || { rm -f ");
			sput(&c, qt.s);
			sput(&c, "; exit 1; }");
		} else if (!rc) {
			c.oom = true;
		}
		free(qt.s);
		free(qs.s);
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

int
fb_build_generate(struct gen *g, struct fb_error *err)
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
