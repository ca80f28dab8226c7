/* fuzz_cache.c: the compile cache's entry files (cache/store.c: "FBCACHE1", three sizes, SHA-256 of
 * the payload, then cubin, PTX and log), which anything on the disk may have damaged.
 * Input: arbitrary bytes, read two ways:
 *   1. as an entry file: fb_store_decode accepts it or says FB_EFORMAT, nothing else; what it
 *      accepts encodes back to exactly the input;
 *   2. as the contents of an entry (the first two bytes split up to 1 KiB of the rest into
 *      cubin, PTX and a log without NULs): encode, decode gives the same parts, and a
 *      single-byte change of the encoded file (in the header, anywhere, the last byte) or a
 *      truncation is caught (FB_EFORMAT).
 * Abort on any violation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store.h"
#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
same(const struct fb_cache_entry *a, const struct fb_cache_entry *b)
{
	const char *la = a->log ? a->log : "", *lb = b->log ? b->log : "";
	return a->cubin_size == b->cubin_size && a->ptx_size == b->ptx_size &&
	       (!a->cubin_size || !memcmp(a->cubin, b->cubin, a->cubin_size)) &&
	       (!a->ptx_size || !memcmp(a->ptx, b->ptx, a->ptx_size)) && !strcmp(la, lb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	struct fb_cache_entry e, d;
	unsigned char *enc = NULL;
	size_t n = 0;

	/* 1. the input as an entry file */
	int rc = fb_store_decode(data, size, &e);
	if (rc != 0 && rc != FB_EFORMAT && rc != FB_ENOMEM)
		abort();
	if (rc == 0) {
		/* the log is NUL-terminated; an entry whose stored log holds a NUL decodes to a shorter
		 * log, and so encodes to something else: only compare when it has none */
		size_t loglen = size - 0x40 - e.cubin_size - e.ptx_size;
		if (strlen(e.log) == loglen) {
			if (fb_store_encode(&e, &enc, &n) == 0 && (n != size || memcmp(enc, data, size) != 0))
				abort();
			free(enc);
			enc = NULL;
		}
		fb_cache_entry_clear(&e);
	}

	/* 2. the input as the parts of an entry */
	if (size < 2)
		return 0;
	const uint8_t *p = data + 2;
	size_t rest = size - 2 > 1024 ? 1024 : size - 2, nc = data[0] % (rest + 1), np = data[1] % (rest - nc + 1);
	char *log = malloc(rest - nc - np + 1);
	if (!log)
		return 0;
	size_t nl = 0;
	for (size_t i = nc + np; i < rest; i++)
		if (p[i])
			log[nl++] = (char)p[i];
	log[nl] = 0;
	struct fb_cache_entry in = {.cubin = (unsigned char *)p, .cubin_size = nc, .ptx = (unsigned char *)p + nc,
	                            .ptx_size = np, .log = log};
	if (fb_store_encode(&in, &enc, &n) != 0) {
		free(log);
		return 0;
	}
	if (fb_store_decode(enc, n, &d) != 0 || !same(&in, &d))
		abort();
	fb_cache_entry_clear(&d);
	/* damage, at places the input picks (the fuzzer varies them across runs): one header byte,
	 * one byte anywhere, the last byte; a truncation anywhere and at n - 1 */
	size_t at[3] = {data[1] % 0x40, ((size_t)data[0] << 8 | data[1]) % n, n - 1};
	for (int k = 0; k < 3; k++) {
		enc[at[k]] ^= 0x5a;
		if (fb_store_decode(enc, n, &d) != FB_EFORMAT)
			abort();
		enc[at[k]] ^= 0x5a;
	}
	if (fb_store_decode(enc, at[1], &d) != FB_EFORMAT || fb_store_decode(enc, n - 1, &d) != FB_EFORMAT)
		abort();
	unsigned char *more = malloc(n + 1);
	if (more) {
		memcpy(more, enc, n);
		more[n] = 0;
		if (fb_store_decode(more, n + 1, &d) != FB_EFORMAT)
			abort();
		free(more);
	}
	free(enc);
	free(log);
	return 0;
}
