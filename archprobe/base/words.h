/* words.h: a command held in one variable split into its words, and the PATH search for its
 * first (words.c). Private; symbols are hidden. */
#ifndef FB_WORDS_H
#define FB_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Splits a command given in one variable (CC="ccache gcc -m64") into words as the shell splits
 * an unquoted $CC with the default IFS: at runs of spaces, tabs and newlines, nothing else (no
 * quotes, no globbing, no expansion). *words is NULL-terminated and malloc'd (fb_words_free);
 * n may be NULL. A blank or NULL string gives no words. 0 or FB_ENOMEM. */
int fb_words_split(const char *s, char ***words, size_t *n, struct fb_error *err);
void fb_words_free(char **words);
/* One step of a PATH search for prog (a name without '/'): from *pos (set to PATH's value,
 * fb_config.path, before the first step; NULL there: "/usr/bin:/bin") to the next entry whose
 * DIR/prog fits in size and is executable, written into cand; empty entries are skipped.
 * Returns false when PATH has no more. */
bool fb_path_next(const char **pos, const char *prog, char *cand, size_t size);

#endif
