/* graph_pch.h: the torch PCH a --torch C++ compile reads (graph_pch.c). Private; symbols are
 * hidden. */
#ifndef FB_BUILD_GRAPH_PCH_H
#define FB_BUILD_GRAPH_PCH_H

#include "fatbuild.h"
#include "cmdline.h"
#include "graph_edge.h"

/* Appends the -include of src's torch PCH to c, when it has one; *implicit (owned by gr),
 * *prefix and *deps_of (malloc'd) may be set: see the definition. */
int fb_graph_host_pch(struct graph *gr, const char *src, struct cmd *c, const char **implicit, char **prefix,
                      char **deps_of, struct fb_error *err);

#endif
