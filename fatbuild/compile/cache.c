/* cache.c: the content-addressed compile cache.
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
 * Entries are written atomically (fb_write_file_atomic: a random temporary name, then
 * rename), so concurrent builds sharing a cache never see half an entry. The cache dir and its
 * shards are created 0700 (a shared cache, FATBUILD_CACHE_SHARED=1: 02770) and checked
 * (common/safefs.h) before an entry is read or written; an entry is trusted only as a regular
 * file nobody else can write. On read the file size
 * must equal 0x40 + the three sizes and the payload must hash to the stored digest; an entry
 * that fails either check is deleted, reported (FB_EFORMAT) and recompiled. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "hash.h"
#include "common/bytes.h"
#include "common/error_priv.h"
#include "common/safefs.h"

#define HDR 0x40
static const char magic[8] = {'F', 'B', 'C', 'A', 'C', 'H', 'E', '1'};


int
fb_cache_dir(char *buf, size_t size, struct fb_error *err)
{
	const char *env = getenv("FATBUILD_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int k;
	if (env && *env)
		k = snprintf(buf, size, "%s", env);
	else if (xdg && *xdg == '/')
		k = snprintf(buf, size, "%s/fatbuild", xdg);
	else if (home && *home)
		k = snprintf(buf, size, "%s/.cache/fatbuild", home);
	else
		return fb_seterr(err, FB_EINVAL, "no cache directory: set FATBUILD_CACHE_DIR (HOME is unset)");
	if (k < 0 || (size_t)k >= size)
		return fb_seterr(err, FB_EINVAL, "cache directory path too long");
	return 0;
}

int
fb_cache_dir_default(const char **dir, char *buf, size_t size, struct fb_error *err)
{
	if (*dir)
		return 0;
	int rc = fb_cache_dir(buf, size, err);
	if (!rc)
		*dir = buf;
	return rc;
}

#define FIX                                                                                                    \
	"remove it or chmod go-w it, set FATBUILD_CACHE_DIR to a directory of your own, or compile with "        \
	"--no-cache (a shared team cache: docs/security.md)"

/* FATBUILD_CACHE_SHARED=1 opts into a team cache (safefs.h, FB_DIR_SHARED). */
static unsigned
shared_flag(void)
{
	return fb_env_switch("FATBUILD_CACHE_SHARED") == 1 ? FB_DIR_SHARED : 0;
}

int
fb_cache_check(const char *dir, bool explicit, struct fb_error *err)
{
	struct stat st;
	if (lstat(dir, &st) != 0 && errno == ENOENT)
		return 0; /* created 0700 by the first fb_cache_put */
	const char *env = getenv("FATBUILD_CACHE_DIR");
	unsigned flags = shared_flag() | (explicit || (env && *env) ? FB_DIR_EXPLICIT : 0);
	return fb_dir_check(dir, "cache dir", FIX, flags, err);
}

static int
entry_path(char *buf, size_t size, const char *dir, const char *key)
{
	int k = snprintf(buf, size, "%s/%.2s/%s", dir, key, key);
	return k > 0 && (size_t)k < size;
}

void
fb_cache_entry_clear(struct fb_cache_entry *e)
{
	free(e->cubin);
	free(e->ptx);
	free(e->log);
	memset(e, 0, sizeof(*e));
}

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
fb_cache_decode(const unsigned char *data, size_t n, struct fb_cache_entry *out)
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
fb_cache_get(const char *dir, const char *key, struct fb_cache_entry *out, struct fb_error *err)
{
	char path[PATH_MAX];
	memset(out, 0, sizeof(*out));
	if (!entry_path(path, sizeof(path), dir, key))
		return fb_seterr(err, FB_EINVAL, "cache path too long");
	/* Trusted only in a shard that passes the directory checks, and only a regular file (not a
	 * symlink) that nobody else can write; anything else is a miss, replaced by the next put. */
	char sub[PATH_MAX + 8];
	snprintf(sub, sizeof(sub), "%.4000s/%.2s", dir, key);
	if (fb_dir_check(sub, "cache dir", FIX, shared_flag(), NULL) != 0)
		return FB_ENOIMAGE;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return FB_ENOIMAGE;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IWOTH) ||
	    (!shared_flag() && (st.st_uid != geteuid() || (st.st_mode & S_IWGRP)))) {
		close(fd);
		return FB_ENOIMAGE;
	}
	char *data;
	size_t n;
	if (fb_read_fd(fd, path, &data, &n, NULL) != 0)
		return FB_ENOIMAGE;
	int rc = fb_cache_decode((unsigned char *)data, n, out);
	free(data);
	if (rc == FB_EFORMAT) {
		unlink(path); /* corrupt or truncated: the caller recompiles and rewrites */
		return fb_seterr(err, FB_EFORMAT, "cache entry %s: size or checksum mismatch (%zu bytes)", path, n);
	}
	if (rc)
		return fb_seterr(err, rc, "out of memory");
	/* Refresh the time stamp: lets a later trim evict the least recently used. */
	utimensat(AT_FDCWD, path, NULL, 0);
	return 0;
}

void
fb_cache_remove(const char *dir, const char *key)
{
	char path[PATH_MAX], sub[PATH_MAX + 8];
	snprintf(sub, sizeof(sub), "%.4000s/%.2s", dir, key);
	if (entry_path(path, sizeof(path), dir, key) && fb_dir_check(sub, "cache dir", FIX, shared_flag(), NULL) == 0)
		unlink(path);
}

int
fb_cache_encode(const struct fb_cache_entry *e, unsigned char **out, size_t *size)
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
fb_cache_put(const char *dir, const char *key, const struct fb_cache_entry *e, struct fb_error *err)
{
	char path[PATH_MAX];
	if (!entry_path(path, sizeof(path), dir, key))
		return fb_seterr(err, FB_EINVAL, "cache path too long");
	unsigned char *buf;
	size_t total;
	if (fb_cache_encode(e, &buf, &total) != 0)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	char sub[PATH_MAX + 8];
	snprintf(sub, sizeof(sub), "%.4000s/%.2s", dir, key);
	/* The root's owner and mode were judged by fb_cache_check (which knows whether the user named
	 * it) before the compile began; here it is only made where missing. Shards are always checked. */
	int rc = fb_dir_make(dir, "cache dir", FIX, shared_flag() | FB_DIR_EXPLICIT, err);
	if (rc == 0)
		rc = fb_dir_make(sub, "cache dir", FIX, shared_flag(), err);
	if (rc == 0)
		rc = fb_write_file_atomic(path, buf, total, 0644, err);
	free(buf);
	return rc;
}

/* Walks the two-level layout; calls fn on each entry file. */
static int
walk(const char *dir, int (*fn)(const char *path, const struct stat *st, void *ctx), void *ctx, struct fb_error *err)
{
	DIR *top = opendir(dir);
	if (!top) {
		if (errno == ENOENT)
			return 0;
		return fb_seterr(err, FB_EIO, "cannot open %s: %s", dir, strerror(errno));
	}
	struct dirent *d;
	int rc = 0;
	while (rc == 0 && (d = readdir(top))) {
		if (strlen(d->d_name) != 2 || !strchr("0123456789abcdef", d->d_name[0]) ||
		    !strchr("0123456789abcdef", d->d_name[1]))
			continue;
		char sub[PATH_MAX + 8];
		snprintf(sub, sizeof(sub), "%.4000s/%.2s", dir, d->d_name);
		DIR *s = opendir(sub);
		if (!s)
			continue;
		struct dirent *f;
		while (rc == 0 && (f = readdir(s))) {
			if (f->d_name[0] == '.' || strncmp(f->d_name, d->d_name, 2) != 0)
				continue;
			char path[PATH_MAX];
			struct stat st;
			if (snprintf(path, sizeof(path), "%s/%s", sub, f->d_name) >= (int)sizeof(path))
				continue;
			if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
				rc = fn(path, &st, ctx);
		}
		closedir(s);
	}
	closedir(top);
	return rc;
}

static int
stat_one(const char *path, const struct stat *st, void *ctx)
{
	struct fb_cache_stats *s = ctx;
	if (strstr(path, ".tmp.")) {
		s->temporaries++;
		return 0;
	}
	s->entries++;
	s->bytes += (uint64_t)st->st_size;
	return 0;
}

int
fb_cache_stats(const char *dir, struct fb_cache_stats *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	int rc = dir ? 0 : fb_cache_dir(out->dir, sizeof(out->dir), err);
	if (rc)
		return rc;
	if (dir)
		snprintf(out->dir, sizeof(out->dir), "%s", dir);
	if ((rc = fb_cache_check(out->dir, dir != NULL, err)))
		return rc;
	return walk(out->dir, stat_one, out, err);
}

struct clear_ctx {
	uint64_t removed;
	int failed;
	char first[512];
};

static int
clear_one(const char *path, const struct stat *st, void *ctx)
{
	struct clear_ctx *c = ctx;
	(void)st;
	if (unlink(path) == 0) {
		c->removed++;
	} else if (!c->failed++) {
		snprintf(c->first, sizeof(c->first), "cannot remove %.300s: %s", path, strerror(errno));
	}
	return 0;
}

int
fb_cache_clear(const char *dir, uint64_t *removed, struct fb_error *err)
{
	char buf[PATH_MAX];
	int rc = fb_cache_dir_default(&dir, buf, sizeof(buf), err);
	if (rc)
		return rc;
	struct clear_ctx c = {0};
	rc = fb_cache_check(dir, true, err);
	if (!rc)
		rc = walk(dir, clear_one, &c, err);
	if (removed)
		*removed = c.removed;
	if (rc)
		return rc;
	if (c.failed)
		return fb_seterr(err, FB_EIO, "%s", c.first);
	/* PCH directories a killed run left behind (worker.c names them pch.XXXXXX). */
	DIR *top = opendir(dir);
	for (struct dirent *d; top && (d = readdir(top));) {
		char sub[PATH_MAX + 8];
		struct stat st;
		if (strncmp(d->d_name, "pch.", 4) != 0 || strlen(d->d_name) != 10)
			continue;
		snprintf(sub, sizeof(sub), "%.4000s/%s", dir, d->d_name);
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
			fb_dir_remove(sub, 1); /* the run's directory and one per worker */
	}
	if (top)
		closedir(top);
	/* Host PCHs (hostpch/KEY/, docs/pytorch.md "Precompiled torch headers"): each KEY one entry,
	 * only our own directories. */
	char hp[PATH_MAX + 16];
	snprintf(hp, sizeof(hp), "%.4000s/hostpch", dir);
	DIR *pd = opendir(hp);
	for (struct dirent *d; pd && (d = readdir(pd));) {
		char sub[PATH_MAX + 300];
		struct stat st;
		if (d->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%.255s", hp, d->d_name);
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid()) {
			fb_dir_remove(sub, 1);
			if (lstat(sub, &st) != 0)
				c.removed++;
			else if (!c.failed++)
				snprintf(c.first, sizeof(c.first), "cannot remove %.300s", sub);
		}
	}
	if (pd) {
		closedir(pd);
		rmdir(hp);
	}
	if (c.failed)
		return fb_seterr(err, FB_EIO, "%s", c.first);
	/* Empty fan-out directories go too; non-empty ones (foreign files) stay. */
	for (int i = 0; i < 256; i++) {
		char sub[PATH_MAX + 8];
		snprintf(sub, sizeof(sub), "%.4000s/%02x", dir, i);
		rmdir(sub);
	}
	return 0;
}
