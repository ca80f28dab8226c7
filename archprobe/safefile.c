/* safefile.c: the probe cache is read only from, and written only into, places no other user can
 * write; its temporary files get random names created with O_EXCL|O_NOFOLLOW; files are read
 * only when they are regular files, never waiting on a FIFO or a device. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "safefile_int.h"

static bool
mine_and_private(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool
ap_cachefile_trusted(const char *path, char *why, size_t whysize)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, whysize, "cannot open the directory %s: %s", dir, strerror(errno));
		return false;
	}
	if (fstat(fd, &st) != 0 || !mine_and_private(&st)) {
		snprintf(why, whysize, "the directory %s is owned by uid %ld, mode %04o: it must be yours and "
		         "writable by nobody else", dir, (long)st.st_uid, (unsigned)st.st_mode & 07777);
		close(fd);
		return false;
	}
	close(fd);
	if (lstat(path, &st) != 0)
		return true; /* not there yet */
	if (!S_ISREG(st.st_mode) || !mine_and_private(&st)) {
		snprintf(why, whysize, "%s is %s owned by uid %ld, mode %04o: it must be your own regular file, "
		         "writable by nobody else", path, S_ISLNK(st.st_mode) ? "a symlink" : "a file",
		         (long)st.st_uid, (unsigned)st.st_mode & 07777);
		return false;
	}
	return true;
}

FILE *
ap_fopen_regular(const char *path, int flags)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
	if (fd < 0)
		return NULL;
	FILE *f = NULL;
	if (fstat(fd, &st) != 0)
		;
	else if (!S_ISREG(st.st_mode))
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	else
		f = fdopen(fd, "re");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int
ap_tmpfile_open(const char *target, char *tmp, size_t tmpsize)
{
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	for (unsigned attempt = 0; attempt < 64; attempt++) {
		unsigned char r[10];
		char suffix[sizeof(r) + 1];
		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			/* O_EXCL keeps a guessable name safe; randomness only avoids collisions */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32) ^
			                       (attempt + 1) * 0x9e3779b97f4a7c15ull;
			for (size_t i = 0; i < sizeof(r); i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				r[i] = (unsigned char)x;
			}
		}
		for (size_t i = 0; i < sizeof(r); i++)
			suffix[i] = alnum[r[i] % (sizeof(alnum) - 1)];
		suffix[sizeof(r)] = 0;
		int k = snprintf(tmp, tmpsize, "%s.tmp.%s", target, suffix);
		if (k < 0 || (size_t)k >= tmpsize)
			return -1;
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}
