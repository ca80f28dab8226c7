/* edgecache.h: what the parts of the extension builder share of the host and nvcc edge cache
 * (edgecache.c): reading gcc-style depfiles. */
#ifndef FB_BUILD_EDGECACHE_H
#define FB_BUILD_EDGECACHE_H

#include <stdbool.h>
#include <stddef.h>

/* Where the dependencies of a gcc-style depfile's text begin: after the target and its ':'
 * (gcc writes "OUT: ...", nvcc "OUT : ..."); text itself when there is none. */
const char *fb_depfile_deps(const char *text);
/* The next path from *pos (start at fb_depfile_deps; "\ " and "\#" unescaped, "$$" read as
 * "$"), into out (cut at size); false at the end. */
bool fb_depfile_next(const char **pos, char *out, size_t size);

#endif
