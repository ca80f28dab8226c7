/* graph_nvcc.h: an nvcc compile's words (graph_nvcc.c). Private; symbols are hidden. */
#ifndef FB_BUILD_GRAPH_NVCC_H
#define FB_BUILD_GRAPH_NVCC_H

#include "cmdline.h"
#include "gen.h"

/* nvcc's --threads for this build's nvcc edges; 0: none. */
long fb_graph_nvcc_threads(const struct gen *g);
/* Appends the nvcc compile's words up to the shared tail to c (keep: its intermediates' dir). */
int fb_graph_nvcc_line(const struct gen *g, const char *src, const char *keep, struct cmd *c);

#endif
