/* depfile.c: what a kernel reads. NVRTC has no -M/-MD (13.0 answers "unrecognized option -MD"),
 * so the #include graph is resolved here with NVRTC's search rules: a quoted include is looked
 * up beside the including file, then in the -I directories; an angle include in the -I
 * directories. The scan is conservative: it follows includes in every #if branch (files that
 * do not exist are skipped), which can only make a cache key or a depfile larger, never miss a
 * file NVRTC reads. Includes it cannot resolve (NVRTC's built-in headers, computed
 * "#include MACRO") are skipped; fb_deps_scan_root says where the first computed one is, and
 * adds what a remote job's input root needs beyond the list (docs/remote-cache.md §9). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "depfile.h"
#include "base/error.h"
#include "base/safefs.h"
#include "plumbing.h"

/* Files seen, by identity. */
struct seen {
	struct {
		dev_t dev;
		ino_t ino;
	} *v;
	size_t n, cap;
};

static int
seen_add(struct seen *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		void *v = realloc(s->v, cap * sizeof(*s->v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].dev = st->st_dev;
	s->v[s->n].ino = st->st_ino;
	s->n++;
	return 1;
}

/* Joins dir and name; "a/b/../c" with a real "b" becomes "a/c" only through realpath, so
 * lexical ".." stays (correct across symlinks). "./x" loses its "./". */
static int
join(char *buf, size_t size, const char *dir, size_t dirlen, const char *name)
{
	int k;
	if (name[0] == '/')
		k = snprintf(buf, size, "%s", name);
	else if (dirlen == 0 || (dirlen == 1 && dir[0] == '.'))
		k = snprintf(buf, size, "%s", name);
	else
		k = snprintf(buf, size, "%.*s/%s", (int)dirlen, dir, name);
	return k > 0 && (size_t)k < size;
}

/* A path with "/../" in it is replaced by its realpath (shorter, stable depfile entries). */
static void
tidy(char *path, size_t size)
{
	if (!strstr(path, "/../"))
		return;
	char real[PATH_MAX];
	if (realpath(path, real) && strlen(real) < size)
		strcpy(path, real);
}

/* Removes comments (keeping newlines) and joins continued lines, in place. */
static void
strip_comments(char *s)
{
	char *w = s;
	char quote = 0;
	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] == '\n') {
			r += 2;
			continue;
		}
		if (quote) {
			if (*r == '\\' && r[1]) {
				*w++ = *r++;
				*w++ = *r++;
				continue;
			}
			if (*r == quote || *r == '\n')
				quote = 0;
			*w++ = *r++;
			continue;
		}
		if (r[0] == '/' && r[1] == '/') {
			while (*r && *r != '\n')
				r++;
			continue;
		}
		if (r[0] == '/' && r[1] == '*') {
			r += 2;
			while (*r && !(r[0] == '*' && r[1] == '/')) {
				if (*r == '\n')
					*w++ = '\n';
				r++;
			}
			if (*r)
				r += 2;
			*w++ = ' ';
			continue;
		}
		if (*r == '"' || *r == '\'') {
			/* A quote right after "#include" is a header name; the scanner below reads it
			 * from the line, so quoting just keeps comment markers inside it. */
			quote = *r;
		}
		*w++ = *r++;
	}
	*w = 0;
}

/* 1: a regular file; 0: nothing there, or a directory (the search goes on, as the compilers'
 * does); -1: something else, a FIFO or a device, which NVRTC would open and wait on or read for
 * ever. */
static int
exists_file(const char *path, struct stat *st)
{
	if (stat(path, st) != 0 || S_ISDIR(st->st_mode))
		return 0;
	return S_ISREG(st->st_mode) ? 1 : -1;
}

/* The header an #include or #include_next line names, or NULL: the name is cut out of line in
 * place; *close is '"' or '>', *next says include_next, *computed that the line is an include
 * of a macro ("#include MACRO"), which no scan can follow. */
static const char *
include_name(char *line, char *close, int *next, int *computed)
{
	char *q = line;
	*computed = 0;
	while (*q == ' ' || *q == '\t')
		q++;
	if (*q++ != '#')
		return NULL;
	while (*q == ' ' || *q == '\t')
		q++;
	*next = 0;
	if (strncmp(q, "include_next", 12) == 0) {
		q += 12;
		*next = 1;
	} else if (strncmp(q, "include", 7) == 0) {
		q += 7;
	} else {
		return NULL;
	}
	while (*q == ' ' || *q == '\t')
		q++;
	*close = *q == '"' ? '"' : *q == '<' ? '>' : 0;
	*computed = !*close && (*q == '_' || (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z'));
	char *end = *close ? strchr(q + 1, *close) : NULL;
	if (!end || end == q + 1)
		return NULL;
	*end = 0;
	return q + 1;
}

/* Where the compiler finds name, included from cur (its directory: curdirlen bytes): path and
 * st filled, 1; 0 when it is in none of the places searched; -1 (path filled) when the first
 * file found is not a regular file. */
static int
find_header(const char *name, char close, int next, const char *cur, size_t curdirlen, const char *const *dirs,
            size_t ndirs, char *path, size_t size, struct stat *st)
{
	int k;
	if (name[0] == '/')
		return join(path, size, "", 0, name) ? exists_file(path, st) : 0;
	if (close == '"' && !next && join(path, size, cur, curdirlen, name) && (k = exists_file(path, st)))
		return k;
	for (size_t d = 0; d < ndirs; d++)
		if (join(path, size, dirs[d], strlen(dirs[d]), name) && (k = exists_file(path, st)) &&
		    !(next && strcmp(path, cur) == 0)) /* include_next: a later directory */
			return k;
	return 0;
}

/* One scan: the files to read (todo, spelled as deps spells them: a path with "/../" by its
 * realpath) and, when the caller asks for the paths the compiler opens (extra), the same files
 * as its lookups spell them (spelled, one per todo entry). */
struct scan {
	const char *const *dirs;
	size_t ndirs;
	struct seen seen;
	struct fb_strlist todo, spelled;
	struct fb_strlist *deps, *extra;
	char *computed;
	size_t csize;
};

static size_t
dirlen_of(const char *cur)
{
	const char *slash = strrchr(cur, '/');
	if (!slash)
		return 0;
	return slash == cur ? 1 : (size_t)(slash - cur); /* "/x.h" */
}

const char **
fb_deps_dirs(const char *srcdir, char *const *opts, size_t nopts, size_t *n)
{
	const char **dirs = calloc(nopts + 1, sizeof(*dirs));
	*n = 0;
	if (!dirs)
		return NULL;
	dirs[(*n)++] = srcdir;
	for (size_t k = 0; k < nopts; k++)
		if (strncmp(opts[k], "-I", 2) == 0)
			dirs[(*n)++] = opts[k] + 2;
	return dirs;
}

int
fb_deps_find(const char *name, const char *including, const char *const *dirs, size_t ndirs, char *path, size_t size)
{
	struct stat st;
	const char *cur = including ? including : ""; /* none: the dirs alone, as for <name> */
	return find_header(name, including ? '"' : '>', 0, cur, dirlen_of(cur), dirs, ndirs, path, size, &st) == 1;
}

/* p into extra once. 0, or -1 when out of memory. */
static int
extra_add(struct scan *sc, const char *p)
{
	for (size_t i = 0; i < sc->extra->n; i++)
		if (strcmp(sc->extra->v[i], p) == 0)
			return 0;
	return fb_strlist_add(sc->extra, p);
}

/* The "__has_include(<x>)" probes of a line (also "_CCCL_HAS_INCLUDE(<x>)", a macro of it, and
 * the _next form): each file found goes into extra, since whether it exists changes what the
 * source compiles to. Probes of a macro's argument are skipped. */
static int
probes(struct scan *sc, const char *line, const char *scur)
{
	for (const char *p = line; *p; p++) {
		if ((*p != 'h' && *p != 'H') || strncasecmp(p, "has_include", 11) != 0)
			continue;
		const char *q = p + 11;
		int next = strncasecmp(q, "_next", 5) == 0;
		q += next ? 5 : 0;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q++ != '(')
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		char close = *q == '"' ? '"' : *q == '<' ? '>' : 0;
		const char *end = close ? strchr(q + 1, close) : NULL;
		if (!end || end == q + 1 || end - q > PATH_MAX / 2)
			continue;
		char name[PATH_MAX], path[PATH_MAX];
		struct stat st;
		snprintf(name, sizeof(name), "%.*s", (int)(end - q - 1), q + 1);
		if (find_header(name, close, next, scur, dirlen_of(scur), sc->dirs, sc->ndirs, path, sizeof(path), &st) > 0 &&
		    extra_add(sc, path))
			return -1;
		p = end;
	}
	return 0;
}

/* Adds the headers text (the comment-free contents of todo entry t) includes to todo and deps,
 * each file once. 0, -1 when out of memory, or FB_EIO (err says which) for an include that names
 * a file that is not a regular one. */
static int
scan_text(char *text, size_t t, struct scan *sc, struct fb_error *err)
{
	const char *cur = sc->todo.v[t], *scur = sc->extra ? sc->spelled.v[t] : cur;
	size_t curdirlen = dirlen_of(cur);
	for (char *p = text; p && *p;) {
		char *eol = strchr(p, '\n');
		if (eol)
			*eol = 0;
		char close, path[PATH_MAX], spath[PATH_MAX];
		int next, computed;
		struct stat st, sst;
		if (sc->extra && probes(sc, p, scur))
			return -1;
		const char *name = include_name(p, &close, &next, &computed);
		if (computed && sc->computed && !sc->computed[0])
			snprintf(sc->computed, sc->csize, "%s", cur);
		int found = name ? find_header(name, close, next, cur, curdirlen, sc->dirs, sc->ndirs, path, sizeof(path), &st) : 0;
		if (found < 0)
			return fb_seterr(err, FB_EIO, "%s: not a regular file (%s), included by %s", path,
			                 fb_file_kind(st.st_mode), cur);
		if (found) {
			int fresh = seen_add(&sc->seen, &st);
			if (fresh < 0)
				return -1;
			/* the path the compiler opens: looked up from the including file as it spelled it
			 * (the same lookup, and so path, when that is how deps spells it) */
			int sfound = sc->extra && strcmp(scur, cur) != 0
			                 ? find_header(name, close, next, scur, dirlen_of(scur), sc->dirs, sc->ndirs, spath,
			                               sizeof(spath), &sst)
			                 : 0;
			if (sfound <= 0)
				snprintf(spath, sizeof(spath), "%s", path);
			if (fresh) {
				tidy(path, sizeof(path));
				if (fb_strlist_add(&sc->todo, path) || fb_strlist_add(sc->deps, path) ||
				    (sc->extra && fb_strlist_add(&sc->spelled, spath)))
					return -1;
			}
			if (sc->extra && (!fresh || strcmp(spath, path) != 0) && extra_add(sc, spath))
				return -1;
		}
		p = eol ? eol + 1 : NULL;
	}
	return 0;
}

int
fb_deps_scan_root(const char *source, const char *const *dirs, size_t ndirs, struct fb_strlist *deps,
                  struct fb_strlist *extra, char *computed, size_t csize, struct fb_error *err)
{
	struct scan sc = {.dirs = dirs, .ndirs = ndirs, .deps = deps, .extra = extra, .computed = computed,
	                  .csize = csize};
	int rc = 0;
	struct stat st;
	if (computed && csize)
		computed[0] = 0;
	/* Files already listed count as seen. */
	for (size_t i = 0; i < deps->n; i++)
		if (stat(deps->v[i], &st) == 0 && seen_add(&sc.seen, &st) < 0)
			goto oom;
	if (stat(source, &st) == 0 && seen_add(&sc.seen, &st) < 0)
		goto oom;
	if (fb_strlist_add(&sc.todo, source) || (extra && fb_strlist_add(&sc.spelled, source)))
		goto oom;
	for (size_t t = 0; t < sc.todo.n; t++) {
		char *text = NULL;
		size_t size = 0;
		struct fb_error rerr = {0};
		if (fb_read_file(sc.todo.v[t], &text, &size, &rerr) != 0) {
			if (t == 0) {
				rc = fb_seterr(err, rerr.code, "%s", rerr.msg);
				goto out;
			}
			continue; /* unreadable now: NVRTC then says so */
		}
		strip_comments(text);
		int bad = scan_text(text, t, &sc, err);
		free(text);
		if (bad > 0) {
			rc = bad;
			goto out;
		}
		if (bad)
			goto oom;
	}
	goto out;
oom:
	rc = fb_seterr(err, FB_ENOMEM, "out of memory");
out:
	free(sc.seen.v);
	fb_strlist_free(&sc.todo);
	fb_strlist_free(&sc.spelled);
	return rc;
}

int
fb_deps_scan(const char *source, const char *const *dirs, size_t ndirs, struct fb_strlist *deps,
             struct fb_error *err)
{
	return fb_deps_scan_root(source, dirs, ndirs, deps, NULL, NULL, 0, err);
}

char *
fb_depfile_escape(const char *path)
{
	size_t n = 0;
	for (const char *p = path; *p; p++)
		n += (*p == ' ' || *p == '#' || *p == '$') ? 2 : 1;
	char *out = malloc(n + 1), *w = out;
	if (!out)
		return NULL;
	for (const char *p = path; *p; p++) {
		if (*p == ' ' || *p == '#')
			*w++ = '\\';
		else if (*p == '$')
			*w++ = '$';
		*w++ = *p;
	}
	*w = 0;
	return out;
}

int
fb_depfile_write(const char *path, const char *target, const char *const *deps, size_t ndeps, struct fb_error *err)
{
	if (!path || !target)
		return fb_seterr(err, FB_EINVAL, "fb_depfile_write: NULL argument");
	for (size_t i = 0; i < ndeps; i++)
		if (strchr(deps[i], '\n'))
			return fb_seterr(err, FB_EINVAL, "%s: a newline in a path cannot be written to a depfile", deps[i]);
	if (strchr(target, '\n'))
		return fb_seterr(err, FB_EINVAL, "%s: a newline in a path cannot be written to a depfile", target);
	size_t cap = 64, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (size_t i = 0; i <= ndeps; i++) {
		char *e = fb_depfile_escape(i == 0 ? target : deps[i - 1]);
		if (!e) {
			free(buf);
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		size_t need = strlen(e) + 8;
		if (n + need > cap) {
			while (n + need > cap)
				cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(e);
				free(buf);
				return fb_seterr(err, FB_ENOMEM, "out of memory");
			}
			buf = nb;
		}
		n += (size_t)sprintf(buf + n, i == 0 ? "%s:" : " \\\n  %s", e);
		free(e);
	}
	buf[n++] = '\n';
	int rc = fb_write_file_atomic(path, buf, n, 0666, err);
	free(buf);
	return rc;
}
