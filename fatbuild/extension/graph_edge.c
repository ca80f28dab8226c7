/* graph_edge.c: the ninja graph being written (graph_edge.h): made and freed, an edge added to
 * it, an object's stem. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fatbuild.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "gen.h"
#include "graph_edge.h"
#include "ninja.h"

int
fb_graph_start(struct graph *gr, const struct gen *g, struct fb_error *err)
{
	gr->g = g;
	if (g->reloc && g->archs) {
		gr->ntparts = ap_archlist_count(g->archs);
		if (!(gr->tparts = calloc(gr->ntparts, sizeof(*gr->tparts))))
			return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (!(gr->nj = fb_ninja_new()))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	return 0;
}

void
fb_graph_free(struct graph *gr)
{
	fb_ninja_free(gr->nj);
	fb_strlist_free(&gr->objects);
	fb_strlist_free(&gr->fatbins);
	for (size_t i = 0; gr->tparts && i < gr->ntparts; i++)
		fb_strlist_free(&gr->tparts[i]);
	free(gr->tparts);
	fb_strlist_free(&gr->nvcc_objs);
	fb_strlist_free(&gr->pchs);
	fb_strlist_free(&gr->pchs_used);
	fb_strlist_free(&gr->pch_bg);
	for (size_t i = 0; i < gr->npch_holds; i++)
		close(gr->pch_holds[i]);
	free(gr->pch_holds);
	fb_strlist_free(&gr->shown);
}

/* "obj/3_saxpy.cu" style stem: index plus the base name with odd bytes replaced. */
void
fb_graph_stem(size_t i, const char *src, char *out, size_t size)
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

int
fb_graph_edge(struct graph *gr, const char *rule, const char *out, const char *const *in, size_t nin,
              const char *const *implicit, size_t nimplicit, const char *cmd, const char *desc, const char *dep,
              struct fb_error *err)
{
	/* ninja's -j is the remote edges' when remote: what runs here keeps to the local jobs */
	return fb_graph_edge_pool(gr, gr->g->rexec ? "local" : NULL, rule, out, in, nin, implicit, nimplicit, cmd, desc,
	                          dep, err);
}

int
fb_graph_edge_pool(struct graph *gr, const char *pool, const char *rule, const char *out, const char *const *in,
                   size_t nin, const char *const *implicit, size_t nimplicit, const char *cmd, const char *desc,
                   const char *dep, struct fb_error *err)
{
	const char *vars[8] = {"cmd", cmd, "desc", desc};
	size_t nvars = 2;
	if (dep) {
		vars[4] = "dep";
		vars[5] = dep;
		nvars = 3;
	}
	if (pool) {
		vars[2 * nvars] = "pool";
		vars[2 * nvars + 1] = pool;
		nvars++;
	}
	struct fb_ninja_edge e = {rule, &out, 1, in, nin, implicit, nimplicit, NULL, 0, vars, nvars};
	return fb_ninja_edge(gr->nj, &e, err);
}
