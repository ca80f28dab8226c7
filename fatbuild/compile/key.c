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

#include "compile.h"

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
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	unsigned char d[32];
	int rc = fb_sha256_fd(fd, cancel, d);
	close(fd);
	if (rc)
		return -1;
	fb_sha256_hex(d, hex);
	return 0;
}

int
fb_key_nvrtc(const char *cache_dir, const char *ident, const volatile sig_atomic_t *cancel, char *out, size_t size)
{
	/* ident: "nvrtc VERSION FILE SIZE MTIME"; FILE may hold blanks, so split from the right. */
	int version = 0, used = 0;
	const char *last = strrchr(ident, ' ');
	const char *prev = last;
	while (prev && prev > ident && *--prev != ' ')
		;
	if (sscanf(ident, "nvrtc %d %n", &version, &used) != 1 || !last || !prev || prev <= ident + used ||
	    !cache_dir || !*cache_dir)
		return -1;
	char file[PATH_MAX];
	int flen = (int)(prev - (ident + used));
	if (flen <= 0 || flen >= (int)sizeof(file))
		return -1;
	memcpy(file, ident + used, (size_t)flen);
	file[flen] = 0;
	struct stat st;
	if (stat(file, &st) != 0)
		return -1;
	/* The digest is remembered per (file, inode, size, mtime): hashing 100 MB of NVRTC in
	 * every compile process would cost more than most cache hits save. */
	char memo[PATH_MAX + 8], dir[PATH_MAX], hex[65];
	struct fb_sha256 s;
	unsigned char d[32];
	char idbuf[PATH_MAX + 96];
	snprintf(idbuf, sizeof(idbuf), "%s %llu %llu %lld %ld", file, (unsigned long long)st.st_dev,
	         (unsigned long long)st.st_ino, (long long)st.st_size, (long)st.st_mtime);
	fb_sha256_init(&s);
	fb_sha256_str(&s, idbuf);
	fb_sha256_final(&s, d);
	fb_sha256_hex(d, hex);
	if (snprintf(dir, sizeof(dir), "%s/nvrtc", cache_dir) >= (int)sizeof(dir) ||
	    snprintf(memo, sizeof(memo), "%s/%s", dir, hex) >= (int)sizeof(memo))
		return -1;
	char *text = NULL;
	size_t n = 0;
	char digest[65] = "";
	if (fb_read_file(memo, &text, &n, NULL) == 0 && n == 64 && strspn(text, "0123456789abcdef") == 64)
		memcpy(digest, text, 65);
	free(text);
	if (!digest[0]) {
		if (hash_file(file, cancel, digest) != 0)
			return -1;
		/* Best effort, and only into a cache that exists: a failed compile creates nothing. */
		struct stat cd;
		if (stat(cache_dir, &cd) == 0 && S_ISDIR(cd.st_mode) && fb_mkdirs(dir, NULL) == 0)
			fb_write_file_atomic(memo, digest, 64, 0644, NULL);
	}
	if (snprintf(out, size, "nvrtc %d sha256 %s", version, digest) >= (int)size)
		return -1;
	return 0;
}
