/* dlload.c: the toolkit home, the "tried" list and the symbol binding of the dlopen loaders. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dlload.h"

void
fb_dl_home(const char *given, int (*find)(char *, size_t, struct ap_error *), char *home, size_t size)
{
	if (given && *given)
		snprintf(home, size, "%s", given);
	else if (find(home, size, NULL) != 0)
		home[0] = 0;
}

void
fb_dl_tried(char *tried, size_t size, size_t *used, const char *path)
{
	int k = snprintf(tried + *used, size - *used, "%s%s", *used ? ", " : "", path);
	if (k > 0 && (size_t)k < size - *used)
		*used += (size_t)k;
}

int
fb_dl_bind(void *dl, const char *path, const struct fb_dl_sym *syms, size_t n, char *why, size_t whysize)
{
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(dl, syms[i].name);
		if (!p) {
			snprintf(why, whysize, "%.200s lacks %.40s", path, syms[i].name);
			return 0;
		}
		memcpy(syms[i].slot, &p, sizeof(p)); /* object → function pointer without a cast warning */
	}
	return 1;
}
