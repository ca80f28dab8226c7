/* tools.h: the programs a build runs, found by tools.c into struct tools (gen.h). Private;
 * symbols are hidden. */
#ifndef FB_BUILD_TOOLS_H
#define FB_BUILD_TOOLS_H

#include <stdbool.h>

#include "fatbuild.h"
#include "gen.h"

struct fb_config;

/* Finds fatbuild, its runtime library and header, ninja, $CC and $CXX (and CUDA_HOME with nvcc)
 * into t. */
int fb_build_find_tools(const struct fb_config *cfg, const struct fb_build_opts *o, bool need_nvcc, struct tools *t,
                        struct fb_error *err);
/* Checks that $CC or $CXX (var) names a program (on path, PATH's value). */
int fb_build_check_compiler(const char *path, const char *var, const char *value, struct fb_error *err);

#endif
