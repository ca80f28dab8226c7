/* remote_test.c: the pieces of the shared cache that need no server (remote_cache.sh has the
 * server): how paths enter the key (key.c), the NVRTC digest and its per-user memo, the counters'
 * lock (stats.c) under concurrent updates, the action record (docs/remote-cache.md §2),
 * cache/remote.c's refusal of a bad URL and of a dead server, over HTTP and over REAPI (§8: the
 * grpc:// URL's parts; remote_reapi.sh has the server). */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cache/record.h"
#include "cache/remote.h"
#include "cache/store.h"
#include "compile/compile.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "plumbing.h"

static void
test_key_path(void)
{
	char b[256];
	CHECK(fb_key_path("/a/src", "/a/src/k.cu", b, sizeof(b)) == 0);
	CHECK_STR(b, "@/k.cu");
	CHECK(fb_key_path("/a/src/", "/a/src/inc/h.cuh", b, sizeof(b)) == 0);
	CHECK_STR(b, "@/inc/h.cuh");
	CHECK(fb_key_path("/a/src", "/a/src", b, sizeof(b)) == 0);
	CHECK_STR(b, "@");
	/* a sibling that shares the prefix is not below the base */
	CHECK(fb_key_path("/a/src", "/a/srcx/k.cu", b, sizeof(b)) == 0);
	CHECK_STR(b, "/a/srcx/k.cu");
	CHECK(fb_key_path("/a/src", "/usr/local/cuda/include/cuda_fp16.h", b, sizeof(b)) == 0);
	CHECK_STR(b, "/usr/local/cuda/include/cuda_fp16.h");
	CHECK(fb_key_path("k", "k/reduce.cu", b, sizeof(b)) == 0);
	CHECK_STR(b, "@/reduce.cu");
	CHECK(fb_key_path(NULL, "/x", b, sizeof(b)) == 0);
	CHECK_STR(b, "/x");
	CHECK(fb_key_path("/a", "/a/long/name", b, 5) == -1);
}

static int
names(const char *s)
{
	return fb_key_names_file(s, strlen(s));
}

static void
test_names_file(void)
{
	CHECK(names("printf(\"%s\", __FILE__);") == 1);
	CHECK(names("const char *f = __builtin_FILE();") == 1);
	CHECK(names("assert(x > 0);") == 1);
	CHECK(names("#include <cassert>\n  assert (p);") == 1);
	CHECK(names("__FILE__") == 1);
	CHECK(names("static_assert(sizeof(int) == 4, \"\");") == 0);
	CHECK(names("my_assert(x); assertion(y); MY__FILE__X") == 0);
	CHECK(names("__global__ void k(float *p) { p[0] = 1; }") == 0);
	CHECK(names("") == 0);
	/* not NUL-terminated: the scan stays within size */
	char buf[8] = {'a', 's', 's', 'e', 'r', 't', 'x', 'y'};
	CHECK(fb_key_names_file(buf, 6) == 1);
	CHECK(fb_key_names_file(buf, 7) == 0);
}

/* Rewrites every memo in dir with text (NULL: leaves them); returns how many there are. */
static int
memos(const char *dir, const char *text)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strlen(e->d_name) != 64)
			continue;
		n++;
		char p[1200];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (text)
			CHECK(fb_write_file_atomic(p, text, strlen(text), 0644, NULL) == 0);
	}
	closedir(d);
	return n;
}

/* sha256sum's answer for a file, the oracle beside the known-answer digests */
static void
sha256sum(const char *path, char hex[65])
{
	char cmd[1200];
	hex[0] = 0;
	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
	FILE *f = popen(cmd, "r");
	if (!f)
		return;
	if (fscanf(f, "%64s", hex) != 1)
		hex[0] = 0;
	pclose(f);
}

/* The NVRTC digest and its per-user memo: hashed once per user whatever the cache dir, read
 * back only from a directory nobody else can write, hashed again when the library changes. */
static void
test_key_nvrtc(const char *dir)
{
	char lib[512], xdg[512], digests[600], ident[1400], a[128], b[128], want[160], sum[65];
	const char *abc = "nvrtc 13000 sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	const char *zeros = "0000000000000000000000000000000000000000000000000000000000000000";
	snprintf(lib, sizeof(lib), "%s/lib dir/libnvrtc.so.13", dir);
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(digests, sizeof(digests), "%s/fatbuild-digests", xdg);
	setenv("XDG_CACHE_HOME", xdg, 1);
	char libdir[512];
	snprintf(libdir, sizeof(libdir), "%s/lib dir", dir);
	CHECK(fb_mkdirs(libdir, NULL) == 0);
	CHECK(fb_write_file_atomic(lib, "abc", 3, 0644, NULL) == 0);
	struct stat st;
	CHECK(stat(lib, &st) == 0);
	snprintf(ident, sizeof(ident), "nvrtc 13000 %s %lld %lld", lib, (long long)st.st_size, (long long)st.st_mtime);
	/* a stopped build does not wait for the hash, and remembers nothing of it */
	volatile sig_atomic_t stop = SIGTERM;
	CHECK(fb_key_nvrtc(NULL, ident, &stop, a, sizeof(a)) == -1);
	CHECK(memos(digests, NULL) == 0);
	stop = 0;
	CHECK(fb_key_nvrtc(NULL, ident, &stop, a, sizeof(a)) == 0);
	/* SHA-256("abc"), FIPS 180-4's example, and sha256sum agrees */
	CHECK_STR(a, abc);
	sha256sum(lib, sum);
	snprintf(want, sizeof(want), "nvrtc 13000 sha256 %s", sum);
	CHECK_STR(a, want);
	/* one memo, in a directory of this user's alone */
	CHECK(memos(digests, NULL) == 1);
	CHECK(stat(digests, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* the memo answers the next compile (any cache dir: it is not one of them), so a planted
	 * digest shows through */
	memos(digests, zeros);
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	snprintf(want, sizeof(want), "nvrtc 13000 sha256 %s", zeros);
	CHECK_STR(b, want);
	/* ... but not from a group-writable directory, nor as a group-writable file; the digest is
	 * then computed, and nothing fails */
	CHECK(chmod(digests, 0770) == 0);
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	CHECK_STR(b, abc);
	CHECK(chmod(digests, 0700) == 0);
	DIR *dd = opendir(digests);
	for (struct dirent *e; dd && (e = readdir(dd));) {
		char p[1200];
		snprintf(p, sizeof(p), "%s/%s", digests, e->d_name);
		if (strlen(e->d_name) == 64)
			CHECK(chmod(p, 0664) == 0);
	}
	if (dd)
		closedir(dd);
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	CHECK_STR(b, abc);
	memos(digests, zeros);
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	CHECK_STR(b, want);
	/* the library rewritten in place, same size, mtime put back: the ctime tells, and the new
	 * digest is remembered beside the old one */
	CHECK(stat(lib, &st) == 0);
	struct timespec pause = {0, 30 * 1000 * 1000};
	nanosleep(&pause, NULL); /* past the file system's timestamp granularity */
	int fd = open(lib, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, "abd", 3, 0) == 3);
	if (fd >= 0)
		close(fd);
	struct timespec times[2] = {st.st_atim, st.st_mtim};
	CHECK(utimensat(AT_FDCWD, lib, times, 0) == 0);
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	sha256sum(lib, sum);
	snprintf(want, sizeof(want), "nvrtc 13000 sha256 %s", sum);
	CHECK_STR(b, want);
	CHECK_STR(b, "nvrtc 13000 sha256 a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9");
	CHECK(memos(digests, NULL) == 2);
	/* a library elsewhere with the same bytes and another mtime gets the same key */
	char lib2[512];
	snprintf(lib2, sizeof(lib2), "%s/libnvrtc.so.13", dir);
	CHECK(fb_write_file_atomic(lib2, "abc", 3, 0644, NULL) == 0);
	snprintf(ident, sizeof(ident), "nvrtc 13000 %s 3 12345", lib2);
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	CHECK_STR(b, abc);
	/* no usable HOME or XDG_CACHE_HOME: no memo, the digest all the same */
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("XDG_CACHE_HOME", "relative", 1);
	unsetenv("HOME");
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	CHECK_STR(b, abc);
	setenv("HOME", xdg, 1); /* a relative XDG_CACHE_HOME is ignored: HOME/.cache */
	CHECK(fb_key_nvrtc(NULL, ident, NULL, b, sizeof(b)) == 0);
	snprintf(digests, sizeof(digests), "%s/.cache/fatbuild-digests", xdg);
	CHECK(memos(digests, NULL) == 1);
	if (home)
		setenv("HOME", home, 1);
	free(home);
	unsetenv("XDG_CACHE_HOME");
	CHECK(fb_key_nvrtc(NULL, "nvrtc 13000 /no/such/lib 3 4", NULL, b, sizeof(b)) == -1);
	CHECK(fb_key_nvrtc(NULL, "garbage", NULL, b, sizeof(b)) == -1);
}

static void
test_counters(const char *dir)
{
	char cache[512];
	snprintf(cache, sizeof(cache), "%s/stats", dir);
	struct fb_cache_counters c;
	CHECK(fb_cache_counters_read(cache, &c, NULL) == 0);
	CHECK(c.local_hits == 0 && c.remote_hits == 0 && c.bytes_up == 0);
	/* 8 processes x 25 updates: the lock loses none; a reader beside them sees each update
	 * whole (the file is rewritten in place, and read under the lock shared) */
	enum { PROCS = 8, ROUNDS = 25 };
	pid_t reader = fork();
	if (reader == 0) {
		int torn = 0;
		for (int i = 0; i < 400; i++) {
			struct fb_cache_counters r;
			torn |= fb_cache_counters_read(cache, &r, NULL) != 0 || r.remote_hits != 2 * r.local_hits ||
			        r.bytes_down != 1000 * r.local_hits;
		}
		_exit(torn);
	}
	for (int p = 0; p < PROCS; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			struct fb_cache_counters d = {.local_hits = 1, .remote_hits = 2, .bytes_down = 1000};
			int bad = 0;
			for (int i = 0; i < ROUNDS; i++)
				bad |= fb_cache_count(cache, 0, &d, NULL) != 0;
			_exit(bad);
		}
	}
	int ok = 1, status;
	while (wait(&status) > 0)
		ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	CHECK(ok);
	CHECK(fb_cache_counters_read(cache, &c, NULL) == 0);
	CHECK(c.local_hits == PROCS * ROUNDS);
	CHECK(c.remote_hits == 2 * PROCS * ROUNDS);
	CHECK(c.bytes_down == 1000ull * PROCS * ROUNDS);
	CHECK(c.misses == 0);
	/* unknown counters from a newer fatbuild and junk lines are skipped */
	char path[600];
	snprintf(path, sizeof(path), "%s/stats", cache);
	const char *text = "local_hits 7\nfuture_counter 9\n\ngarbage\nmisses 3\n";
	CHECK(fb_write_file_atomic(path, text, strlen(text), 0644, NULL) == 0);
	CHECK(fb_cache_counters_read(cache, &c, NULL) == 0);
	CHECK(c.local_hits == 7 && c.misses == 3 && c.remote_hits == 0);
	/* written in place (same inode: a member who does not own it may write it, never rename
	 * over it in a sticky dir), shorter text cut to its length, a team cache's 0664 */
	struct stat before, after;
	CHECK(stat(path, &before) == 0);
	struct fb_cache_counters one = {.misses = 1};
	CHECK(fb_cache_count(cache, FB_DIR_SHARED, &one, NULL) == 0);
	CHECK(stat(path, &after) == 0 && after.st_ino == before.st_ino && (after.st_mode & 07777) == 0664);
	CHECK(fb_cache_counters_read(cache, &c, NULL) == 0);
	CHECK(c.local_hits == 7 && c.misses == 4);
	/* a hard link planted at the name is not written through */
	char other[600];
	snprintf(other, sizeof(other), "%s/other", dir);
	CHECK(fb_write_file_atomic(other, "local_hits 5\n", 13, 0644, NULL) == 0);
	CHECK(unlink(path) == 0 && link(other, path) == 0);
	struct fb_error e = {0};
	CHECK(fb_cache_count(cache, 0, &one, &e) == FB_EUNSAFE && strstr(e.msg, "2 links"));
	char *data = NULL;
	size_t n = 0;
	CHECK(fb_read_file(other, &data, &n, NULL) == 0 && n == 13 && memcmp(data, "local_hits 5\n", 13) == 0);
	free(data);
	CHECK(unlink(path) == 0 && unlink(other) == 0);
}

static int
decode(const void *bytes, size_t n, const char *want)
{
	struct fb_remote_record r;
	struct fb_error e = {0};
	int rc = fb_remote_record_decode(bytes, n, &r, &e);
	if (rc == 0)
		return want == NULL;
	if (!want || !strstr(e.msg, want)) {
		fprintf(stderr, "  record of %zu bytes: got '%s', want '%s'\n", n, e.msg, want ? want : "(ok)");
		return 0;
	}
	return rc == FB_EFORMAT;
}

/* One OutputFile {path, Digest {hash, size}} as ActionResult field 2, the way protoc writes it. */
static size_t
output_file(unsigned char *o, const char *path, const char *hex, unsigned size)
{
	size_t pl = strlen(path), k = 0;
	o[k++] = 0x12;
	o[k++] = (unsigned char)(2 + pl + 2 + 2 + 64 + 1 + 1);
	o[k++] = 0x0a;
	o[k++] = (unsigned char)pl;
	memcpy(o + k, path, pl);
	k += pl;
	o[k++] = 0x12;
	o[k++] = 2 + 64 + 2;
	o[k++] = 0x0a;
	o[k++] = 64;
	memcpy(o + k, hex, 64);
	k += 64;
	o[k++] = 0x10;
	o[k++] = (unsigned char)size; /* < 128 */
	return k;
}

/* The record names its own key (docs/remote-cache.md §2): execution_metadata.worker. */
static void
test_record_key(struct fb_remote_record *r)
{
	struct fb_remote_record d;
	char text[FB_REMOTE_RECORD_ENCODED_MAX];
	memset(r->key, 'd', 64);
	r->key[64] = 0;
	size_t n = fb_remote_record_encode(r, text, sizeof(text));
	CHECK(n > 77 && fb_remote_record_decode(text, n, &d, NULL) == 0 && memcmp(r, &d, sizeof(d)) == 0);
	/* execution_metadata { worker: "fatbuild dddd..." } at the end, as protobuf writes it */
	CHECK(memcmp(text + n - 77, "\x4a\x4b\x0a\x49" "fatbuild ", 13) == 0);
	/* a worker of another form names no key; the other fields of the metadata are skipped */
	unsigned char alt[600];
	memcpy(alt, text, n - 77);
	size_t m = n - 77;
	const unsigned char other[] = {0x4a, 0x09, 0x12, 0x02, 0x08, 0x01, 0x0a, 0x03, 'b', 'o', 't'};
	memcpy(alt + m, other, sizeof(other));
	m += sizeof(other);
	CHECK(fb_remote_record_decode((char *)alt, m, &d, NULL) == 0 && d.key[0] == 0);
	/* the last worker wins, as protobuf merges repeated messages */
	memcpy(alt + m, text + n - 77, 77);
	CHECK(fb_remote_record_decode((char *)alt, m + 77, &d, NULL) == 0 && !strcmp(d.key, r->key));
	/* a worker that is not a string, or metadata that is not a message, is damage */
	CHECK(decode("\x4a\x02\x08\x01", 4, "ExecutedActionMetadata field 1: wire type 0"));
	CHECK(decode("\x4a\x01\xff", 3, "ExecutedActionMetadata"));
	r->key[0] = 0;
}

static void
test_record(void)
{
	static const char empty[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	struct fb_remote_record r = {0}, d;
	for (int i = 0; i < 3; i++)
		memset(r.hex[i], "abc"[i], 64);
	r.size[0] = 9632;
	r.size[1] = 0;
	r.size[2] = 2147483648u;
	char text[FB_REMOTE_RECORD_ENCODED_MAX];
	size_t n = fb_remote_record_encode(&r, text, sizeof(text));
	CHECK(n > 0 && n < sizeof(text));
	/* output_files { path: "fatbuild/image.cubin" ... } */
	CHECK(n > 4 && text[0] == 0x12 && text[2] == 0x0a && memcmp(text + 4, "fatbuild/image.cubin", 20) == 0);
	CHECK(fb_remote_record_decode(text, n, &d, NULL) == 0);
	memcpy(r.hex[1], empty, 65); /* an empty output decodes to the empty blob's digest */
	CHECK(memcmp(&r, &d, sizeof(r)) == 0);
	CHECK(fb_remote_record_encode(&r, text, 10) == 0);
	test_record_key(&r);

	const char *h = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	unsigned char ok[512], bad[600];
	size_t k = output_file(ok, "fatbuild/image.ptx", h, 7);
	CHECK(decode(ok, k, NULL));
	CHECK(fb_remote_record_decode((char *)ok, k, &d, NULL) == 0 && d.size[1] == 7 && !strcmp(d.hex[1], h) &&
	      !strcmp(d.hex[0], empty) && d.size[0] == 0);
	/* unknown fields of every wire type are skipped, at every level; an unknown path too */
	size_t m = 0;
	const unsigned char extra[] = {0x08, 0x96, 0x01,                          /* field 1 varint */
	                               0x19, 1, 2, 3, 4, 5, 6, 7, 8,              /* field 3 fixed64 */
	                               0x1b, 0x08, 0x01, 0x1c,                    /* field 3 group */
	                               0x6d, 1, 2, 3, 4,                          /* field 13 fixed32 */
	                               0x2a, 0x03, 'a', 'b', 'c',                 /* field 5 bytes */
	                               0x20, 0x00};                               /* exit_code 0 */
	memcpy(bad, extra, sizeof(extra));
	m = sizeof(extra);
	m += output_file(bad + m, "other/file", h, 3);
	memcpy(bad + m, ok, k);
	m += k;
	CHECK(decode(bad, m, NULL));
	/* damaged */
	CHECK(decode("", 0, "no non-empty output file"));
	CHECK(decode(ok, k - 1, "a length past the end"));
	CHECK(decode(ok, 1, "a length past the end"));
	CHECK(decode("\x12\x80", 2, "a length past the end"));
	CHECK(decode("\x80", 1, "a malformed field tag"));
	CHECK(decode("\x20\xff", 2, "exit_code: a malformed varint"));
	CHECK(decode("\x08\xff\xff", 3, "ActionResult field 1: truncated or malformed"));
	CHECK(decode("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11, "truncated or malformed"));
	CHECK(decode("\x0c", 1, "truncated or malformed")); /* an end-group alone */
	CHECK(decode("\x0b\x14", 2, "truncated or malformed")); /* a group closed by another field */
	CHECK(decode("\x0f", 1, "malformed field tag")); /* wire type 7 */
	CHECK(decode("\x10\x01", 2, "ActionResult field 2: wire type 0"));
	CHECK(decode("\x20\x01", 2, "exit_code 1"));
	memcpy(bad, ok, k);
	memcpy(bad + k, ok, k);
	CHECK(decode(bad, 2 * k, "fatbuild/image.ptx twice"));
	memcpy(bad, ok, k);
	bad[k - 30] = 'G';
	CHECK(decode(bad, k, "Digest.hash: not 64 lowercase hex"));
	k = output_file(bad, "fatbuild/image.cubin", h, 1);
	bad[k - 1] = 0x80; /* size_bytes: a varint cut short (its own length stays) */
	CHECK(decode(bad, k, "Digest.size_bytes: a malformed varint"));
	/* size_bytes -1 (ten bytes) */
	unsigned char neg[200];
	k = output_file(neg, "fatbuild/image.cubin", h, 1);
	neg[1] += 9;
	neg[4 + 20 + 1] += 9;
	memcpy(neg + k - 1, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
	CHECK(decode(neg, k + 9, "negative or over 2 GiB"));
	/* an OutputFile without a digest, or without a path */
	CHECK(decode("\x12\x04\x0a\x02xy", 6, "without a digest"));
	CHECK(decode("\x12\x02\x12\x00", 4, "without a path"));
	char *big = calloc(1, FB_REMOTE_RECORD_MAX + 1);
	CHECK(big && decode(big, FB_REMOTE_RECORD_MAX + 1, "more than a record's"));
	free(big);
}

static void
test_remote_open(void)
{
	struct fb_remote *r = NULL;
	struct fb_error e = {0};
	struct fb_remote_open_opts o = {.url = "ftp://example/cache"};
	CHECK(fb_remote_open(&o, &r, &e) == FB_EINVAL);
	CHECK(r == NULL);
	CHECK(strstr(e.msg, "http://") != NULL);
	o.url = NULL;
	CHECK(fb_remote_open(&o, &r, &e) == FB_EINVAL);
	/* a server nobody listens on: opening is lazy, the first request fails and marks it broken */
	o.url = "http://127.0.0.1:1/";
	o.timeout_ms = 2000;
	o.writable = 1;
	int rc = fb_remote_open(&o, &r, &e);
	CHECK(rc == 0 || rc == FB_ENOTOOL); /* FB_ENOTOOL: no libcurl on this machine */
	if (rc == 0) {
		struct fb_cache_entry ent;
		CHECK(fb_remote_get(r, "0000000000000000000000000000000000000000000000000000000000000000", &ent, &e) ==
		      FB_EIO);
		const char *why = NULL;
		CHECK(fb_remote_broken(r, &why) == 1);
		CHECK(why && strstr(why, "127.0.0.1:1") != NULL);
		CHECK(fb_remote_counts(r)->errors == 1);
		/* broken: the second call does not try again */
		CHECK(fb_remote_get(r, "0000000000000000000000000000000000000000000000000000000000000000", &ent, &e) ==
		      FB_EIO);
		CHECK(fb_remote_counts(r)->errors == 1);
		struct fb_cache_entry put = {.log = (char *)""};
		CHECK(fb_remote_put(r, "00", &put, &e) == FB_EIO);
		fb_remote_close(r);
	}
	fb_remote_close(NULL);
}

static void
redacted(const char *url, const char *want)
{
	char out[128];
	fb_remote_url_redact(url, out, sizeof(out));
	if (strcmp(out, want) != 0)
		fprintf(stderr, "  %s shown as %s, want %s\n", url, out, want);
	CHECK_STR(out, want);
}

/* Credentials in a URL never reach a message (docs/remote-cache.md §5). */
static void
test_redact(void)
{
	redacted("http://cache:8080/fb", "http://cache:8080/fb");
	redacted("https://alice:s3cr3t@cache.example/fb", "https://***@cache.example/fb");
	redacted("http://tok@cache/x?token=abc&y=1", "http://***@cache/x?***");
	redacted("http://cache?token=abc", "http://cache?***");
	redacted("http://cache/x#frag", "http://cache/x#***");
	redacted("http://a@b@cache:1/p@q", "http://***@cache:1/p@q"); /* the last '@' before the path */
	redacted("grpcs://u:p@[::1]:9092/main", "grpcs://***@[::1]:9092/main");
	redacted("cache/no/scheme?k", "cache/no/scheme?***");
	redacted("", "");
	/* every credential-shaped part: path parameters, key=value segments, any query */
	redacted("http://cache/fb;token=SECRET", "http://cache/fb;***");
	redacted("http://cache/fb;token=SECRET/more", "http://cache/fb;***/more");
	redacted("http://cache/a;v=1;token=SECRET/b;key=K", "http://cache/a;***/b;***");
	redacted("grpc://exec:8980/main;token=SECRET", "grpc://exec:8980/main;***");
	redacted("grpcs://u@exec/inst;password=SECRET?x=1", "grpcs://***@exec/inst;***?***");
	redacted("http://cache/token=SECRET/fb", "http://cache/token=***/fb");
	redacted("http://cache/fb%3Btoken=SECRET", "http://cache/fb%3Btoken=***");
	redacted("http://cache;token=SECRET/fb", "http://cache;***/fb");
	redacted("http://cache/x?access_token=SECRET", "http://cache/x?***");
	redacted("http://cache/x?a=1&key=SECRET&password=P", "http://cache/x?***");
	redacted("http://u:p@cache/fb;token=S?key=K#f", "http://***@cache/fb;***?***");
	redacted("alice:pw@cache/x", "***@cache/x");
	redacted("cache/fb;password=SECRET", "cache/fb;***");
	redacted("HTTPS://U:P@cache/fb", "HTTPS://***@cache/fb");
	char shown[160];
	fb_remote_url_redact("https://u:PW1@cache/a;token=PW2/b=PW3?access_token=PW4#PW5", shown, sizeof(shown));
	CHECK(!strstr(shown, "PW"));
	for (size_t k = 1; k < 40; k++) { /* a short buffer shows a prefix of the redacted URL */
		char cut[40];
		fb_remote_url_redact("http://cache/fb;token=SECRET", cut, k);
		CHECK(!strstr(cut, "SEC") && strncmp(cut, "http://cache/fb;***", k - 1) == 0);
	}
	char small[12];
	fb_remote_url_redact("http://u:p@host/path", small, sizeof(small));
	CHECK(strlen(small) == sizeof(small) - 1 && !strstr(small, "u:p"));
}

/* A download goes to a nameless file, hashed as it comes, never past its size. */
static void
test_sink(const char *dir)
{
	struct fb_remote_sink s;
	struct fb_error e = {0};
	CHECK(fb_remote_sink_open(&s, dir, 8, &e) == 0 && s.fd >= 0);
	CHECK(fb_remote_sink_write(&s, "abcd", 4) == 0 && fb_remote_sink_write(&s, "efgh", 4) == 0 && s.n == 8);
	CHECK(fb_remote_sink_write(&s, "i", 1) == -1 && s.over && s.n == 8);
	CHECK(fb_remote_sink_write(&s, "", 0) == -1); /* stopped for good */
	unsigned char d[32], want[32];
	fb_sha256_final(&s.h, d);
	fb_sha256_buf("abcdefgh", 8, want);
	CHECK(memcmp(d, want, 32) == 0);
	char back[9] = {0};
	CHECK(pread(s.fd, back, 8, 0) == 8 && strcmp(back, "abcdefgh") == 0);
	fb_remote_sink_close(&s);
	CHECK(s.fd == -1);
	DIR *dd = opendir(dir); /* nothing left behind under a name */
	int left = 0;
	for (struct dirent *de; dd && (de = readdir(dd));)
		left += strncmp(de->d_name, "fatbuild-download", 17) == 0;
	if (dd)
		closedir(dd);
	CHECK(left == 0);
	CHECK(fb_remote_sink_open(&s, "/nonexistent/dir", 8, &e) != 0 && s.fd == -1);
	fb_remote_sink_close(&s);
}

/* The processes of one build share a failed remote through the state file: the first one
 * that fails writes it and reports (not quiet); one opened later is off from the start, asks
 * nothing and says nothing. */
static void
test_state(const char *dir)
{
	char state[512];
	snprintf(state, sizeof(state), "%s/remote.state", dir);
	struct fb_remote_open_opts o = {.url = "http://u:pw@127.0.0.1:1/x", .timeout_ms = 2000, .state = state, .tmpdir = dir};
	struct fb_remote *r = NULL, *r2 = NULL;
	struct fb_error e = {0};
	if (fb_remote_open(&o, &r, &e) != 0)
		return; /* no libcurl on this machine */
	struct fb_cache_entry ent;
	const char *key = "0000000000000000000000000000000000000000000000000000000000000000";
	CHECK(access(state, F_OK) != 0 && !fb_remote_broken(r, NULL));
	CHECK(fb_remote_get(r, key, &ent, &e) == FB_EIO && !fb_remote_quiet(r) && fb_remote_counts(r)->errors == 1);
	CHECK(strstr(e.msg, "***@127.0.0.1:1") && !strstr(e.msg, "pw"));
	CHECK(access(state, F_OK) == 0);
	CHECK(fb_remote_open(&o, &r2, &e) == 0);
	const char *why = NULL;
	CHECK(fb_remote_broken(r2, &why) == 1 && fb_remote_quiet(r2) && strstr(why, "127.0.0.1:1"));
	CHECK(fb_remote_get(r2, key, &ent, &e) == FB_EIO && fb_remote_counts(r2)->errors == 0);
	fb_remote_close(r2);
	/* two that fail together: one reports, the other is quiet */
	unlink(state);
	CHECK(fb_remote_open(&o, &r2, &e) == 0);
	fb_remote_close(r);
	CHECK(fb_remote_open(&o, &r, &e) == 0);
	CHECK(fb_remote_get(r, key, &ent, &e) == FB_EIO && fb_remote_get(r2, key, &ent, &e) == FB_EIO);
	CHECK(!fb_remote_quiet(r) && fb_remote_quiet(r2));
	fb_remote_close(r);
	fb_remote_close(r2);
	/* a planted link or another kind of file is not the build's state */
	unlink(state);
	CHECK(symlink("/etc/passwd", state) == 0);
	CHECK(fb_remote_open(&o, &r, &e) == 0 && !fb_remote_broken(r, NULL));
	fb_remote_close(r);
	unlink(state);
}

/* url -> target, instance, tls; NULL target: refused. */
static void
reapi_url(const char *url, const char *target, const char *instance, int tls)
{
	char t[64] = "", in[64] = "";
	int s = -1;
	int rc = fb_reapi_url_parse(url, t, sizeof(t), in, sizeof(in), &s);
	if (!target) {
		if (rc != -1)
			fprintf(stderr, "%s accepted as %s\n", url, t);
		CHECK(rc == -1);
		return;
	}
	if (rc != 0)
		fprintf(stderr, "%s refused\n", url);
	CHECK(rc == 0);
	CHECK_STR(t, target);
	CHECK_STR(in, instance);
	CHECK(s == tls);
}

static void
test_reapi(void)
{
	reapi_url("grpc://127.0.0.1:8980/main", "127.0.0.1:8980", "main", 0);
	reapi_url("grpcs://cache.example/team/ci/", "cache.example:443", "team/ci", 1);
	reapi_url("grpc://cache.example", "cache.example:80", "", 0);
	reapi_url("grpc://[::1]:9092/", "[::1]:9092", "", 0);
	reapi_url("grpc://[::1]/x", "[::1]:80", "x", 0);
	reapi_url("grpc://:5/x", NULL, NULL, 0);
	reapi_url("grpc://host:/x", NULL, NULL, 0);
	reapi_url("grpc://host:8a", NULL, NULL, 0);
	reapi_url("grpc://[::1", NULL, NULL, 0);
	reapi_url("grpc://[::1]x:5", NULL, NULL, 0);
	reapi_url("grpc:///inst", NULL, NULL, 0);
	reapi_url("http://host:1", NULL, NULL, 0);
	reapi_url("grpc://a-very-long-host-name-that-does-not-fit-into-sixty-four-bytes.example:1", NULL, NULL, 0);
	/* nobody listens: the first call fails (UNAVAILABLE) and marks the remote broken */
	struct fb_remote *r = NULL;
	struct fb_error e = {0};
	struct fb_remote_open_opts o = {.url = "grpc://127.0.0.1:1/main", .timeout_ms = 2000, .writable = 1,
	                           .header = "Authorization: Bearer t"};
	int rc = fb_remote_open(&o, &r, &e);
	CHECK(rc == 0 || rc == FB_ENOTOOL); /* FB_ENOTOOL: built without libgrpc */
	if (rc == FB_ENOTOOL)
		CHECK(strstr(e.msg, "libgrpc") != NULL);
	if (rc == 0) {
		struct fb_cache_entry ent;
		const char *key = "0000000000000000000000000000000000000000000000000000000000000000";
		CHECK(fb_remote_get(r, key, &ent, &e) == FB_EIO);
		const char *why = NULL;
		CHECK(fb_remote_broken(r, &why) == 1);
		CHECK(why && strstr(why, "GetActionResult: UNAVAILABLE") != NULL);
		CHECK(fb_remote_counts(r)->errors == 1);
		CHECK(fb_remote_get(r, key, &ent, &e) == FB_EIO);
		CHECK(fb_remote_counts(r)->errors == 1);
		fb_remote_close(r);
	}
	o.header = "no colon";
	CHECK(fb_remote_open(&o, &r, &e) == (rc == FB_ENOTOOL ? FB_ENOTOOL : FB_EINVAL));
}

int
main(void)
{
	char dir[] = "/tmp/fbremote_test.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	test_key_path();
	test_names_file();
	test_record();
	test_key_nvrtc(dir);
	test_counters(dir);
	test_remote_open();
	test_redact();
	test_sink(dir);
	test_state(dir);
	test_reapi();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_done();
}
