/* safefs.c: the checks every directory fatbuild reads from or writes into passes, its mkdir -p
 * (and the plain one for output directories the user names), the removal of a directory it
 * made, temporary files with unpredictable names that are never opened through a planted name,
 * and the one way a file is opened for reading: regular files only, never waiting on a FIFO or
 * a device (fb_open_regular).
 * The rules (docs/security.md): a directory is trusted when it is owned by the effective
 * user and writable by nobody else; the exceptions are the flags in safefs.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "safefs.h"

/* "uid 1001 (mallory)", or "uid 1001" when the user database does not know it. */
static void
owner_name(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];
	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res && res->pw_name)
		snprintf(buf, size, "uid %ld (%s)", (long)uid, res->pw_name);
	else
		snprintf(buf, size, "uid %ld", (long)uid);
}

static int
in_my_groups(gid_t g)
{
	if (g == getegid())
		return 1;
	gid_t list[256];
	int n = getgroups(256, list);
	for (int i = 0; i < n; i++)
		if (list[i] == g)
			return 1;
	return 0;
}

/* The ownership and mode rules for a directory's fstat. */
static int
check_stat(const char *path, const struct stat *st, const char *what, const char *fix, unsigned flags,
           struct fb_error *err)
{
	char owner[300];
	uid_t me = geteuid();
	unsigned mode = (unsigned)st->st_mode & 07777;
	if (!S_ISDIR(st->st_mode))
		return fb_seterr(err, FB_BASE_EIO, "%s %s is not a directory", what, path);
	owner_name(st->st_uid, owner, sizeof(owner));
	if (mode & S_IWOTH)
		return fb_seterr(err, FB_BASE_EUNSAFE,
		                 "%s %s is world-writable (owner %s, mode %04o): any user could put files into it; "
		                 "%s",
		                 what, path, owner, mode, fix);
	if (flags & FB_DIR_SHARED) {
		if ((mode & S_IWGRP) && !((mode & S_ISGID) && in_my_groups(st->st_gid)))
			return fb_seterr(err, FB_BASE_EUNSAFE,
			                 "%s %s is group-writable but not a setgid directory of one of your groups "
			                 "(owner %s, group %ld, mode %04o): a shared cache needs chmod 2770 and a group "
			                 "you are in; %s",
			                 what, path, owner, (long)st->st_gid, mode, fix);
		if (st->st_uid != me && st->st_uid != 0 && !(mode & S_IWGRP))
			return fb_seterr(err, FB_BASE_EUNSAFE,
			                 "%s %s is owned by %s (mode %04o) and not shared with a group: %s", what, path,
			                 owner, mode, fix);
		return 0;
	}
	if (st->st_uid != me)
		return fb_seterr(err, FB_BASE_EUNSAFE,
		                 "%s %s is owned by %s (mode %04o), not by you: another user could put files into it; %s",
		                 what, path, owner, mode, fix);
	if ((mode & S_IWGRP) && !(flags & FB_DIR_EXPLICIT))
		return fb_seterr(err, FB_BASE_EUNSAFE,
		                 "%s %s is group-writable (owner %s, mode %04o): other users of its group could put "
		                 "files into it; chmod g-w it, or %s",
		                 what, path, owner, mode, fix);
	return 0;
}

/* The directory path names its entry in: ".", "/" or path up to its last slash. */
static void
parent_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(buf, size, ".");
	else if (slash == path)
		snprintf(buf, size, "/");
	else
		snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* The end of fb_dir_open and fb_dir_openat: fd (or -1, errno set) checked as fb_dir_check_fd
 * does, then handed over in *out, or closed. */
static int
hand_over(int fd, const char *path, const char *what, const char *fix, unsigned flags, int *out, struct fb_error *err)
{
	if (fd < 0)
		return fb_seterr(err, FB_BASE_EIO, "cannot open %s %s: %s", what, path, strerror(errno));
	int rc = fb_dir_check_fd(fd, path, what, fix, flags, err);
	if (rc)
		close(fd);
	else
		*out = fd;
	return rc;
}

int
fb_dir_open(const char *path_in, const char *what, const char *fix, unsigned flags, int *out, struct fb_error *err)
{
	*out = -1;
	/* Without its trailing slashes: "link/" would make open follow the symlink. */
	char path[PATH_MAX];
	size_t len = strlen(path_in);
	while (len > 1 && path_in[len - 1] == '/')
		len--;
	if (len >= sizeof(path))
		return fb_seterr(err, FB_BASE_EINVAL, "%s %s: path too long", what, path_in);
	memcpy(path, path_in, len);
	path[len] = 0;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		struct stat ls;
		if (lstat(path, &ls) != 0 || !S_ISLNK(ls.st_mode))
			return fb_seterr(err, FB_BASE_EIO, "%s %s is not a directory", what, path);
		/* A symlink: followed only when the user (or root) made it and nobody else can swap it. */
		char owner[300];
		owner_name(ls.st_uid, owner, sizeof(owner));
		if (ls.st_uid != geteuid() && ls.st_uid != 0)
			return fb_seterr(err, FB_BASE_EUNSAFE,
			                 "%s %s is a symlink owned by %s, not by you: another user may have planted it; "
			                 "remove it, or %s",
			                 what, path, owner, fix);
		char parent[PATH_MAX];
		parent_of(path, parent, sizeof(parent));
		struct stat ps;
		if (stat(parent, &ps) != 0)
			return fb_seterr(err, FB_BASE_EIO, "%s %s: cannot stat %s: %s", what, path, parent, strerror(errno));
		if ((ps.st_mode & (S_IWGRP | S_IWOTH)) && !(ps.st_mode & S_ISVTX))
			return fb_seterr(err, FB_BASE_EUNSAFE,
			                 "%s %s is a symlink in %s, which others can write (mode %04o): it could be "
			                 "swapped; use the real path, or %s",
			                 what, path, parent, (unsigned)ps.st_mode & 07777, fix);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	return hand_over(fd, path, what, fix, flags, out, err);
}

int
fb_dir_check_fd(int fd, const char *path, const char *what, const char *fix, unsigned flags, struct fb_error *err)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return fb_seterr(err, FB_BASE_EIO, "cannot stat %s %s: %s", what, path, strerror(errno));
	return check_stat(path, &st, what, fix, flags, err);
}

int
fb_dir_check(const char *path, const char *what, const char *fix, unsigned flags, struct fb_error *err)
{
	int fd;
	int rc = fb_dir_open(path, what, fix, flags, &fd, err);
	if (!rc)
		close(fd);
	return rc;
}

static bool
mine_and_private(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool
fb_file_trusted(const char *path, char *why, size_t whysize)
{
	char dir[PATH_MAX];
	struct stat st;
	parent_of(path, dir, sizeof(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whysize, "cannot open the directory %s: %s", dir, strerror(errno));
		return false;
	}
	bool ok = fstat(fd, &st) == 0 && mine_and_private(&st);
	close(fd);
	if (!ok) {
		snprintf(why, whysize,
		         "the directory %s is owned by uid %ld, mode %04o: it must be yours and writable by nobody else",
		         dir, (long)st.st_uid, (unsigned)st.st_mode & 07777);
		return false;
	}
	if (lstat(path, &st) != 0)
		return true; /* not there yet */
	if (!S_ISREG(st.st_mode) || !mine_and_private(&st)) {
		snprintf(why, whysize,
		         "%s is %s owned by uid %ld, mode %04o: it must be your own regular file, writable by nobody else",
		         path, S_ISLNK(st.st_mode) ? "a symlink" : "a file", (long)st.st_uid, (unsigned)st.st_mode & 07777);
		return false;
	}
	return true;
}

int
fb_dir_openat(int dirfd, const char *name, const char *path, const char *what, const char *fix, unsigned flags,
              bool create, int *out, struct fb_error *err)
{
	*out = -1;
	if (create && mkdirat(dirfd, name, flags & FB_DIR_SHARED ? 0770 : 0700) != 0) {
		if (errno != EEXIST)
			return fb_seterr(err, FB_BASE_EIO, "cannot create %s %s: %s", what, path, strerror(errno));
	} else if (create && (flags & FB_DIR_SHARED)) {
		/* setgid keeps the group on everything below; the umask may have taken g+rwx */
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int bad = fd < 0 || fchmod(fd, 02770) != 0;
		if (fd >= 0)
			close(fd);
		if (bad)
			return fb_seterr(err, FB_BASE_EIO, "cannot chmod %s: %s", path, strerror(errno));
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return fb_seterr(err, FB_BASE_EUNSAFE, "%s %s is not a directory (a symlink or a file): not followed; %s", what,
		                 path, fix);
	return hand_over(fd, path, what, fix, flags, out, err);
}

int
fb_dir_make(const char *path, const char *what, const char *fix, unsigned flags, struct fb_error *err)
{
	char buf[PATH_MAX];
	if (!path[0] || snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return fb_seterr(err, FB_BASE_EINVAL, "%s %s: path too long or empty", what, path);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char c = *p;
		*p = 0;
		int last = !c || !p[1];
		if (mkdir(buf, last && (flags & FB_DIR_SHARED) ? 0770 : 0700) == 0) {
			/* setgid keeps the group on everything below; the umask may have taken g+rwx */
			if (last && (flags & FB_DIR_SHARED) && chmod(buf, 02770) != 0)
				return fb_seterr(err, FB_BASE_EIO, "cannot chmod %s: %s", buf, strerror(errno));
		} else if (errno != EEXIST) {
			return fb_seterr(err, FB_BASE_EIO, "cannot create %s %s: %s", what, buf, strerror(errno));
		}
		*p = c;
		if (!c)
			break;
	}
	return fb_dir_check(path, what, fix, flags, err);
}

/* Ten random letters and digits: getrandom, else the clock and the pid (O_EXCL keeps even a
 * guessed name safe; randomness only keeps others from blocking names in advance). */
static void
random_suffix(char *out, unsigned attempt)
{
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[10];
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20) ^
		                       ((unsigned long long)getpid() << 40) ^ attempt * 0x9e3779b97f4a7c15ull;
		for (size_t i = 0; i < sizeof(r); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			r[i] = (unsigned char)x;
		}
	}
	for (size_t i = 0; i < sizeof(r); i++)
		out[i] = alnum[r[i] % (sizeof(alnum) - 1)];
	out[sizeof(r)] = 0;
}

int
fb_tmp_openat(int dirfd, const char *target, int mode, char *tmp, size_t tmpsize, int *fd, struct fb_error *err)
{
	*fd = -1;
	for (unsigned attempt = 0; attempt < 64; attempt++) {
		char suffix[16];
		random_suffix(suffix, attempt);
		int k = snprintf(tmp, tmpsize, "%s.tmp.%s", target, suffix);
		if (k < 0 || (size_t)k >= tmpsize)
			return fb_seterr(err, FB_BASE_EINVAL, "%s: path too long", target);
		int f = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
		if (f >= 0) {
			*fd = f;
			return 0;
		}
		if (errno != EEXIST)
			return fb_seterr(err, FB_BASE_EIO, "cannot write %s: %s", target, strerror(errno));
	}
	return fb_seterr(err, FB_BASE_EIO, "cannot write %s: no free temporary name beside it", target);
}

int
fb_tmp_open(const char *target, int mode, char *tmp, size_t tmpsize, int *fd, struct fb_error *err)
{
	return fb_tmp_openat(AT_FDCWD, target, mode, tmp, tmpsize, fd, err);
}

int
fb_write_at(int dirfd, const char *name, const char *path, const void *data, size_t size, int mode,
            bool exact_mode, struct fb_error *err)
{
	char tmp[PATH_MAX + 32]; /* name may be a path (fb_write_file_atomic) */
	int fd;
	int rc = fb_tmp_openat(dirfd, name, mode, tmp, sizeof(tmp), &fd, err);
	if (rc)
		return rc;
	const unsigned char *p = data;
	size_t left = size;
	int bad = exact_mode && fchmod(fd, (mode_t)mode) != 0;
	while (!bad && left > 0) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			bad = 1;
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) != 0)
		bad = 1;
	if (!bad && renameat(dirfd, tmp, dirfd, name) == 0)
		return 0;
	int saved = errno;
	unlinkat(dirfd, tmp, 0);
	return fb_seterr(err, FB_BASE_EIO, "cannot write %s: %s", path, strerror(saved));
}

int
fb_write_file_atomic(const char *path, const void *data, size_t size, int mode, struct fb_error *err)
{
	return fb_write_at(AT_FDCWD, path, path, data, size, mode ? mode : 0666, false, err);
}

/* New components get 0777 through the umask, like any directory the user makes: the directory
 * is the user's output, never read back, so none of fb_dir_make's checks apply. */
int
fb_dir_make_output(const char *path, struct fb_error *err)
{
	char p[PATH_MAX];
	int n = snprintf(p, sizeof(p), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(p))
		return fb_seterr(err, FB_BASE_EINVAL, "%s: path too long", path);
	for (char *c = p + 1;; c++) {
		if (*c == '/' || !*c) {
			char keep = *c;
			*c = 0;
			if (mkdir(p, 0777) != 0 && errno != EEXIST)
				return fb_seterr(err, FB_BASE_EIO, "cannot create %s: %s", p, strerror(errno));
			*c = keep;
			if (!keep)
				break;
		}
	}
	return 0;
}

const char *
fb_file_kind(mode_t mode)
{
	return S_ISFIFO(mode)  ? "a FIFO"
	       : S_ISCHR(mode) ? "a character device"
	       : S_ISBLK(mode) ? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISDIR(mode) ? "a directory"
	       : S_ISLNK(mode) ? "a symlink"
	                       : "not a regular file";
}

/* O_NONBLOCK: open(2) on a FIFO otherwise waits for a writer, and on some devices for carrier
 * or media; it changes nothing for a regular file (reads from disk never return EAGAIN). */
int
fb_open_regular(const char *path, int flags, int *fd, struct stat *st, struct fb_error *err)
{
	struct stat own;
	if (!st)
		st = &own;
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
	if (*fd < 0)
		return fb_seterr(err, FB_BASE_EIO, "cannot open %s: %s", path, strerror(errno));
	if (fstat(*fd, st) != 0) {
		int e = errno;
		close(*fd);
		*fd = -1;
		return fb_seterr(err, FB_BASE_EIO, "cannot stat %s: %s", path, strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		close(*fd);
		*fd = -1;
		return fb_seterr(err, FB_BASE_EIO, "%s: not a regular file (%s)", path, fb_file_kind(st->st_mode));
	}
	return 0;
}

FILE *
fb_fopen_regular(const char *path, int flags)
{
	int fd;
	if (fb_open_regular(path, flags, &fd, NULL, NULL) != 0)
		return NULL;
	FILE *f = fdopen(fd, "re");
	if (!f)
		close(fd);
	return f;
}

/* stat follows a symlink, so "-o link" to an input is caught too; what lstat sees decides what
 * the rename would replace (a symlink itself is replaced, never what it names). */
int
fb_output_check(const char *what, const char *out, const char *const *inputs, size_t ninputs, struct fb_error *err)
{
	struct stat os, ls, is;
	bool have = stat(out, &os) == 0;
	if (lstat(out, &ls) == 0 && !S_ISREG(ls.st_mode) && !S_ISLNK(ls.st_mode))
		return fb_seterr(err, FB_BASE_EINVAL,
		                 "%s %s is not a regular file (%s): an output replaces what is at its name; name a file",
		                 what, out, fb_file_kind(ls.st_mode));
	for (size_t i = 0; i < ninputs; i++) {
		if (strcmp(out, inputs[i]) == 0)
			return fb_seterr(err, FB_BASE_EINVAL,
			                 "%s %s is also an input: the output would replace it; write it elsewhere", what, out);
		if (have && stat(inputs[i], &is) == 0 && is.st_dev == os.st_dev && is.st_ino == os.st_ino)
			return fb_seterr(err, FB_BASE_EINVAL,
			                 "%s %s is the input %s (the same file): the output would replace it; write it "
			                 "elsewhere",
			                 what, out, inputs[i]);
	}
	return 0;
}

int
fb_read_fd(int fd, const char *path, char **data, size_t *size, struct fb_error *err)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return fb_seterr(err, FB_BASE_EIO, "cannot stat %s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fb_seterr(err, FB_BASE_EIO, "%s: not a regular file (%s)", path, fb_file_kind(st.st_mode));
	}
	if ((uint64_t)st.st_size > (uint64_t)1 << 31) {
		close(fd);
		return fb_seterr(err, FB_BASE_ETOOBIG, "%s: larger than 2 GiB", path);
	}
	size_t cap = (size_t)st.st_size, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return fb_seterr(err, FB_BASE_ENOMEM, "out of memory");
	}
	for (;;) {
		if (n == cap) { /* the file grew while we read it */
			char *nb = cap < ((size_t)1 << 31) ? realloc(buf, 2 * cap + 4096 + 1) : NULL;
			if (!nb) {
				free(buf);
				close(fd);
				return fb_seterr(err, FB_BASE_ETOOBIG, "%s: too large", path);
			}
			buf = nb;
			cap = 2 * cap + 4096;
		}
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return fb_seterr(err, FB_BASE_EIO, "cannot read %s: %s", path, strerror(e));
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = 0;
	*data = buf;
	*size = n;
	return 0;
}

int
fb_read_file(const char *path, char **data, size_t *size, struct fb_error *err)
{
	*data = NULL;
	*size = 0;
	int fd, rc = fb_open_regular(path, 0, &fd, NULL, err);
	if (rc)
		return rc;
	return fb_read_fd(fd, path, data, size, err);
}

int
fb_mkdirs(const char *path, struct fb_error *err)
{
	return fb_dir_make(path, "directory", "use a directory of your own", 0, err);
}

/* Removes what dirfd holds, down to depth more levels of directories; links and special files
 * are unlinked (unlinkat never follows the last component), directories opened O_NOFOLLOW.
 * 0 when it is empty afterwards. */
static int
empty_at(int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return -1;
	}
	int left = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			left++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			left += unlinkat(dirfd, e->d_name, 0) != 0;
			continue;
		}
		int sub = depth > 0 ? openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (sub < 0 || empty_at(sub, depth - 1) != 0 || unlinkat(dirfd, e->d_name, AT_REMOVEDIR) != 0)
			left++;
	}
	closedir(d); /* closes dirfd */
	return left ? -1 : 0;
}

int
fb_dir_removeat(int parentfd, const char *name, int depth)
{
	int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (empty_at(fd, depth) != 0)
		return -1;
	return unlinkat(parentfd, name, AT_REMOVEDIR);
}

void
fb_dir_remove(const char *dir, int depth)
{
	fb_dir_removeat(AT_FDCWD, dir, depth);
}
