/* remote.c: the shared compile cache over the HTTP cache protocol of Bazel (docs/remote-cache.md).
 *
 *   GET/PUT URL/cas/<sha256>   a blob: one cubin, PTX text or log, named by its SHA-256
 *   GET/PUT URL/ac/<key>       the action record that maps a compile key to its blobs
 *
 * The action record (docs/remote-cache.md §2) is a serialized Bazel ActionResult protobuf
 * (build.bazel.remote.execution.v2): one OutputFile {path, Digest {hash, size_bytes}} per
 * non-empty blob, under the paths fatbuild/image.cubin, fatbuild/image.ptx, fatbuild/nvrtc.log.
 * The record also names the key it was written for (execution_metadata.worker, "fatbuild
 * KEY"): a record copied under another key is damaged, one that names none is a miss (§2).
 * record.c writes and reads it.
 *
 * libcurl is dlopen'ed (libcurl.so.4): without it the remote cache is off and the caller says
 * so once; nothing else changes. One easy handle per fb_remote, so that every request of a
 * compile run reuses one kept-alive connection. The first transport failure (no connection, a
 * timeout, a 5xx) marks the remote broken: every later call answers FB_EIO at once, so a dead
 * or slow server costs one timeout per run, never a failed build; with a state file (the
 * build's, fb_remote_open_opts.state) the other processes of the build see it too and ask nothing.
 * A blob streams into an unnamed temporary file, hashed as it comes and cut at the size its
 * record declares, and is read into memory only once its size and SHA-256 match (§5). URLs
 * in messages have their credentials shown as *** (fb_remote_url_redact). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "pb.h"
#include "reapi.h"
#include "record.h"
#include "remote.h"
#include "sink.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/safefs.h"
#include "plumbing.h"

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
	struct fb_reapi *g;      /* grpc://: REAPI (reapi.c) instead of libcurl */
	void *lib;
	struct curlfn f;
	void *h;
	struct slist *headers;
	char *url;               /* without a trailing '/' */
	char shown[512];         /* url for messages, credentials as *** */
	char *state;             /* the build's state file, or NULL */
	char *tmpdir;            /* where downloads are staged */
	int writable;
	long timeout_ms;
	int broken;
	int quiet;               /* another process of the build reported the failure */
	char why[1024];          /* the first failure */
	char ebuf[CURL_ERROR_SIZE];
	struct fb_remote_counts n;
	/* Blobs that failed a check this run: REAPI's FindMissingBlobs would call them present, so
	 * their upload is forced, which repairs the server as an HTTP PUT does (§5). */
	char bad[8][65];
	int nbad;
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

static size_t
on_sink(char *data, size_t size, size_t nmemb, void *ctx)
{
	size_t k = size * nmemb;
	return fb_remote_sink_write(ctx, data, k) == 0 ? k : 0; /* 0: libcurl aborts the transfer */
}

int
fb_remote_state_read(const char *path, char *why, size_t size)
{
	int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
	struct stat st;
	int seen = 0;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
		ssize_t n = read(fd, why, size - 1);
		why[n > 0 ? n : 0] = 0;
		why[strcspn(why, "\n")] = 0;
		seen = 1;
	}
	close(fd);
	return seen;
}

/* The state file a failing process of the build leaves (docs/remote-cache.md §5): when it is
 * there, the remote is off for this process from the start and the failure was reported
 * already. Only a regular file of the user's counts. */
static void
read_state(struct fb_remote *r)
{
	if (!fb_remote_state_read(r->state, r->why, sizeof(r->why)))
		return;
	if (!r->why[0])
		snprintf(r->why, sizeof(r->why), "remote cache %s: off for this build", r->shown);
	r->broken = r->quiet = 1;
}

/* What both transports keep of o; NULL when out of memory. */
static struct fb_remote *
remote_new(const struct fb_remote_open_opts *o)
{
	struct fb_remote *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->url = strdup(o->url);
	r->state = o->state && *o->state ? strdup(o->state) : NULL;
	r->tmpdir = strdup(o->tmpdir && *o->tmpdir ? o->tmpdir : "/tmp");
	if (!r->url || !r->tmpdir || (o->state && *o->state && !r->state)) {
		fb_remote_close(r);
		return NULL;
	}
	for (size_t k = strlen(r->url); k > 0 && r->url[k - 1] == '/'; k--)
		r->url[k - 1] = 0;
	fb_remote_url_redact(r->url, r->shown, sizeof(r->shown));
	r->writable = o->writable;
	r->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	read_state(r);
	return r;
}

/* A grpc:// remote: the same fb_remote, its requests through reapi.c. */
static int
open_reapi(const struct fb_remote_open_opts *o, struct fb_remote **out, struct fb_error *err)
{
	struct fb_remote *r = remote_new(o);
	if (!r)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = fb_reapi_open(o, &r->g, err);
	if (rc) {
		fb_remote_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int
fb_remote_open(const struct fb_remote_open_opts *o, struct fb_remote **out, struct fb_error *err)
{
	*out = NULL;
	if (fb_reapi_url(o->url))
		return open_reapi(o, out, err);
	if (!o->url || (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)) {
		char shown[512];
		fb_remote_url_redact(o->url ? o->url : "", shown, sizeof(shown));
		return fb_seterr(err, FB_EINVAL, "remote cache URL '%s': must start with http://, https://, grpc:// or grpcs://",
		                 shown);
	}
	struct fb_remote *r = remote_new(o);
	if (!r)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
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
	fb_reapi_close(r->g);
	free(r->url);
	free(r->state);
	free(r->tmpdir);
	free(r);
}

void
fb_remote_idle(struct fb_remote *r)
{
	if (r)
		fb_reapi_idle(r->g);
}

int
fb_remote_broken(const struct fb_remote *r, const char **why)
{
	if (why)
		*why = r->why;
	return r->broken;
}

int
fb_remote_quiet(const struct fb_remote *r)
{
	return r->quiet;
}

void
fb_remote_reject(struct fb_remote *r)
{
	r->n.hits -= r->n.hits > 0;
	r->n.corrupt++;
}

const struct fb_remote_counts *
fb_remote_counts(const struct fb_remote *r)
{
	return &r->n;
}

int
fb_remote_state_claim(const char *path, const char *why)
{
	char tmp[4200];
	int fd;
	if (!path || fb_tmp_open(path, 0600, tmp, sizeof(tmp), &fd, NULL) != 0)
		return 1; /* no build to tell: report it here */
	size_t n = strlen(why);
	int ok = write(fd, why, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
	close(fd);
	int won = !ok || link(tmp, path) == 0 || errno != EEXIST;
	unlink(tmp);
	return won;
}

/* Leaves the failure in the build's state file: 1 when this process put it there (and so
 * reports it), 0 when another one of the build was first. */
static int
claim_state(struct fb_remote *r)
{
	return fb_remote_state_claim(r->state, r->why);
}

static int
broke(struct fb_remote *r, struct fb_error *err, const char *fmt, const char *a, const char *b)
{
	if (!r->broken) {
		r->broken = 1;
		snprintf(r->why, sizeof(r->why), fmt, a, b);
		r->quiet = !claim_state(r);
		r->n.errors += !r->quiet;
	}
	return fb_seterr(err, FB_EIO, "%s", r->why);
}

/* broke() with a message reapi.c made. */
static int
broke_msg(struct fb_remote *r, struct fb_error *err, const struct fb_error *why)
{
	return broke(r, err, "%s%s", why->msg[0] ? why->msg : "remote cache: a failed call", "");
}

/* One request: upload data when given, else GET; the answer's body goes into *b, or into the
 * sink s when given. Returns the HTTP status, or -1 after marking the remote broken. */
static long
request(struct fb_remote *r, const char *kind, const char *name, const unsigned char *data, size_t size,
        struct buf *b, struct fb_remote_sink *s, struct fb_error *err)
{
	char url[4096 + 80];
	if (snprintf(url, sizeof(url), "%s/%s/%s", r->url, kind, name) >= (int)sizeof(url)) {
		broke(r, err, "remote cache URL too long: %.200s%s", r->shown, "");
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
	r->f.easy_setopt(h, OPT_WRITEFUNCTION, s ? on_sink : on_write);
	r->f.easy_setopt(h, OPT_WRITEDATA, s ? (void *)s : (void *)b);
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
	/* A body this side stopped (past its size, or the staging file failed) is the blob's
	 * trouble, not the server's: the caller sees what came. */
	if (rc != 0 && !(b && b->over) && !(s && (s->over || s->failed))) {
		broke(r, err, "remote cache %.300s: %.200s", r->shown, r->ebuf[0] ? r->ebuf : r->f.easy_strerror(rc));
		return -1;
	}
	if (status >= 500 || status == 401 || status == 403) {
		char st[32];
		snprintf(st, sizeof(st), "HTTP %ld", status);
		broke(r, err, "remote cache %.300s: %s", r->shown, st);
		return -1;
	}
	return status;
}

/* A fetched blob of n bytes whose content hashes to got against its record's digest and size
 * (over: more bytes came than the size); 0, or FB_EFORMAT counted as corrupt. */
static int
check_digest(struct fb_remote *r, const char *hex, uint64_t size, uint64_t n, int over, const char *got,
             struct fb_error *err)
{
	if (over || n != size) {
		r->n.corrupt++;
		memcpy(r->bad[r->nbad++ % 8], hex, 65);
		return fb_seterr(err, FB_EFORMAT, "remote blob cas/%s: %s", hex, "size differs from its action record");
	}
	r->n.bytes_down += n;
	if (strcmp(got, hex) != 0) {
		r->n.corrupt++;
		memcpy(r->bad[r->nbad++ % 8], hex, 65);
		return fb_seterr(err, FB_EFORMAT, "remote blob cas/%s: content hashes to %s", hex, got);
	}
	return 0;
}

/* check_digest for a blob p[0..n) held in memory (a BatchReadBlobs answer). */
static int
check_blob(struct fb_remote *r, const char *hex, uint64_t size, const unsigned char *p, size_t n,
           struct fb_error *err)
{
	char got[65];
	fb_sha256_buf_hex(p, n, got);
	return check_digest(r, hex, size, n, 0, got, err);
}

/* A downloaded blob from its sink: checked against its record, then read into *out
 * (malloc'd, NUL after it). The bytes reach memory only once they are what the record says. */
static int
sink_take(struct fb_remote *r, const char *hex, uint64_t size, struct fb_remote_sink *s, unsigned char **out,
          struct fb_error *err)
{
	*out = NULL;
	if (s->failed)
		return fb_seterr(err, FB_ENOIMAGE, "remote blob cas/%s: cannot stage it in %s", hex, r->tmpdir);
	unsigned char d[32];
	char got[65];
	struct fb_sha256 h = s->h;
	fb_sha256_final(&h, d);
	fb_sha256_hex(d, got);
	int rc = check_digest(r, hex, size, s->n, s->over, got, err);
	if (rc)
		return rc;
	unsigned char *p = malloc((size_t)size + 1);
	if (!p)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	size_t k = 0;
	while (k < size) {
		ssize_t m = pread(s->fd, p + k, (size_t)size - k, (off_t)k);
		if (m <= 0 && !(m < 0 && errno == EINTR)) {
			free(p);
			return fb_seterr(err, FB_ENOIMAGE, "remote blob cas/%s: cannot read it back from %s", hex, r->tmpdir);
		}
		k += m > 0 ? (size_t)m : 0;
	}
	p[size] = 0;
	*out = p;
	return 0;
}

/* Fetches one blob and checks its size and digest. */
static int
get_blob(struct fb_remote *r, const char *hex, uint64_t size, unsigned char **out, struct fb_error *err)
{
	*out = NULL;
	struct fb_remote_sink s;
	if (fb_remote_sink_open(&s, r->tmpdir, size, err) != 0)
		return FB_ENOIMAGE;
	long st = request(r, "cas", hex, NULL, 0, NULL, &s, err);
	int rc = st < 0     ? FB_EIO
	         : st != 200 ? fb_seterr(err, FB_ENOIMAGE, "remote blob cas/%s: HTTP %ld", hex, st)
	                     : sink_take(r, hex, size, &s, out, err);
	fb_remote_sink_close(&s);
	return rc;
}

/* The record's non-empty blobs as reapi.c's batch b[0..return), idx[k] the record slot of
 * b[k]; a blob that failed a check this run is marked to be uploaded again. */
static int
reapi_batch(const struct fb_remote *r, const struct fb_remote_record *rec, struct fb_reapi_blob b[3], int idx[3])
{
	int n = 0;
	for (int i = 0; i < 3; i++) {
		if (!rec->size[i])
			continue;
		memset(&b[n], 0, sizeof(b[n]));
		memcpy(b[n].hex, rec->hex[i], 65);
		b[n].size = rec->size[i];
		b[n].sink.fd = -1;
		b[n].tmpdir = r->tmpdir;
		for (int k = 0; k < r->nbad && k < 8; k++)
			b[n].force |= strcmp(r->bad[k], rec->hex[i]) == 0;
		idx[n++] = i;
	}
	return n;
}

/* The record's non-empty blobs into blob[0..3): one BatchReadBlobs (reapi.c), each checked as
 * get_blob does; a blob the server lacks is FB_ENOIMAGE. */
static int
get_blobs_reapi(struct fb_remote *r, const struct fb_remote_record *rec, unsigned char *blob[3],
                struct fb_error *err)
{
	struct fb_reapi_blob b[3];
	int idx[3], n = reapi_batch(r, rec, b, idx);
	struct fb_error le = {0};
	int rc = fb_reapi_read_blobs(r->g, b, n, &le);
	if (rc == FB_EIO)
		rc = broke_msg(r, err, &le);
	else if (rc == FB_EFORMAT)
		r->n.corrupt++;
	if (rc && rc != FB_EIO)
		fb_seterr(err, rc, "%s", le.msg);
	for (int k = 0; k < n; k++) {
		if (!rc && b[k].streamed)
			rc = sink_take(r, b[k].hex, b[k].size, &b[k].sink, &b[k].got, err);
		else if (!rc && !b[k].got)
			rc = fb_seterr(err, FB_ENOIMAGE, "remote blob cas/%s: status %d", b[k].hex, b[k].status);
		else if (!rc)
			rc = check_blob(r, b[k].hex, b[k].size, b[k].got, b[k].got_size, err);
		fb_remote_sink_close(&b[k].sink);
		if (!rc)
			blob[idx[k]] = b[k].got;
		else
			free(b[k].got);
	}
	return rc;
}

/* The action record for key into *b: 0, FB_ENOIMAGE for a miss, FB_EIO (the remote now
 * broken). An answer over b->max sets b->over. */
static int
get_record(struct fb_remote *r, const char *key, struct buf *b, struct fb_error *err)
{
	if (!r->g) {
		long st = request(r, "ac", key, NULL, 0, b, NULL, err);
		return st < 0 ? FB_EIO : st != 200 ? FB_ENOIMAGE : 0;
	}
	struct fb_error le = {0};
	size_t n;
	int rc = fb_reapi_get_action(r->g, key, &b->p, &n, &le);
	b->n = n;
	if (rc == FB_EFORMAT) { /* over the record's limit */
		b->over = 1;
		return 0;
	}
	if (rc == FB_EIO)
		return broke_msg(r, err, &le);
	if (rc && rc != FB_ENOIMAGE)
		fb_seterr(err, rc, "%s", le.msg);
	return rc;
}

int
fb_remote_get(struct fb_remote *r, const char *key, struct fb_cache_entry *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (r->broken)
		return fb_seterr(err, FB_EIO, "%s", r->why);
	if (!fb_pb_hex64(key, strlen(key)))
		return fb_seterr(err, FB_EINVAL, "remote cache key '%.80s' is not 64 lowercase hex digits", key);
	struct buf b = {.max = FB_REMOTE_RECORD_MAX};
	int rc = get_record(r, key, &b, err);
	if (rc) {
		free(b.p);
		r->n.misses += rc == FB_ENOIMAGE;
		return rc;
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
	/* A record is bound to its key (§2): one that names none (an older fatbuild's) is a miss,
	 * which the upload replaces; one that names another is a copy and damaged. */
	if (!rec.key[0]) {
		r->n.misses++;
		return fb_seterr(err, FB_ENOIMAGE, "remote action record ac/%s names no key", key);
	}
	if (strcmp(rec.key, key) != 0) {
		r->n.corrupt++;
		return fb_seterr(err, FB_EFORMAT, "remote action record ac/%s is the record of ac/%s", key, rec.key);
	}
	unsigned char *blob[3] = {0};
	if (r->g)
		rc = get_blobs_reapi(r, &rec, blob, err);
	for (int i = 0; i < 3 && !rc && !r->g; i++)
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

static int
put_one(struct fb_remote *r, const char *kind, const char *name, const void *p, size_t n, struct fb_error *err)
{
	struct buf sink = {.max = 65536}; /* an error page, if the server sends one */
	long st = request(r, kind, name, p ? p : "", n, &sink, NULL, err);
	free(sink.p);
	if (st < 0)
		return FB_EIO;
	if (st < 200 || st > 299) {
		char s[32];
		snprintf(s, sizeof(s), "HTTP %ld", st);
		return broke(r, err, "remote cache %.300s: PUT answered %s", r->shown, s);
	}
	r->n.bytes_up += n;
	return 0;
}

/* The record's non-empty blobs that the server lacks, through reapi.c; 0 or FB_EIO (broken). */
static int
put_blobs_reapi(struct fb_remote *r, const struct fb_remote_record *rec, const void *const p[3], struct fb_error *err)
{
	struct fb_reapi_blob b[3];
	int idx[3], n = reapi_batch(r, rec, b, idx);
	for (int k = 0; k < n; k++)
		b[k].put = p[idx[k]];
	struct fb_error le = {0};
	uint64_t sent = 0;
	int rc = fb_reapi_write_blobs(r->g, b, n, &sent, &le);
	r->n.bytes_up += sent;
	return rc ? broke_msg(r, err, &le) : 0;
}

int
fb_remote_put(struct fb_remote *r, const char *key, const struct fb_cache_entry *e, struct fb_error *err)
{
	if (!r->writable)
		return 0;
	if (r->broken)
		return fb_seterr(err, FB_EIO, "%s", r->why);
	if (!fb_pb_hex64(key, strlen(key)))
		return fb_seterr(err, FB_EINVAL, "remote cache key '%.80s' is not 64 lowercase hex digits", key);
	if (!e->cubin_size && !e->ptx_size)
		return 0; /* nothing a record could name (§2) */
	const void *p[3] = {e->cubin, e->ptx, e->log};
	size_t n[3] = {e->cubin_size, e->ptx_size, e->log ? strlen(e->log) : 0};
	struct fb_remote_record rec;
	int rc = 0;
	for (int i = 0; i < 3; i++) {
		fb_sha256_buf_hex(p[i], n[i], rec.hex[i]);
		rec.size[i] = n[i];
	}
	memcpy(rec.key, key, 65);
	/* Blobs before the record, so that a reader never finds a record whose blobs were never
	 * written. */
	if (r->g)
		rc = put_blobs_reapi(r, &rec, p, err);
	for (int i = 0; i < 3 && !rc && !r->g; i++)
		if (n[i])
			rc = put_one(r, "cas", rec.hex[i], p[i], n[i], err);
	if (rc)
		return rc;
	char text[FB_REMOTE_RECORD_ENCODED_MAX];
	size_t k = fb_remote_record_encode(&rec, text, sizeof(text));
	if (r->g) {
		struct fb_error le = {0};
		rc = fb_reapi_put_action(r->g, key, (const unsigned char *)text, k, &le) ? broke_msg(r, err, &le) : 0;
	} else {
		rc = put_one(r, "ac", key, text, k, err);
	}
	if (!rc)
		r->n.uploads++;
	return rc;
}
