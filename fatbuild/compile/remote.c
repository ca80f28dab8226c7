/* remote.c: the shared compile cache over the HTTP cache protocol of Bazel (docs/remote-cache.md).
 *
 *   GET/PUT URL/cas/<sha256>   a blob: one cubin, PTX text or log, named by its SHA-256
 *   GET/PUT URL/ac/<key>       the action record that maps a compile key to its blobs
 *
 * The action record (docs/remote-cache.md §2) is a serialized Bazel ActionResult protobuf
 * (build.bazel.remote.execution.v2): one OutputFile {path, Digest {hash, size_bytes}} per
 * non-empty blob, under the paths fatbuild/image.cubin, fatbuild/image.ptx, fatbuild/nvrtc.log.
 * The decoder skips unknown fields of every wire type and rejects a truncated or malformed one.
 *
 * libcurl is dlopen'ed (libcurl.so.4): without it the remote cache is off and the caller says
 * so once; nothing else changes. One easy handle per fb_remote, so that every request of a
 * compile run reuses one kept-alive connection. The first transport failure (no connection, a
 * timeout, a 5xx) marks the remote broken: every later call answers FB_EIO at once, so a dead
 * or slow server costs one timeout per run, never a failed build. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "hash.h"
#include "common/error_priv.h"

/* The few libcurl constants used (curl/curl.h: CURLOPTTYPE_* bases plus the option number). */
enum {
	OPT_WRITEDATA = 10001,
	OPT_URL = 10002,
	OPT_READDATA = 10009,
	OPT_ERRORBUFFER = 10010,
	OPT_HTTPHEADER = 10023,
	OPT_WRITEFUNCTION = 20011,
	OPT_READFUNCTION = 20012,
	OPT_UPLOAD = 46,
	OPT_HTTPGET = 80,
	OPT_NOSIGNAL = 99,
	OPT_TIMEOUT_MS = 155,
	OPT_CONNECTTIMEOUT_MS = 156,
	OPT_INFILESIZE_LARGE = 30115,
	INFO_RESPONSE_CODE = 0x200002,
	CURL_ERROR_SIZE = 256,
};

struct slist; /* struct curl_slist */

struct curlfn {
	void *(*easy_init)(void);
	int (*easy_setopt)(void *, int, ...);
	int (*easy_perform)(void *);
	int (*easy_getinfo)(void *, int, ...);
	void (*easy_cleanup)(void *);
	const char *(*easy_strerror)(int);
	struct slist *(*slist_append)(struct slist *, const char *);
	void (*slist_free_all)(struct slist *);
};

struct fb_remote {
	void *lib;
	struct curlfn f;
	void *h;
	struct slist *headers;
	char *url;               /* without a trailing '/' */
	int writable;
	long timeout_ms;
	int broken;
	char why[1024];          /* the first failure */
	char ebuf[CURL_ERROR_SIZE];
	struct fb_remote_counts n;
};

struct buf {
	unsigned char *p;
	size_t n, cap, max;
	int over;
};

struct rd {
	const unsigned char *p;
	size_t n, off;
};

static size_t
on_write(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct buf *b = ctx;
	size_t k = size * nmemb;
	if (b->n + k > b->max) {
		b->over = 1;
		return 0; /* libcurl aborts the transfer */
	}
	if (b->n + k + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap < b->n + k + 1)
			cap *= 2;
		unsigned char *np = realloc(b->p, cap);
		if (!np)
			return 0;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, k);
	b->n += k;
	b->p[b->n] = 0;
	return k;
}

static size_t
on_read(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct rd *r = ctx;
	size_t k = size * nmemb;
	if (k > r->n - r->off)
		k = r->n - r->off;
	memcpy(data, r->p + r->off, k);
	r->off += k;
	return k;
}

int
fb_remote_open(const struct fb_remote_opts *o, struct fb_remote **out, struct fb_error *err)
{
	*out = NULL;
	if (!o->url || (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0))
		return fb_seterr(err, FB_EINVAL, "remote cache URL '%s': must start with http:// or https://",
		                 o->url ? o->url : "");
	struct fb_remote *r = calloc(1, sizeof(*r));
	if (!r || !(r->url = strdup(o->url))) {
		free(r);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	for (size_t k = strlen(r->url); k > 0 && r->url[k - 1] == '/'; k--)
		r->url[k - 1] = 0;
	r->writable = o->writable;
	r->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	const char *names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names) && !r->lib; i++)
		r->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!r->lib) {
		const char *why = dlerror();
		fb_remote_close(r);
		return fb_seterr(err, FB_ENOTOOL, "remote cache off: cannot load libcurl.so.4: %s", why ? why : "not found");
	}
	struct {
		const char *name;
		void **slot;
	} syms[] = {
		{"curl_easy_init", (void **)&r->f.easy_init},       {"curl_easy_setopt", (void **)&r->f.easy_setopt},
		{"curl_easy_perform", (void **)&r->f.easy_perform}, {"curl_easy_getinfo", (void **)&r->f.easy_getinfo},
		{"curl_easy_cleanup", (void **)&r->f.easy_cleanup}, {"curl_easy_strerror", (void **)&r->f.easy_strerror},
		{"curl_slist_append", (void **)&r->f.slist_append}, {"curl_slist_free_all", (void **)&r->f.slist_free_all},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(*syms); i++) {
		void *p = dlsym(r->lib, syms[i].name);
		if (!p) {
			fb_remote_close(r);
			return fb_seterr(err, FB_ENOTOOL, "remote cache off: libcurl lacks %s", syms[i].name);
		}
		memcpy(syms[i].slot, &p, sizeof(p));
	}
	/* "Expect:" turns off the 100-continue round trip libcurl would make before each PUT. */
	r->headers = r->f.slist_append(NULL, "Expect:");
	if (r->headers && o->header && *o->header)
		r->headers = r->f.slist_append(r->headers, o->header);
	if (!r->headers || !(r->h = r->f.easy_init())) {
		fb_remote_close(r);
		return fb_seterr(err, FB_ENOMEM, "remote cache off: libcurl could not start");
	}
	*out = r;
	return 0;
}

void
fb_remote_close(struct fb_remote *r)
{
	if (!r)
		return;
	if (r->h)
		r->f.easy_cleanup(r->h);
	if (r->headers)
		r->f.slist_free_all(r->headers);
	/* libcurl stays mapped: its TLS library may have registered exit handlers. */
	free(r->url);
	free(r);
}

int
fb_remote_broken(const struct fb_remote *r, const char **why)
{
	if (why)
		*why = r->why;
	return r->broken;
}

const struct fb_remote_counts *
fb_remote_counts(const struct fb_remote *r)
{
	return &r->n;
}

static int
broke(struct fb_remote *r, struct fb_error *err, const char *fmt, const char *a, const char *b)
{
	if (!r->broken) {
		r->broken = 1;
		snprintf(r->why, sizeof(r->why), fmt, a, b);
		r->n.errors++;
	}
	return fb_seterr(err, FB_EIO, "%s", r->why);
}

/* One request: upload data when given, else GET; the answer's body goes into *b. Returns
 * the HTTP status, or -1 after marking the remote broken. */
static long
request(struct fb_remote *r, const char *kind, const char *name, const unsigned char *data, size_t size,
        struct buf *b, struct fb_error *err)
{
	char url[4096 + 80];
	if (snprintf(url, sizeof(url), "%s/%s/%s", r->url, kind, name) >= (int)sizeof(url)) {
		broke(r, err, "remote cache URL too long: %.200s%s", r->url, "");
		return -1;
	}
	struct rd rd = {data, size, 0};
	void *h = r->h;
	r->ebuf[0] = 0;
	r->f.easy_setopt(h, OPT_URL, url);
	r->f.easy_setopt(h, OPT_HTTPHEADER, r->headers);
	r->f.easy_setopt(h, OPT_NOSIGNAL, 1L);
	r->f.easy_setopt(h, OPT_CONNECTTIMEOUT_MS, r->timeout_ms < 3000 ? r->timeout_ms : 3000L);
	r->f.easy_setopt(h, OPT_TIMEOUT_MS, r->timeout_ms);
	r->f.easy_setopt(h, OPT_ERRORBUFFER, r->ebuf);
	r->f.easy_setopt(h, OPT_WRITEFUNCTION, on_write);
	r->f.easy_setopt(h, OPT_WRITEDATA, b);
	if (data) {
		r->f.easy_setopt(h, OPT_UPLOAD, 1L);
		r->f.easy_setopt(h, OPT_READFUNCTION, on_read);
		r->f.easy_setopt(h, OPT_READDATA, &rd);
		r->f.easy_setopt(h, OPT_INFILESIZE_LARGE, (long long)size);
	} else {
		r->f.easy_setopt(h, OPT_HTTPGET, 1L);
	}
	int rc = r->f.easy_perform(h);
	long status = 0;
	r->f.easy_getinfo(h, INFO_RESPONSE_CODE, &status);
	if (rc != 0 && !(b && b->over)) {
		broke(r, err, "remote cache %.300s: %.200s", r->url, r->ebuf[0] ? r->ebuf : r->f.easy_strerror(rc));
		return -1;
	}
	if (status >= 500 || status == 401 || status == 403) {
		char st[32];
		snprintf(st, sizeof(st), "HTTP %ld", status);
		broke(r, err, "remote cache %.300s: %s", r->url, st);
		return -1;
	}
	return status;
}

/* Fetches one blob and checks its size and digest. */
static int
get_blob(struct fb_remote *r, const char *hex, uint64_t size, unsigned char **out, struct fb_error *err)
{
	*out = NULL;
	struct buf b = {.max = (size_t)size};
	long st = request(r, "cas", hex, NULL, 0, &b, err);
	if (st < 0) {
		free(b.p);
		return FB_EIO;
	}
	if (st != 200 || b.over || b.n != size) {
		free(b.p);
		r->n.corrupt += st == 200;
		if (st == 200)
			return fb_seterr(err, FB_EFORMAT, "remote blob cas/%s: %s", hex,
			                 "size differs from its action record");
		return fb_seterr(err, FB_ENOIMAGE, "remote blob cas/%s: HTTP %ld", hex, st);
	}
	r->n.bytes_down += b.n;
	unsigned char d[32];
	char got[65];
	fb_sha256_buf(b.p, b.n, d);
	fb_sha256_hex(d, got);
	if (strcmp(got, hex) != 0) {
		free(b.p);
		r->n.corrupt++;
		return fb_seterr(err, FB_EFORMAT, "remote blob cas/%s: content hashes to %s", hex, got);
	}
	if (!b.p && !(b.p = calloc(1, 1)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	*out = b.p;
	return 0;
}

/* s[0..n) is 64 lowercase hex digits; reads no byte past s + n (a protobuf string has no NUL). */
static int
is_hex64(const char *s, size_t n)
{
	if (n != 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The record is a build.bazel.remote.execution.v2.ActionResult (docs/remote-cache.md §2): one
 * OutputFile per non-empty blob, under these paths, in this order. */
static const char *const rec_paths[3] = {"fatbuild/image.cubin", "fatbuild/image.ptx", "fatbuild/nvrtc.log"};
static const char empty_hex[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

struct pb {
	const unsigned char *p, *end;
};

/* One varint of at most 10 bytes; the 10th may only carry bit 63. -1 when truncated or too long. */
static int
pb_varint(struct pb *b, uint64_t *v)
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
static int
pb_tag(struct pb *b, uint32_t *field, int *wt)
{
	uint64_t t;
	if (pb_varint(b, &t) || (t >> 3) == 0 || (t >> 3) > 0x1fffffff || (t & 7) > 5)
		return -1;
	*field = (uint32_t)(t >> 3);
	*wt = (int)(t & 7);
	return 0;
}

/* A length-delimited field's body into *sub. */
static int
pb_len(struct pb *b, struct pb *sub)
{
	uint64_t n;
	if (pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
		return -1;
	sub->p = b->p;
	sub->end = b->p + n;
	b->p += n;
	return 0;
}

/* Skips the body of a field of wire type wt (its tag read); groups nest at most 16 deep. */
static int
pb_skip(struct pb *b, uint32_t field, int wt, int depth)
{
	uint64_t v;
	struct pb sub;
	switch (wt) {
	case WT_VARINT:
		return pb_varint(b, &v);
	case WT_I64:
	case WT_I32: {
		size_t k = wt == WT_I64 ? 8 : 4;
		if ((size_t)(b->end - b->p) < k)
			return -1;
		b->p += k;
		return 0;
	}
	case WT_LEN:
		return pb_len(b, &sub);
	case WT_SGROUP:
		if (depth >= 16)
			return -1;
		for (;;) {
			uint32_t f;
			int w;
			if (pb_tag(b, &f, &w))
				return -1;
			if (w == WT_EGROUP)
				return f == field ? 0 : -1;
			if (pb_skip(b, f, w, depth + 1))
				return -1;
		}
	default: /* an end-group with no start */
		return -1;
	}
}

static void
pb_put_varint(unsigned char **o, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		*(*o)++ = c | (v ? 0x80 : 0);
	} while (v);
}

static size_t
pb_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >>= 7)
		n++;
	return n;
}

/* A field a message reader takes: its number, its wire type (WT_LEN or WT_VARINT) and its name
 * for messages (NULL: "field N"). */
struct pb_want {
	uint32_t f;
	int wt;
	const char *name;
};

/* Reads the fields of message msg from b up to the next one of want[0..n), skipping the others,
 * and returns its index with its value: a WT_LEN field's bytes in *sub, a WT_VARINT's in *v.
 * Returns n at the end of b, and -1 (err filled: FB_EFORMAT) for a malformed field or a wanted
 * number with another wire type. */
static int
pb_next(struct pb *b, const char *msg, const struct pb_want *want, int n, struct pb *sub, uint64_t *v,
        struct fb_error *err)
{
	while (b->p < b->end) {
		uint32_t f;
		int wt, i = 0;
		if (pb_tag(b, &f, &wt)) {
			fb_seterr(err, FB_EFORMAT, "%s: a malformed field tag", msg);
			return -1;
		}
		while (i < n && want[i].f != f)
			i++;
		if (i == n) {
			if (!pb_skip(b, f, wt, 0))
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
		if (wt == WT_LEN && pb_len(b, sub)) {
			fb_seterr(err, FB_EFORMAT, "%s: a length past the end", where);
			return -1;
		}
		if (wt == WT_VARINT && pb_varint(b, v)) {
			fb_seterr(err, FB_EFORMAT, "%s: a malformed varint", where);
			return -1;
		}
		return i;
	}
	return n;
}

/* Digest {hash = 1; size_bytes = 2}; repeated occurrences merge, the last value of a field wins. */
static int
decode_digest(struct pb b, char hex[65], uint64_t *size, int *has_hash, struct fb_error *err)
{
	static const struct pb_want want[] = {{1, WT_LEN, "hash"}, {2, WT_VARINT, "size_bytes"}};
	struct pb s;
	uint64_t v;
	int i;
	while ((i = pb_next(&b, "Digest", want, 2, &s, &v, err)) != 2) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0) {
			if (!is_hex64((const char *)s.p, (size_t)(s.end - s.p)))
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

/* OutputFile {path = 1; digest = 2; ...}: *slot the index of its path in rec_paths, -1 for a
 * path fatbuild does not use. */
static int
decode_output_file(struct pb b, int *slot, char hex[65], uint64_t *size, struct fb_error *err)
{
	static const struct pb_want want[] = {{1, WT_LEN, NULL}, {2, WT_LEN, NULL}};
	int has_path = 0, has_digest = 0, has_hash = 0;
	struct pb s;
	uint64_t v;
	int i;
	*slot = -1;
	*size = 0;
	while ((i = pb_next(&b, "OutputFile", want, 2, &s, &v, err)) != 2) {
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
			int rc = decode_digest(s, hex, size, &has_hash, err);
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

int
fb_remote_record_decode(const char *text, size_t n, struct fb_remote_record *out, struct fb_error *err)
{
	static const struct pb_want want[] = {{2, WT_LEN, "output_files"}, {4, WT_VARINT, "exit_code"}};
	memset(out, 0, sizeof(*out));
	if (n > FB_REMOTE_RECORD_MAX)
		return fb_seterr(err, FB_EFORMAT, "%zu bytes, more than a record's %d", n, FB_REMOTE_RECORD_MAX);
	struct pb b = {(const unsigned char *)text, (const unsigned char *)text + n};
	int seen[3] = {0};
	struct pb s;
	uint64_t v;
	int i;
	while ((i = pb_next(&b, "ActionResult", want, 2, &s, &v, err)) != 2) {
		if (i < 0)
			return FB_EFORMAT;
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
		size_t dlen = 2 + 64 + 1 + pb_varint_len(rec->size[i]);
		size_t flen = 1 + pb_varint_len(plen) + plen + 1 + pb_varint_len(dlen) + dlen;
		*o++ = 2 << 3 | WT_LEN; /* ActionResult.output_files */
		pb_put_varint(&o, flen);
		*o++ = 1 << 3 | WT_LEN; /* OutputFile.path */
		pb_put_varint(&o, plen);
		memcpy(o, rec_paths[i], plen);
		o += plen;
		*o++ = 2 << 3 | WT_LEN; /* OutputFile.digest */
		pb_put_varint(&o, dlen);
		*o++ = 1 << 3 | WT_LEN; /* Digest.hash */
		*o++ = 64;
		memcpy(o, rec->hex[i], 64);
		o += 64;
		*o++ = 2 << 3 | WT_VARINT; /* Digest.size_bytes */
		pb_put_varint(&o, rec->size[i]);
	}
	size_t n = (size_t)(o - tmp);
	if (n > size)
		return 0;
	memcpy(buf, tmp, n);
	return n;
}

int
fb_remote_get(struct fb_remote *r, const char *key, struct fb_cache_entry *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (r->broken)
		return fb_seterr(err, FB_EIO, "%s", r->why);
	if (!is_hex64(key, strlen(key)))
		return fb_seterr(err, FB_EINVAL, "remote cache key '%.80s' is not 64 lowercase hex digits", key);
	struct buf b = {.max = FB_REMOTE_RECORD_MAX};
	long st = request(r, "ac", key, NULL, 0, &b, err);
	if (st < 0) {
		free(b.p);
		return FB_EIO;
	}
	if (st != 200) {
		free(b.p);
		r->n.misses++;
		return FB_ENOIMAGE;
	}
	r->n.bytes_down += b.n;
	struct fb_remote_record rec;
	struct fb_error pe = {0};
	int bad = b.over ? fb_seterr(&pe, FB_EFORMAT, "more than a record's %d bytes", FB_REMOTE_RECORD_MAX)
	                 : fb_remote_record_decode(b.p ? (const char *)b.p : "", b.n, &rec, &pe);
	free(b.p);
	if (bad) {
		r->n.corrupt++;
		return fb_seterr(err, FB_EFORMAT, "remote action record ac/%s: %s", key, pe.msg);
	}
	unsigned char *blob[3] = {0};
	int rc = 0;
	for (int i = 0; i < 3 && !rc; i++)
		if (rec.size[i])
			rc = get_blob(r, rec.hex[i], rec.size[i], &blob[i], err);
	if (rc) {
		for (int i = 0; i < 3; i++)
			free(blob[i]);
		if (rc == FB_ENOIMAGE)
			r->n.misses++; /* a blob evicted under its record */
		return rc;
	}
	out->cubin = blob[0];
	out->cubin_size = rec.size[0];
	out->ptx = blob[1];
	out->ptx_size = rec.size[1];
	out->log = blob[2] ? (char *)blob[2] : calloc(1, 1);
	if (!out->log) {
		fb_cache_entry_clear(out);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	r->n.hits++;
	return 0;
}

static void
digest_hex(const void *p, size_t n, char out[65])
{
	unsigned char d[32];
	fb_sha256_buf(p, n, d);
	fb_sha256_hex(d, out);
}

static int
put_one(struct fb_remote *r, const char *kind, const char *name, const void *p, size_t n, struct fb_error *err)
{
	struct buf sink = {.max = 65536}; /* an error page, if the server sends one */
	long st = request(r, kind, name, p ? p : "", n, &sink, err);
	free(sink.p);
	if (st < 0)
		return FB_EIO;
	if (st < 200 || st > 299) {
		char s[32];
		snprintf(s, sizeof(s), "HTTP %ld", st);
		return broke(r, err, "remote cache %.300s: PUT answered %s", r->url, s);
	}
	r->n.bytes_up += n;
	return 0;
}

int
fb_remote_put(struct fb_remote *r, const char *key, const struct fb_cache_entry *e, struct fb_error *err)
{
	if (!r->writable)
		return 0;
	if (r->broken)
		return fb_seterr(err, FB_EIO, "%s", r->why);
	if (!is_hex64(key, strlen(key)))
		return fb_seterr(err, FB_EINVAL, "remote cache key '%.80s' is not 64 lowercase hex digits", key);
	if (!e->cubin_size && !e->ptx_size)
		return 0; /* nothing a record could name (§2) */
	const void *p[3] = {e->cubin, e->ptx, e->log};
	size_t n[3] = {e->cubin_size, e->ptx_size, e->log ? strlen(e->log) : 0};
	struct fb_remote_record rec;
	int rc = 0;
	/* Blobs before the record, so that a reader never finds a record whose blobs were never
	 * written. */
	for (int i = 0; i < 3 && !rc; i++) {
		digest_hex(p[i], n[i], rec.hex[i]);
		rec.size[i] = n[i];
		if (n[i])
			rc = put_one(r, "cas", rec.hex[i], p[i], n[i], err);
	}
	if (rc)
		return rc;
	char text[FB_REMOTE_RECORD_ENCODED_MAX];
	size_t k = fb_remote_record_encode(&rec, text, sizeof(text));
	rc = put_one(r, "ac", key, text, k, err);
	if (!rc)
		r->n.uploads++;
	return rc;
}
