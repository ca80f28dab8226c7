/* clock.h: the clock of the check's time bounds (clock.c). Private; symbols are hidden. */
#ifndef FB_CHECK_CLOCK_H
#define FB_CHECK_CLOCK_H

/* CLOCK_MONOTONIC milliseconds: the bounds on a member's inflation (members.c) and on the
 * interpreter's answer (python.c) are kept by it. */
long long fb_chk_now_ms(void);

#endif
