/* key.c: how paths enter the compile key (compile.c computes the key; docs/remote-cache.md §3
 * lists what it covers). A path below the base directory is spelled relative to it, so two
 * checkouts of the same tree in different places give the same key. That is sound only while
 * the path cannot reach the output: NVRTC writes the program name into the image only through
 * __FILE__ (and its builtin) or debug information (-G, -lineinfo), so compile.c keeps exact
 * paths whenever a source or a header below the base spells __FILE__ or assert, and whenever
 * debug information is asked for. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "key.h"
#include "base/config.h"
#include "base/safefs.h"

#define FIX "remove it or chmod go-w it (fatbuild then hashes NVRTC and nvcc's tools in every compile)"

int
fb_key_path(const char *base, const char *path, char *out, size_t size)
{
	size_t b = base ? strlen(base) : 0;
	while (b > 1 && base[b - 1] == '/')
		b--;
	const char *rest = NULL;
	if (b && strncmp(path, base, b) == 0 && (path[b] == '/' || path[b] == 0))
		rest = path + b;
	size_t need = rest ? 1 + strlen(rest) : strlen(path);
	if (need + 1 > size)
		return -1;
	if (rest) {
		out[0] = '@';
		memcpy(out + 1, rest, strlen(rest) + 1);
	} else {
		memcpy(out, path, need + 1);
	}
	return 0;
}

static int
ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int
fb_key_names_file(const char *text, size_t size)
{
	static const char *const words[] = {"__FILE__", "__builtin_FILE", "assert"};
	for (size_t i = 0; i < size; i++) {
		if (i > 0 && ident_char(text[i - 1]))
			continue;
		for (size_t w = 0; w < sizeof(words) / sizeof(*words); w++) {
			size_t n = strlen(words[w]);
			if (size - i >= n && memcmp(text + i, words[w], n) == 0 && (i + n == size || !ident_char(text[i + n])))
				return 1;
		}
	}
	return 0;
}

/* SHA-256 of a whole file, streamed; -1 also when *cancel is set between chunks (hashing
 * 100 MB of NVRTC takes long enough, in a slow build, to keep a stopped build waiting). */
static int
hash_file(const char *path, const volatile sig_atomic_t *cancel, char hex[65])
{
	int fd;
	if (fb_open_regular(path, 0, &fd, NULL, NULL) != 0)
		return -1;
	unsigned char d[32];
	int rc = fb_sha256_fd(fd, cancel, d);
	close(fd);
	if (rc)
		return -1;
	fb_sha256_hex(d, hex);
	return 0;
}

/* The per-user directory of NVRTC digests: $XDG_CACHE_HOME/fatbuild-digests, else
 * ~/.cache/fatbuild-digests. It lies outside every cache dir so that a new, cleared or shared
 * cache dir (a CI job's empty one) does not hash a toolkit this user has hashed before, and
 * `fatbuild cache` never counts or clears it. -1 when HOME and XDG_CACHE_HOME give no place. */
static int
digest_dir(const struct fb_config *cfg, char *buf, size_t size)
{
	const char *xdg = cfg->xdg_cache_home, *home = cfg->home;
	int k;
	if (xdg && xdg[0] == '/')
		k = snprintf(buf, size, "%s/fatbuild-digests", xdg);
	else if (home && home[0] == '/')
		k = snprintf(buf, size, "%s/.cache/fatbuild-digests", home);
	else
		return -1;
	return k < 0 || (size_t)k >= size ? -1 : 0;
}

/* The memo's name: a digest of what tells this file apart from any other, now or later. The
 * ctime catches a library rewritten in place with its mtime put back (cp -p, tar, touch -d);
 * nanoseconds catch two writes within a second. */
static int
memo_path(const char *dir, const char *file, const struct stat *st, char *out, size_t size)
{
	char id[PATH_MAX + 160], hex[65];
	unsigned char d[32];
	struct fb_sha256 s;
	int k = snprintf(id, sizeof(id), "%s %llu %llu %lld %lld.%09ld %lld.%09ld", file,
	                 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino, (long long)st->st_size,
	                 (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
	                 (long)st->st_ctim.tv_nsec);
	if (k < 0 || (size_t)k >= sizeof(id))
		return -1;
	fb_sha256_init(&s);
	fb_sha256_str(&s, "fatbuild-nvrtc-digest-v2");
	fb_sha256_str(&s, id);
	fb_sha256_final(&s, d);
	fb_sha256_hex(d, hex);
	k = snprintf(out, size, "%s/%s", dir, hex);
	return k < 0 || (size_t)k >= size ? -1 : 0;
}

/* A memo is believed only as this user's regular file that nobody else can write, in a
 * directory fb_dir_check passed: anything else is ignored and the library hashed. */
static int
read_memo(const char *path, char digest[65])
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	char buf[65] = "";
	ssize_t k = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size == 64)
		k = read(fd, buf, 64);
	close(fd);
	if (k != 64 || strspn(buf, "0123456789abcdef") != 64)
		return -1;
	memcpy(digest, buf, 65);
	return 0;
}

static int
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Best effort memo: a directory fb_dir_make refuses, or none at all, only means hashing every
 * time. */
int
fb_key_file_digest(const struct fb_config *cfg, const char *file, const volatile sig_atomic_t *cancel,
                   char digest[65])
{
	struct stat st, after;
	char dir[PATH_MAX], memo[PATH_MAX + 80];
	if (stat(file, &st) != 0)
		return -1;
	int memo_ok = digest_dir(cfg, dir, sizeof(dir)) == 0 && memo_path(dir, file, &st, memo, sizeof(memo)) == 0;
	if (memo_ok && fb_dir_check(dir, "digest dir", FIX, 0, NULL) == 0 && read_memo(memo, digest) == 0)
		return 0;
	if (hash_file(file, cancel, digest) != 0)
		return -1;
	/* a library replaced while it was hashed keeps no memo under the old identity */
	if (memo_ok && stat(file, &after) == 0 && same_file(&st, &after) &&
	    fb_dir_make(dir, "digest dir", FIX, 0, NULL) == 0)
		fb_write_file_atomic(memo, digest, 64, 0644, NULL);
	return 0;
}

int
fb_key_nvrtc(const struct fb_config *config, const char *ident, const volatile sig_atomic_t *cancel, char *out,
             size_t size)
{
	struct fb_config local;
	const struct fb_config *cfg = fb_config_or_read(config, &local);
	/* ident: "nvrtc VERSION FILE SIZE MTIME"; FILE may hold blanks, so split from the right. */
	int version = 0, used = 0;
	const char *last = strrchr(ident, ' ');
	const char *prev = last;
	while (prev && prev > ident && *--prev != ' ')
		;
	if (sscanf(ident, "nvrtc %d %n", &version, &used) != 1 || !last || !prev || prev <= ident + used)
		return -1;
	char file[PATH_MAX], digest[65];
	int flen = (int)(prev - (ident + used));
	if (flen <= 0 || flen >= (int)sizeof(file))
		return -1;
	memcpy(file, ident + used, (size_t)flen);
	file[flen] = 0;
	if (fb_key_file_digest(cfg, file, cancel, digest) != 0)
		return -1;
	if (snprintf(out, size, "nvrtc %d sha256 %s", version, digest) >= (int)size)
		return -1;
	return 0;
}
