/* record.h: the action record of the shared cache (record.c, docs/remote-cache.md §2), which
 * both remotes store: remote.c over HTTP, reapi.c over REAPI. Private to libfatbuild. */
#ifndef FB_CACHE_RECORD_H
#define FB_CACHE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"

/* The action record (docs/remote-cache.md §2), a serialized Bazel ActionResult: the digests
 * (hex) and sizes of cubin, PTX, log; an empty output has size 0 and the empty blob's digest. */
enum { FB_REMOTE_RECORD_MAX = 65536, FB_REMOTE_RECORD_ENCODED_MAX = 512 };
struct fb_remote_record {
	char hex[3][65];
	uint64_t size[3];
	char key[65];            /* the key the record names for itself; "" for none */
};
/* Parses a record (unknown fields skipped); 0, or FB_EFORMAT with err->msg naming the message,
 * field and what is wrong. */
int fb_remote_record_decode(const char *text, size_t n, struct fb_remote_record *out, struct fb_error *err);
/* The record's protobuf encoding into buf (FB_REMOTE_RECORD_ENCODED_MAX bytes); returns its
 * length, 0 if it does not fit. */
size_t fb_remote_record_encode(const struct fb_remote_record *rec, char *buf, size_t size);

#endif
