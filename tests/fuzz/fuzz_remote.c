/* fuzz_remote.c: the shared cache's action record, a serialized Bazel ActionResult (cache/record.c,
 * docs/remote-cache.md §2), which any server or anyone with write access to it may have
 * damaged. Input: arbitrary bytes as a record. Invariants: fb_remote_record_decode accepts it
 * or says FB_EFORMAT with a message, nothing else; what it accepts encodes to a record that
 * decodes to the same fields and encodes to the same bytes again. Abort on any violation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/record.h"
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
	for (int i = 0; i < 3; i++)
		if (strlen(r.hex[i]) != 64 || strspn(r.hex[i], "0123456789abcdef") != 64 || r.size[i] > (1ull << 31))
			abort();
	char text[FB_REMOTE_RECORD_ENCODED_MAX], again[FB_REMOTE_RECORD_ENCODED_MAX];
	size_t n = fb_remote_record_encode(&r, text, sizeof(text));
	if (n == 0)
		abort();
	if (fb_remote_record_decode(text, n, &d, NULL) != 0 || memcmp(&r, &d, sizeof(r)) != 0)
		abort();
	if (fb_remote_record_encode(&d, again, sizeof(again)) != n || memcmp(text, again, n) != 0)
		abort();
	return 0;
}
