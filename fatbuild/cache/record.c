/* record.c: the action record of the shared cache (docs/remote-cache.md §2), both ways: a
 * serialized Bazel ActionResult (build.bazel.remote.execution.v2) naming one OutputFile
 * {path, Digest {hash, size_bytes}} per non-empty blob and, as execution_metadata.worker
 * "fatbuild KEY", the key it was written for. The decoder skips unknown fields of every wire
 * type and rejects a truncated or malformed one; remote.c stores and fetches the records, over
 * HTTP or REAPI. */
#include <string.h>

#include "pb.h"
#include "record.h"
#include "base/error.h"

/* The record is a build.bazel.remote.execution.v2.ActionResult (docs/remote-cache.md §2): one
 * OutputFile per non-empty blob, under these paths, in this order. */
static const char *const rec_paths[3] = {"fatbuild/image.cubin", "fatbuild/image.ptx", "fatbuild/nvrtc.log"};
static const char empty_hex[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/* OutputFile {path = 1; digest = 2; ...}: *slot the index of its path in rec_paths, -1 for a
 * path fatbuild does not use. */
static int
decode_output_file(struct fb_pb b, int *slot, char hex[65], uint64_t *size, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, NULL}, {2, FB_PB_LEN, NULL}};
	int has_path = 0, has_digest = 0, has_hash = 0;
	struct fb_pb s;
	uint64_t v;
	int i;
	*slot = -1;
	*size = 0;
	while ((i = fb_pb_next(&b, "OutputFile", want, 2, &s, &v, err)) != 2) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0) {
			size_t n = (size_t)(s.end - s.p);
			has_path = 1;
			*slot = -1;
			for (int k = 0; k < 3; k++)
				if (n == strlen(rec_paths[k]) && memcmp(s.p, rec_paths[k], n) == 0)
					*slot = k;
		} else {
			has_digest = 1;
			int rc = fb_pb_digest(s, hex, size, &has_hash, err);
			if (rc)
				return rc;
		}
	}
	if (!has_path)
		return fb_seterr(err, FB_EFORMAT, "an OutputFile without a path");
	if (!has_digest || !has_hash)
		return fb_seterr(err, FB_EFORMAT, "an OutputFile without a digest hash");
	return 0;
}

/* The record's own key (§2) is ExecutedActionMetadata {worker = 1} spelled "fatbuild KEY": into
 * key, "" when the worker names something else. */
static const char worker_tag[] = "fatbuild ";

static int
decode_metadata(struct fb_pb b, char key[65], struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, "worker"}};
	struct fb_pb s;
	uint64_t v;
	int i;
	while ((i = fb_pb_next(&b, "ExecutedActionMetadata", want, 1, &s, &v, err)) != 1) {
		if (i < 0)
			return FB_EFORMAT;
		size_t n = (size_t)(s.end - s.p), t = sizeof(worker_tag) - 1;
		memset(key, 0, 65); /* the last worker field decides, whole: none of an earlier one's bytes */
		if (n == t + 64 && memcmp(s.p, worker_tag, t) == 0 && fb_pb_hex64((const char *)s.p + t, 64)) {
			memcpy(key, s.p + t, 64);
			key[64] = 0;
		}
	}
	return 0;
}

int
fb_remote_record_decode(const char *text, size_t n, struct fb_remote_record *out, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {
		{2, FB_PB_LEN, "output_files"}, {4, FB_PB_VARINT, "exit_code"}, {9, FB_PB_LEN, "execution_metadata"}};
	memset(out, 0, sizeof(*out));
	if (n > FB_REMOTE_RECORD_MAX)
		return fb_seterr(err, FB_EFORMAT, "%zu bytes, more than a record's %d", n, FB_REMOTE_RECORD_MAX);
	struct fb_pb b = {(const unsigned char *)text, (const unsigned char *)text + n};
	int seen[3] = {0};
	struct fb_pb s;
	uint64_t v;
	int i;
	while ((i = fb_pb_next(&b, "ActionResult", want, 3, &s, &v, err)) != 3) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 2) {
			if (decode_metadata(s, out->key, err) != 0)
				return FB_EFORMAT;
			continue;
		}
		if (i == 1) {
			if (v != 0)
				return fb_seterr(err, FB_EFORMAT, "ActionResult.exit_code %d, not 0", (int)(int32_t)v);
			continue;
		}
		int slot;
		char hex[65];
		uint64_t size;
		int rc = decode_output_file(s, &slot, hex, &size, err);
		if (rc)
			return rc;
		if (slot < 0)
			continue; /* not one of fatbuild's outputs */
		if (seen[slot]++)
			return fb_seterr(err, FB_EFORMAT, "output file %s twice", rec_paths[slot]);
		memcpy(out->hex[slot], hex, 65);
		out->size[slot] = size;
	}
	if (!out->size[0] && !out->size[1])
		return fb_seterr(err, FB_EFORMAT, "no non-empty output file %s or %s", rec_paths[0], rec_paths[1]);
	for (int k = 0; k < 3; k++)
		if (!out->size[k]) /* an output the job does not make, or an empty log */
			memcpy(out->hex[k], empty_hex, 65);
	return 0;
}

size_t
fb_remote_record_encode(const struct fb_remote_record *rec, char *buf, size_t size)
{
	unsigned char tmp[FB_REMOTE_RECORD_ENCODED_MAX], *o = tmp;
	for (int i = 0; i < 3; i++) {
		if (!rec->size[i])
			continue;
		size_t plen = strlen(rec_paths[i]);
		size_t dlen = 2 + 64 + 1 + fb_pb_varint_len(rec->size[i]);
		size_t flen = 1 + fb_pb_varint_len(plen) + plen + 1 + fb_pb_varint_len(dlen) + dlen;
		*o++ = 2 << 3 | FB_PB_LEN; /* ActionResult.output_files */
		fb_pb_put_varint(&o, flen);
		*o++ = 1 << 3 | FB_PB_LEN; /* OutputFile.path */
		fb_pb_put_varint(&o, plen);
		memcpy(o, rec_paths[i], plen);
		o += plen;
		*o++ = 2 << 3 | FB_PB_LEN; /* OutputFile.digest */
		fb_pb_put_varint(&o, dlen);
		*o++ = 1 << 3 | FB_PB_LEN; /* Digest.hash */
		*o++ = 64;
		memcpy(o, rec->hex[i], 64);
		o += 64;
		*o++ = 2 << 3 | FB_PB_VARINT; /* Digest.size_bytes */
		fb_pb_put_varint(&o, rec->size[i]);
	}
	if (rec->key[0]) {
		size_t t = sizeof(worker_tag) - 1;
		*o++ = 9 << 3 | FB_PB_LEN; /* ActionResult.execution_metadata */
		fb_pb_put_varint(&o, 2 + t + 64);
		*o++ = 1 << 3 | FB_PB_LEN; /* ExecutedActionMetadata.worker */
		fb_pb_put_varint(&o, t + 64);
		memcpy(o, worker_tag, t);
		memcpy(o + t, rec->key, 64);
		o += t + 64;
	}
	size_t n = (size_t)(o - tmp);
	if (n > size)
		return 0;
	memcpy(buf, tmp, n);
	return n;
}
