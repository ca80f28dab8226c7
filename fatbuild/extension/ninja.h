/* ninja.h: the build.ninja writer (ninja.c): statements assembled in memory, every string escaped
 * for where it goes, the file rewritten only when it changes. Private to the build (graph*.c,
 * build.c) and its tests; symbols are hidden. */
#ifndef FB_BUILD_NINJA_H
#define FB_BUILD_NINJA_H

#include <stdbool.h>
#include <stddef.h>

#include "fatbuild.h"

struct fb_ninja; /* a build.ninja being assembled */

struct fb_ninja *fb_ninja_new(void);
void fb_ninja_free(struct fb_ninja *n);
/* Escapes a path for a build line: '$' before '$', ' ' and ':'. A newline is FB_EINVAL.
 * *out is malloc'd. */
int fb_ninja_escape_path(const char *path, char **out, struct fb_error *err);
/* Escapes a variable value (commands, depfile): '$' before '$'. A newline is FB_EINVAL. */
int fb_ninja_escape_value(const char *value, char **out, struct fb_error *err);
/* Quotes one argument for the POSIX shell ninja runs commands with ('…' with '\'' for quotes);
 * plain words ([A-Za-z0-9_./=+,:@%-]) are left as they are. A newline is FB_EINVAL. */
int fb_shell_quote(const char *arg, char **out, struct fb_error *err);
/* Rule and variable names are reduced to [A-Za-z0-9_] (others become '_'). */
int fb_ninja_var(struct fb_ninja *n, const char *name, const char *value, struct fb_error *err);
/* A rule whose command is `command` (a raw value: "$cmd" expands the edge's own cmd variable).
 * depfile and deps ("gcc") may be NULL. */
int fb_ninja_rule(struct fb_ninja *n, const char *name, const char *command, const char *description,
                  const char *depfile, const char *deps, struct fb_error *err);
struct fb_ninja_edge {
	const char *rule;
	const char *const *outputs; size_t noutputs;
	const char *const *inputs; size_t ninputs;
	const char *const *implicit; size_t nimplicit;   /* | deps: rebuild when they change */
	const char *const *order_only; size_t norder_only;
	const char *const *vars; size_t nvars;           /* name, value, name, value ... (2*nvars strings) */
};
int fb_ninja_edge(struct fb_ninja *n, const struct fb_ninja_edge *e, struct fb_error *err);
/* "pool NAME / depth = DEPTH": at most DEPTH edges that name it (pool = NAME) run at once. */
int fb_ninja_pool(struct fb_ninja *n, const char *name, int depth, struct fb_error *err);
/* The text so far (owned by n). */
const char *fb_ninja_text(const struct fb_ninja *n);
/* Writes the file atomically, only when its content differs; *changed says whether it did. */
int fb_ninja_write(const struct fb_ninja *n, const char *path, bool *changed, struct fb_error *err);

#endif
