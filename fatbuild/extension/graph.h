/* graph.h: what the files of the ninja graph share. graph.c lays the graph out (its rules and
 * pool, the NVRTC kernel edges and their merge, the device link, the embed and the link);
 * graph_host.c writes the C, C++ and nvcc compile edges, with nvcc's words from graph_nvcc.c
 * and the torch PCH a C++ compile reads from graph_pch.c. Here: the graph being written
 * (struct graph: what the files add to it and keep for ninja's run; the build's inputs are
 * gen.h's), an edge's description and the steps one file takes from another; the command line
 * an edge runs is cmdline.h's. Its includers define _GNU_SOURCE (strtok_r). Private; symbols
 * are hidden. */
#ifndef FB_BUILD_GRAPH_H
#define FB_BUILD_GRAPH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fatbuild.h"
#include "base/strbuf.h"
#include "cmdline.h"
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

/* graph.c */
/* Adds every rule, pool and edge of gr's build to gr (fb_graph_start made it). */
int fb_build_generate(struct graph *gr, struct fb_error *err);
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

/* Appends -I (absolute when it exists) and -D words of the build to c. */
void fb_graph_includes(const struct gen *g, struct cmd *c);
/* Appends the remote executor's words (--remote-exec and its options; --remote-exec '' when
 * the build turned the environment's off) to c. */
void fb_graph_rexec_words(const struct gen *g, struct cmd *c);

/* graph_host.c */
/* Adds the compile edge of source idx (a C, C++ or nvcc source) and its object to the link. */
int fb_graph_host_edge(struct graph *gr, size_t idx, const char *src, enum lang lang, struct fb_error *err);
/* Appends the launcher words (--launcher, else FATBUILD_LAUNCHER) to c. */
void fb_graph_launcher(const struct gen *g, struct cmd *c);
/* The optimisation words of a compile of lang ("" when its flags state one); static text. */
const char *fb_graph_host_opt(const struct gen *g, enum lang lang);
/* Appends a C++ compile's flags before its own to c; for_pch: without the extension's name. */
void fb_graph_cxx_flags(const struct gen *g, struct cmd *c, bool for_pch);
/* Appends the prefix map of the cache base (which 0) or torch's dir (1) to c; the mapped dir
 * into bases (may be NULL). */
void fb_graph_base_map(const struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases, int which);

/* graph_nvcc.c */
/* nvcc's --threads for this build's nvcc edges; 0: none. */
long fb_graph_nvcc_threads(const struct gen *g);
/* Appends the nvcc compile's words up to the shared tail to c (keep: its intermediates' dir). */
int fb_graph_nvcc_line(const struct gen *g, const char *src, const char *keep, struct cmd *c);

/* graph_pch.c */
/* Appends the -include of src's torch PCH to c, when it has one; *implicit (owned by gr),
 * *prefix and *deps_of (malloc'd) may be set: see the definition. */
int fb_graph_host_pch(struct graph *gr, const char *src, struct cmd *c, const char **implicit, char **prefix,
                      char **deps_of, struct fb_error *err);

#endif
