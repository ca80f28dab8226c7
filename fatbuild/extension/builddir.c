/* builddir.c: the build root and build dir (user-private, checked before use), and the copy of
 * the staged link output to OUT. The link runs inside the build dir, so no compiler or linker
 * ever opens a predictable name in OUT's directory, which may be shared. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builddir.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"

#define FIX "remove it, or pass --build-dir DIR (or set FATBUILD_BUILD_DIR) naming a directory of your own"

/* The build root: FATBUILD_BUILD_DIR (*explicit set), else $XDG_CACHE_HOME/fatbuild/build, else
 * ~/.cache/fatbuild/build. */
static int
build_root(const struct fb_config *cfg, char *buf, size_t size, bool *explicit, struct fb_error *err)
{
	const char *env = cfg->build_dir, *xdg = cfg->xdg_cache_home, *home = cfg->home;
	int k;
	*explicit = false;
	if (env && env[0]) {
		*explicit = true;
		k = snprintf(buf, size, "%s", env);
	} else if (xdg && xdg[0] == '/') {
		k = snprintf(buf, size, "%s/fatbuild/build", xdg);
	} else if (home && home[0]) {
		k = snprintf(buf, size, "%s/.cache/fatbuild/build", home);
	} else {
		return fb_seterr(err, FB_EINVAL, "build: no build dir: HOME is unset; pass --build-dir DIR or set "
		                                 "FATBUILD_BUILD_DIR");
	}
	if (k < 0 || (size_t)k >= size)
		return fb_seterr(err, FB_EINVAL, "build: the build root path is too long");
	return 0;
}

int
fb_build_dir_default(const char *name, char *buf, size_t size, struct fb_error *err)
{
	char root[PATH_MAX];
	bool explicit;
	struct fb_config cfg;
	fb_config_read(&cfg);
	int rc = build_root(&cfg, root, sizeof(root), &explicit, err);
	if (rc)
		return rc;
	int k = snprintf(buf, size, "%s/%s", root, name ? name : "NAME");
	if (k < 0 || (size_t)k >= size)
		return fb_seterr(err, FB_EINVAL, "build: the build dir path is too long");
	return 0;
}

int
fb_builddir_prepare(const struct fb_config *cfg, const char *build_dir, const char *name, char *dir, size_t size,
                    struct fb_error *err)
{
	int rc;
	if (build_dir && build_dir[0]) {
		if (snprintf(dir, size, "%s", build_dir) >= (int)size)
			return fb_seterr(err, FB_EINVAL, "build: %s: path too long", build_dir);
		rc = fb_dir_make(dir, "build dir", FIX, FB_DIR_EXPLICIT, err);
	} else {
		char root[PATH_MAX];
		bool explicit;
		rc = build_root(cfg, root, sizeof(root), &explicit, err);
		if (!rc)
			rc = fb_dir_make(root, "build root", FIX, explicit ? FB_DIR_EXPLICIT : 0, err);
		if (!rc && snprintf(dir, size, "%s/%s", root, name) >= (int)size)
			rc = fb_seterr(err, FB_EINVAL, "build: %s/%s: path too long", root, name);
		if (!rc)
			rc = fb_dir_make(dir, "build dir", FIX, 0, err);
	}
	char sub[PATH_MAX + 8];
	if (!rc && snprintf(sub, sizeof(sub), "%s/obj", dir) < (int)sizeof(sub))
		rc = fb_dir_make(sub, "build dir", FIX, 0, err);
	if (!rc && snprintf(sub, sizeof(sub), "%s/out", dir) < (int)sizeof(sub))
		rc = fb_dir_make(sub, "build dir", FIX, 0, err);
	if (!rc && snprintf(sub, sizeof(sub), "%s/tmp", dir) < (int)sizeof(sub))
		rc = fb_dir_make(sub, "build dir", FIX, 0, err);
	return rc;
}

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return S_ISREG(a->st_mode) && S_ISREG(b->st_mode) && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

void
fb_builddir_unstage_stale(const char *staged, const char *out)
{
	struct stat s, o;
	if (lstat(staged, &s) != 0)
		return;
	if (lstat(out, &o) != 0 || !same_file(&s, &o))
		unlink(staged);
}

int
fb_builddir_publish(const char *staged, const char *out, bool *copied, struct fb_error *err)
{
	*copied = false;
	int in = open(staged, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return fb_seterr(err, FB_EIO, "build: cannot open the linked output %s: %s", staged, strerror(errno));
	struct stat s, o;
	if (fstat(in, &s) != 0 || !S_ISREG(s.st_mode)) {
		close(in);
		return fb_seterr(err, FB_EIO, "build: %s: not a regular file", staged);
	}
	if (lstat(out, &o) == 0 && same_file(&s, &o)) {
		close(in);
		return 0;
	}
	char tmp[PATH_MAX + 32];
	int fd, rc = fb_tmp_open(out, (int)(s.st_mode & 0777), tmp, sizeof(tmp), &fd, err);
	if (rc) {
		close(in);
		return rc;
	}
	char buf[1 << 16];
	ssize_t n;
	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				n = -1;
				break;
			}
			off += w;
		}
		if (n < 0)
			break;
	}
	int e = errno;
	close(in);
	struct timespec times[2] = {s.st_atim, s.st_mtim};
	if (n < 0 || futimens(fd, times) != 0) {
		e = n < 0 ? e : errno;
		close(fd);
		unlink(tmp);
		return fb_seterr(err, FB_EIO, "build: cannot write %s: %s", out, strerror(e));
	}
	if (close(fd) != 0 || rename(tmp, out) != 0) {
		e = errno;
		unlink(tmp);
		return fb_seterr(err, FB_EIO, "build: cannot write %s: %s", out, strerror(e));
	}
	*copied = true;
	return 0;
}
