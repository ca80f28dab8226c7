/* stats.c: what the compile cache served, kept beside the entries in <dir>/stats.
 *
 * The file is text, one "name value" line per counter (docs/remote-cache.md §4). Concurrent
 * compiles (a ninja build runs many) add their counts under an exclusive flock on
 * <dir>/stats.lock and replace the file atomically, so no update is lost and a reader never
 * sees half a file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cache.h"
#include "common/error_priv.h"
#include "common/safefs.h"

struct field {
	const char *name;
	size_t off;
};

#define F(x) {#x, offsetof(struct fb_cache_counters, x)}
static const struct field fields[] = {
	F(local_hits), F(remote_hits), F(misses), F(remote_misses), F(remote_errors),
	F(remote_corrupt), F(local_corrupt), F(uploads), F(bytes_down), F(bytes_up),
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
parse(const char *text, struct fb_cache_counters *c)
{
	memset(c, 0, sizeof(*c));
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		char name[64];
		unsigned long long v;
		if (sscanf(p, "%63s %llu", name, &v) == 2)
			for (size_t i = 0; i < NFIELDS; i++)
				if (strcmp(name, fields[i].name) == 0)
					*slot(c, i) = v;
		p = nl ? nl + 1 : NULL;
	}
}

static int
read_counters(const char *dir, struct fb_cache_counters *c, struct fb_error *err)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/stats", dir) >= (int)sizeof(path))
		return fb_seterr(err, FB_EINVAL, "cache path too long");
	char *text;
	size_t n;
	memset(c, 0, sizeof(*c));
	if (access(path, F_OK) != 0)
		return 0;
	int rc = fb_read_file(path, &text, &n, err);
	if (rc)
		return rc;
	parse(text, c);
	free(text);
	return 0;
}

int
fb_cache_counters_read(const char *dir, struct fb_cache_counters *out, struct fb_error *err)
{
	char buf[PATH_MAX];
	int rc = fb_cache_dir_default(&dir, buf, sizeof(buf), err);
	if (rc)
		return rc;
	return read_counters(dir, out, err);
}

int
fb_cache_count(const char *dir, const struct fb_cache_counters *d, struct fb_error *err)
{
	char lock[PATH_MAX], path[PATH_MAX];
	if (snprintf(lock, sizeof(lock), "%s/stats.lock", dir) >= (int)sizeof(lock) ||
	    snprintf(path, sizeof(path), "%s/stats", dir) >= (int)sizeof(path))
		return fb_seterr(err, FB_EINVAL, "cache path too long");
	int rc = fb_mkdirs(dir, err);
	if (rc)
		return rc;
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return fb_seterr(err, FB_EIO, "cannot open %s: %s", lock, strerror(errno));
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return fb_seterr(err, FB_EIO, "cannot lock %s: %s", lock, strerror(e));
		}
	struct fb_cache_counters c;
	rc = read_counters(dir, &c, err);
	if (!rc) {
		char text[NFIELDS * 48];
		size_t k = 0;
		for (size_t i = 0; i < NFIELDS; i++) {
			*slot(&c, i) += *slot((struct fb_cache_counters *)d, i);
			k += (size_t)snprintf(text + k, sizeof(text) - k, "%s %llu\n", fields[i].name,
			                      (unsigned long long)*slot(&c, i));
		}
		rc = fb_write_file_atomic(path, text, k, 0644, err);
	}
	close(fd); /* releases the lock */
	return rc;
}
