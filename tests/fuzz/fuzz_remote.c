/* fuzz_remote.c: the shared cache's action record (remote.c, docs/remote-cache.md §2), which
 * any server or anyone with write access to it may have damaged. Input: arbitrary bytes as a
 * record. Invariants: fb_remote_record_decode accepts it or says FB_EFORMAT, nothing else;
 * what it accepts encodes back to exactly the input, and decoding that gives the same record.
 * Abort on any violation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"
#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_remote_record r, d;
	struct fb_error e = {0};
	int rc = fb_remote_record_decode((const char *)data, size, &r, &e);
	if (rc != 0 && rc != FB_EFORMAT)
		abort();
	if (rc != 0) {
		if (!e.msg[0])
			abort(); /* every rejection says why */
		return 0;
	}
	char text[400];
	size_t n = fb_remote_record_encode(&r, text, sizeof(text));
	if (n != size || memcmp(text, data, size) != 0)
		abort();
	if (fb_remote_record_decode(text, n, &d, NULL) != 0 || memcmp(&r, &d, sizeof(r)) != 0)
		abort();
	return 0;
}
