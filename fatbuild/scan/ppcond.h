/* ppcond.h: the preprocessor conditionals NVRTC reads, seen by a lexical scan. */
#ifndef FB_SCAN_PPCOND_H
#define FB_SCAN_PPCOND_H

#include <stdbool.h>

/* Nesting kept; deeper conditionals count as their parent. */
#define FB_PP_MAXDEPTH 64

/* An #if expression under NVRTC: 1 true, 0 false, -1 unknown to the scan. */
int fb_pp_eval(const char *expr);

/* Blanks (keeping newlines) the lines of the NUL-terminated s, comments already blanked, that
 * NVRTC's preprocessor skips: the branches known not taken, and with unknown_dead also those
 * the scan cannot decide. Conditional directive lines are left. */
void fb_pp_blank_inactive(char *s, bool unknown_dead);

#endif
