/* error_int.h: the one error setter of libarchprobe. Private; symbols are hidden. */
#ifndef AP_ERROR_INT_H
#define AP_ERROR_INT_H

#include "archprobe.h"

/* Fills err (if any) with code and a formatted message made one line (control bytes, which
 * items from environment variables may carry, become '?'). */
void ap_seterr(struct ap_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
