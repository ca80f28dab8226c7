/* graph_host.h: the compile edge of a C, C++ or nvcc source (graph_host.c). Private; symbols
 * are hidden. */
#ifndef FB_BUILD_GRAPH_HOST_H
#define FB_BUILD_GRAPH_HOST_H

#include <stddef.h>

#include "fatbuild.h"
#include "gen.h"
#include "graph_edge.h"

/* Adds the compile edge of source idx (a C, C++ or nvcc source) and its object to the link. */
int fb_graph_host_edge(struct graph *gr, size_t idx, const char *src, enum lang lang, struct fb_error *err);

#endif
