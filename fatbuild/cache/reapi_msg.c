/* reapi_msg.c: what the REAPI cache (reapi.c, docs/remote-cache.md §8) reads of a server: the
 * grpc:// URL, the answers of the ContentAddressableStorage, ByteStream and Capabilities calls
 * (FindMissingBlobs, BatchReadBlobs, BatchUpdateBlobs, ReadResponse, ServerCapabilities) and
 * the names of google.rpc.Code. Plain C over the protobuf wire format (pb.c), without gRPC: the
 * decoders skip unknown fields and reject malformed ones, and fuzz_reapi runs them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "reapi_msg.h"
#include "base/error.h"

int
fb_reapi_url(const char *url)
{
	return url && (strncmp(url, "grpc://", 7) == 0 || strncmp(url, "grpcs://", 8) == 0);
}

int
fb_reapi_url_parse(const char *url, char *target, size_t tsize, char *instance, size_t isize, int *tls)
{
	if (!fb_reapi_url(url))
		return -1;
	*tls = url[4] == 's';
	const char *h = url + (*tls ? 8 : 7);
	const char *slash = strchr(h, '/');
	size_t hn = slash ? (size_t)(slash - h) : strlen(h);
	/* An IPv6 address is bracketed ("[::1]:8980"): its port colon follows the ']'. */
	const char *close = h[0] == '[' ? memchr(h, ']', hn) : NULL;
	if (h[0] == '[' && (!close || close == h + 1 || (close + 1 < h + hn && close[1] != ':')))
		return -1;
	const char *from = close ? close : h;
	const char *colon = memchr(from, ':', hn - (size_t)(from - h));
	if (hn == 0 || hn >= tsize || h[0] == ':' || (colon && colon + 1 == h + hn))
		return -1;
	if (colon && strspn(colon + 1, "0123456789") != (size_t)(h + hn - colon - 1))
		return -1;
	memcpy(target, h, hn);
	target[hn] = 0;
	if (!colon) { /* gRPC's own default port would be 443 for both schemes */
		if (hn + 6 >= tsize)
			return -1;
		strcat(target, *tls ? ":443" : ":80");
	}
	const char *inst = slash ? slash + 1 : "";
	size_t in = strlen(inst);
	while (in > 0 && inst[in - 1] == '/')
		in--;
	if (in >= isize)
		return -1;
	memcpy(instance, inst, in);
	instance[in] = 0;
	return 0;
}

/* google.rpc.Status {code = 1; message = 2; details = 3}. */
static int
decode_status(struct fb_pb b, int *code, char *msg, size_t msize, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_VARINT, "code"}, {2, FB_PB_LEN, "message"}};
	struct fb_pb s;
	uint64_t v;
	int i;
	*code = 0;
	if (msize)
		msg[0] = 0;
	while ((i = fb_pb_next(&b, "Status", want, 2, &s, &v, err)) != 2) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0) {
			*code = (int)(int32_t)v;
		} else if (msize) {
			size_t k = (size_t)(s.end - s.p) < msize - 1 ? (size_t)(s.end - s.p) : msize - 1;
			memcpy(msg, s.p, k);
			msg[k] = 0;
		}
	}
	return 0;
}

/* A message's bytes to read; an empty answer may come as NULL (no bytes received). */
static struct fb_pb
msg_view(const unsigned char *p, size_t n)
{
	static const unsigned char none[1];
	struct fb_pb b = {p ? p : none, p ? p + n : none};
	return b;
}

/* The index in b[0..nb) of the blob with this digest, -1 for one not asked about. */
static int
find_blob(const struct fb_reapi_blob *b, int nb, const char *hex, uint64_t size)
{
	for (int i = 0; i < nb; i++)
		if (b[i].size == size && memcmp(b[i].hex, hex, 64) == 0)
			return i;
	return -1;
}

/* A Digest field of message msg: both parts there. */
static int
need_digest(struct fb_pb s, const char *msg, char hex[65], uint64_t *size, struct fb_error *err)
{
	int has_hash = 0;
	*size = 0;
	int rc = fb_pb_digest(s, hex, size, &has_hash, err);
	if (rc)
		return rc;
	if (!has_hash)
		return fb_seterr(err, FB_EFORMAT, "%s: a digest without a hash", msg);
	return 0;
}

int
fb_reapi_decode_missing(const unsigned char *p, size_t n, struct fb_reapi_blob *b, int nb, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{2, FB_PB_LEN, "missing_blob_digests"}};
	struct fb_pb m = msg_view(p, n), s;
	uint64_t v;
	int i;
	for (int k = 0; k < nb; k++)
		b[k].missing = 0;
	while ((i = fb_pb_next(&m, "FindMissingBlobsResponse", want, 1, &s, &v, err)) != 1) {
		if (i < 0)
			return FB_EFORMAT;
		char hex[65];
		uint64_t size;
		int rc = need_digest(s, "FindMissingBlobsResponse", hex, &size, err);
		if (rc)
			return rc;
		int k = find_blob(b, nb, hex, size);
		if (k < 0)
			return fb_seterr(err, FB_EFORMAT, "FindMissingBlobsResponse: blob %s was not asked about", hex);
		b[k].missing = 1;
	}
	return 0;
}

/* One BatchReadBlobsResponse.Response {digest = 1; data = 2; status = 3; compressor = 4}. */
static int
decode_read_one(struct fb_pb r, struct fb_reapi_blob *b, int nb, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {
		{1, FB_PB_LEN, "digest"}, {2, FB_PB_LEN, "data"}, {3, FB_PB_LEN, "status"}, {4, FB_PB_VARINT, "compressor"}};
	const char *msg = "BatchReadBlobsResponse.Response";
	struct fb_pb s, data = {NULL, NULL};
	uint64_t v, size = 0;
	int i, code = 0, has_digest = 0, rc;
	char hex[65], why[200];
	while ((i = fb_pb_next(&r, msg, want, 4, &s, &v, err)) != 4) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0 && (rc = need_digest(s, msg, hex, &size, err)) != 0)
			return rc;
		has_digest |= i == 0;
		if (i == 1)
			data = s;
		if (i == 2 && (rc = decode_status(s, &code, why, sizeof(why), err)) != 0)
			return rc;
		if (i == 3 && v != 0) /* only the identity compressor is ever asked for */
			return fb_seterr(err, FB_EFORMAT, "%s: compressor %llu, not IDENTITY", msg, (unsigned long long)v);
	}
	if (!has_digest)
		return fb_seterr(err, FB_EFORMAT, "%s without a digest", msg);
	int k = find_blob(b, nb, hex, size);
	if (k < 0)
		return fb_seterr(err, FB_EFORMAT, "%s: blob %s was not asked for", msg, hex);
	if (b[k].got || b[k].status)
		return fb_seterr(err, FB_EFORMAT, "%s: blob %s twice", msg, hex);
	if (code != FB_RPC_OK) {
		b[k].status = code;
		return 0;
	}
	/* The length is checked by the caller against the record, as the digest is; a NUL follows
	 * (the log is text). */
	size_t dn = data.p ? (size_t)(data.end - data.p) : 0;
	if (!(b[k].got = malloc(dn + 1)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	if (dn)
		memcpy(b[k].got, data.p, dn);
	b[k].got[dn] = 0;
	b[k].got_size = dn;
	return 0;
}

int
fb_reapi_decode_read(const unsigned char *p, size_t n, struct fb_reapi_blob *b, int nb, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, "responses"}};
	struct fb_pb m = msg_view(p, n), s;
	uint64_t v;
	int i, rc = 0;
	while (!rc && (i = fb_pb_next(&m, "BatchReadBlobsResponse", want, 1, &s, &v, err)) != 1)
		rc = i < 0 ? FB_EFORMAT : decode_read_one(s, b, nb, err);
	return rc;
}

int
fb_reapi_decode_update(const unsigned char *p, size_t n, struct fb_reapi_blob *b, int nb, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, "responses"}};
	static const struct fb_pb_want rwant[] = {{1, FB_PB_LEN, "digest"}, {2, FB_PB_LEN, "status"}};
	const char *msg = "BatchUpdateBlobsResponse.Response";
	struct fb_pb m = msg_view(p, n), r, s;
	uint64_t v, size = 0;
	int i, j, rc;
	while ((i = fb_pb_next(&m, "BatchUpdateBlobsResponse", want, 1, &r, &v, err)) != 1) {
		if (i < 0)
			return FB_EFORMAT;
		int code = 0, has_digest = 0;
		char hex[65], why[200] = "";
		while ((j = fb_pb_next(&r, msg, rwant, 2, &s, &v, err)) != 2) {
			if (j < 0)
				return FB_EFORMAT;
			if (j == 0 && (rc = need_digest(s, msg, hex, &size, err)) != 0)
				return rc;
			has_digest |= j == 0;
			if (j == 1 && (rc = decode_status(s, &code, why, sizeof(why), err)) != 0)
				return rc;
		}
		if (!has_digest)
			return fb_seterr(err, FB_EFORMAT, "%s without a digest", msg);
		int k = find_blob(b, nb, hex, size);
		if (k < 0)
			return fb_seterr(err, FB_EFORMAT, "%s: blob %s was not sent", msg, hex);
		b[k].status = code;
		if (code != FB_RPC_OK)
			snprintf(b[k].why, sizeof(b[k].why), "%s", why);
	}
	return 0;
}

int
fb_reapi_decode_bytestream(const unsigned char *p, size_t n, const unsigned char **data, size_t *size,
                           struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{10, FB_PB_LEN, "data"}};
	struct fb_pb m = msg_view(p, n), s;
	uint64_t v;
	int i;
	*data = p;
	*size = 0;
	while ((i = fb_pb_next(&m, "ReadResponse", want, 1, &s, &v, err)) != 1) {
		if (i < 0)
			return FB_EFORMAT;
		*data = s.p;
		*size = (size_t)(s.end - s.p);
	}
	return 0;
}

int
fb_reapi_decode_capabilities(const unsigned char *p, size_t n, uint64_t *max_batch, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, "cache_capabilities"}};
	static const struct fb_pb_want cwant[] = {{4, FB_PB_VARINT, "max_batch_total_size_bytes"}};
	struct fb_pb m = msg_view(p, n), c, s;
	uint64_t v;
	int i, j;
	*max_batch = 0;
	while ((i = fb_pb_next(&m, "ServerCapabilities", want, 1, &c, &v, err)) != 1) {
		if (i < 0)
			return FB_EFORMAT;
		while ((j = fb_pb_next(&c, "CacheCapabilities", cwant, 1, &s, &v, err)) != 1) {
			if (j < 0)
				return FB_EFORMAT;
			if (v > (uint64_t)INT64_MAX) /* an int64 */
				return fb_seterr(err, FB_EFORMAT, "CacheCapabilities: max_batch_total_size_bytes is negative");
			*max_batch = v; /* repeated fields merge, the last value winning */
		}
	}
	return 0;
}

const char *
fb_reapi_code_name(int c)
{
	static const char *const names[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
		"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
	return c >= 0 && c < (int)(sizeof(names) / sizeof(*names)) ? names[c] : "status out of range";
}
