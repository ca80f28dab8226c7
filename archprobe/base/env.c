/* env.c: FATBUILD_* on/off switches, one reading for all of them (docs/caches.md names them):
 * FATBUILD_EDGE_CACHE=no and FATBUILD_HOST_PCH=off mean the same as =0. */
#include <stdlib.h>
#include <strings.h>

#include "env.h"

int
fb_env_switch(const char *name)
{
	static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off"};
	const char *v = getenv(name);
	if (!v)
		return -1;
	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		if (strcasecmp(v, on[i]) == 0)
			return 1;
		if (strcasecmp(v, off[i]) == 0)
			return 0;
	}
	return -1;
}
