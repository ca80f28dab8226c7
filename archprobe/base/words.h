/* words.h: a command held in one variable split into its words, a line of shell split into
 * its words, and the PATH search for a command's first (words.c). Private; symbols are hidden. */
#ifndef FB_WORDS_H
#define FB_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "strbuf.h"

/* Splits a command given in one variable (CC="ccache gcc -m64") into words as the shell splits
 * an unquoted $CC with the default IFS: at runs of spaces, tabs and newlines, nothing else (no
 * quotes, no globbing, no expansion). *words is NULL-terminated and malloc'd (fb_words_free);
 * n may be NULL. A blank or NULL string gives no words. 0 or FB_ENOMEM. */
int fb_words_split(const char *s, char ***words, size_t *n, struct fb_error *err);
void fb_words_free(char **words);

/* Splits s, one line of shell, into its words in out as sh would, for the little of the shell
 * the toolkit reads back: words end at spaces and tabs; '...' is taken as it is; outside
 * quotes a backslash takes the byte after it. With vars (each "NAME=VALUE", the last of a
 * name counting) also "..." (where \" \\ \$ \` take the byte after the backslash) and, inside
 * it or outside, $NAME and ${NAME} from vars. Outside quotes a byte is otherwise taken as it
 * is when strict, only a letter, a digit or one of _./=+,:@%- (what a shell never reads as
 * syntax), else any byte but |&;<>()`*?[ and, without vars, " and $. Returns 0; 1 when s
 * needs more of the shell (an unset name, a bad ${, a ` in "...", a quote left open, another
 * byte refused: out is then not to be used); or FB_BASE_ENOMEM. */
int fb_words_shell(const char *s, const struct fb_strlist *vars, bool strict, struct fb_strlist *out,
                   struct fb_error *err);
/* The value vars (as fb_words_shell's) gives the name name[0..n), NULL when none does. */
const char *fb_words_var(const struct fb_strlist *vars, const char *name, size_t n);
/* How many bytes at s are a shell name's (letters, digits, '_'). */
size_t fb_words_name(const char *s);
/* One step of a PATH search for prog (a name without '/'): from *pos (set to PATH's value,
 * fb_config.path, before the first step; NULL there: "/usr/bin:/bin") to the next entry whose
 * DIR/prog fits in size and is executable, written into cand; empty entries are skipped.
 * Returns false when PATH has no more. */
bool fb_path_next(const char **pos, const char *prog, char *cand, size_t size);

#endif
