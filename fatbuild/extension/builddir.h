/* builddir.h: where a build lives (checked, created 0700), and how the linked output reaches OUT.
 * Private; symbols are hidden. */
#ifndef FB_BUILDDIR_H
#define FB_BUILDDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "fatbuild.h"

/* The build dir for opts->build_dir (or the default for name): the build root (the default one, or
 * FATBUILD_BUILD_DIR), the build dir, obj/, out/ and tmp/ are created 0700 where missing and checked
 * (base/safefs.h) before anything is read or written there. Fills dir. */
int fb_builddir_prepare(const struct fb_config *cfg, const char *build_dir, const char *name, char *dir, size_t size,
                        struct fb_error *err);

/* The file in which the processes of one build share a failed remote cache
 * (docs/remote-cache.md §5), below the build dir, and the variable that names it to them (in
 * the environment ninja runs with, ninja_run.c). */
#define FB_REMOTE_STATE "tmp/remote-cache.state"
#define FB_REMOTE_STATE_ENV "FATBUILD_REMOTE_CACHE_STATE"

/* The link edge writes BUILD_DIR/out/BASENAME (staged); OUT is a copy of it. Before ninja: a
 * staged file that OUT no longer matches (OUT missing, or size or mtime differ) is removed, so
 * ninja links again. */
void fb_builddir_unstage_stale(const char *staged, const char *out);
/* After ninja: copies staged to OUT through a random temporary name beside OUT (base/safefs.h),
 * keeping its mode and mtime, then renames; nothing is done when OUT already matches.
 * *copied says whether OUT was replaced. */
int fb_builddir_publish(const char *staged, const char *out, bool *copied, struct fb_error *err);

#endif
