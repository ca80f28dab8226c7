/* cliutil.c: messages, die-on-OOM allocation and JSON strings for the two CLIs only; their bad
 * options and near-miss arch names, each said in one line with what was likely meant. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliutil.h"
#include "error.h"
#include "strbuf.h"

/* One printable line whatever the arguments hold (fb_text_oneline, as for the libraries'
 * messages). why: strerror of the errno the caller saw, appended, or NULL. */
static void
vline(const char *prefix, const char *why, const char *fmt, va_list ap)
{
	char line[8192];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (why && n >= 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, " %s", why);
	fb_text_oneline(line);
	fprintf(stderr, "%s%s\n", prefix, line);
}

void
vwarn(const char *fmt, va_list ap)
{
	int saved = errno;
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "%s: ", cli_prog);
	vline(prefix, fmt[0] && fmt[strlen(fmt) - 1] == ':' ? strerror(saved) : NULL, fmt, ap);
}

void
warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline("", NULL, fmt, ap);
	va_end(ap);
}

_Noreturn void
fatal(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(code);
}

void
cli_exit_codes(FILE *f)
{
	fputs("Exit codes: The same in archprobe and fatbuild (docs/exit-codes.md):\n"
	      "  0    success\n"
	      "  1    the job failed: a build or compile error, no image fits, no visible GPU for native, no\n"
	      "       toolkit, an input that is missing or not a regular file\n"
	      "  2    usage or bad input: a bad option, an unparseable or unsupported arch, an output that\n"
	      "       names an input\n"
	      "  3    no CUDA driver\n"
	      "  4    the driver is NVIDIA's stub library\n"
	      "  5    driver error\n"
	      "  6    the device probe timed out or crashed\n"
	      "  7    a build, build root or cache directory another user could write into; nothing was\n"
	      "       read from it or written (docs/security.md)\n"
	      "  129, 130, 143\n"
	      "       stopped by SIGHUP, SIGINT (Ctrl-C) or SIGTERM, 128 + the signal: what it started was\n"
	      "       stopped and nothing written\n",
	      f);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		fatal(1, "out of memory");
	return p;
}

void *
xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		fatal(1, "out of memory");
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t m)
{
	if (m && n > (size_t)-1 / m)
		fatal(1, "out of memory");
	p = realloc(p, (n * m) != 0 ? n * m : 1);
	if (!p)
		fatal(1, "out of memory");
	return p;
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

void
json_str(const char *s, size_t n)
{
	struct fb_buf b = {0};
	fb_buf_json(&b, s, n);
	if (b.oom)
		fatal(1, "out of memory");
	fwrite(b.s, 1, b.len, stdout);
	free(b.s);
}

/* ---- what a mistyped word likely meant ---- */

/* Two bytes a slip of the eye or of the shift key confuses: a case change, O/0, l/1, I/1, _/-. */
static bool
lookalike(int a, int b)
{
	a = tolower(a);
	b = tolower(b);
	if (a == b)
		return true;
	if (a > b) {
		int t = a;
		a = b;
		b = t;
	}
	return (a == '0' && b == 'o') || (a == '1' && (b == 'l' || b == 'i')) || (a == '-' && b == '_');
}

#define WORD_MAX 64

/* The optimal-string-alignment distance of a[0..an) and b[0..bn) in half edits: an insertion,
 * deletion, substitution or swap of neighbours costs 2, a look-alike substitution 1. Words
 * longer than WORD_MAX are far from everything. */
static int
distance(const char *a, size_t an, const char *b, size_t bn)
{
	static const int far = 1000;
	int d[WORD_MAX + 1][WORD_MAX + 1];
	if (an > WORD_MAX || bn > WORD_MAX)
		return far;
	for (size_t i = 0; i <= an; i++)
		d[i][0] = 2 * (int)i;
	for (size_t j = 0; j <= bn; j++)
		d[0][j] = 2 * (int)j;
	for (size_t i = 1; i <= an; i++) {
		for (size_t j = 1; j <= bn; j++) {
			unsigned char x = (unsigned char)a[i - 1], y = (unsigned char)b[j - 1];
			int sub = x == y ? 0 : lookalike(x, y) ? 1 : 2;
			int v = d[i - 1][j - 1] + sub;
			if (d[i - 1][j] + 2 < v)
				v = d[i - 1][j] + 2;
			if (d[i][j - 1] + 2 < v)
				v = d[i][j - 1] + 2;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 2 < v)
				v = d[i - 2][j - 2] + 2;
			d[i][j] = v;
		}
	}
	return d[an][bn];
}

/* The search for the word meant: the closest candidate so far and the ones typed is a prefix of.
 * check (NULL: every candidate will do) keeps out a candidate it does not accept (below 0). */
struct near {
	const char *typed; /* without its leading dashes */
	size_t tn;
	int best, ties, nprefix;
	char pick[WORD_MAX + 16], prefix[WORD_MAX + 16];
	int (*check)(const char *cand, void *ctx);
	void *ctx;
};

static void
near_init(struct near *b, const char *typed, size_t n)
{
	memset(b, 0, sizeof(*b));
	while (n && *typed == '-')
		typed++, n--;
	b->typed = typed;
	b->tn = n;
	b->best = -1;
}

static void
near_add(struct near *b, const char *cand)
{
	const char *c = cand + strspn(cand, "-");
	size_t cn = strlen(c), longer = cn > b->tn ? cn : b->tn;
	if (!b->tn || !cn || strlen(cand) >= sizeof(b->pick))
		return;
	int d = distance(b->typed, b->tn, c, cn);
	bool near_enough = d <= 4 && (size_t)d < longer && (b->best < 0 || d <= b->best) && strcmp(b->pick, cand);
	bool prefix = b->tn < cn && strncmp(b->typed, c, b->tn) == 0 && strcmp(b->prefix, cand) != 0;
	if ((!near_enough && !prefix) || (b->check && b->check(cand, b->ctx) < 0))
		return;
	if (near_enough) {
		b->ties = d == b->best ? b->ties + 1 : 0;
		if (d != b->best)
			snprintf(b->pick, sizeof(b->pick), "%s", cand);
		b->best = d;
	}
	if (prefix && b->nprefix++ == 0)
		snprintf(b->prefix, sizeof(b->prefix), "%s", cand);
}

static bool
near_result(const struct near *b, char *out, size_t size)
{
	const char *r = b->best >= 0 && !b->ties ? b->pick : b->nprefix == 1 ? b->prefix : NULL;
	if (r)
		snprintf(out, size, "%s", r);
	return r != NULL;
}

bool
cli_suggest(const char *typed, const char *const *cands, char *out, size_t size)
{
	struct near b;
	near_init(&b, typed, strlen(typed));
	for (size_t i = 0; cands && cands[i]; i++)
		near_add(&b, cands[i]);
	return near_result(&b, out, size);
}

/* ---- bad options ---- */

/* The line of cli_bad_option, with b's pick (typed: word's name) offered for an unknown one. */
static void
bad_option(const char *cmd, const char *word, size_t n, enum cli_bad why, const struct near *b)
{
	char pick[WORD_MAX + 16], hint[WORD_MAX + 40] = "";
	size_t hn = cmd ? strcspn(cmd, " ") : 0;
	if (why == CLI_UNKNOWN && near_result(b, pick, sizeof(pick)))
		snprintf(hint, sizeof(hint), " (did you mean '%s'?)", pick);
	warn("%s%s%s '%.*s'%s%s; see '%s%s%.*s --help'", cmd ? cmd : "", cmd ? ": " : "",
	     why == CLI_UNKNOWN ? "unknown option" : "option", (int)(n < 200 ? n : 200), word,
	     why == CLI_NEEDS_VALUE ? " needs a value" : why == CLI_NO_VALUE ? " takes no value" : "", hint, cli_prog,
	     cmd ? " " : "", (int)hn, cmd ? cmd : "");
}

/* How much of word names the option: a long option's "=VALUE" is not part of it. */
static size_t
name_len(const char *word)
{
	return word[0] == '-' && word[1] == '-' ? strcspn(word, "=") : strlen(word);
}

void
cli_bad_option(const char *cmd, const char *word, enum cli_bad why, const char *const *known)
{
	struct near b;
	size_t n = name_len(word);
	near_init(&b, word, n);
	for (size_t i = 0; known && known[i]; i++)
		near_add(&b, known[i]);
	bad_option(cmd, word, n, why, &b);
}

void
cli_bad_value(const char *cmd, const char *opt, const char *value, const char *const *words)
{
	char list[256] = "", pick[WORD_MAX + 16], hint[WORD_MAX + 40] = "";
	size_t n = 0, hn = strcspn(cmd, " ");
	while (words[n])
		n++;
	for (size_t i = 0, at = 0; i < n && at < sizeof(list); i++) {
		int w = snprintf(list + at, sizeof(list) - at, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", words[i]);
		at += w > 0 ? (size_t)w : 0;
	}
	if (cli_suggest(value, words, pick, sizeof(pick)))
		snprintf(hint, sizeof(hint), "; did you mean '%s'?", pick);
	warn("%s: invalid %s '%.200s' (%s%s); see '%s %.*s --help'", cmd, opt, value, list, hint, cli_prog, (int)hn,
	     cmd);
}

/* cli_bad_option with the options of shorts and longs offered. */
static void
getopt_bad(const char *cmd, const char *word, size_t n, enum cli_bad why, const char *shorts,
           const struct option *longs)
{
	struct near b;
	char cand[WORD_MAX + 4];
	near_init(&b, word, n);
	for (size_t i = 0; longs && longs[i].name; i++) {
		snprintf(cand, sizeof(cand), "--%s", longs[i].name);
		near_add(&b, cand);
	}
	for (const char *s = shorts; *s; s++) {
		if (*s == ':' || *s == '+' || *s == '-')
			continue;
		snprintf(cand, sizeof(cand), "-%c", *s);
		near_add(&b, cand);
	}
	bad_option(cmd, word, n, why, &b);
}

static const struct option *
long_named(const struct option *longs, const char *name, size_t n)
{
	for (size_t i = 0; longs && longs[i].name; i++)
		if (strlen(longs[i].name) == n && strncmp(longs[i].name, name, n) == 0)
			return &longs[i];
	return NULL;
}

/* A long option typed with one dash ("-lineinfo", as nvcc spells them), which getopt reads as
 * the cluster -l -i -n ...: true when w is such a word, holds the short option ch getopt failed
 * on, and names a long option but for a dash. */
static bool
one_dash_long(const char *w, int ch, const struct option *longs)
{
	if (!w || ch <= 0 || ch > 255 || w[0] != '-' || w[1] == '-' || !w[1] || !w[2] || !strchr(w + 1, ch))
		return false;
	size_t n = strcspn(w + 1, "=");
	return long_named(longs, w + 1, n) != NULL;
}

/* getopt's error ('?' or ':') said. A long option's error consumes its word, so argv[optind - 1]
 * is that word when optind moved (words getopt skips to permute are operands, never "--X"); a
 * short option's error may stop inside a cluster ("-Zv", still argv[optind]) or at its end
 * (argv[optind - 1]), and only optopt names the option. */
static void
getopt_error(int c, int before, int argc, char **argv, const char *shorts, const struct option *longs,
             const char *cmd)
{
	const char *w = optind > before && optind > 0 ? argv[optind - 1] : NULL;
	if (w && w[0] == '-' && w[1] == '-' && w[2]) {
		size_t n = name_len(w);
		const struct option *o = long_named(longs, w + 2, n - 2);
		enum cli_bad why = CLI_UNKNOWN;
		if (o && c == ':')
			why = CLI_NEEDS_VALUE;
		else if (o && w[n] == '=')
			why = CLI_NO_VALUE;
		getopt_bad(cmd, w, n, why, shorts, longs);
		return;
	}
	const char *at = optind < argc ? argv[optind] : NULL, *end = optind > 0 ? argv[optind - 1] : NULL;
	const char *word = one_dash_long(at, optopt, longs) ? at : one_dash_long(end, optopt, longs) ? end : NULL;
	if (c == '?' && word) {
		getopt_bad(cmd, word, strcspn(word, "="), CLI_UNKNOWN, shorts, longs);
		return;
	}
	char s[3] = {'-', (char)(optopt > 0 && optopt < 256 ? optopt : '?'), 0};
	getopt_bad(cmd, s, 2, c == ':' ? CLI_NEEDS_VALUE : CLI_UNKNOWN, shorts, longs);
}

int
cli_getopt(int argc, char **argv, const char *shorts, const struct option *longs, const char *cmd)
{
	char opts[64];
	size_t lead = shorts[0] == '+' || shorts[0] == '-';
	snprintf(opts, sizeof(opts), "%.*s:%s", (int)lead, shorts, shorts + lead + (shorts[lead] == ':'));
	int before = optind, idx = -1;
	opterr = 0;
	int c = getopt_long(argc, argv, opts, longs, &idx);
	if (c == '?' || c == ':') {
		getopt_error(c, before, argc, argv, shorts, longs, cmd);
		return '?';
	}
	if (c == -1 || idx < 0)
		return c;
	/* A long option: its word is the last one read, or the one before its value. */
	const char *w = optarg && optind >= 2 && optarg == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];
	size_t n = name_len(w);
	if (n - 2 != strlen(longs[idx].name)) {
		getopt_bad(cmd, w, n, CLI_UNKNOWN, shorts, longs);
		return '?';
	}
	return c;
}

/* ---- near-miss arch names ---- */

static bool
has_sm(const int *v, int n, int sm)
{
	for (int i = 0; i < n; i++)
		if (v[i] == sm)
			return true;
	return false;
}

/* The spellings of one arch with suffix v ("", "a", "f") offered to b. */
static void
arch_spellings(struct near *b, int sm, const char *v)
{
	char w[48];
	snprintf(w, sizeof(w), "%d.%d%s", sm / 10, sm % 10, v);
	near_add(b, w);
	snprintf(w, sizeof(w), "%d.%d%s+PTX", sm / 10, sm % 10, v);
	near_add(b, w);
	static const char *const forms[] = {"%d%s", "%d%s-real", "%d%s-virtual", "sm_%d%s", "compute_%d%s"};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(w, sizeof(w), forms[i], sm, v);
		near_add(b, w);
	}
}

int
cli_arch_item_check(const char *item, void *ctx)
{
	const struct cli_resolver *r = ctx;
	struct ap_archlist *l = NULL;
	int rc = r->resolve(item, r->opts, &l, NULL);
	r->release(l);
	return rc == 0 ? 0 : rc == r->parse_error ? -1 : 1;
}

bool
cli_arch_suggest(const char *list, int (*check)(const char *item, void *ctx), void *ctx,
                 const struct cli_arches *ks, char *out, size_t size)
{
	static const char seps[] = " \t\n\r\v\f,;";
	static const char *const keywords[] = {"native", "auto", "all", "all-major"};
	char item[WORD_MAX + 1];
	const char *p = list ? list : "";
	for (p += strspn(p, seps); *p; p += strspn(p, seps)) {
		size_t n = strcspn(p, seps);
		if (n >= sizeof(item))
			return false; /* too long to be a slip, and too long to be the item that parsed */
		memcpy(item, p, n);
		item[n] = 0;
		p += n;
		if (check(item, ctx) >= 0)
			continue;
		struct near b;
		near_init(&b, item, n);
		b.check = check;
		b.ctx = ctx;
		for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
			near_add(&b, keywords[k]);
		for (int i = 0; i < ks->nsm; i++) {
			arch_spellings(&b, ks->sm[i], "");
			if (has_sm(ks->a, ks->na, ks->sm[i]))
				arch_spellings(&b, ks->sm[i], "a");
			if (has_sm(ks->f, ks->nf, ks->sm[i]))
				arch_spellings(&b, ks->sm[i], "f");
		}
		return near_result(&b, out, size);
	}
	return false;
}
