/* dlload.c: the toolkit home and the "tried" list of the dlopen loaders. */
#include <stdio.h>

#include "archprobe.h"
#include "dlload.h"

void
fb_dl_home(const char *cuda_home, char *home, size_t size)
{
	if (cuda_home && *cuda_home) {
		snprintf(home, size, "%s", cuda_home);
	} else {
		struct ap_error aerr = {0};
		if (ap_cuda_home(home, size, &aerr) != 0)
			home[0] = 0;
	}
}

void
fb_dl_tried(char *tried, size_t size, size_t *used, const char *path)
{
	int k = snprintf(tried + *used, size - *used, "%s%s", *used ? ", " : "", path);
	if (k > 0 && (size_t)k < size - *used)
		*used += (size_t)k;
}
