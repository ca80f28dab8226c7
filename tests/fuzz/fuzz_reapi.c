/* fuzz_reapi.c: what a REAPI server answers the grpc:// cache (cache/reapi_msg.c, docs/remote-cache.md
 * §8), which any server may get wrong. Input: a selector byte, then the bytes of one message:
 * 0 FindMissingBlobsResponse, 1 BatchReadBlobsResponse, 2 BatchUpdateBlobsResponse,
 * 3 ByteStream ReadResponse, 4 a grpc:// URL, 5 ServerCapabilities. The blobs asked about are three fixed digests
 * (the seeds in corpus/fuzz_reapi/ were serialized by the protobuf runtime with these digests).
 * Invariants: each decoder accepts or says FB_EFORMAT with a message, nothing else; what it
 * accepts stays inside the input (a ReadResponse's data is a view into it, a read blob's
 * length at most the input's); a found blob has no error status; an accepted
 * BatchReadBlobsResponse, written again with pb.c's writer, decodes to the same blobs; a
 * parsed URL gives a "HOST:PORT" target; an accepted ServerCapabilities' batch limit is an
 * int64 and, written again as its CacheCapabilities, decodes to the same. Abort on any
 * violation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/pb.h"
#include "cache/remote.h"
#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* SHA-256 of "", "a" and "abc" with their sizes. */
static void
blobs(struct fb_reapi_blob b[3])
{
	static const char *const hex[3] = {
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	};
	memset(b, 0, 3 * sizeof(*b));
	for (int i = 0; i < 3; i++) {
		memcpy(b[i].hex, hex[i], 65);
		b[i].size = i == 2 ? 3 : (uint64_t)i;
	}
}

static void
check_rc(int rc, const struct fb_error *e)
{
	if (rc != 0 && rc != FB_EFORMAT)
		abort();
	if (rc != 0 && !e->msg[0])
		abort(); /* every rejection says why */
}

/* The read answer written back: one Response per found or refused blob. */
static void
reread(const struct fb_reapi_blob b[3])
{
	struct fb_pb_out o = {0};
	for (int i = 0; i < 3; i++) {
		if (!b[i].got && !b[i].status)
			continue;
		struct fb_pb_out r = {0}, st = {0};
		fb_pb_out_digest(&r, 1, b[i].hex, b[i].size);
		if (b[i].got)
			fb_pb_out_bytes(&r, 2, b[i].got, b[i].got_size);
		if (b[i].status) {
			fb_pb_out_varint(&st, 1, (uint64_t)(uint32_t)b[i].status);
			fb_pb_out_bytes(&r, 3, st.p, st.n);
		}
		fb_pb_out_bytes(&o, 1, r.p, r.n);
		free(r.p);
		free(st.p);
	}
	if (o.oom)
		abort();
	struct fb_reapi_blob c[3];
	blobs(c);
	if (fb_reapi_decode_read(o.p, o.n, c, 3, NULL) != 0)
		abort();
	for (int i = 0; i < 3; i++) {
		if (!c[i].got != !b[i].got || c[i].status != b[i].status || c[i].got_size != b[i].got_size)
			abort();
		if (c[i].got && c[i].got_size && memcmp(c[i].got, b[i].got, c[i].got_size) != 0)
			abort();
		free(c[i].got);
	}
	free(o.p);
}

static void
url(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1), target[256], inst[256];
	int tls;
	if (!s)
		return;
	memcpy(s, p, n);
	s[n] = 0;
	if (fb_reapi_url_parse(s, target, sizeof(target), inst, sizeof(inst), &tls) == 0) {
		const char *colon = strrchr(target, ':');
		if (!fb_reapi_url(s) || !colon || colon == target || !colon[1] || strlen(inst) >= sizeof(inst))
			abort();
	}
	free(s);
}

static void
capabilities(const uint8_t *p, size_t n)
{
	struct fb_error e = {0};
	uint64_t max = 1, again = 1;
	int rc = fb_reapi_decode_capabilities(p, n, &max, &e);
	check_rc(rc, &e);
	if (rc)
		return;
	if (max > (uint64_t)INT64_MAX)
		abort();
	struct fb_pb_out c = {0}, o = {0};
	fb_pb_out_varint(&c, 4, max);
	fb_pb_out_bytes(&o, 1, c.p, c.n);
	if (c.oom || o.oom || fb_reapi_decode_capabilities(o.p, o.n, &again, NULL) != 0 || again != max)
		abort();
	free(c.p);
	free(o.p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const unsigned char *p = data + 1;
	size_t n = size - 1;
	struct fb_reapi_blob b[3];
	struct fb_error e = {0};
	const unsigned char *view;
	size_t vn;
	int rc;
	blobs(b);
	switch (data[0] % 6) {
	case 0:
		check_rc(rc = fb_reapi_decode_missing(p, n, b, 3, &e), &e);
		for (int i = 0; i < 3; i++)
			if (b[i].missing != 0 && b[i].missing != 1)
				abort();
		break;
	case 1:
		check_rc(rc = fb_reapi_decode_read(p, n, b, 3, &e), &e);
		for (int i = 0; i < 3; i++)
			if ((b[i].got && b[i].status) || b[i].got_size > n)
				abort();
		if (rc == 0)
			reread(b);
		for (int i = 0; i < 3; i++)
			free(b[i].got);
		break;
	case 2:
		check_rc(fb_reapi_decode_update(p, n, b, 3, &e), &e);
		for (int i = 0; i < 3; i++)
			if (memchr(b[i].why, 0, sizeof(b[i].why)) == NULL)
				abort();
		break;
	case 3:
		check_rc(rc = fb_reapi_decode_bytestream(p, n, &view, &vn, &e), &e);
		if (rc == 0 && vn && (view < p || view + vn > p + n))
			abort();
		break;
	case 4:
		url(p, n);
		break;
	default:
		capabilities(p, n);
	}
	return 0;
}
