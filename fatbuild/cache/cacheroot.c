/* cacheroot.c: where the compile cache is and how its directories are reached: the cache dir
 * (FATBUILD_CACHE_DIR, else $XDG_CACHE_HOME/fatbuild, else ~/.cache/fatbuild), whether it is an
 * opted-in team cache, the checks it passes before use (docs/security.md), its root and shards
 * opened by descriptor, and the names of entries. The store (store.c), the counters (stats.c)
 * and the walks (trim.c) all start here. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"

int
fb_cache_dir_config(const struct fb_config *cfg, char *buf, size_t size, struct fb_error *err)
{
	const char *env = cfg->cache_dir, *xdg = cfg->xdg_cache_home, *home = cfg->home;
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
fb_cache_dir(char *buf, size_t size, struct fb_error *err)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	return fb_cache_dir_config(&cfg, buf, size, err);
}

int
fb_cache_dir_default(const struct fb_config *cfg, const char **dir, char *buf, size_t size,
                     struct fb_error *err)
{
	if (*dir)
		return 0;
	int rc = fb_cache_dir_config(cfg, buf, size, err);
	if (!rc)
		*dir = buf;
	return rc;
}

#define FIX                                                                                                    \
	"remove it or chmod go-w it, set FATBUILD_CACHE_DIR to a directory of your own, or go without the "      \
	"cache (compile --no-cache, build --no-edge-cache; a team cache shared on purpose: "                    \
	"FATBUILD_CACHE_SHARED=1, docs/security.md)"

/* FATBUILD_CACHE_SHARED=1 opts into a team cache (safefs.h, FB_DIR_SHARED). */
unsigned
fb_cache_flags(const struct fb_config *cfg)
{
	return cfg->cache_shared == 1 ? FB_DIR_SHARED : 0;
}

/* explicit is not a licence here: a group-writable cache dir lets the group put kernels into
 * your builds, so it takes the opt-in (FATBUILD_CACHE_SHARED=1) whoever named it
 * (docs/security.md). */
int
fb_cache_check(const char *dir, bool explicit, unsigned dflags, struct fb_error *err)
{
	(void)explicit;
	struct stat st;
	if (lstat(dir, &st) != 0 && errno == ENOENT)
		return 0; /* created 0700 by the first fb_store_put */
	return fb_dir_check(dir, "cache dir", FIX, dflags, err);
}

int
fb_cache_root_open_existing(const char *dir, unsigned dflags, int *fd, struct fb_error *err)
{
	struct stat st;
	*fd = -1;
	if (lstat(dir, &st) != 0 && errno == ENOENT)
		return 0;
	return fb_cache_root_open(dir, dflags, false, fd, err);
}

bool
fb_cache_is_key(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n == 64 && s[64] == 0;
}

bool
fb_cache_is_tmp(const char *s)
{
	return strspn(s, "0123456789abcdef") == 64 && strncmp(s + 64, ".tmp.", 5) == 0 && strlen(s + 69) == 10;
}

int
fb_cache_root_open(const char *dir, unsigned dflags, bool create, int *fd, struct fb_error *err)
{
	*fd = -1;
	int rc = create ? fb_dir_make(dir, "cache dir", FIX, dflags, err) : 0;
	return rc ? rc : fb_dir_open(dir, "cache dir", FIX, dflags, fd, err);
}

/* A team cache's shard takes the mode bits of its root (setgid, sticky, the group's and others'
 * read and search; never others' write): fb_dir_openat makes it 02770, and a sticky root's
 * shards without the sticky bit would let any member remove the others' entries (cache clear,
 * trim, or a plain rm). Its maker sets them just after the mkdir, and again on every later open
 * (a shard an older fatbuild made, or a maker killed in between); a shard another member made
 * stays as it is, which trim.c meets by treating every shard of a sticky root as sticky. */
static void
take_root_mode(int root, int shard)
{
	struct stat rs, ss;
	if (fstat(root, &rs) != 0 || fstat(shard, &ss) != 0 || ss.st_uid != geteuid())
		return;
	mode_t want = S_IRWXU | (rs.st_mode & (S_ISGID | S_ISVTX | S_IRWXG | S_IROTH | S_IXOTH));
	if ((ss.st_mode & 07777) != want)
		fchmod(shard, want);
}

int
fb_cache_shard_open(int root, const char *dir, unsigned dflags, const char *name, bool create, int *fd,
                    struct fb_error *err)
{
	char sh[3] = {name[0], name[1], 0}, path[PATH_MAX];
	snprintf(path, sizeof(path), "%.4000s/%s", dir, sh);
	int rc = fb_dir_openat(root, sh, path, "cache dir", FIX, dflags, create, fd, err);
	if (!rc && (dflags & FB_DIR_SHARED))
		take_root_mode(root, *fd);
	return rc;
}
