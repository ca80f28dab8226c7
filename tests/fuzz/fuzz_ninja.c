/* fuzz_ninja.c: the build.ninja escapers and writer (ninja.c). Every escaped string is decoded
 * again the way ninja 1.11 (lexer.in.cc) and a POSIX shell read it, and must come back as the
 * input. Input: up to four NUL-separated strings s0..s3.
 * Invariants (abort on violation):
 *  - fb_ninja_escape_path: ninja's path lexer reads the result as ONE path equal to the input
 *    (a path ends at an unescaped ' ', ':', '|' or newline; "$$", "$ ", "$:" are the escapes);
 *    an input that cannot be written (newline, '|') is FB_EINVAL with a one-line message;
 *  - fb_ninja_escape_value: ninja's value lexer (leading blanks dropped, "$$" → '$', a '$'
 *    before a name is a variable) gives back the input;
 *  - fb_shell_quote: sh reads the result as one word equal to the input, with no expansion;
 *  - fb_ninja_var/edge: a statement built from the strings has the same number of lines as
 *    one built from plain words (nothing injects a line), or is refused and leaves the text
 *    as it was. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "extension/ninja.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ninja path: returns the decoded path or NULL when the text is not exactly one path. */
static char *
ninja_path(const char *s)
{
	char *o = malloc(strlen(s) + 1), *w = o;
	if (!o)
		return NULL;
	for (const char *p = s; *p; p++) {
		if (*p == ' ' || *p == ':' || *p == '|' || *p == '\n' || *p == '\r') {
			free(o);
			return NULL;
		}
		if (*p == '$') {
			p++;
			if (*p != '$' && *p != ' ' && *p != ':') {
				free(o);
				return NULL;
			}
		}
		*w++ = *p;
	}
	*w = 0;
	return o;
}

/* ninja value (after "name = "): leading blanks are eaten by the lexer. */
static char *
ninja_value(const char *s)
{
	char *o = malloc(strlen(s) + 1), *w = o;
	if (!o)
		return NULL;
	while (*s == ' ')
		s++;
	for (const char *p = s; *p; p++) {
		if (*p == '\n' || *p == '\r') {
			free(o);
			return NULL;
		}
		if (*p == '$') {
			p++;
			if (*p != '$' && *p != ' ' && *p != ':') {
				free(o);
				return NULL;
			}
		}
		*w++ = *p;
	}
	*w = 0;
	return o;
}

/* sh word: unquoted safe characters, '...' (no escapes inside) and \x outside quotes. */
static char *
sh_word(const char *s)
{
	char *o = malloc(strlen(s) + 1), *w = o;
	if (!o)
		return NULL;
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				*w++ = *p;
			if (!*p) {
				free(o);
				return NULL;
			}
		} else if (*p == '\\' && p[1]) {
			*w++ = *++p;
		} else if (strchr(" \t\n\"`$&|;<>()*?[]#~{}!\\", *p)) {
			free(o);
			return NULL;
		} else {
			*w++ = *p;
		}
	}
	*w = 0;
	if (w == o && !strstr(s, "''")) { /* an empty word must still be a word */
		free(o);
		return NULL;
	}
	return o;
}

static void
check_err(int rc, const struct fb_error *err)
{
	if (rc != FB_EINVAL && rc != FB_ENOMEM)
		abort();
	if (err->code != rc || !err->msg[0] || strchr(err->msg, '\n'))
		abort();
}

static size_t
lines(const char *t)
{
	size_t n = 0;
	for (; *t; t++)
		n += *t == '\n';
	return n;
}

static void
one(const char *s)
{
	struct fb_error err = {0};
	char *e = NULL;
	int rc = fb_ninja_escape_path(s, &e, &err);
	if (rc == 0) {
		char *d = ninja_path(e);
		if (!d || strcmp(d, s) != 0)
			abort();
		free(d);
		free(e);
	} else {
		check_err(rc, &err);
		if (e || (!strchr(s, '\n') && !strchr(s, '\r') && !strchr(s, '|')))
			abort();
	}
	rc = fb_ninja_escape_value(s, &e, &err);
	if (rc == 0) {
		char *d = ninja_value(e);
		if (!d || strcmp(d, s) != 0)
			abort();
		free(d);
		free(e);
	} else {
		check_err(rc, &err);
		if (e || (!strchr(s, '\n') && !strchr(s, '\r')))
			abort();
	}
	rc = fb_shell_quote(s, &e, &err);
	if (rc == 0) {
		char *d = sh_word(e);
		if (!d || strcmp(d, s) != 0)
			abort();
		free(d);
		free(e);
	} else {
		check_err(rc, &err);
		if (e || (!strchr(s, '\n') && !strchr(s, '\r')))
			abort();
	}
}

static void
statement(const char *const s[4], size_t *nlines, int *rc)
{
	struct fb_ninja *n = fb_ninja_new();
	if (!n)
		abort();
	struct fb_error err = {0};
	size_t before = lines(fb_ninja_text(n));
	const char *out[1] = {s[2]}, *in[1] = {s[3]}, *vars[2] = {"cmd", s[1]};
	struct fb_ninja_edge e = {"cc", out, 1, in, 1, NULL, 0, NULL, 0, vars, 1};
	rc[0] = fb_ninja_var(n, s[0], s[1], &err);
	if (rc[0] && lines(fb_ninja_text(n)) != before)
		abort();
	before = lines(fb_ninja_text(n));
	rc[1] = fb_ninja_edge(n, &e, &err);
	if (rc[1] && lines(fb_ninja_text(n)) != before)
		abort();
	*nlines = lines(fb_ninja_text(n));
	fb_ninja_free(n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	const char *s[4] = {"", "", "", ""};
	size_t k = 0;
	for (size_t i = 0; i <= size && k < 4; k++) {
		s[k] = buf + i;
		i += strlen(buf + i) + 1;
	}
	for (size_t i = 0; i < 4; i++)
		one(s[i]);
	const char *plain[4] = {"v", "x", "o", "i"};
	size_t nref, nfuzz;
	int rref[2], rfuzz[2];
	statement(plain, &nref, rref);
	statement(s, &nfuzz, rfuzz);
	if (rref[0] || rref[1])
		abort();
	/* a refused statement adds no line; an accepted one adds as many as the plain one */
	size_t want = nref - (rfuzz[0] ? 1 : 0) - (rfuzz[1] ? 3 : 0);
	if (nfuzz != want)
		abort();
	free(buf);
	return 0;
}
