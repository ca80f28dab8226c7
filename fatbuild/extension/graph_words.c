/* graph_words.c: the words the edges' commands share (graph_words.h): -I and -D, the launcher
 * words, the optimisation and a C++ compile's flags, the prefix maps that keep objects free of
 * where things lie, the remote executor's words. */
#define _GNU_SOURCE /* strtok_r, realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/config.h"
#include "base/strbuf.h"
#include "base/words.h"
#include "cmdline.h"
#include "flags.h"
#include "gen.h"
#include "graph_words.h"
#include "repro.h"
#include "torch.h"

/* -I and -D words for a compiler command. */
void
fb_graph_includes(const struct gen *g, struct cmd *c)
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

/* The launcher words (ccache, sccache, distcc) that go before a host compiler or nvcc. */
void
fb_graph_launcher(const struct gen *g, struct cmd *c)
{
	if (g->launcher && *g->launcher)
		swords(c, g->launcher);
}

/* The optimisation words of a compile of lang (fb_build_opts.host_opt, default -O2): none when
 * the flags that compile gets state an -O of their own. The project's choice stands, as with
 * torch's builder, and a second -O on nvcc's line draws "incompatible redefinition for option
 * 'optimize'". nvcc gets --cxxflags (through -Xcompiler) only without --torch. */
const char *
fb_graph_host_opt(const struct gen *g, enum lang lang)
{
	const struct fb_build_opts *o = g->o;
	bool stated = lang == L_NVCC ? fb_flags_have_opt(o->nvcc_flags) || fb_flags_have_opt(o->cuda_flags) ||
	                                   (!g->torch && fb_flags_have_opt(o->cxxflags))
	                             : fb_flags_have_opt(lang == L_C ? o->cflags : o->cxxflags);
	return stated ? "" : o->host_opt ? o->host_opt : "-O2";
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
void
fb_graph_cxx_flags(const struct gen *g, struct cmd *c, bool for_pch)
{
	swords(c, fb_graph_host_opt(g, L_CXX));
	if (!fb_flags_have_pic(g->o->cxxflags))
		arg(c, "-fPIC");
	if (g->torch && !g->o->torch_no_flags) {
		char **v = fb_torch_cxx_words(g->torch, g->o->executable ? NULL : g->name,
		                              fb_gen_torch_cuda(g) ? g->t.cuda_home : NULL);
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

/* FATBUILD_CACHE_BASEDIR, realpath'ed as the NVRTC cache reads it (docs/remote-cache.md §3),
 * into out; "" when unset. */
static void
cache_basedir(const struct gen *g, char *out, size_t size)
{
	const char *b = g->cfg->cache_basedir;
	char abs[PATHMAX];
	out[0] = 0;
	if (b && *b)
		bfmt(out, size, "%s", realpath(b, abs) ? abs : b);
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
void
fb_graph_base_map(const struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases, int which)
{
	char based[PATHMAX], tdir[PATHMAX];
	cache_basedir(g, based, sizeof(based));
	fb_gen_torch_dir(g, tdir, sizeof(tdir));
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
 * (graph_pch.c: their inline functions spell __FILE__ when the PCH is made). Through nvcc as
 * -Xcompiler words. The base and torch's dir go into bases (fb_graph_base_map). */
void
fb_graph_prefix_maps(const struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases)
{
	char root[PATHMAX];
	fb_repro_root(g->o->sources, g->o->nsources, root, sizeof(root));
	fb_graph_base_map(g, c, via_nvcc, bases, 0);
	add_map(c, root, ".", via_nvcc);
	if (strcmp(g->dir, root) != 0)
		add_map(c, g->dir, ".", via_nvcc);
	fb_graph_base_map(g, c, via_nvcc, bases, 1);
}

/* The remote executor's words for an edge's fatbuild compile or `fatbuild edge`
 * (docs/remote-cache.md §9): explicit, since the edge would otherwise take
 * FATBUILD_REMOTE_EXECUTOR from the environment it inherits, which the build's own option may
 * have replaced. */
void
fb_graph_rexec_words(const struct gen *g, struct cmd *c)
{
	if (g->rexec_off) {
		arg(c, "--remote-exec");
		arg(c, "");
	}
	if (!g->rexec) /* the executor fb_build resolved (o->remote.exec, else the configuration's) */
		return;
	arg(c, "--remote-exec");
	arg(c, g->rexec);
	for (size_t i = 0; i < g->o->remote.nexec_props; i++) {
		arg(c, "--remote-exec-property");
		arg(c, g->o->remote.exec_props[i]);
	}
	if (g->o->remote.exec_timeout_ms > 0) {
		char s[32];
		bfmt(s, sizeof(s), "%ld", (g->o->remote.exec_timeout_ms + 999) / 1000);
		arg(c, "--remote-exec-timeout");
		arg(c, s);
	}
}
