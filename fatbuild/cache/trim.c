/* trim.c: the compile cache as a whole: what it holds (fb_cache_stats), emptying it
 * (fb_cache_clear) and keeping it under a size (fb_cache_trim).
 *
 * What a cache dir holds (store.c has an entry's layout):
 *   XX/KEY                 an entry: XX the first two of KEY's 64 hex digits
 *   XX/KEY.tmp.RANDOM      an entry being written (or left by a killed write)
 *   hostpch/KEY/           a host PCH and the files beside it (extension/hostpch.c)
 *   pch.RANDOM/            an NVRTC PCH directory of a running (or killed) compile run
 *   stats, stats.lock      the counters (stats.c), trim.lock  one trim at a time
 * Every walk starts at the root that passed fb_dir_open's checks and reaches each name through
 * the descriptor of the directory it lies in, with O_NOFOLLOW: a symlink planted at a shard, an
 * entry or a PCH directory (or swapped in mid-walk) is never followed, so nothing outside the
 * cache is read or removed. Only names of the shapes above are touched, a shard or PCH dir is
 * used only when it passes the directory checks, and in a sticky team cache (a sticky root or
 * shard) only the caller's own files go (docs/security.md).
 *
 * Size is what the files take on disk (st_blocks), host PCHs included. Trimming removes the
 * least recently used (an entry's mtime is refreshed by every hit, a host PCH's by every build
 * that uses it) until the cache is down to 90% of the limit, so the next builds do not trim
 * again at once. It is safe beside running builds: a reader holds its entry open and so reads
 * it whole even when it is unlinked; an entry used after the walk saw it keeps its place; a
 * host PCH a build holds (a shared flock on its directory) is skipped; young temporaries are
 * someone's write in progress and stay. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"

/* A temporary older than this is a killed write's leftover. */
#define TMP_STALE_S 3600

enum kind { K_ENTRY, K_TMP, K_PCH };

/* One thing the walk found: dirfd is the directory it lies in (a shard or hostpch/), open for
 * the length of the call. */
struct found {
	int dirfd;
	const char *name;
	enum kind kind;
	const struct stat *st;
	bool sticky;               /* its directory is sticky: only its owner may remove it */
	uint64_t bytes;            /* on disk */
	int64_t used;              /* last use, ns since the epoch */
};

typedef int (*walk_fn)(void *ctx, const struct found *f);

/* A directory stream of its own on dirfd's directory (a dup would share the read position of
 * dirfd, which another walk may have run to its end). NULL on failure. */
static DIR *
list(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	return d;
}

/* What a file takes: its blocks, or its length where the filesystem reports none. */
static uint64_t
on_disk(const struct stat *st)
{
	uint64_t b = (uint64_t)st->st_blocks * 512;
	return b > (uint64_t)st->st_size ? b : (uint64_t)st->st_size;
}

static int64_t
ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static bool
hex2(const char *s)
{
	return strlen(s) == 2 && strspn(s, "0123456789abcdef") == 2;
}

/* The entries and temporaries of one shard; root_sticky: a sticky root makes every shard
 * count as sticky, whatever a member made it with (cacheroot.c). */
static int
walk_shard(int shard, const char *sname, bool root_sticky, walk_fn fn, void *ctx)
{
	struct stat sst;
	bool sticky = root_sticky || (fstat(shard, &sst) == 0 && (sst.st_mode & S_ISVTX));
	DIR *d = list(shard);
	if (!d)
		return 0;
	int rc = 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		bool key = fb_cache_is_key(e->d_name), tmp = !key && fb_cache_is_tmp(e->d_name);
		struct stat st;
		if ((!key && !tmp) || strncmp(e->d_name, sname, 2) != 0 ||
		    fstatat(shard, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		struct found f = {shard, e->d_name, key ? K_ENTRY : K_TMP, &st, sticky, on_disk(&st), ns(&st.st_mtim)};
		rc = fn(ctx, &f);
	}
	closedir(d);
	return rc;
}

/* One host PCH directory: its size and last use (the newest of its files and itself). */
static int
pch_measure(int hp, const char *name, struct stat *st, uint64_t *bytes, int64_t *used)
{
	int fd = openat(hp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || st->st_uid != geteuid() || (st->st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -1;
	}
	*bytes = on_disk(st);
	*used = ns(&st->st_mtim);
	DIR *d = list(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	for (struct dirent *e; (e = readdir(d));) {
		struct stat fs;
		if (e->d_name[0] == '.' || fstatat(fd, e->d_name, &fs, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		*bytes += on_disk(&fs);
		if (ns(&fs.st_mtim) > *used)
			*used = ns(&fs.st_mtim);
	}
	closedir(d);
	close(fd);
	return 0;
}

/* hostpch/KEY/: private to the user (never in a team cache: hostpch.c). */
static int
walk_pchs(int root, const char *dir, walk_fn fn, void *ctx)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.4000s/hostpch", dir);
	int hp;
	if (fb_dir_openat(root, "hostpch", path, "host PCH dir", "remove it", 0, false, &hp, NULL) != 0)
		return 0;
	DIR *d = list(hp);
	int rc = 0;
	for (struct dirent *e; d && !rc && (e = readdir(d));) {
		struct stat st;
		struct found f = {hp, e->d_name, K_PCH, &st, false, 0, 0};
		if (fb_cache_is_key(e->d_name) && pch_measure(hp, e->d_name, &st, &f.bytes, &f.used) == 0)
			rc = fn(ctx, &f);
	}
	if (d)
		closedir(d);
	close(hp);
	return rc;
}

/* Calls fn on every entry, temporary and host PCH below root; shards that fail their checks
 * are skipped (*refused counts them). */
static int
walk(int root, const char *dir, unsigned dflags, walk_fn fn, void *ctx, uint64_t *refused)
{
	DIR *top = list(root);
	if (!top)
		return FB_EIO;
	struct stat rst;
	bool root_sticky = fstat(root, &rst) == 0 && (rst.st_mode & S_ISVTX);
	int rc = 0;
	for (struct dirent *e; !rc && (e = readdir(top));) {
		int shard;
		if (!hex2(e->d_name))
			continue;
		if (fb_cache_shard_open(root, dir, dflags, e->d_name, false, &shard, NULL) != 0) {
			(*refused)++;
			continue;
		}
		rc = walk_shard(shard, e->d_name, root_sticky, fn, ctx);
		close(shard);
	}
	closedir(top);
	return rc ? rc : walk_pchs(root, dir, fn, ctx);
}

/* May the caller remove f? Not another's file in a sticky directory. */
static bool
removable(const struct found *f)
{
	return !f->sticky || f->st->st_uid == geteuid();
}

/* ---- stats ---- */

static int
stat_one(void *ctx, const struct found *f)
{
	struct fb_cache_stats *s = ctx;
	if (f->kind == K_TMP) {
		s->temporaries++;
	} else if (f->kind == K_PCH) {
		s->host_pchs++;
		s->host_pch_bytes += f->bytes;
	} else {
		s->entries++;
	}
	s->bytes += f->bytes;
	return 0;
}

int
fb_cache_stats(const char *dir, struct fb_cache_stats *out, struct fb_error *err)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	unsigned dflags = fb_cache_flags(&cfg);
	memset(out, 0, sizeof(*out));
	int rc = dir ? 0 : fb_cache_dir_config(&cfg, out->dir, sizeof(out->dir), err);
	if (rc)
		return rc;
	if (dir)
		snprintf(out->dir, sizeof(out->dir), "%s", dir);
	int root;
	if ((rc = fb_cache_root_open_existing(out->dir, dflags, &root, err)) || root < 0)
		return rc;
	rc = walk(root, out->dir, dflags, stat_one, out, &out->refused);
	close(root);
	return rc ? fb_seterr(err, FB_EIO, "cannot read %s", out->dir) : 0;
}

/* ---- clear ---- */

struct clear_ctx {
	uint64_t removed, kept;
	char first[512];
};

static int
clear_one(void *ctx, const struct found *f)
{
	struct clear_ctx *c = ctx;
	if (!removable(f)) {
		c->kept++;
		return 0;
	}
	int rc = f->kind == K_PCH ? fb_dir_removeat(f->dirfd, f->name, 0) : unlinkat(f->dirfd, f->name, 0);
	if (rc == 0 && f->kind != K_TMP)
		c->removed++;
	else if (rc != 0 && !c->kept++)
		snprintf(c->first, sizeof(c->first), "cannot remove %s: %s", f->name, strerror(errno));
	return 0;
}

/* pch.XXXXXX: the NVRTC PCH directories killed runs left behind (worker.c), our own only. */
static void
clear_nvrtc_pchs(int root)
{
	DIR *top = list(root);
	for (struct dirent *e; top && (e = readdir(top));) {
		struct stat st;
		if (strncmp(e->d_name, "pch.", 4) == 0 && strlen(e->d_name) == 10 &&
		    fstatat(root, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    st.st_uid == geteuid())
			fb_dir_removeat(root, e->d_name, 1); /* the run's directory and one per worker */
	}
	if (top)
		closedir(top);
}

int
fb_cache_clear(const char *dir, uint64_t *removed, struct fb_error *err)
{
	char buf[PATH_MAX];
	struct fb_config cfg;
	fb_config_read(&cfg);
	unsigned dflags = fb_cache_flags(&cfg);
	if (removed)
		*removed = 0;
	int rc = fb_cache_dir_default(&cfg, &dir, buf, sizeof(buf), err);
	if (rc)
		return rc;
	int root;
	if ((rc = fb_cache_root_open_existing(dir, dflags, &root, err)) || root < 0)
		return rc;
	struct clear_ctx c = {0};
	uint64_t refused = 0;
	rc = walk(root, dir, dflags, clear_one, &c, &refused);
	clear_nvrtc_pchs(root);
	/* Empty shards and hostpch/ go too; anything else in them (not ours) stays, and so do they. */
	for (int i = 0; i < 256; i++) {
		char sh[3];
		snprintf(sh, sizeof(sh), "%02x", i);
		unlinkat(root, sh, AT_REMOVEDIR);
	}
	unlinkat(root, "hostpch", AT_REMOVEDIR);
	if (!rc && !c.kept && !refused)
		fb_cache_size_set(root, dir, dflags, 0, 0, 0, NULL);
	close(root);
	if (removed)
		*removed = c.removed;
	if (rc)
		return fb_seterr(err, FB_EIO, "cannot read %s", dir);
	if (c.first[0])
		return fb_seterr(err, FB_EIO, "%.4000s: %s", dir, c.first);
	return 0;
}

/* ---- trim ---- */

/* What trim may evict: an entry (its shard from the key) or a host PCH directory. */
struct victim {
	unsigned char key[32];
	enum kind kind;
	int64_t used;
	uint64_t bytes;
};

struct trim_ctx {
	struct victim *v;
	size_t n, cap;
	uint64_t total;
	int64_t now;
	bool oom;
	struct fb_cache_trim_result *res;
};

static void
unhex(const char *s, unsigned char out[32])
{
	for (int i = 0; i < 32; i++) {
		int hi = s[2 * i] <= '9' ? s[2 * i] - '0' : s[2 * i] - 'a' + 10;
		int lo = s[2 * i + 1] <= '9' ? s[2 * i + 1] - '0' : s[2 * i + 1] - 'a' + 10;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
}

static void
tohex(const unsigned char k[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", k[i]);
}

static int
collect(void *ctx, const struct found *f)
{
	struct trim_ctx *t = ctx;
	if (f->kind == K_TMP) {
		/* a killed write's leftover goes at once; a young one is a write in progress */
		if (t->now - f->used > (int64_t)TMP_STALE_S * 1000000000 && removable(f) &&
		    unlinkat(f->dirfd, f->name, 0) == 0)
			t->res->temporaries++;
		else
			t->total += f->bytes;
		return 0;
	}
	t->total += f->bytes;
	if (!removable(f))
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct victim *nv = realloc(t->v, cap * sizeof(*nv));
		if (!nv) {
			t->oom = true;
			return FB_ENOMEM;
		}
		t->v = nv;
		t->cap = cap;
	}
	struct victim *v = &t->v[t->n++];
	unhex(f->name, v->key);
	v->kind = f->kind;
	v->used = f->used;
	v->bytes = f->bytes;
	return 0;
}

static int
by_use(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;
	return x->used < y->used ? -1 : x->used > y->used;
}

/* Removes one victim unless it was used after the walk saw it, or (a host PCH) a build holds
 * it; 0 when it went. */
static int
evict(int root, const char *dir, unsigned dflags, const struct victim *v)
{
	char name[65];
	tohex(v->key, name);
	if (v->kind == K_PCH) {
		int hp = openat(root, "hostpch", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int fd = hp >= 0 ? openat(hp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		struct stat st;
		uint64_t bytes;
		int64_t used;
		int rc = -1;
		/* LOCK_EX fails while a build holds LOCK_SH on it (fb_cache_pch_hold); held to the end */
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && pch_measure(hp, name, &st, &bytes, &used) == 0 &&
		    used <= v->used)
			rc = fb_dir_removeat(hp, name, 0);
		if (fd >= 0)
			close(fd);
		if (hp >= 0)
			close(hp);
		return rc;
	}
	int sh;
	if (fb_cache_shard_open(root, dir, dflags, name, false, &sh, NULL) != 0)
		return -1;
	struct stat st;
	int rc = -1;
	if (fstatat(sh, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && ns(&st.st_mtim) <= v->used)
		rc = unlinkat(sh, name, 0);
	close(sh);
	return rc;
}

/* Takes trim.lock: waiting, or not (then 1 when another trim holds it). */
static int
trim_lock(int root, bool wait, int *fd)
{
	*fd = openat(root, "trim.lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (*fd < 0)
		return -1;
	while (flock(*fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
		if (errno == EINTR)
			continue;
		close(*fd);
		*fd = -1;
		return errno == EWOULDBLOCK ? 1 : -1;
	}
	return 0;
}

/* The size the trigger goes by: the stats file's entries plus the host PCHs measured now
 * (a handful of directories; they are made by compiles that do not count them). -1 when the
 * stats file has no size yet. */
static int
estimate(int root, const char *dir, uint64_t *size)
{
	struct trim_ctx t = {0};
	struct fb_cache_trim_result r = {0};
	t.res = &r;
	if (fb_cache_size_get(root, dir, size) != 0)
		return -1;
	/* only the PCHs: walk_pchs alone */
	walk_pchs(root, dir, collect, &t);
	free(t.v);
	*size += t.total;
	return 0;
}

/* Walks root and evicts the least recently used down to the low-water mark. */
static int
trim_walked(int root, const char *dir, unsigned dflags, uint64_t max_size, struct fb_cache_trim_result *res,
            struct fb_error *err)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct trim_ctx t = {.now = ns(&now), .res = res};
	uint64_t refused = 0;
	int rc = walk(root, dir, dflags, collect, &t, &refused);
	if (rc) {
		free(t.v);
		return fb_seterr(err, rc, t.oom ? "out of memory" : "cannot read %.4000s", dir);
	}
	res->before = t.total;
	uint64_t low = max_size - max_size / 10;
	qsort(t.v, t.n, sizeof(*t.v), by_use);
	for (size_t i = 0; i < t.n && t.total > low; i++) {
		if (evict(root, dir, dflags, &t.v[i]) != 0) {
			res->skipped++;
			continue;
		}
		t.total -= t.v[i].bytes < t.total ? t.v[i].bytes : t.total;
		res->evicted++;
		res->evicted_bytes += t.v[i].bytes;
		res->host_pchs += t.v[i].kind == K_PCH;
	}
	free(t.v);
	res->after = t.total;
	/* the entries' part of the size: the trigger adds the PCHs it measures */
	struct trim_ctx p = {.res = res};
	struct fb_cache_trim_result pr = {0};
	p.res = &pr;
	walk_pchs(root, dir, collect, &p);
	free(p.v);
	uint64_t entries = t.total > p.total ? t.total - p.total : 0;
	fb_cache_size_set(root, dir, dflags, entries, res->evicted, res->evicted_bytes, NULL);
	return 0;
}

int
fb_cache_trim(const char *dir, uint64_t max_size, unsigned flags, struct fb_cache_trim_result *res,
              struct fb_error *err)
{
	struct fb_cache_trim_result local;
	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	res->max_size = max_size;
	char buf[PATH_MAX];
	struct fb_config cfg;
	fb_config_read(&cfg);
	unsigned dflags = fb_cache_flags(&cfg);
	int rc = fb_cache_dir_default(&cfg, &dir, buf, sizeof(buf), err);
	if (rc || max_size == 0)
		return rc; /* 0: no limit */
	int root, lock;
	if ((rc = fb_cache_root_open_existing(dir, dflags, &root, err)) || root < 0)
		return rc;
	uint64_t size;
	if ((flags & FB_TRIM_IF_OVER) && estimate(root, dir, &size) == 0 && size <= max_size) {
		res->before = res->after = size;
		close(root);
		return 0;
	}
	int lk = trim_lock(root, !(flags & FB_TRIM_IF_OVER), &lock);
	if (lk == 1) { /* another build is trimming it */
		res->busy = true;
		close(root);
		return 0;
	}
	if (lk < 0) {
		close(root);
		return fb_seterr(err, FB_EIO, "cannot lock %.4000s/trim.lock: %s", dir, strerror(errno));
	}
	rc = trim_walked(root, dir, dflags, max_size, res, err);
	close(lock);
	close(root);
	return rc;
}
