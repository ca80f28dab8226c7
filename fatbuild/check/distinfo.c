/* distinfo.c: which distribution a file belongs to (docs/check-environment.md §4). An installed
 * wheel leaves NAME-VERSION.dist-info/ beside its files: METADATA (core metadata, RFC 822
 * headers: "Name: torch", "Version: 2.15.0", up to the first blank line) and RECORD (CSV, one
 * line per installed file: path relative to the dist-info's parent, hash, size; a path holding a
 * comma or quote is quoted, "" standing for a quote). A wheel carries the same dist-info inside;
 * an sdist has NAME-VERSION/PKG-INFO in the METADATA format. Without metadata an archive is named
 * by its file name (NAME-VERSION-PY-ABI-PLAT.whl, NAME-VERSION.tar.gz). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"

/* A copy of s[0..n) with blank space trimmed and control bytes as '?'; NULL when out of memory. */
static char *
dup_clean(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++)
		d[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	d[n] = 0;
	return d;
}

/* The value of header key (with its ':') on the line l[0..n), or NULL. */
static const char *
header(const char *l, size_t n, const char *key, size_t *vlen)
{
	size_t k = strlen(key);
	if (n < k || strncasecmp(l, key, k) != 0)
		return NULL;
	*vlen = n - k;
	return l + k;
}

int
fb_dist_metadata(const char *text, size_t n, char **name, char **version)
{
	*name = *version = NULL;
	const char *nv = NULL, *vv = NULL;
	size_t nl = 0, vl = 0;
	for (size_t i = 0; i < n;) {
		size_t e = i;
		while (e < n && text[e] != '\n')
			e++;
		size_t len = e - i;
		if (len && text[i + len - 1] == '\r')
			len--;
		if (len == 0)
			break; /* the body starts */
		size_t l;
		const char *v;
		if (!nv && (v = header(text + i, len, "Name:", &l)))
			nv = v, nl = l;
		else if (!vv && (v = header(text + i, len, "Version:", &l)))
			vv = v, vl = l;
		i = e + 1;
	}
	if (!nv)
		return FB_EFORMAT;
	*name = dup_clean(nv, nl);
	*version = vv ? dup_clean(vv, vl) : dup_clean("", 0);
	if (!*name || !*version || !**name) {
		int rc = *name && *version ? FB_EFORMAT : FB_ENOMEM;
		free(*name);
		free(*version);
		*name = *version = NULL;
		return rc;
	}
	return FB_OK;
}

int
fb_dist_record(const char *text, size_t n, int (*fn)(const char *path, size_t len, void *ctx), void *ctx)
{
	char field[4096];
	size_t i = 0;
	while (i < n) {
		size_t fl = 0;
		bool over = false;
		if (text[i] == '"') {
			for (i++; i < n; i++) {
				if (text[i] == '"') {
					if (i + 1 < n && text[i + 1] == '"')
						i++;
					else
						break;
				}
				if (fl + 1 < sizeof(field))
					field[fl++] = text[i];
				else
					over = true;
			}
			i++; /* the closing quote */
		} else {
			for (; i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r'; i++) {
				if (fl + 1 < sizeof(field))
					field[fl++] = text[i];
				else
					over = true;
			}
		}
		/* the rest of the line (hash, size) and the quoted fields in it are not needed */
		bool quoted = false;
		for (; i < n && (quoted || text[i] != '\n'); i++)
			if (text[i] == '"')
				quoted = !quoted;
		i++;
		if (fl && !over) {
			int rc = fn(field, fl, ctx);
			if (rc)
				return rc;
		}
	}
	return FB_OK;
}

int
fb_path_join(const char *base, const char *path, size_t len, char *out, size_t size)
{
	if (size == 0 || (len && path[0] == '/'))
		return -1;
	size_t o = 0;
	out[0] = 0;
	for (int part = 0; part < 2; part++) {
		const char *s = part ? path : base;
		size_t n = part ? len : strlen(base);
		for (size_t i = 0; i < n;) {
			size_t e = i;
			while (e < n && s[e] != '/')
				e++;
			size_t cl = e - i;
			if (cl == 0 || (cl == 1 && s[i] == '.')) {
				/* nothing */
			} else if (cl == 2 && s[i] == '.' && s[i + 1] == '.') {
				if (o == 0)
					return -1;
				while (o && out[o - 1] != '/')
					o--;
				if (o)
					o--;
				out[o] = 0;
			} else {
				if (memchr(s + i, 0, cl) || o + (o ? 1 : 0) + cl + 1 > size)
					return -1;
				if (o)
					out[o++] = '/';
				memcpy(out + o, s + i, cl);
				o += cl;
				out[o] = 0;
			}
			i = e + 1;
		}
	}
	return 0;
}

int
fb_dist_from_filename(const char *file, char **name, char **version)
{
	const char *b = strrchr(file, '/');
	b = b ? b + 1 : file;
	static const char *const exts[] = {".whl", ".dist-info", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar", ".zip", ".egg"};
	size_t n = strlen(b), stem = n;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t el = strlen(exts[i]);
		if (n > el && strcasecmp(b + n - el, exts[i]) == 0) {
			stem = n - el;
			break;
		}
	}
	/* NAME-VERSION...: the version is the first dash-separated part after the name that starts
	 * with a digit (names may hold dashes, versions start with one). */
	const char *dash = NULL;
	for (size_t i = 1; i + 1 < stem; i++)
		if (b[i] == '-' && b[i + 1] >= '0' && b[i + 1] <= '9') {
			dash = b + i;
			break;
		}
	if (!dash || stem == n) {
		*name = dup_clean(b, n);
		*version = dup_clean("", 0);
		if (*name && *version)
			return -1;
		free(*name);
		free(*version);
		*name = *version = NULL;
		return FB_ENOMEM;
	}
	const char *ve = dash + 1;
	while (ve < b + stem && *ve != '-')
		ve++;
	*name = dup_clean(b, (size_t)(dash - b));
	*version = dup_clean(dash + 1, (size_t)(ve - dash - 1));
	if (!*name || !*version) {
		free(*name);
		free(*version);
		*name = *version = NULL;
		return FB_ENOMEM;
	}
	return FB_OK;
}
