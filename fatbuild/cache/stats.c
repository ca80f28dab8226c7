/* stats.c: what the compile cache served, kept beside the entries in <dir>/stats.
 *
 * The file is text, one "name value" line per counter (docs/remote-cache.md §4), plus "size":
 * the bytes of entries on disk as the last trim measured them, plus what was put since, which
 * is what tells a build that the cache is over its limit without walking it (trim.c).
 * Concurrent compiles (a ninja build runs many) add their counts under an exclusive flock on
 * <dir>/stats.lock, and readers read under a shared one, so no update is lost and no reader sees
 * half a file. The file is rewritten in place (its bytes, then its length), not replaced by a
 * rename: in a sticky team cache (chmod 3770) only a file's owner may rename over it, so every
 * other member's counts and sizes would be lost and their builds would never trim, while the
 * file, 0664 in the team's group, may be written by every member. Both files are reached
 * through the checked root's descriptor (the lock taken on a read-only descriptor, so that file
 * needs no group write bit), and the stats file is written only as a regular file with one
 * link, in a private cache only as the user's own. */
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
	F(cicc_hits), F(cicc_misses), F(ptxas_hits), F(ptxas_misses), F(host_hits), F(host_misses),
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

/* The file's counters from fd, which stays open (a copy of it is read and closed). */
static int
read_fd(int fd, const char *path, struct stats *s, struct fb_error *err)
{
	memset(s, 0, sizeof(*s));
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return fb_seterr(err, FB_EIO, "cannot read %s: %s", path, strerror(errno));
	char *text;
	size_t n;
	int rc = fb_read_fd(copy, path, &text, &n, err);
	if (rc)
		return rc;
	parse(text, s);
	free(text);
	return 0;
}

/* Takes the lock file's flock (LOCK_SH or LOCK_EX), opened read-only; create: made where
 * missing. -1 with errno when it cannot. */
static int
lock_open(int root, int how, bool create)
{
	int fd = openat(root, "stats.lock", O_RDONLY | (create ? O_CREAT : 0) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	                0644);
	if (fd < 0)
		return -1;
	while (flock(fd, how) != 0)
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
	return fd;
}

/* A missing file reads as all zero; anything but a regular file is refused. Read under the
 * shared lock where the lock file is there (before any update it need not be). */
static int
read_stats(int root, const char *dir, struct stats *s, struct fb_error *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.4000s/stats", dir);
	memset(s, 0, sizeof(*s));
	int lock = lock_open(root, LOCK_SH, false);
	int rc = 0, fd = openat(root, "stats", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		rc = fb_seterr(err, FB_EIO, "cannot open %s: %s", path, strerror(errno));
	if (fd >= 0) {
		rc = read_fd(fd, path, s, err);
		close(fd);
	}
	if (lock >= 0)
		close(lock);
	return rc;
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

typedef void change_fn(struct stats *, const void *);

/* The file's text for s: at most (NFIELDS + 1) lines of a name and a 20-digit number. */
static size_t
format(const struct stats *s, char *text, size_t size)
{
	size_t k = 0;
	for (size_t i = 0; i < NFIELDS; i++)
		k += (size_t)snprintf(text + k, size - k, "%s %llu\n", fields[i].name,
		                      (unsigned long long)*slot((struct fb_cache_counters *)&s->c, i));
	if (s->has_size)
		k += (size_t)snprintf(text + k, size - k, "size %llu\n", (unsigned long long)s->size);
	return k;
}

/* Rewrites the open stats file in place, the update lock held: its bytes from the start, then
 * its length. Refused unless it is a regular file with one link (a hard link planted at the
 * name would have another file written) that nobody outside the cache's users can write. */
static int
rewrite(int fd, const char *path, unsigned dflags, change_fn *change, const void *arg, struct fb_error *err)
{
	struct stat st;
	mode_t mode = dflags ? 0664 : 0644;
	if (fstat(fd, &st) != 0)
		return fb_seterr(err, FB_EIO, "cannot stat %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || (st.st_mode & S_IWOTH) ||
	    (!dflags && (st.st_uid != geteuid() || (st.st_mode & S_IWGRP))))
		return fb_seterr(err, FB_EUNSAFE,
		                 "%s is not the cache's own file (%s, %ld links, owner uid %ld, mode %04o): not written; "
		                 "remove it",
		                 path, fb_file_kind(st.st_mode), (long)st.st_nlink, (long)st.st_uid,
		                 (unsigned)st.st_mode & 07777);
	if (st.st_uid == geteuid() && (st.st_mode & 07777) != mode)
		fchmod(fd, mode); /* made now: the umask may have taken the group's write bit */
	struct stats s;
	int rc = read_fd(fd, path, &s, err);
	if (rc)
		return rc;
	change(&s, arg);
	char text[(NFIELDS + 1) * 48];
	size_t k = format(&s, text, sizeof(text)), done = 0;
	while (done < k) {
		ssize_t n = pwrite(fd, text + done, k - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fb_seterr(err, FB_EIO, "cannot write %s: %s", path, n < 0 ? strerror(errno) : "no progress");
		done += (size_t)n;
	}
	if (ftruncate(fd, (off_t)k) != 0)
		return fb_seterr(err, FB_EIO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* Runs change on the file's stats under the lock and writes them back in place. */
static int
update(int root, const char *dir, unsigned dflags, change_fn *change, const void *arg, struct fb_error *err)
{
	int lock = lock_open(root, LOCK_EX, true);
	if (lock < 0)
		return fb_seterr(err, FB_EIO, "cannot lock %.4000s/stats.lock: %s", dir, strerror(errno));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.4000s/stats", dir);
	int rc, fd = openat(root, "stats", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, dflags ? 0664 : 0644);
	if (fd < 0) {
		rc = fb_seterr(err, FB_EIO, "cannot open %s: %s", path, strerror(errno));
	} else {
		rc = rewrite(fd, path, dflags, change, arg, err);
		close(fd);
	}
	close(lock); /* releases the lock */
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
