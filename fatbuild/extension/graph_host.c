/* graph_host.c: the compile edges of C, C++ and nvcc sources (graph_host.h): the compiler's
 * words, gcc's collector heap, and the wrapping that runs a compile through `fatbuild edge`
 * (the edge cache, edgecache.c). nvcc's own words are graph_nvcc.c's, the torch PCH of a C++
 * compile graph_pch.c's, the flags and prefix maps compiles share graph_words.c's. */
#define _GNU_SOURCE /* strtok_r, realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/config.h"
#include "base/cpus.h"
#include "base/strbuf.h"
#include "base/words.h"
#include "cmdline.h"
#include "flags.h"
#include "gen.h"
#include "graph_edge.h"
#include "graph_host.h"
#include "graph_nvcc.h"
#include "graph_pch.h"
#include "graph_words.h"
#include "hostpch.h"
#include "torch.h"

/* --tool words for the programs a compile runs: $CC's or $CXX's words that are not options;
 * for nvcc also its own stages and $CXX (its -ccbin). */
static void
edge_tools(const struct gen *g, enum lang lang, struct cmd *c)
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

/* Whether the words of s ask for what records a compile's options in the object (debug info's
 * producer string: any -g but -g0, the last one winning; -frecord-gcc-switches; LTO's options
 * section) or set gcc's collector heap themselves. */
static bool
records_options(const char *s)
{
	char **w = NULL;
	size_t n = 0;
	if (!s || !*s)
		return false;
	if (fb_words_split(s, &w, &n, NULL) != 0)
		return true;
	bool debug = false, other = false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(w[i], "-g0") == 0)
			debug = false;
		else if (strncmp(w[i], "-g", 2) == 0)
			debug = true;
		else if (strcmp(w[i], "-frecord-gcc-switches") == 0 || strncmp(w[i], "-flto", 5) == 0 ||
		         strstr(w[i], "ggc-min-"))
			other = true;
	}
	fb_words_free(w);
	return debug || other;
}

/* gcc's collector heap for the build's C++ compiles (docs/pytorch.md "gcc's collector"): gcc
 * collects its garbage whenever its heap has grown past ggc-min-heapsize (128 MB by default) and
 * ggc-min-expand percent; on a torch source that is 15 % of the compile's CPU time. With a
 * heap of 1 GiB before the first collection a torch source is compiled without one, into the
 * same bytes (the collector frees memory, it does not decide code), at about 0.5 GB more
 * memory. Given when the compiler is gcc, the words record no options into the object (-g,
 * -frecord-gcc-switches, -flto: the word would be in it), no launcher keys the command (ccache
 * across machines of other memory), and the memory this process may use (fb_mem_limit) leaves
 * 4 GiB to each job. The edge cache's key leaves the word out (--unkeyed): it follows the
 * machine. */
#define GCC_HEAP_WORD "--param=ggc-min-heapsize=1048576"
static bool
gcc_heap_on(struct graph *gr)
{
	const struct gen *g = gr->g;
	if (gr->gcc_heap)
		return gr->gcc_heap > 0;
	gr->gcc_heap = -1;
	if ((g->launcher && *g->launcher) || records_options(g->t.cxx) || records_options(fb_graph_host_opt(g, L_CXX)) ||
	    records_options(g->o->cxxflags))
		return false;
	char **w = NULL;
	size_t n = 0;
	bool gcc = fb_words_split(g->t.cxx, &w, &n, NULL) == 0 && n && fb_hostpch_flavor(g->cfg, w[0]) == FB_HOSTPCH_GCC;
	fb_words_free(w);
	unsigned long long mem = fb_mem_limit(NULL, NULL), jobs = g->jobs > 0 ? (unsigned long long)g->jobs : 1;
	if (gcc && mem / jobs >= 4ULL << 30)
		gr->gcc_heap = 1;
	return gr->gcc_heap > 0;
}

/* Whether the edges of a --torch build leave torch's headers out of their depfiles, taking
 * torch's own files (torch.h: stamp) as inputs instead: as torch's builder, whose -MMD leaves
 * out every -isystem header, ninja then checks a few hundred files on a build with nothing to
 * do, not thousands, and an install of another torch still rebuilds (docs/pytorch.md "Builds
 * with nothing to do"). The edge cache's key takes every header either way. */
static bool
torch_stamped(const struct gen *g)
{
	return g->torch && g->torch->nstamp > 0 && fb_gen_edge_cache_on(g);
}

/* --remote-exec and its options for `fatbuild edge` (docs/remote-cache.md §9 "Host and nvcc
 * edges"), with the compile alone as --remote-cmd (core: NULL when the edge's command is more
 * than one compile, a torch PCH made first or read, which stay here). */
static void
remote_words(const struct gen *g, struct cmd *c, const char *core)
{
	fb_graph_rexec_words(g, c);
	if (g->rexec && core) {
		arg(c, "--remote-cmd");
		arg(c, core);
	}
}

/* *cmd run by `fatbuild edge` (edgecache.c), which serves the object from the compile or
 * remote cache when it can, else at the remote executor when there is one (core: the compile
 * alone); bases: the directories besides the build dir it spells @Bn (fb_graph_prefix_maps); deps_of: the header list of the PCH the compile reads (BUILD_DIR/pch/ID/h.h.d),
 * which joins the key, as gcc's depfile names none of the headers inside a PCH (clang's does). */
static int
cache_edge(struct graph *gr, enum lang lang, const char *out, const char *dep, const struct fb_strlist *bases,
           const char *deps_of, const char *core, char **cmd, struct fb_error *err)
{
	const struct gen *g = gr->g;
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
	for (size_t i = 0; torch_stamped(g) && i < g->torch->ninclude; i++) {
		arg(&c, "--quiet-dir");
		arg(&c, g->torch->include[i]);
	}
	if (lang == L_CXX && gcc_heap_on(gr)) {
		arg(&c, "--unkeyed");
		arg(&c, GCC_HEAP_WORD);
	}
	remote_words(g, &c, deps_of ? NULL : core);
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

/* A C or C++ compile's words up to the shared tail: launcher, $CC/$CXX, the flags
 * (fb_graph_cxx_flags), and for C++ the torch PCH (*pch: the implicit input an edge that makes
 * it needs; *prefix: the words that make it first, malloc'd; *deps_of: its header list,
 * malloc'd). */
static int
host_words(struct graph *gr, const char *src, enum lang lang, struct cmd *c, const char **pch, char **prefix,
           char **deps_of, struct fb_error *err)
{
	const struct gen *g = gr->g;
	fb_graph_launcher(g, c);
	swords(c, lang == L_C ? g->t.cc : g->t.cxx); /* each word of $CC on its own */
	arg(c, "-c");
	if (lang == L_C) {
		swords(c, fb_graph_host_opt(g, L_C));
		if (!fb_flags_have_pic(g->o->cflags))
			arg(c, "-fPIC");
		swords(c, g->o->cflags);
		return 0;
	}
	if (gcc_heap_on(gr))
		arg(c, GCC_HEAP_WORD);
	fb_graph_cxx_flags(g, c, false);
	return fb_graph_host_pch(gr, src, c, pch, prefix, deps_of, err);
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

/* The command ninja runs for a compile whose compiler words are core: nvcc's in a keep dir of
 * its own (removed after), at a lower priority when its --threads run beside host compiles;
 * C++ after its PCH prefix; through `fatbuild edge` with the edge cache. Into *cmd (malloc'd). */
static int
wrap_compile(struct graph *gr, enum lang lang, const char *core, const char *keep, const char *prefix, const char *out,
             const char *dep, const struct fb_strlist *bases, const char *deps_of, char **cmd, struct fb_error *err)
{
	const struct gen *g = gr->g;
	struct cmd c = {.err = err};
	if (lang == L_NVCC) {
		/* nvcc's intermediates get fixed names in a directory of their own (-keep): unnamed, they
		 * are tmpxft_<pid>_..., and the host compiler's debug line strings are ordered by a
		 * hash of those names, so a -g object would differ from one process to the next. */
		raw(&c, "mkdir -p");
		arg(&c, keep);
		raw(&c, " && ");
		if (fb_graph_nvcc_threads(g) > 1 && has_host_edges(g))
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
	if (!rc && fb_gen_edge_cache_on(g))
		rc = cache_edge(gr, lang, out, dep, bases, deps_of, prefix ? NULL : core, &c.b.s, err);
	if (rc)
		free(c.b.s);
	else
		*cmd = c.b.s;
	return rc;
}

int
fb_graph_host_edge(struct graph *gr, size_t idx, const char *src, enum lang lang, struct fb_error *err)
{
	const struct gen *g = gr->g;
	char st[256], out[PATHMAX + 300], dep[PATHMAX + 310], keep[PATHMAX + 310], desc[512];
	fb_graph_stem(idx, src, st, sizeof(st));
	bfmt(out, sizeof(out), "%s/obj/%s.o", g->dir, st);
	bfmt(dep, sizeof(dep), "%s.d", out);
	bfmt(keep, sizeof(keep), "%s.keep", out);
	struct cmd c = {.err = err};
	const char *pch = NULL;
	char *prefix = NULL, *deps_of = NULL, *cmd = NULL;
	int rc = lang == L_NVCC ? fb_graph_nvcc_line(g, src, keep, &c)
	                        : host_words(gr, src, lang, &c, &pch, &prefix, &deps_of, err);
	struct fb_strlist bases = {0};
	fb_graph_prefix_maps(g, &c, lang == L_NVCC, &bases);
	if (bases.oom)
		cmd_oom(&c);
	char inc[PATHMAX + 3];
	bfmt(inc, sizeof(inc), "-I%s", g->t.include);
	arg(&c, inc);
	fb_graph_includes(g, &c);
	swords(&c, "-MD -MF");
	arg(&c, dep);
	arg(&c, "-o");
	arg(&c, out);
	arg(&c, src);
	if (!rc)
		rc = cmd_end(&c);
	if (!rc)
		rc = wrap_compile(gr, lang, c.b.s, keep, prefix, out, dep, &bases, deps_of, &cmd, err);
	fb_strlist_free(&bases);
	describe(desc, sizeof(desc), "%s %s", lang == L_NVCC ? "NVCC" : lang == L_C ? "CC" : "CXX",
	         strrchr(src, '/') ? strrchr(src, '/') + 1 : src);
	const char *implicit[3];
	size_t nimplicit = 0;
	if (pch)
		implicit[nimplicit++] = pch;
	for (size_t i = 0; torch_stamped(g) && i < g->torch->nstamp; i++)
		implicit[nimplicit++] = g->torch->stamp[i];
	/* An edge that may run at the executor is not held to the local jobs (graph.c's pool):
	 * with the edge cache, no PCH, an executor. Should the executor fail, its fallbacks run
	 * here as many at once as ninja runs (the remote jobs). */
	bool remote = g->rexec && !pch && !deps_of && fb_gen_edge_cache_on(g);
	if (!rc)
		rc = fb_graph_edge_pool(gr, remote ? NULL : g->rexec ? "local" : NULL, "cc", out, &src, 1, implicit, nimplicit,
		                        cmd, desc, dep, err);
	if (!rc) {
		fb_strlist_add(&gr->shown, cmd);
		fb_strlist_add(&gr->shown, c.b.s);
	}
	free(c.b.s);
	free(cmd);
	free(prefix);
	free(deps_of);
	fb_strlist_add(&gr->objects, out);
	if (lang == L_NVCC && g->reloc)
		fb_strlist_add(&gr->nvcc_objs, out);
	return rc;
}
