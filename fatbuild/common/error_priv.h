/* error_priv.h: the one error setter of libfatbuild. Private; symbols are hidden. */
#ifndef FB_ERROR_PRIV_H
#define FB_ERROR_PRIV_H

#include "fatbuild.h"

/* Fills err (if any) with code and a formatted message made one line (control bytes, which
 * names and fields from untrusted input may carry, become '?'); returns code. */
int fb_seterr(struct fb_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
