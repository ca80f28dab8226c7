/* edgecache.h: what the parts of the extension builder share of the host and nvcc edge cache
 * (edgecache.c): reading and writing gcc-style depfiles (depread.c), naming a compiler by what
 * ccache checks. */
#ifndef FB_BUILD_EDGECACHE_H
#define FB_BUILD_EDGECACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "plumbing.h"

/* Where the dependencies of a gcc-style depfile's text begin: after the target and its ':'
 * (gcc writes "OUT: ...", nvcc "OUT : ..."); text itself when there is none. */
const char *fb_depfile_deps(const char *text);
/* The next path from *pos (start at fb_depfile_deps; "\ " and "\#" unescaped, "$$" read as
 * "$"), into out (cut at size); false at the end. */
bool fb_depfile_next(const char **pos, char *out, size_t size);
/* "REAL SIZE MTIME_NS" into out for the program a shell runs as tool (a path, else the first
 * match on path, PATH's value; found: the path tried, PATH_MAX bytes): 0; -1 when no PATH entry has it; -2
 * when realpath or stat fails (errno says why). */
int fb_edge_tool_id(const char *path, const char *tool, char *found, char *out, size_t size);
/* The depfile ninja reads for o: deps less those below one of o->quiet (the edge cache's files
 * are all of them). 0 or an error code with err. */
int fb_edge_write_depfile(const struct fb_edge_opts *o, char *const *deps, size_t n, struct fb_error *err);

#endif
