/* stats.c: what the compile cache served, kept beside the entries in <dir>/stats.
 *
 * The file is text, one "name value" line per counter (docs/remote-cache.md §4), plus "size":
 * the bytes of entries on disk as the last trim measured them, plus what was put since, which
 * is what tells a build that the cache is over its limit without walking it (trim.c).
 * Concurrent compiles (a ninja build runs many) add their counts under an exclusive flock on
 * <dir>/stats.lock and replace the file atomically, so no update is lost and a reader never
 * sees half a file. Both files are reached through the checked root's descriptor, and a team
 * cache's members share them (the lock is taken on a read-only descriptor, so the file needs no
 * group write bit). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"

struct field {
	const char *name;
	size_t off;
};

/* The counters and the size, as the file holds them. */
struct stats {
	struct fb_cache_counters c;
	uint64_t size;
	bool has_size;
};

#define F(x) {#x, offsetof(struct fb_cache_counters, x)}
static const struct field fields[] = {
	F(local_hits), F(remote_hits), F(misses),  F(remote_misses), F(remote_errors), F(remote_corrupt),
	F(local_corrupt), F(uploads), F(bytes_down), F(bytes_up), F(evictions), F(evicted_bytes),
};
#undef F
#define NFIELDS (sizeof(fields) / sizeof(*fields))

static uint64_t *
slot(struct fb_cache_counters *c, size_t i)
{
	return (uint64_t *)(void *)((char *)c + fields[i].off);
}

/* Unknown names and malformed lines are skipped: a newer fatbuild may add counters. */
static void
parse(const char *text, struct stats *s)
{
	memset(s, 0, sizeof(*s));
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		char name[64];
		unsigned long long v;
		if (sscanf(p, "%63s %llu", name, &v) == 2) {
			for (size_t i = 0; i < NFIELDS; i++)
				if (strcmp(name, fields[i].name) == 0)
					*slot(&s->c, i) = v;
			if (strcmp(name, "size") == 0) {
				s->size = v;
				s->has_size = true;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
}

/* A missing file reads as all zero; anything but a regular file is refused. */
static int
read_stats(int root, const char *dir, struct stats *s, struct fb_error *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.4000s/stats", dir);
	memset(s, 0, sizeof(*s));
	int fd = openat(root, "stats", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return fb_seterr(err, FB_EIO, "cannot open %s: %s", path, strerror(errno));
	char *text;
	size_t n;
	int rc = fb_read_fd(fd, path, &text, &n, err);
	if (rc)
		return rc;
	parse(text, s);
	free(text);
	return 0;
}

int
fb_cache_counters_read(const char *dir, struct fb_cache_counters *out, struct fb_error *err)
{
	char buf[PATH_MAX];
	int root;
	struct fb_config cfg;
	fb_config_read(&cfg);
	memset(out, 0, sizeof(*out));
	int rc = fb_cache_dir_default(&cfg, &dir, buf, sizeof(buf), err);
	if (rc)
		return rc;
	if ((rc = fb_cache_root_open_existing(dir, fb_cache_flags(&cfg), &root, err)) || root < 0)
		return rc;
	struct stats s;
	rc = read_stats(root, dir, &s, err);
	close(root);
	*out = s.c;
	return rc;
}

/* Runs change on the file's stats under the lock and writes them back. */
static int
update(int root, const char *dir, unsigned dflags, void (*change)(struct stats *, const void *), const void *arg,
       struct fb_error *err)
{
	int fd = openat(root, "stats.lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return fb_seterr(err, FB_EIO, "cannot open %.4000s/stats.lock: %s", dir, strerror(errno));
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return fb_seterr(err, FB_EIO, "cannot lock %.4000s/stats.lock: %s", dir, strerror(e));
		}
	struct stats s;
	int rc = read_stats(root, dir, &s, err);
	if (!rc) {
		change(&s, arg);
		char text[(NFIELDS + 1) * 48], path[PATH_MAX];
		size_t k = 0;
		for (size_t i = 0; i < NFIELDS; i++)
			k += (size_t)snprintf(text + k, sizeof(text) - k, "%s %llu\n", fields[i].name,
			                      (unsigned long long)*slot(&s.c, i));
		if (s.has_size)
			k += (size_t)snprintf(text + k, sizeof(text) - k, "size %llu\n", (unsigned long long)s.size);
		snprintf(path, sizeof(path), "%.4000s/stats", dir);
		bool shared = dflags != 0;
		rc = fb_write_at(root, "stats", path, text, k, shared ? 0664 : 0644, shared, err);
	}
	close(fd); /* releases the lock */
	return rc;
}

static void
add_counters(struct stats *s, const void *arg)
{
	const struct fb_cache_counters *d = arg;
	for (size_t i = 0; i < NFIELDS; i++)
		*slot(&s->c, i) += *slot((struct fb_cache_counters *)d, i);
}

int
fb_cache_count(const char *dir, unsigned dflags, const struct fb_cache_counters *d, struct fb_error *err)
{
	int root;
	int rc = fb_cache_root_open(dir, dflags, true, &root, err);
	if (rc)
		return rc;
	rc = update(root, dir, dflags, add_counters, d, err);
	close(root);
	return rc;
}

static void
add_size(struct stats *s, const void *arg)
{
	if (s->has_size) /* unknown stays unknown: the next trim measures it */
		s->size += *(const uint64_t *)arg;
}

void
fb_cache_size_add(int root, unsigned dflags, uint64_t bytes)
{
	update(root, "cache dir", dflags, add_size, &bytes, NULL);
}

struct measured {
	uint64_t size, evictions, evicted;
};

static void
set_size(struct stats *s, const void *arg)
{
	const struct measured *m = arg;
	s->size = m->size;
	s->has_size = true;
	s->c.evictions += m->evictions;
	s->c.evicted_bytes += m->evicted;
}

int
fb_cache_size_set(int root, const char *dir, unsigned dflags, uint64_t size, uint64_t evictions,
                  uint64_t evicted, struct fb_error *err)
{
	struct measured m = {size, evictions, evicted};
	return update(root, dir, dflags, set_size, &m, err);
}

int
fb_cache_size_get(int root, const char *dir, uint64_t *size)
{
	struct stats s;
	if (read_stats(root, dir, &s, NULL) != 0 || !s.has_size)
		return -1;
	*size = s.size;
	return 0;
}
