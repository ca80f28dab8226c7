/* graph.h: what the files of the ninja graph share. graph.c lays the graph out (its rules and
 * pool, the NVRTC kernel edges and their merge, the device link, the embed and the link);
 * graph_host.c writes the C, C++ and nvcc compile edges, with nvcc's words from graph_nvcc.c
 * and the torch PCH a C++ compile reads from graph_pch.c. Here: an edge's description and the
 * steps one file takes from another; the command line an edge runs is cmdline.h's. Its
 * includers define _GNU_SOURCE (strtok_r). Private; symbols are hidden. */
#ifndef FB_BUILD_GRAPH_H
#define FB_BUILD_GRAPH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "build.h"
#include "cmdline.h"
#include "ninja.h"
#include "torch.h"

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
/* src's object stem into out: its index, '_', its base name with odd bytes made '_'. */
void fb_graph_stem(size_t i, const char *src, char *out, size_t size);
/* Adds the edge out: RULE in | implicit, running cmd (shown as desc; dep: its depfile or NULL). */
int fb_graph_edge(struct gen *g, const char *rule, const char *out, const char *const *in, size_t nin,
                  const char *const *implicit, size_t nimplicit, const char *cmd, const char *desc, const char *dep,
                  struct fb_error *err);
/* fb_graph_edge in the ninja pool named (NULL: none); fb_graph_edge's is "local" while remote. */
int fb_graph_edge_pool(struct gen *g, const char *pool, const char *rule, const char *out, const char *const *in,
                       size_t nin, const char *const *implicit, size_t nimplicit, const char *cmd, const char *desc,
                       const char *dep, struct fb_error *err);
/* Appends -I (absolute when it exists) and -D words of the build to c. */
void fb_graph_includes(struct gen *g, struct cmd *c);
/* Whether torch's CUDA headers and libraries are used. */
bool fb_graph_torch_cuda(const struct gen *g);

/* graph_host.c */
/* Adds the compile edge of source idx (a C, C++ or nvcc source) and its object to the link. */
int fb_graph_host_edge(struct gen *g, size_t idx, const char *src, enum lang lang, struct fb_error *err);
/* Appends the launcher words (--launcher, else FATBUILD_LAUNCHER) to c. */
void fb_graph_launcher(struct gen *g, struct cmd *c);
/* The optimisation words of a compile of lang ("" when its flags state one); static text. */
const char *fb_graph_host_opt(const struct gen *g, enum lang lang);
/* Appends a C++ compile's flags before its own to c; for_pch: without the extension's name. */
void fb_graph_cxx_flags(struct gen *g, struct cmd *c, bool for_pch);
/* Appends the prefix map of the cache base (which 0) or torch's dir (1) to c; the mapped dir
 * into bases (may be NULL). */
void fb_graph_base_map(struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases, int which);
/* torch's install dir into out; "" without --torch. */
void fb_graph_torch_dir(const struct gen *g, char *out, size_t size);
/* Whether compile edges go through `fatbuild edge`. */
bool fb_graph_edge_cache_on(const struct gen *g);

/* graph_nvcc.c */
/* nvcc's --threads for this build's nvcc edges; 0: none. */
long fb_graph_nvcc_threads(struct gen *g);
/* Appends the nvcc compile's words up to the shared tail to c (keep: its intermediates' dir). */
int fb_graph_nvcc_line(struct gen *g, const char *src, const char *keep, struct cmd *c);

/* graph_pch.c */
/* Appends the -include of src's torch PCH to c, when it has one; *implicit (owned by g),
 * *prefix and *deps_of (malloc'd) may be set: see the definition. */
int fb_graph_host_pch(struct gen *g, const char *src, struct cmd *c, const char **implicit, char **prefix,
                      char **deps_of, struct fb_error *err);

#endif
