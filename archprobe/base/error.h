/* error_priv.h: the one error setter of libfatbuild. Private; symbols are hidden. */
#ifndef FB_ERROR_PRIV_H
#define FB_ERROR_PRIV_H

#include "fatbuild.h"

/* Fills err (if any) with code and a formatted message made one line (control bytes, which
 * names and fields from untrusted input may carry, become '?'); returns code. */
int fb_seterr(struct fb_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Makes s one printable line in place: every control byte (below 0x20, and 0x7f: a newline, a
 * tab, a terminal escape) becomes '?'. For every text built from input for people to read that
 * does not go through fb_seterr: notes and warnings, the lines of a result's notes buffer. */
void fb_text_oneline(char *s);

#endif
