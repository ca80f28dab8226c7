/* repro.h: what build.c adds to compiler commands so that the outputs hold no path of the
 * machine that built them and no per-process name (repro.c). */
#ifndef FB_BUILD_REPRO_H
#define FB_BUILD_REPRO_H

#include <stddef.h>

#include "fatbuild.h"

/* The directory every source lies below (absolute; "/" at worst), into root. */
void fb_repro_root(const char *const *sources, size_t n, char *root, size_t size);

/* The seed for nvcc's front end (-Xcudafe --frandom-seed=SEED): 16 hex digits from the
 * source's base name, its text, the text of every header it reads (searched in dirs), the
 * toolkit version and flags (the words that decide the output, paths left out). Two
 * checkouts in two places get the same seed; two translation units get different ones. */
int fb_repro_seed(const char *src, const char *const *dirs, size_t ndirs, const char *flags, char seed[17],
                  struct fb_error *err);

#endif
