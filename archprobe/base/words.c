/* words.c: a command held in one variable (CC="ccache gcc -m64") split into its words, as the
 * shell splits an unquoted $CC with the default IFS: at runs of blanks (space, tab, newline)
 * and nowhere else. No quotes, no backslashes, no globbing, no other expansion: what make,
 * meson and PyTorch's cpp_extension (whose build.ninja uses $CXX unquoted) do with it. A line of
 * shell split as sh would, for what the toolkit reads back (an edge's remote command as
 * fb_shell_quote wrote it, a line of nvcc's --dryrun plan). And the one PATH search, which finds
 * a command's first word. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "words.h"

static const char blanks[] = " \t\n";

int
fb_words_split(const char *s, char ***words, size_t *n, struct fb_error *err)
{
	*words = NULL;
	if (n)
		*n = 0;
	size_t count = 0;
	for (const char *p = s ? s : ""; *(p += strspn(p, blanks));) {
		count++;
		p += strcspn(p, blanks);
	}
	char **v = calloc(count + 1, sizeof(*v));
	if (!v)
		return fb_seterr(err, FB_BASE_ENOMEM, "out of memory");
	size_t k = 0;
	for (const char *p = s ? s : ""; *(p += strspn(p, blanks));) {
		size_t len = strcspn(p, blanks);
		if (!(v[k] = strndup(p, len))) {
			fb_words_free(v);
			return fb_seterr(err, FB_BASE_ENOMEM, "out of memory");
		}
		k++;
		p += len;
	}
	*words = v;
	if (n)
		*n = count;
	return 0;
}

void
fb_words_free(char **words)
{
	for (size_t i = 0; words && words[i]; i++)
		free(words[i]);
	free(words);
}

/* ---- a line of shell ---- */

const char *
fb_words_var(const struct fb_strlist *vars, const char *name, size_t n)
{
	for (size_t i = vars->n; i-- > 0;)
		if (strncmp(vars->v[i], name, n) == 0 && vars->v[i][n] == '=')
			return vars->v[i] + n + 1;
	return NULL;
}

size_t
fb_words_name(const char *s)
{
	size_t n = 0;
	while (s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

/* $NAME or ${NAME} at *s into b; false for an unset name or a bad ${. */
static bool
expand(const char **s, const struct fb_strlist *vars, struct fb_buf *b)
{
	const char *p = *s + 1;
	bool brace = *p == '{';
	p += brace;
	size_t n = fb_words_name(p);
	const char *v = n ? fb_words_var(vars, p, n) : NULL;
	if (!v || (brace && p[n] != '}'))
		return false;
	fb_buf_puts(b, v);
	*s = p + n + brace;
	return true;
}

/* One quoted part at *s ("..." with $ expanded from vars, '...' as it is) into b. */
static bool
quoted(const char **s, const struct fb_strlist *vars, struct fb_buf *b)
{
	char q = **s;
	const char *p = *s + 1;
	while (*p && *p != q) {
		if (q == '"' && *p == '\\' && p[1] && strchr("\"\\$`", p[1])) {
			fb_buf_put(b, p + 1, 1);
			p += 2;
		} else if (q == '"' && *p == '$') {
			if (!expand(&p, vars, b))
				return false;
		} else if (q == '"' && *p == '`') {
			return false;
		} else
			fb_buf_put(b, p++, 1);
	}
	if (*p != q)
		return false;
	*s = p + 1;
	return true;
}

/* Whether c outside quotes is taken as it is (fb_words_shell). */
static bool
plain(char c, bool strict, bool vars)
{
	if (strict)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_./=+,:@%-", c);
	return !strchr("|&;<>()`*?[\\", c) && (vars || (c != '"' && c != '$'));
}

int
fb_words_shell(const char *s, const struct fb_strlist *vars, bool strict, struct fb_strlist *out,
               struct fb_error *err)
{
	struct fb_buf w = {0};
	bool in = false, ok = true;
	while (ok) {
		char c = *s;
		if (!c || c == ' ' || c == '\t') {
			if (in)
				fb_strlist_add(out, w.s ? w.s : "");
			in = false;
			w.len = 0;
			if (w.s)
				w.s[0] = 0;
			if (!c)
				break;
			s++;
			continue;
		}
		in = true;
		if (c == '\'' || (c == '"' && vars))
			ok = quoted(&s, vars, &w);
		else if (c == '$' && vars)
			ok = expand(&s, vars, &w);
		else if (c == '\\' && s[1]) {
			fb_buf_put(&w, s + 1, 1);
			s += 2;
		} else if (plain(c, strict, vars))
			fb_buf_put(&w, s++, 1);
		else
			ok = false;
	}
	int rc = ok ? 0 : 1;
	if (w.oom || out->oom)
		rc = fb_seterr(err, FB_BASE_ENOMEM, "out of memory");
	free(w.s);
	return rc;
}

bool
fb_path_next(const char **pos, const char *prog, char *cand, size_t size)
{
	if (!*pos)
		*pos = "/usr/bin:/bin";
	while (**pos) {
		const char *dir = *pos;
		size_t n = strcspn(dir, ":");
		*pos = dir + n + (dir[n] == ':');
		int w = snprintf(cand, size, "%.*s/%s", (int)n, dir, prog);
		if (n && w >= 0 && (size_t)w < size && access(cand, X_OK) == 0)
			return true;
	}
	return false;
}
