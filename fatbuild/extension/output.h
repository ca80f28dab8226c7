/* output.h: ninja's output as a build shows it (output.c). Private; symbols are hidden. */
#ifndef FB_BUILD_OUTPUT_H
#define FB_BUILD_OUTPUT_H

#include <signal.h>
#include <sys/types.h>

#include "base/strbuf.h"

/* Copies ninja's output from in (closed at its end) to out, each compile's command shown as
 * shown pairs it (shown[2i]: as ninja runs it, shown[2i+1]: as shown), forwarding a stop
 * request (*cancel, may be NULL) to ninja; the first failure makes the file failed. Returns
 * whether an edge failed. */
int fb_build_show_output(const struct fb_strlist *shown, const char *failed, const volatile sig_atomic_t *cancel,
                         int in, int out, pid_t ninja);

#endif
