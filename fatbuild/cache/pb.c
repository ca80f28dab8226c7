/* pb.c: the protobuf wire format, as much as the shared cache's
 * messages need (docs/remote-cache.md §2 and §8): reading tags, varints and length-delimited
 * fields with every bound checked, skipping unknown fields of every wire type, and writing
 * varints and length-delimited fields into a growable buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "base/error.h"

/* One varint of at most 10 bytes; the 10th may only carry bit 63. -1 when truncated or too long. */
int
fb_pb_varint(struct fb_pb *b, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if (b->p == b->end)
			return -1;
		unsigned c = *b->p++;
		if (i == 9 && c > 1)
			return -1;
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* A field's tag: its number (1 .. 2^29-1) and wire type. -1 when malformed. */
int
fb_pb_tag(struct fb_pb *b, uint32_t *field, int *wt)
{
	uint64_t t;
	if (fb_pb_varint(b, &t) || (t >> 3) == 0 || (t >> 3) > 0x1fffffff || (t & 7) > 5)
		return -1;
	*field = (uint32_t)(t >> 3);
	*wt = (int)(t & 7);
	return 0;
}

/* A length-delimited field's body into *sub. */
int
fb_pb_len(struct fb_pb *b, struct fb_pb *sub)
{
	uint64_t n;
	if (fb_pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
		return -1;
	sub->p = b->p;
	sub->end = b->p + n;
	b->p += n;
	return 0;
}

/* Skips the body of a field of wire type wt (its tag read); groups nest at most 16 deep. */
int
fb_pb_skip(struct fb_pb *b, uint32_t field, int wt, int depth)
{
	uint64_t v;
	struct fb_pb sub;
	switch (wt) {
	case FB_PB_VARINT:
		return fb_pb_varint(b, &v);
	case FB_PB_I64:
	case FB_PB_I32: {
		size_t k = wt == FB_PB_I64 ? 8 : 4;
		if ((size_t)(b->end - b->p) < k)
			return -1;
		b->p += k;
		return 0;
	}
	case FB_PB_LEN:
		return fb_pb_len(b, &sub);
	case FB_PB_SGROUP:
		if (depth >= 16)
			return -1;
		for (;;) {
			uint32_t f;
			int w;
			if (fb_pb_tag(b, &f, &w))
				return -1;
			if (w == FB_PB_EGROUP)
				return f == field ? 0 : -1;
			if (fb_pb_skip(b, f, w, depth + 1))
				return -1;
		}
	default: /* an end-group with no start */
		return -1;
	}
}

void
fb_pb_put_varint(unsigned char **o, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		*(*o)++ = c | (v ? 0x80 : 0);
	} while (v);
}

size_t
fb_pb_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >>= 7)
		n++;
	return n;
}

/* Reads the fields of message msg from b up to the next one of want[0..n), skipping the others,
 * and returns its index with its value: a FB_PB_LEN field's bytes in *sub, a FB_PB_VARINT's in *v.
 * Returns n at the end of b, and -1 (err filled: FB_EFORMAT) for a malformed field or a wanted
 * number with another wire type. */
int
fb_pb_next(struct fb_pb *b, const char *msg, const struct fb_pb_want *want, int n, struct fb_pb *sub, uint64_t *v,
        struct fb_error *err)
{
	while (b->p < b->end) {
		uint32_t f;
		int wt, i = 0;
		if (fb_pb_tag(b, &f, &wt)) {
			fb_seterr(err, FB_EFORMAT, "%s: a malformed field tag", msg);
			return -1;
		}
		while (i < n && want[i].f != f)
			i++;
		if (i == n) {
			if (!fb_pb_skip(b, f, wt, 0))
				continue;
			fb_seterr(err, FB_EFORMAT, "%s field %u: truncated or malformed", msg, f);
			return -1;
		}
		if (wt != want[i].wt) {
			fb_seterr(err, FB_EFORMAT, "%s field %u: wire type %d", msg, f, wt);
			return -1;
		}
		char where[96];
		if (want[i].name)
			snprintf(where, sizeof(where), "%s.%s", msg, want[i].name);
		else
			snprintf(where, sizeof(where), "%s field %u", msg, f);
		if (wt == FB_PB_LEN && fb_pb_len(b, sub)) {
			fb_seterr(err, FB_EFORMAT, "%s: a length past the end", where);
			return -1;
		}
		if (wt == FB_PB_VARINT && fb_pb_varint(b, v)) {
			fb_seterr(err, FB_EFORMAT, "%s: a malformed varint", where);
			return -1;
		}
		return i;
	}
	return n;
}

/* s[0..n) is 64 lowercase hex digits; reads no byte past s + n (a protobuf string has no NUL). */
int
fb_pb_hex64(const char *s, size_t n)
{
	if (n != 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Digest {hash = 1; size_bytes = 2}; repeated occurrences merge, the last value of a field wins. */
int
fb_pb_digest(struct fb_pb b, char hex[65], uint64_t *size, int *has_hash, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, "hash"}, {2, FB_PB_VARINT, "size_bytes"}};
	struct fb_pb s;
	uint64_t v;
	int i;
	while ((i = fb_pb_next(&b, "Digest", want, 2, &s, &v, err)) != 2) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0) {
			if (!fb_pb_hex64((const char *)s.p, (size_t)(s.end - s.p)))
				return fb_seterr(err, FB_EFORMAT, "Digest.hash: not 64 lowercase hex digits");
			memcpy(hex, s.p, 64);
			hex[64] = 0;
			*has_hash = 1;
		} else {
			if (v > ((uint64_t)1 << 31)) /* a negative int64 is a huge varint */
				return fb_seterr(err, FB_EFORMAT, "Digest.size_bytes: %lld is negative or over 2 GiB",
				                 (long long)v);
			*size = v;
		}
	}
	return 0;
}

/* Room for k more bytes; a failure (or a size past SIZE_MAX) sets o->oom, which every later
 * write keeps, so that a caller checks once at the end. */
static void
out_grow(struct fb_pb_out *o, size_t k)
{
	if (o->oom)
		return;
	if (k > SIZE_MAX - o->n) {
		o->oom = 1;
		return;
	}
	if (o->n + k <= o->cap)
		return;
	size_t cap = o->cap ? o->cap : 256;
	while (cap < o->n + k)
		cap = cap > SIZE_MAX / 2 ? o->n + k : cap * 2;
	unsigned char *np = realloc(o->p, cap);
	if (!np) {
		o->oom = 1;
		return;
	}
	o->p = np;
	o->cap = cap;
}

void
fb_pb_out_varint(struct fb_pb_out *o, uint32_t f, uint64_t v)
{
	out_grow(o, 20);
	if (o->oom)
		return;
	unsigned char *w = o->p + o->n;
	fb_pb_put_varint(&w, (uint64_t)f << 3 | FB_PB_VARINT);
	fb_pb_put_varint(&w, v);
	o->n = (size_t)(w - o->p);
}

void
fb_pb_out_bytes(struct fb_pb_out *o, uint32_t f, const void *p, size_t n)
{
	out_grow(o, n > SIZE_MAX - 20 ? SIZE_MAX : 20 + n);
	if (o->oom)
		return;
	unsigned char *w = o->p + o->n;
	fb_pb_put_varint(&w, (uint64_t)f << 3 | FB_PB_LEN);
	fb_pb_put_varint(&w, n);
	if (n)
		memcpy(w, p, n);
	o->n = (size_t)(w - o->p) + n;
}

void
fb_pb_out_digest(struct fb_pb_out *o, uint32_t f, const char *hex, uint64_t size)
{
	unsigned char d[2 + 64 + 11], *w = d;
	*w++ = 1 << 3 | FB_PB_LEN; /* Digest.hash */
	*w++ = 64;
	memcpy(w, hex, 64);
	w += 64;
	if (size) { /* proto3 leaves a zero out */
		*w++ = 2 << 3 | FB_PB_VARINT; /* Digest.size_bytes */
		fb_pb_put_varint(&w, size);
	}
	fb_pb_out_bytes(o, f, d, (size_t)(w - d));
}
