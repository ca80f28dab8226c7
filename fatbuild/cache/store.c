/* store.c: the content-addressed compile cache.
 *
 * Location: FATBUILD_CACHE_DIR, else $XDG_CACHE_HOME/fatbuild, else ~/.cache/fatbuild.
 * An entry is one file, <dir>/<key[0:2]>/<key>, where key is the SHA-256 (hex) that compile.c
 * computes over everything that decides the output: the source, the path and content of every
 * header it reads, every option, the NVRTC version and the target. Layout (little endian):
 *
 *   0x00  8  magic "FBCACHE1"
 *   0x08  8  cubin size      0x10  8  PTX size      0x18  8  log size
 *   0x20 32  SHA-256 of the payload (cubin, PTX, log back to back)
 *   0x40     payload
 *
 * Entries are written atomically (fb_write_at: a random temporary name, then renameat), so
 * concurrent builds sharing a cache never see half an entry. The cache dir and its shards are
 * created 0700 (a shared cache, FATBUILD_CACHE_SHARED=1: the dir 02770, a shard with the mode
 * bits of the dir, sticky included: cacheroot.c) and checked (base/safefs.h)
 * before an entry is read or written, and every name below the root is reached through the
 * descriptor of the directory that passed, never through a symlink (docs/security.md); an
 * entry is trusted only as a regular file nobody else can write. On read the file size must
 * equal 0x40 + the three sizes and the payload must hash to the stored digest; an entry that
 * fails either check is deleted, reported (FB_EFORMAT) and recompiled. A hit refreshes the
 * entry's mtime: the time of last use, by which trim.c trims. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "store.h"
#include "base/bytes.h"
#include "base/error.h"
#include "base/safefs.h"

#define HDR 0x40
static const char magic[8] = {'F', 'B', 'C', 'A', 'C', 'H', 'E', '1'};

/* Checks a whole entry file; 0 when sound. */
static int
verify(const unsigned char *d, size_t n, uint64_t *sizes)
{
	if (n < HDR || memcmp(d, magic, 8) != 0)
		return -1;
	uint64_t total = 0;
	for (int i = 0; i < 3; i++) {
		sizes[i] = fb_rd64(d + 8 + 8 * i);
		if (sizes[i] > n)
			return -1;
		total += sizes[i];
	}
	if (total != n - HDR)
		return -1;
	unsigned char digest[32];
	fb_sha256_buf(d + HDR, n - HDR, digest);
	return memcmp(digest, d + 0x20, 32) == 0 ? 0 : -1;
}

int
fb_store_decode(const unsigned char *data, size_t n, struct fb_cache_entry *out)
{
	memset(out, 0, sizeof(*out));
	uint64_t sz[3];
	if (verify(data, n, sz) != 0)
		return FB_EFORMAT;
	const unsigned char *p = data + HDR;
	out->cubin_size = sz[0];
	out->ptx_size = sz[1];
	out->cubin = sz[0] ? fb_dup_bytes(p, sz[0]) : NULL;
	out->ptx = sz[1] ? fb_dup_bytes(p + sz[0], sz[1]) : NULL;
	out->log = (char *)fb_dup_bytes(p + sz[0] + sz[1], sz[2]);
	if ((sz[0] && !out->cubin) || (sz[1] && !out->ptx) || !out->log) {
		fb_cache_entry_clear(out);
		return FB_ENOMEM;
	}
	return 0;
}

int
fb_store_get(const char *dir, unsigned dflags, const char *key, struct fb_cache_entry *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!fb_cache_is_key(key))
		return fb_seterr(err, FB_EINVAL, "cache key '%.80s' is not a SHA-256", key);
	/* Trusted only in a root and shard that pass the directory checks, reached by descriptor,
	 * and only as a regular file (not a symlink, FIFO or device: O_NONBLOCK never waits on one)
	 * that nobody else can write; anything else is a miss, replaced by the next put. */
	int root = -1, sh = -1, fd = -1;
	if (fb_cache_root_open(dir, dflags, false, &root, NULL) != 0)
		return FB_ENOIMAGE;
	int rc = fb_cache_shard_open(root, dir, dflags, key, false, &sh, NULL) == 0 ? 0 : FB_ENOIMAGE;
	close(root);
	if (!rc && (fd = openat(sh, key, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		rc = FB_ENOIMAGE;
	struct stat st;
	if (!rc && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IWOTH) ||
	            (!dflags && (st.st_uid != geteuid() || (st.st_mode & S_IWGRP))))) {
		close(fd);
		rc = FB_ENOIMAGE;
	}
	char path[PATH_MAX], *data = NULL;
	size_t n = 0;
	snprintf(path, sizeof(path), "%.4000s/%.2s/%s", dir, key, key);
	if (!rc && fb_read_fd(fd, path, &data, &n, NULL) != 0)
		rc = FB_ENOIMAGE;
	if (!rc)
		rc = fb_store_decode((unsigned char *)data, n, out);
	free(data);
	if (rc == FB_EFORMAT) {
		unlinkat(sh, key, 0); /* corrupt or truncated: the caller recompiles and rewrites */
		rc = fb_seterr(err, FB_EFORMAT, "cache entry %s: size or checksum mismatch (%zu bytes)", path, n);
	} else if (rc == FB_ENOMEM) {
		rc = fb_seterr(err, rc, "out of memory");
	} else if (!rc) {
		/* The time of last use: what fb_cache_trim evicts by (least recently used first). */
		utimensat(sh, key, NULL, AT_SYMLINK_NOFOLLOW);
	}
	if (sh >= 0)
		close(sh);
	return rc;
}

void
fb_store_remove(const char *dir, unsigned dflags, const char *key)
{
	int root, sh;
	if (!fb_cache_is_key(key) || fb_cache_root_open(dir, dflags, false, &root, NULL) != 0)
		return;
	if (fb_cache_shard_open(root, dir, dflags, key, false, &sh, NULL) == 0) {
		unlinkat(sh, key, 0);
		close(sh);
	}
	close(root);
}

int
fb_store_encode(const struct fb_cache_entry *e, unsigned char **out, size_t *size)
{
	size_t loglen = e->log ? strlen(e->log) : 0;
	size_t total = HDR + e->cubin_size + e->ptx_size + loglen;
	unsigned char *buf = malloc(total);
	*out = NULL;
	*size = 0;
	if (!buf)
		return FB_ENOMEM;
	memcpy(buf, magic, 8);
	fb_wr64(buf + 8, e->cubin_size);
	fb_wr64(buf + 16, e->ptx_size);
	fb_wr64(buf + 24, loglen);
	unsigned char *p = buf + HDR;
	if (e->cubin_size)
		memcpy(p, e->cubin, e->cubin_size);
	p += e->cubin_size;
	if (e->ptx_size)
		memcpy(p, e->ptx, e->ptx_size);
	p += e->ptx_size;
	if (loglen)
		memcpy(p, e->log, loglen);
	fb_sha256_buf(buf + HDR, total - HDR, buf + 0x20);
	*out = buf;
	*size = total;
	return 0;
}

int
fb_store_put(const char *dir, unsigned dflags, const char *key, const struct fb_cache_entry *e,
             struct fb_error *err)
{
	if (!fb_cache_is_key(key))
		return fb_seterr(err, FB_EINVAL, "cache key '%.80s' is not a SHA-256", key);
	unsigned char *buf;
	size_t total;
	if (fb_store_encode(e, &buf, &total) != 0)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	/* The root's owner and mode were judged by fb_cache_check before the compile began; here it
	 * is made where missing and checked again, and the shard is reached from it by descriptor. */
	int root = -1, sh = -1;
	int rc = fb_cache_root_open(dir, dflags, true, &root, err);
	if (!rc)
		rc = fb_cache_shard_open(root, dir, dflags, key, true, &sh, err);
	if (!rc) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%.4000s/%.2s/%s", dir, key, key);
		/* A team cache's entries are group-writable, so that any member's use can refresh
		 * the time trim goes by (the group can replace them anyway: docs/security.md). */
		bool shared = dflags != 0;
		rc = fb_write_at(sh, key, path, buf, total, shared ? 0664 : 0644, shared, err);
		struct stat st;
		if (!rc && fstatat(sh, key, &st, AT_SYMLINK_NOFOLLOW) == 0)
			fb_cache_size_add(root, dflags, (uint64_t)st.st_blocks * 512); /* what trim's trigger reads */
	}
	if (sh >= 0)
		close(sh);
	if (root >= 0)
		close(root);
	free(buf);
	return rc;
}
