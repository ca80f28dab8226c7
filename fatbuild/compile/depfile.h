/* depfile.h: #include resolution (depfile.c): NVRTC reports no dependencies. Private to
 * libfatbuild. */
#ifndef FB_COMPILE_DEPFILE_H
#define FB_COMPILE_DEPFILE_H

#include <stddef.h>

#include "fatbuild.h"
#include "base/strbuf.h"

/* Appends to deps every file that source includes, transitively: quoted includes are looked
 * up beside the including file, then in dirs; angle includes in dirs. Unresolvable includes
 * (NVRTC built-ins, computed includes, branches for other platforms) are skipped. The scan is
 * conservative: includes inside #if branches count as well. Files already in deps (same
 * device and inode) are not added twice. */
int fb_deps_scan(const char *source, const char *const *dirs, size_t ndirs, struct fb_strlist *deps,
                 struct fb_error *err);
/* fb_deps_scan, and what a remote job's input root needs beside deps (offload.c): into extra
 * (when not NULL), every other path by which the compiler opens one of those files (a path with
 * "/../" as the lookup spells it, a file reached again by another path) and every file a
 * "__has_include(<x>)" probe finds; into computed (csize bytes, when not NULL), the first file
 * with an "#include MACRO", or "" when none has one. */
int fb_deps_scan_root(const char *source, const char *const *dirs, size_t ndirs, struct fb_strlist *deps,
                      struct fb_strlist *extra, char *computed, size_t csize, struct fb_error *err);
/* The directories a source's includes are looked up in, in order, as NVRTC sees them: srcdir,
 * then the directory of each "-IDIR" among the nopts options: an array for free() (its strings
 * are srcdir and opts'), *n entries; NULL when out of memory. */
const char **fb_deps_dirs(const char *srcdir, char *const *opts, size_t nopts, size_t *n);
/* Where a compiler finds the quoted include name that the file including includes (NULL: no
 * including file): beside including, then in dirs (fb_deps_scan's lookup). 1 with the path in
 * path (size bytes) when that is a regular file, else 0. */
int fb_deps_find(const char *name, const char *including, const char *const *dirs, size_t ndirs, char *path,
                 size_t size);
/* Makefile syntax for one path: spaces and '#' escaped with '\', '$' doubled. */
char *fb_depfile_escape(const char *path);

#endif
