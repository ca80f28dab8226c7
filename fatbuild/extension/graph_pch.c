/* graph_pch.c: the precompiled header of torch's headers a --torch C++ compile reads
 * (hostpch.c makes and checks it): the words it must share with the compile, the edge or the
 * compile's own prefix that makes it, and the hold on its directory while ninja runs. */
#define _GNU_SOURCE /* strtok_r */
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/config.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/words.h"
#include "cmdline.h"
#include "gen.h"
#include "graph_edge.h"
#include "graph_pch.h"
#include "graph_words.h"
#include "hostpch.h"

/* The words of a --torch C++ compile that its PCH must share: the compiler, its flags
 * (fb_graph_cxx_flags, without the extension's name), the runtime header's and the user's -I
 * and -D, the maps of the base and of torch's dir (fb_graph_prefix_maps's). Into c. */
static void
pch_flags(const struct gen *g, struct cmd *c)
{
	swords(c, g->t.cxx);
	fb_graph_cxx_flags(g, c, true);
	char inc[PATHMAX + 3];
	bfmt(inc, sizeof(inc), "-I%s", g->t.include);
	arg(c, inc);
	fb_graph_includes(g, c);
	fb_graph_base_map(g, c, false, NULL, 0);
	fb_graph_base_map(g, c, false, NULL, 1);
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
gen_pch_edge(struct graph *gr, const struct fb_hostpch *p, const char *flags, struct fb_error *err)
{
	for (size_t i = 0; i < gr->pchs.n; i++)
		if (strcmp(gr->pchs.v[i], p->gch) == 0)
			return 0;
	fb_strlist_add(&gr->pchs, p->gch);
	char *cmd = NULL;
	int rc = pch_cmd(p, flags, &cmd, err);
	const char *in = p->header;
	char desc[400];
	describe(desc, sizeof(desc), "PCH torch headers (%.300s)", p->why);
	if (!rc)
		rc = fb_graph_edge(gr, "pch", p->gch, &in, 1, NULL, 0, cmd, desc, NULL, err);
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
 * without it and leaves its making to the background maker (ninja_run.c): gr->pch_bg. */
static int
lazy_pch(struct graph *gr, struct fb_hostpch *p, const char *flags, bool eager, char **prefix, struct fb_error *err)
{
	const struct gen *g = gr->g;
	char failed[PATHMAX + 32], *script = NULL;
	fb_gen_failed_path(g, failed, sizeof(failed));
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
		for (size_t i = 0; i < gr->pch_bg.n; i++)
			have |= strcmp(gr->pch_bg.v[i], sh) == 0;
		if (!have)
			fb_strlist_add(&gr->pch_bg, sh);
	}
	rc = cmd_end(&c);
	if (rc)
		free(c.b.s);
	else
		*prefix = c.b.s;
	return rc;
}

/* The build keeps p's hold on its PCH dir until ninja is done (fb_graph_free closes it). */
static int
keep_hold(struct graph *gr, struct fb_hostpch *p, struct fb_error *err)
{
	int *v = realloc(gr->pch_holds, (gr->npch_holds + 1) * sizeof(*v));
	if (!v)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	gr->pch_holds = v;
	gr->pch_holds[gr->npch_holds++] = p->hold;
	p->hold = -1;
	return 0;
}

/* --torch C++ source: its PCH (hostpch.c; gcc's or clang's), which the compile reads
 * (-include) and refuses when the compiler finds it invalid. With the edge cache the compile
 * makes it when missing (*prefix, malloc'd: the words that go first; lazy_pch), and `fatbuild
 * edge` puts the headers it was made from (*deps_of, malloc'd) into the object's depfile;
 * without, an edge makes it when stale, an implicit input of the compile (*implicit). */
int
fb_graph_host_pch(struct graph *gr, const char *src, struct cmd *c, const char **implicit, char **prefix,
                  char **deps_of, struct fb_error *err)
{
	const struct gen *g = gr->g;
	*implicit = NULL;
	*prefix = NULL;
	*deps_of = NULL;
	bool eager = false;
	if (!g->torch || g->o->no_host_pch || (g->launcher && *g->launcher) || !fb_hostpch_enabled(g->cfg, &eager))
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
	fb_gen_torch_dir(g, tdir, sizeof(tdir));
	struct fb_hostpch *p = calloc(1, sizeof(*p));
	if (p)
		p->hold = -1;
	else if (!rc)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	if (!rc && nw)
		rc = fb_hostpch_prepare(g->cfg, block, w[0], f.b.s, g->torch->version, tdir, eager, p, err);
	bool lazy = fb_gen_edge_cache_on(g);
	if (!rc && nw && p->flavor == FB_HOSTPCH_NONE)
		nw = 0; /* a compiler of no known flavor: no PCH */
	if (!rc && nw && !lazy && !p->use)
		nw = 0; /* the first build that wants it: compiled without, made by the next */
	if (!rc && nw && lazy)
		rc = lazy_pch(gr, p, f.b.s, eager, prefix, err);
	else if (!rc && nw && p->stale)
		rc = gen_pch_edge(gr, p, f.b.s, err);
	if (!rc && nw) {
		char hdr[FB_HOSTPCH_PATH + 8], d[FB_HOSTPCH_PATH + 8];
		bfmt(hdr, sizeof(hdr), "%s/h.h", lazy ? p->link : p->dir);
		bfmt(d, sizeof(d), "%s/h.h.d", p->link);
		swords(c, "-Winvalid-pch -Werror=invalid-pch -include");
		arg(c, hdr);
		fb_strlist_add(&gr->pchs_used, p->gch);
		if (!lazy)
			*implicit = gr->pchs_used.v ? gr->pchs_used.v[gr->pchs_used.n - 1] : NULL;
		else if (!(*deps_of = strdup(d)))
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (!rc && nw && p->hold >= 0)
		rc = keep_hold(gr, p, err);
	if (p)
		fb_hostpch_release(p);
	fb_words_free(w);
	free(f.b.s);
	free(block);
	free(p);
	return rc;
}
