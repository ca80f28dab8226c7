/* projroot.c: the project's root, and where a file spells it (projroot.h). */
#define _GNU_SOURCE /* memmem, realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/config.h"
#include "base/strbuf.h"
#include "projroot.h"

/* Whether src lies below dir (whole components). */
static bool
below(const char *src, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n > 1 && strncmp(src, dir, n) == 0 && src[n] == '/';
}

static bool
holds(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	return snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) && lstat(path, &st) == 0;
}

/* Cuts the last component of the absolute path d; false when d is "/" or a top directory. */
static bool
up(char *d)
{
	char *slash = strrchr(d, '/');
	if (!slash || slash == d)
		return false;
	*slash = 0;
	return true;
}

/* The nearest of the directories dir and those above it, "/" left out, that holds one of
 * names; false when none does. */
static bool
nearest(const char *dir, const char *const *names, char *out, size_t size)
{
	char d[PATH_MAX];
	snprintf(d, sizeof(d), "%s", dir);
	do
		for (const char *const *nm = names; *nm; nm++)
			if (holds(d, *nm)) {
				snprintf(out, size, "%s", d);
				return true;
			}
	while (up(d));
	return false;
}

int
fb_project_root(const struct fb_config *cfg, const char *src, char *root, size_t size)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = cfg ? cfg->cache_basedir : NULL;
	if (src[0] != '/' || snprintf(dir, sizeof(dir), "%s", src) >= (int)sizeof(dir))
		return -1;
	if (base && *base) {
		const char *b = below(src, base) ? base : realpath(base, real) && below(src, real) ? real : NULL;
		if (b) {
			snprintf(root, size, "%s", b);
			size_t n = strlen(root);
			while (n > 1 && root[n - 1] == '/')
				root[--n] = 0;
			return 0;
		}
	}
	*strrchr(dir, '/') = 0;
	if (!dir[0])
		return -1;
	static const char *const tops[] = {".git", "setup.py", "pyproject.toml", NULL};
	if (nearest(dir, tops, root, size))
		return 0;
	snprintf(root, size, "%s", dir);
	char d[PATH_MAX];
	snprintf(d, sizeof(d), "%s", dir);
	while (holds(d, "CMakeLists.txt") && up(d) && holds(d, "CMakeLists.txt"))
		snprintf(root, size, "%s", d);
	return 0;
}

/* Whether the root at data[at] is where a line marker's path starts: the line from its start
 * to at is '#', optional "line", a number, a blank and '"'. */
static bool
marker_path(const char *data, size_t at)
{
	size_t b = at;
	while (b > 0 && data[b - 1] != '\n')
		b--;
	const char *p = data + b, *end = data + at;
	if (p == end || *p++ != '#')
		return false;
	while (p < end && *p == ' ')
		p++;
	if (end - p > 4 && strncmp(p, "line", 4) == 0)
		p += 4;
	while (p < end && *p == ' ')
		p++;
	const char *digits = p;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > digits && p + 2 == end && p[0] == ' ' && p[1] == '"';
}

bool
fb_root_in_markers_only(const char *data, size_t size, const char *root)
{
	size_t n = strlen(root);
	for (const char *at = data; n && (at = memmem(at, size - (size_t)(at - data), root, n)); at++) {
		size_t off = (size_t)(at - data);
		if (off + n < size && data[off + n] == '/' && !marker_path(data, off))
			return false;
	}
	return true;
}

int
fb_root_spell(const char *data, size_t size, const char *root, char **out, size_t *out_size)
{
	struct fb_buf b = {0};
	size_t n = strlen(root), i = 0;
	for (const char *at; n && i < size && (at = memmem(data + i, size - i, root, n)); ) {
		size_t off = (size_t)(at - data);
		bool spell = off + n < size && data[off + n] == '/';
		fb_buf_put(&b, data + i, off - i);
		if (spell)
			fb_buf_puts(&b, "@P");
		else
			fb_buf_put(&b, at, n);
		i = off + n;
	}
	fb_buf_put(&b, data + i, size - i);
	if (b.oom) {
		free(b.s);
		return -1;
	}
	*out = b.s ? b.s : strdup("");
	*out_size = b.len;
	return *out ? 0 : -1;
}
