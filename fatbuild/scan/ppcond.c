/* ppcond.c: which lines of a source NVRTC's preprocessor reads, as far as a lexical scan can
 * tell (docs/backend.md §2). Conditions are evaluated in three values: what NVRTC defines
 * (__CUDACC_RTC__, __CUDACC__, CCCL's _CCCL_COMPILER(NVRTC)) and does not (__NVCC__) is known;
 * any other macro, arithmetic or comparison is unknown, and unknown spreads through !, && and
 * || only where the known side does not decide. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ppcond.h"

enum { TV_F = 0, TV_T = 1, TV_U = -1 };

struct ev {
	const char *p;
	bool bad;
};

static bool
is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void
skip_ws(struct ev *e)
{
	while (*e->p == ' ' || *e->p == '\t' || *e->p == '\r' || *e->p == '\n')
		e->p++;
}

static bool
match(struct ev *e, const char *tok)
{
	skip_ws(e);
	size_t n = strlen(tok);
	if (strncmp(e->p, tok, n) != 0)
		return false;
	e->p += n;
	return true;
}

/* An identifier into buf (truncated to size - 1); its length, 0 when none starts here. */
static size_t
ident(struct ev *e, char *buf, size_t size)
{
	skip_ws(e);
	size_t n = 0;
	if (!is_ident(*e->p) || (*e->p >= '0' && *e->p <= '9'))
		return 0;
	for (; is_ident(e->p[n]); n++)
		if (n + 1 < size)
			buf[n] = e->p[n];
	buf[n + 1 < size ? n : size - 1] = 0;
	e->p += n;
	return n;
}

static int
not3(int v)
{
	return v == TV_U ? TV_U : !v;
}

static int
and3(int a, int b)
{
	if (a == TV_F || b == TV_F)
		return TV_F;
	return a == TV_T && b == TV_T ? TV_T : TV_U;
}

static int
or3(int a, int b)
{
	if (a == TV_T || b == TV_T)
		return TV_T;
	return a == TV_F && b == TV_F ? TV_F : TV_U;
}

/* defined(NAME) under NVRTC. */
static int
defined3(const char *name)
{
	if (strcmp(name, "__CUDACC_RTC__") == 0 || strcmp(name, "__CUDACC__") == 0)
		return TV_T;
	if (strcmp(name, "__NVCC__") == 0)
		return TV_F;
	return TV_U;
}

static int parse_or(struct ev *e);

/* NAME(args): CCCL's compiler test is known; any other macro call is not. */
static int
call3(struct ev *e, const char *name)
{
	const char *a = e->p;
	int depth = 1;
	for (; *e->p && depth; e->p++)
		depth += *e->p == '(' ? 1 : *e->p == ')' ? -1 : 0;
	if (depth) {
		e->bad = true;
		return TV_U;
	}
	const char *b = e->p - 1;
	while (a < b && (*a == ' ' || *a == '\t'))
		a++;
	while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
		b--;
	if (strcmp(name, "_CCCL_COMPILER") == 0 && b - a == 5 && memcmp(a, "NVRTC", 5) == 0)
		return TV_T;
	return TV_U;
}

static int
parse_primary(struct ev *e)
{
	char name[128];
	skip_ws(e);
	if (match(e, "(")) {
		int v = parse_or(e);
		if (!match(e, ")"))
			e->bad = true;
		return v;
	}
	if (*e->p >= '0' && *e->p <= '9') {
		char *end;
		unsigned long long n = strtoull(e->p, &end, 0);
		e->p = end;
		while (is_ident(*e->p)) /* 1L, 0u */
			e->p++;
		return n != 0;
	}
	if (!ident(e, name, sizeof(name))) {
		e->bad = true;
		return TV_U;
	}
	if (strcmp(name, "defined") == 0) {
		bool paren = match(e, "(");
		if (!ident(e, name, sizeof(name)) || (paren && !match(e, ")"))) {
			e->bad = true;
			return TV_U;
		}
		return defined3(name);
	}
	if (match(e, "("))
		return call3(e, name);
	/* A bare name is its value; only the two NVRTC defines as 1 are known. */
	return defined3(name) == TV_T ? TV_T : TV_U;
}

static int
parse_unary(struct ev *e)
{
	if (match(e, "!"))
		return not3(parse_unary(e));
	skip_ws(e);
	if (*e->p == '-' || *e->p == '+' || *e->p == '~') {
		e->p++;
		parse_unary(e);
		return TV_U;
	}
	return parse_primary(e);
}

/* Comparisons, arithmetic and bit operators bind tighter than && and ||: their result is
 * unknown to the scan. */
static int
parse_rel(struct ev *e)
{
	int v = parse_unary(e);
	for (;;) {
		skip_ws(e);
		const char *p = e->p;
		if (!*p || *p == ')' || strncmp(p, "&&", 2) == 0 || strncmp(p, "||", 2) == 0 || !strchr("=!<>+-*/%&|^", *p))
			return v;
		static const char *const two[] = {"==", "!=", "<=", ">=", "<<", ">>"};
		size_t n = 1;
		for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
			if (strncmp(p, two[i], 2) == 0)
				n = 2;
		e->p += n;
		parse_unary(e);
		v = TV_U;
	}
}

static int
parse_and(struct ev *e)
{
	int v = parse_rel(e);
	while (match(e, "&&"))
		v = and3(v, parse_rel(e));
	return v;
}

static int
parse_or(struct ev *e)
{
	int v = parse_and(e);
	while (match(e, "||"))
		v = or3(v, parse_and(e));
	return v;
}

int
fb_pp_eval(const char *expr)
{
	if (!expr || strchr(expr, '?'))
		return TV_U;
	struct ev e = {expr, false};
	int v = parse_or(&e);
	skip_ws(&e);
	return e.bad || *e.p ? TV_U : v;
}

/* The logical line at s (continuations joined, at most size - 1 bytes) into buf; returns the
 * end of the line (its '\n' or the terminating NUL). */
static char *
logical_line(char *s, char *buf, size_t size)
{
	size_t n = 0;
	char *c = s;
	for (; *c; c++) {
		if (*c == '\n') {
			if (c > s && c[-1] == '\\') {
				if (n)
					n--;
				continue;
			}
			break;
		}
		if (n + 1 < size)
			buf[n++] = *c;
	}
	buf[n] = 0;
	return c;
}

static void
blank(char *s, char *end)
{
	for (; s < end; s++)
		if (*s != '\n')
			*s = ' ';
}

/* The directive word of a line ("if", "include", ...) into word; the text after it. */
static const char *
directive(const char *line, char *word, size_t size)
{
	const char *p = line;
	word[0] = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '#')
		return NULL;
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = 0;
	while (is_ident(p[n]) && n + 1 < size) {
		word[n] = p[n];
		n++;
	}
	word[n] = 0;
	return p + n;
}

/* Whether "#ifndef NAME" (ifndef) or "#if !defined(NAME)" at rest is an include guard: the
 * next directive defines NAME. */
static bool
include_guard(const char *rest, const char *next, bool ifndef)
{
	char name[128], word[16], def[128];
	struct ev e = {rest, false};
	bool paren = false;
	if (!ifndef && (!match(&e, "!") || !ident(&e, word, sizeof(word)) || strcmp(word, "defined") != 0))
		return false;
	if (!ifndef)
		paren = match(&e, "(");
	if (!ident(&e, name, sizeof(name)) || (paren && !match(&e, ")")))
		return false;
	skip_ws(&e);
	if (*e.p)
		return false;
	while (*next == '\n' || *next == ' ' || *next == '\t' || *next == '\r')
		next++;
	const char *after = directive(next, word, sizeof(word));
	if (!after || strcmp(word, "define") != 0)
		return false;
	e.p = after;
	return ident(&e, def, sizeof(def)) && strcmp(def, name) == 0;
}

struct frame {
	bool parent;   /* the enclosing region is read */
	bool done;     /* an earlier branch is known taken */
	bool allfalse; /* every earlier branch is known not taken */
	bool cur;      /* this branch is read */
};

/* One conditional directive: opens, switches or closes a frame. */
static void
cond(struct frame *st, size_t *depth, size_t *lost, const char *word, const char *rest, const char *next,
     bool unknown_dead)
{
	bool live = *depth ? st[*depth - 1].cur : true;
	int v;
	if (strcmp(word, "if") == 0 || strcmp(word, "ifdef") == 0 || strcmp(word, "ifndef") == 0) {
		if (*depth == FB_PP_MAXDEPTH) {
			++*lost; /* past the depth kept: the region stays as its parent */
			return;
		}
		char name[128];
		struct ev e = {rest, false};
		if (strcmp(word, "if") == 0)
			v = fb_pp_eval(rest);
		else
			v = ident(&e, name, sizeof(name)) ? defined3(name) : TV_U;
		if (strcmp(word, "ifndef") == 0)
			v = not3(v);
		if (include_guard(rest, next, strcmp(word, "ifndef") == 0))
			v = TV_T;
		st[(*depth)++] = (struct frame){live, v == TV_T, v == TV_F, live && (v == TV_T || (v == TV_U && !unknown_dead))};
		return;
	}
	if (*lost) {
		*lost -= strcmp(word, "endif") == 0;
		return;
	}
	if (!*depth)
		return;
	struct frame *f = &st[*depth - 1];
	if (strcmp(word, "endif") == 0) {
		--*depth;
		return;
	}
	v = strcmp(word, "else") == 0 ? TV_T : fb_pp_eval(rest);
	if (f->done)
		v = TV_F;
	else if (!f->allfalse && v == TV_T)
		v = TV_U;
	f->done |= v == TV_T;
	f->allfalse &= v == TV_F;
	f->cur = f->parent && (v == TV_T || (v == TV_U && !unknown_dead));
}

void
fb_pp_blank_inactive(char *s, bool unknown_dead)
{
	struct frame st[FB_PP_MAXDEPTH];
	size_t depth = 0, lost = 0;
	char buf[4096], word[16];
	for (char *line = s; *line;) {
		char *end = logical_line(line, buf, sizeof(buf));
		const char *rest = directive(buf, word, sizeof(word));
		bool live = depth ? st[depth - 1].cur : true;
		bool is_cond = rest && (strcmp(word, "if") == 0 || strcmp(word, "ifdef") == 0 ||
		                        strcmp(word, "ifndef") == 0 || strcmp(word, "elif") == 0 ||
		                        strcmp(word, "else") == 0 || strcmp(word, "endif") == 0);
		if (is_cond)
			cond(st, &depth, &lost, word, rest, end, unknown_dead);
		else if (!live)
			blank(line, end);
		line = *end ? end + 1 : end;
	}
}
