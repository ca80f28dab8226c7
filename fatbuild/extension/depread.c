/* depread.c: gcc-style depfiles as the edge cache reads them (the compiler's, a PCH's, the
 * remote's) and the one it writes for ninja, less the quiet directories' headers
 * (docs/pytorch.md "Builds with nothing to do"). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "edgecache.h"
#include "plumbing.h"

const char *
fb_depfile_deps(const char *text)
{
	for (const char *p = text; *p; p++) {
		if (p[0] == '\\' && p[1]) {
			p++;
			continue;
		}
		if (p[0] == ':' && (!p[1] || strchr(" \t\r\n\\", p[1])))
			return p + 1;
	}
	return text;
}

bool
fb_depfile_next(const char **pos, char *out, size_t size)
{
	const char *p = *pos;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r')))
		p += p[0] == '\\' ? 2 : 1;
	if (!*p)
		return false;
	size_t n = 0;
	while (*p && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r')))) {
		if ((p[0] == '\\' && (p[1] == ' ' || p[1] == '#' || p[1] == '\\')) || (p[0] == '$' && p[1] == '$'))
			p++;
		if (n + 1 < size)
			out[n++] = *p;
		p++;
	}
	out[n] = 0;
	*pos = p;
	return true;
}

/* Whether path lies below one of o->quiet. */
static bool
quiet(const struct fb_edge_opts *o, const char *path)
{
	for (size_t i = 0; i < o->nquiet; i++) {
		size_t n = strlen(o->quiet[i]);
		while (n > 1 && o->quiet[i][n - 1] == '/')
			n--;
		if (n && strncmp(path, o->quiet[i], n) == 0 && path[n] == '/')
			return true;
	}
	return false;
}

int
fb_edge_write_depfile(const struct fb_edge_opts *o, char *const *deps, size_t n, struct fb_error *err)
{
	const char **keep = malloc((n ? n : 1) * sizeof(*keep));
	if (!keep)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!quiet(o, deps[i]))
			keep[k++] = deps[i];
	int rc = fb_depfile_write(o->depfile, o->output, keep, k, err);
	free(keep);
	return rc;
}
