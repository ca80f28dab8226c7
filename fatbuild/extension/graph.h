/* graph.h: the ninja graph of a build, laid out by graph.c into struct graph (graph_edge.h),
 * which build.c writes out and runs. Private; symbols are hidden. */
#ifndef FB_BUILD_GRAPH_H
#define FB_BUILD_GRAPH_H

#include "fatbuild.h"
#include "graph_edge.h"

/* Adds every rule, pool and edge of gr's build to gr (fb_graph_start made it). */
int fb_build_generate(struct graph *gr, struct fb_error *err);

#endif
