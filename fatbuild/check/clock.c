/* clock.c: the clock the check's time bounds are kept by (fb_chk_now_ms): a member's inflation
 * (members.c) and the interpreter's answer (python.c). */
#include <time.h>

#include "clock.h"

long long
fb_chk_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
