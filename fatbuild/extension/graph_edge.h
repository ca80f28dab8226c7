/* graph_edge.h: the ninja graph being written (struct graph: what the files of the graph add to
 * it and keep for ninja's run), an edge added to it, and an edge's description. The files of
 * the graph: graph.c lays it out, graph_host.c writes the compile edges with nvcc's words from
 * graph_nvcc.c and the torch PCH from graph_pch.c, the words they share are graph_words.c's.
 * Private; symbols are hidden. */
#ifndef FB_BUILD_GRAPH_EDGE_H
#define FB_BUILD_GRAPH_EDGE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fatbuild.h"
#include "base/strbuf.h"
#include "gen.h"
#include "ninja.h"

struct graph {
	const struct gen *g;         /* what the build resolved (build.c) */
	struct fb_ninja *nj;
	struct fb_strlist objects;   /* link inputs */
	struct fb_strlist fatbins;   /* per-kernel-source merged fatbins */
	struct fb_strlist *tparts;   /* reloc, nvrtc: per target, every kernel's obj/K.TARGET.fatbin */
	size_t ntparts;
	struct fb_strlist nvcc_objs; /* reloc, nvcc: the -rdc=true objects */
	struct fb_strlist pchs;      /* host PCHs this graph makes (their .gch) */
	struct fb_strlist pchs_used; /* host PCHs the C++ edges read, one per edge */
	int gcc_heap;                /* the C++ compiles get gcc's collector heap: 1 yes, -1 no, 0 not yet decided (graph_host.c) */
	/* What ninja's run takes (ninja_run.c), and the holds kept until it is done. */
	struct fb_strlist pch_bg;    /* pch.sh of the PCHs the background maker makes */
	int *pch_holds;              /* host PCH dirs held while ninja runs (hostpch.c), closed by fb_graph_free */
	size_t npch_holds;
	/* Per compile edge, its command as ninja runs it and as it is shown (the compiler's own
	 * words, without the cache and PCH wrapping): shown[2i] and shown[2i+1] (output.c). */
	struct fb_strlist shown;
};

/* An empty graph of g's build (its ninja file, per target lists when relocatable). */
int fb_graph_start(struct graph *gr, const struct gen *g, struct fb_error *err);
/* Frees what gr holds and ends its holds on PCH dirs. */
void fb_graph_free(struct graph *gr);
/* src's object stem into out: its index, '_', its base name with odd bytes made '_'. */
void fb_graph_stem(size_t i, const char *src, char *out, size_t size);
/* Adds the edge out: RULE in | implicit, running cmd (shown as desc; dep: its depfile or NULL). */
int fb_graph_edge(struct graph *gr, const char *rule, const char *out, const char *const *in, size_t nin,
                  const char *const *implicit, size_t nimplicit, const char *cmd, const char *desc, const char *dep,
                  struct fb_error *err);
/* fb_graph_edge in the ninja pool named (NULL: none); fb_graph_edge's is "local" while remote. */
int fb_graph_edge_pool(struct graph *gr, const char *pool, const char *rule, const char *out, const char *const *in,
                       size_t nin, const char *const *implicit, size_t nimplicit, const char *cmd, const char *desc,
                       const char *dep, struct fb_error *err);

/* An edge's description, which ninja prints as it is on its status line: one printable line
 * whatever the file names hold. */
static inline void describe(char *desc, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline void
describe(char *desc, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(desc, size, fmt, ap);
	va_end(ap);
	fb_text_oneline(desc);
}

#endif
