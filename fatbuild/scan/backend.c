/* backend.c: --backend auto. NVRTC compiles device code only; a .cu file that also holds host
 * code goes to nvcc. A lexical scan decides, never a compile (docs/backend.md): comments and
 * literals blanked, the conditionals NVRTC skips blanked (ppcond.c), then in the file and in the
 * user's headers it includes (found beside the includer or in the -I dirs) a host #include, a
 * <<< launch, or a function defined at file or namespace scope without __global__/__device__
 * (main among them) means nvcc. Headers of the toolkit in use are NVRTC's own: only their
 * #includes are read, in the branches NVRTC is known to take, so a host header they include
 * outside any NVRTC guard (thrust/complex.h's <cmath>) still means nvcc. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "base/safefs.h"
#include "hosthdr.h"
#include "ppcond.h"

#define MAXDEPTH 32
#define MAXFILE (16u << 20)

static char *
slurp(const char *path, size_t *len)
{
	int fd;
	if (fb_open_regular(path, 0, &fd, NULL, NULL) != 0)
		return NULL;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return NULL;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *p = cap > MAXFILE ? NULL : realloc(buf, cap);
			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* Replaces comments by blanks and the contents of string and character literals by 'x',
 * keeping newlines, so line numbers stay right. */
static void
blank_comments(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				s[i++] = ' ';
		} else if (s[i] == '/' && s[i + 1] == '*') {
			s[i++] = ' ';
			s[i++] = ' ';
			while (i < n && !(s[i] == '*' && s[i + 1] == '/')) {
				if (s[i] != '\n')
					s[i] = ' ';
				i++;
			}
			if (i < n) {
				s[i++] = ' ';
				s[i] = ' ';
			}
		} else if (s[i] == '"' || s[i] == '\'') {
			char q = s[i++];
			/* A quote inside a #include line is the header name: keep it. */
			size_t b = i - 1;
			while (b > 0 && s[b - 1] != '\n')
				b--;
			while (s[b] == ' ' || s[b] == '\t')
				b++;
			bool keep = s[b] == '#';
			while (i < n && s[i] != q && s[i] != '\n') {
				bool esc = s[i] == '\\' && i + 1 < n && s[i + 1] != '\n';
				if (!keep)
					s[i] = 'x';
				i++;
				if (esc) {
					if (!keep)
						s[i] = 'x';
					i++;
				}
			}
		}
	}
}

static size_t
line_of(const char *s, const char *p)
{
	size_t line = 1;
	for (; s < p; s++)
		line += *s == '\n';
	return line;
}

static bool
is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether the word w occurs as a whole identifier in [s, e). */
static bool
has_word(const char *s, const char *e, const char *w)
{
	size_t wl = strlen(w);
	for (const char *p = s; p + wl <= e; p++)
		if (memcmp(p, w, wl) == 0 && (p == s || !is_ident(p[-1])) && (p + wl == e || !is_ident(p[wl])))
			return true;
	return false;
}

/* A set of paths: open addressing, FNV-1a. */
struct pathset {
	char **slot;
	size_t cap, n;
};

static size_t
path_hash(const char *p)
{
	size_t h = 14695981039346656037u;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211u;
	return h;
}

static bool
pathset_has(const struct pathset *ps, const char *p)
{
	if (!ps->cap)
		return false;
	for (size_t i = path_hash(p) & (ps->cap - 1);; i = (i + 1) & (ps->cap - 1)) {
		if (!ps->slot[i])
			return false;
		if (strcmp(ps->slot[i], p) == 0)
			return true;
	}
}

/* Adds p (copied); -1 when memory ran out. */
static int
pathset_add(struct pathset *ps, const char *p)
{
	if (2 * (ps->n + 1) > ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 256;
		char **slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return -1;
		for (size_t i = 0; i < ps->cap; i++) {
			if (!ps->slot[i])
				continue;
			size_t j = path_hash(ps->slot[i]) & (cap - 1);
			while (slot[j])
				j = (j + 1) & (cap - 1);
			slot[j] = ps->slot[i];
		}
		free(ps->slot);
		ps->slot = slot;
		ps->cap = cap;
	}
	size_t i = path_hash(p) & (ps->cap - 1);
	while (ps->slot[i])
		i = (i + 1) & (ps->cap - 1);
	if (!(ps->slot[i] = strdup(p)))
		return -1;
	ps->n++;
	return 0;
}

static void
pathset_clear(struct pathset *ps)
{
	for (size_t i = 0; i < ps->cap; i++)
		free(ps->slot[i]);
	free(ps->slot);
	*ps = (struct pathset){0};
}

struct fb_backend_scan {
	const char *const *incdirs;
	size_t nincdirs;
	char tkroot[PATH_MAX]; /* the toolkit's real path, "" when none */
	char tkdirs[2][PATH_MAX]; /* its include/cccl and include, searched after incdirs */
	size_t ntkdirs;
	struct pathset clean; /* real paths of files whose whole include tree is device code */
	/* One file's scan: */
	char *why;
	size_t whysize;
	struct pathset seen; /* real paths read */
	size_t ntoolkit;     /* toolkit headers read */
	bool oom;
};
static bool say(struct fb_backend_scan *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool
say(struct fb_backend_scan *sc, const char *fmt, ...)
{
	if (sc->why && sc->whysize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(sc->why, sc->whysize, fmt, ap);
		va_end(ap);
	}
	return true;
}

static bool scan_file(struct fb_backend_scan *sc, const char *path, const char *real, int depth, bool toolkit);

/* Where NVRTC finds an #include: beside the includer ("..." only), then the -I dirs, then the
 * toolkit's include dirs, as fatbuild compile passes them. */
static bool
resolve(const struct fb_backend_scan *sc, const char *dir, const char *name, bool quoted, char *cand, size_t size)
{
	struct stat st;
	if (quoted && (size_t)snprintf(cand, size, "%s%s", dir, name) < size && stat(cand, &st) == 0 &&
	    S_ISREG(st.st_mode))
		return true;
	for (size_t i = 0; i < sc->nincdirs + sc->ntkdirs; i++) {
		const char *d = i < sc->nincdirs ? sc->incdirs[i] : sc->tkdirs[i - sc->nincdirs];
		if ((size_t)snprintf(cand, size, "%s/%s", d, name) < size && stat(cand, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

/* Whether the real path lies in the toolkit in use. */
static bool
under_toolkit(const struct fb_backend_scan *sc, const char *real)
{
	size_t n = strlen(sc->tkroot);
	return n && strncmp(real, sc->tkroot, n) == 0 && real[n] == '/';
}

/* The #include lines: a host header decides; a header found ("..." beside the includer, both
 * kinds in the -I dirs) is scanned in turn. Each directive
 * line (with its continuations) is blanked afterwards, so the code scan skips the preprocessor. */
static bool
scan_directives(struct fb_backend_scan *sc, const char *path, char *s, int depth, bool toolkit)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		dir[0] = 0;
	for (char *line = s; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '#')
			continue;
		char *q = p + 1;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, "include", 7) == 0) {
			q += 7;
			while (*q == ' ' || *q == '\t')
				q++;
			char close = *q == '<' ? '>' : *q == '"' ? '"' : 0;
			char *end = close ? strchr(q + 1, close) : NULL;
			char *nl = strchr(q, '\n');
			if (end && (!nl || end < nl) && end - q - 1 < 256) {
				char name[256];
				memcpy(name, q + 1, (size_t)(end - q - 1));
				name[end - q - 1] = 0;
				char cand[PATH_MAX], real[PATH_MAX];
				bool found = resolve(sc, dir, name, close == '"', cand, sizeof(cand));
				if (found && !realpath(cand, real))
					snprintf(real, sizeof(real), "%s", cand);
				bool tk = found && under_toolkit(sc, real);
				/* A "..." name a toolkit header does not find on disk is one NVRTC has built in
				 * (cuda_runtime.h's "target"). */
				bool builtin = toolkit && !found && close == '"';
				if ((!tk || (!toolkit && fb_host_api_header(name))) && !builtin && fb_host_header(name))
					return say(sc, "%s:%zu includes the host header <%s>%s", path, line_of(s, line), name,
					           toolkit ? " outside any NVRTC guard" : "");
				if (found && depth < MAXDEPTH && scan_file(sc, cand, real, depth + 1, tk))
					return true;
			}
		}
		/* Blank the directive and its continuation lines. */
		char *c = p;
		for (; *c; c++) {
			if (*c == '\n') {
				if (c > p && c[-1] == '\\') {
					continue;
				}
				break;
			}
			*c = ' ';
		}
	}
	return false;
}

/* Whether [s, e), the text between a ')' and a '{', is what may follow a function's parameter
 * list: blanks, const, volatile, noexcept, override, final, mutable, & and &&, a trailing
 * return type (->) or a constructor's initialiser list (:). */
static bool
function_tail(const char *s, const char *e)
{
	static const char *const quals[] = {"const", "volatile", "noexcept", "override", "final", "mutable"};
	while (s < e) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '&') {
			s++;
			continue;
		}
		if (*s == ':' || (*s == '-' && s + 1 < e && s[1] == '>'))
			return true;
		const char *w = s;
		while (s < e && is_ident(*s))
			s++;
		if (s == w)
			return false;
		bool q = false;
		for (size_t i = 0; !q && i < sizeof(quals) / sizeof(quals[0]); i++)
			q = (size_t)(s - w) == strlen(quals[i]) && memcmp(w, quals[i], (size_t)(s - w)) == 0;
		if (!q)
			return false;
	}
	return true;
}

/* Whether every "<<<" in s lies inside one of the n bodies [b[i], e[i]) of __global__ or
 * __device__ functions: a launch from device code (dynamic parallelism, with --rdc) is device
 * code; any other launch is host code. Returns the first host launch, or NULL. */
static const char *
host_launch(const char *s, const char *const *b, const char *const *e, size_t n, bool overflow)
{
	for (const char *q = strstr(s, "<<<"); q; q = strstr(q + 3, "<<<")) {
		bool dev = false;
		for (size_t i = 0; !dev && i < n; i++)
			dev = q >= b[i] && q < e[i];
		if (!dev || overflow)
			return q;
	}
	return NULL;
}

enum brace { B_SCOPE, B_DEVICE, B_OTHER };

/* What the '{' at p opens, by its declaration [decl, p): a namespace or extern "C" scope, the
 * body of a __global__/__device__ function, or anything else. The first host function's name
 * goes into *hostfn (hostlen bytes) while *hostfn is NULL. */
static enum brace
brace_kind(const char *decl, const char *p, const char **hostfn, int *hostlen)
{
	const char *paren = NULL, *eq = NULL;
	int depth = 0;
	for (const char *c = decl; c < p; c++) {
		if (*c == '(') {
			if (depth == 0)
				paren = c;
			depth++;
		} else if (*c == ')') {
			depth--;
		} else if (*c == '=' && depth == 0 && !paren && c[1] != '=' && (c == decl || !strchr("=!<>", c[-1]))) {
			eq = c;
		}
	}
	if (!paren && !eq && (has_word(decl, p, "namespace") || has_word(decl, p, "extern")))
		return B_SCOPE;
	if (!paren || eq)
		return B_OTHER;
	/* The last top-level '(' of the declaration: the parameter list, when only qualifiers
	 * (const, noexcept, -> T, : init) follow its ')'. */
	const char *last = paren, *close = NULL;
	depth = 0;
	for (const char *c = decl; c < p; c++) {
		if (*c == '(' && depth++ == 0)
			last = c;
		else if (*c == ')' && --depth == 0)
			close = c;
	}
	bool device = has_word(decl, p, "__global__") || has_word(decl, p, "__device__");
	if (close && function_tail(close + 1, p) && !device && !*hostfn) {
		const char *e = last;
		while (e > decl && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
			e--;
		const char *b = e;
		while (b > decl && (is_ident(b[-1]) || b[-1] == ':'))
			b--;
		*hostfn = b;
		*hostlen = (int)(e - b);
	} else if (close && device) {
		return B_DEVICE;
	}
	return B_OTHER;
}

/* Function definitions at file scope (and inside namespace / extern "C" blocks): a '{' whose
 * declaration, since the last ';', '{' or '}' of that scope, has a parenthesised parameter list
 * and no '=' before it. Other braces (classes, initialisers, bodies) are skipped whole. A
 * <<<...>>> launch outside the bodies of __global__/__device__ functions is reported first,
 * then the first host function. */
static bool
scan_code(struct fb_backend_scan *sc, const char *path, const char *s)
{
	enum { MAXDEV = 256 };
	const char *devb[MAXDEV], *deve[MAXDEV];
	size_t ndev = 0;
	bool overflow = false;
	const char *hostfn = NULL; /* the first host function's name, hostlen bytes */
	int hostlen = 0;
	const char *p, *decl = s;
	for (p = s; *p; p++) {
		if (*p == ';' || *p == '}') {
			decl = p + 1;
			continue;
		}
		if (*p != '{')
			continue;
		enum brace kind = brace_kind(decl, p, &hostfn, &hostlen);
		if (kind == B_SCOPE) {
			decl = p + 1;
			continue;
		}
		/* Skip the braced block whole. */
		const char *body = p;
		int depth = 0;
		for (; *p; p++) {
			if (*p == '{')
				depth++;
			else if (*p == '}' && --depth == 0)
				break;
		}
		if (kind == B_DEVICE && ndev < MAXDEV) {
			devb[ndev] = body;
			deve[ndev++] = p;
		} else if (kind == B_DEVICE) {
			overflow = true;
		}
		if (!*p)
			break;
		decl = p + 1;
	}
	const char *q = host_launch(s, devb, deve, ndev, overflow);
	if (q)
		return say(sc, "%s:%zu launches a kernel with <<<...>>>", path, line_of(s, q));
	if (hostfn) {
		int nl = hostlen;
		if (nl == 4 && memcmp(hostfn, "main", 4) == 0)
			return say(sc, "%s:%zu defines main", path, line_of(s, hostfn));
		return say(sc, "%s:%zu defines the host function %.*s (no __global__ or __device__)", path,
		           line_of(s, hostfn), nl > 0 && nl < 200 ? nl : 1, nl > 0 && nl < 200 ? hostfn : "?");
	}
	return false;
}

/* Records the file at real as read; false when it was read before, belongs to a tree known
 * clean, or memory ran out. */
static bool
first_visit(struct fb_backend_scan *sc, const char *real)
{
	if (pathset_has(&sc->clean, real) || pathset_has(&sc->seen, real))
		return false;
	if (pathset_add(&sc->seen, real) != 0) {
		sc->oom = true;
		return false;
	}
	return true;
}

/* One file: a user's in full; a toolkit header's #includes only, in the branches NVRTC is
 * known to take (an undecided condition there is the toolkit's own guard). */
static bool
scan_file(struct fb_backend_scan *sc, const char *path, const char *real, int depth, bool toolkit)
{
	if (!first_visit(sc, real))
		return false;
	size_t n = 0;
	char *s = slurp(path, &n);
	if (!s)
		return false;
	sc->ntoolkit += toolkit;
	blank_comments(s, n);
	fb_pp_blank_inactive(s, toolkit);
	bool host = scan_directives(sc, path, s, depth, toolkit) || (!toolkit && scan_code(sc, path, s));
	free(s);
	return host;
}

/* The toolkit NVRTC comes from: cuda_home, its real path and include dirs. */
static void
set_toolkit(struct fb_backend_scan *sc, const char *cuda_home)
{
	struct stat st;
	if (!cuda_home || !*cuda_home || !realpath(cuda_home, sc->tkroot)) {
		sc->tkroot[0] = 0;
		return;
	}
	static const char *const sub[] = {"include/cccl", "include"};
	for (size_t i = 0; i < 2; i++) {
		char *d = sc->tkdirs[sc->ntkdirs];
		if ((size_t)snprintf(d, PATH_MAX, "%s/%s", cuda_home, sub[i]) < PATH_MAX && stat(d, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			sc->ntkdirs++;
	}
}

struct fb_backend_scan *
fb_backend_scan_new(const char *const *incdirs, size_t nincdirs, const char *cuda_home)
{
	struct fb_backend_scan *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	sc->incdirs = incdirs;
	sc->nincdirs = nincdirs;
	set_toolkit(sc, cuda_home);
	return sc;
}

void
fb_backend_scan_free(struct fb_backend_scan *sc)
{
	if (!sc)
		return;
	pathset_clear(&sc->clean);
	pathset_clear(&sc->seen);
	free(sc);
}

/* A file found device code only makes every file it read clean for the files after it: what
 * a header means does not depend on who includes it (the -I dirs are the same). */
static void
remember_clean(struct fb_backend_scan *sc)
{
	for (size_t i = 0; i < sc->seen.cap && !sc->oom; i++)
		if (sc->seen.slot[i] && pathset_add(&sc->clean, sc->seen.slot[i]) != 0)
			sc->oom = true;
}

bool
fb_backend_scan_needs_nvcc(struct fb_backend_scan *sc, const char *path, char *why, size_t whysize)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	sc->why = why;
	sc->whysize = whysize;
	sc->ntoolkit = 0;
	sc->oom = false;
	pathset_clear(&sc->seen);
	/* A source an earlier file included was read in full then. */
	bool host = !pathset_has(&sc->clean, real) && scan_file(sc, path, real, 0, false);
	if (!host && why && whysize) {
		if (sc->oom)
			snprintf(why, whysize, "%s: not scanned whole (out of memory): NVRTC", path);
		else if (sc->ntoolkit)
			snprintf(why, whysize,
			         "%s: device code only (no host header, host-side <<<, main or host function; "
			         "%zu toolkit headers read as NVRTC reads them)",
			         path, sc->ntoolkit);
		else
			snprintf(why, whysize, "%s: device code only (no host header, host-side <<<, main or host function)",
			         path);
	}
	if (!host && !sc->oom)
		remember_clean(sc);
	pathset_clear(&sc->seen);
	return host;
}

bool
fb_cu_needs_nvcc(const char *path, const char *const *incdirs, size_t nincdirs, const char *cuda_home, char *why,
                 size_t whysize)
{
	struct fb_backend_scan *sc = fb_backend_scan_new(incdirs, nincdirs, cuda_home);
	if (!sc) {
		if (why && whysize)
			snprintf(why, whysize, "%s: not scanned (out of memory): NVRTC", path);
		return false;
	}
	bool host = fb_backend_scan_needs_nvcc(sc, path, why, whysize);
	fb_backend_scan_free(sc);
	return host;
}
