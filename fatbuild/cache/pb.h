/* pb.h: the protobuf wire format, reading and writing (pb.c), for the
 * shared cache's messages (remote.c, reapi.c). Private to libfatbuild. */
#ifndef FB_CACHE_PB_H
#define FB_CACHE_PB_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"

enum { FB_PB_VARINT = 0, FB_PB_I64 = 1, FB_PB_LEN = 2, FB_PB_SGROUP = 3, FB_PB_EGROUP = 4, FB_PB_I32 = 5 };

/* Bytes still to read: [p, end). */
struct fb_pb {
	const unsigned char *p, *end;
};

/* One varint of at most 10 bytes; the 10th may only carry bit 63. -1 when truncated or too long. */
int fb_pb_varint(struct fb_pb *b, uint64_t *v);
/* A field's tag: its number (1 .. 2^29-1) and wire type. -1 when malformed. */
int fb_pb_tag(struct fb_pb *b, uint32_t *field, int *wt);
/* A length-delimited field's body into *sub; -1 when it runs past the end. */
int fb_pb_len(struct fb_pb *b, struct fb_pb *sub);
/* Skips the body of a field of wire type wt (its tag read); groups nest at most 16 deep. */
int fb_pb_skip(struct fb_pb *b, uint32_t field, int wt, int depth);
/* Writes v at *o (at most 10 bytes) and advances *o. */
void fb_pb_put_varint(unsigned char **o, uint64_t v);
size_t fb_pb_varint_len(uint64_t v);

/* A field a message reader takes: its number, its wire type (FB_PB_LEN or FB_PB_VARINT) and its
 * name for messages (NULL: "field N"). */
struct fb_pb_want {
	uint32_t f;
	int wt;
	const char *name;
};

/* Reads the fields of message msg from b up to the next one of want[0..n), skipping the others,
 * and returns its index with its value: a FB_PB_LEN field's bytes in *sub, a FB_PB_VARINT's in
 * *v. Returns n at the end of b, and -1 (err filled: FB_EFORMAT) for a malformed field or a
 * wanted number with another wire type. */
int fb_pb_next(struct fb_pb *b, const char *msg, const struct fb_pb_want *want, int n, struct fb_pb *sub,
               uint64_t *v, struct fb_error *err);
/* s[0..n) is 64 lowercase hex digits; reads no byte past s + n. */
int fb_pb_hex64(const char *s, size_t n);
/* A build.bazel.remote.execution.v2.Digest {hash = 1; size_bytes = 2} into hex (NUL-terminated)
 * and *size, *has_hash set when a hash was read; 0 or FB_EFORMAT (a hash that is not 64
 * lowercase hex digits, a size negative or over 2 GiB). */
int fb_pb_digest(struct fb_pb b, char hex[65], uint64_t *size, int *has_hash, struct fb_error *err);

/* A message being written: p[0..n) malloc'd (the caller frees p); oom set once a write failed. */
struct fb_pb_out {
	unsigned char *p;
	size_t n, cap;
	int oom;
};

/* Field f as a varint, as length-delimited bytes (a string, bytes or an embedded message), and
 * as a Digest {hex, size} message. */
void fb_pb_out_varint(struct fb_pb_out *o, uint32_t f, uint64_t v);
void fb_pb_out_bytes(struct fb_pb_out *o, uint32_t f, const void *p, size_t n);
void fb_pb_out_digest(struct fb_pb_out *o, uint32_t f, const char *hex, uint64_t size);

#endif
