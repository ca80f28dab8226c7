/* cliutil.h: what both command-line tools say and allocate with (cliutil.c). Linked into the two
 * CLIs alone (archprobe/cli, fatbuild/cli): a library never prints or exits. Each tool defines
 * cli_prog, the name its messages start with. */
#ifndef FB_CLIUTIL_H
#define FB_CLIUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Defined once by each tool ("archprobe", "fatbuild"). */
extern const char cli_prog[];

/* "PROG: " + message on stderr; a format ending in ':' appends strerror(errno). One printable
 * line: control bytes in the arguments (a path's newline or escape) print as '?'. */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vwarn(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* The same line without the "PROG: " (progress lines). */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* warn(), then exit(code). */
_Noreturn void fatal(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The exit-code table of docs/exit-codes.md, which both tools share, as their --help lists it:
 * "Exit codes: ..." then one "  CODE  meaning" line per code (the man pages' EXIT STATUS). The
 * codes are enum ap_exit's (archprobe.h), which archprobe/cli/archprobe.c holds them to. */
void cli_exit_codes(FILE *f);

/* malloc, calloc, reallocarray and strdup that end the tool ("PROG: out of memory", exit 1:
 * AP_EXIT_FAIL of docs/exit-codes.md) instead of returning NULL; a size of 0 is 1. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xreallocarray(void *p, size_t n, size_t m);
char *xstrdup(const char *s);

/* s[0..n) as a JSON string on stdout (fb_buf_json: quotes and backslashes escaped, every other
 * byte outside 0x20..0x7e as \u00XX). */
void json_str(const char *s, size_t n);

/* What is wrong with an option word, for cli_bad_option. */
enum cli_bad {
	CLI_UNKNOWN,     /* no option of the command, or only a prefix of one */
	CLI_NEEDS_VALUE, /* the option's value is missing */
	CLI_NO_VALUE     /* "--flag=V" for an option that takes no value */
};

/* The one line of a bad option of command cmd ("compile", "cache trim"; NULL: the tool itself),
 * on stderr: "PROG: CMD: unknown option 'W' (did you mean '--arch-list'?); see 'PROG CMD --help'"
 * (CLI_NEEDS_VALUE: "option 'W' needs a value"; CLI_NO_VALUE: "option 'W' takes no value"). The
 * help named is that of cmd's first word. word: as typed, its "=VALUE" left out. known: the
 * spellings the command takes ("-o", "--target"; NULL-terminated, or NULL), of which one close to
 * word (cli_suggest) is offered. The caller exits with AP_EXIT_USAGE. */
void cli_bad_option(const char *cmd, const char *word, enum cli_bad why, const char *const *known);

/* The one line of a bad value of an option that takes a word of a fixed set (words, NULL-
 * terminated), on stderr: "PROG: CMD: invalid --backend 'clang' (auto, nvrtc or nvcc); see
 * 'PROG CMD --help'", with "; did you mean 'nvrtc'?" after the words when cli_suggest finds one
 * close to value. The caller exits with AP_EXIT_USAGE. */
void cli_bad_value(const char *cmd, const char *opt, const char *value, const char *const *words);

struct option;
/* getopt_long(argc, argv, shorts, longs, NULL) for command cmd (as cli_bad_option's), with opterr
 * off and long options matched whole: the prefix getopt would take ("--kernel" for "--kernels")
 * is refused. A bad option (unknown, a prefix, a value missing or given to an option that takes
 * none) is said in one line by cli_bad_option, the command's options offered, and '?' returned
 * (':' never is). shorts: getopt's string, under 60 bytes; a ':' after a leading '+' or '-' is
 * implied. */
int cli_getopt(int argc, char **argv, const char *shorts, const struct option *longs, const char *cmd);

/* Of the words of cands (NULL-terminated), the one typed most likely meant: the one closest to it
 * (Damerau-Levenshtein over the words without leading dashes, a case or look-alike change such as
 * O for 0 or _ for - counting half; at most two edits and, counted in halves, fewer than the longer
 * word's bytes), when that one is the only closest; else the one word it is a prefix of. Copied
 * into out; false when there is none. */
bool cli_suggest(const char *typed, const char *const *cands, char *out, size_t size);

/* The arches a toolkit knows, as struct ap_toolkit lists them (10*major+minor). */
struct cli_arches {
	const int *sm, *a, *f; /* the real arches; those taking the 'a' and the 'f' suffix */
	int nsm, na, nf;
};
/* For an arch list its parser refused: the first item (the list split at spaces, tabs, newlines,
 * ',' and ';' as docs/archlist.md §2 splits it) that check() says does not parse, and the
 * spelling of ks's arches (8.6, 8.6+PTX, 86, 86-real, 86-virtual, sm_86, compute_86, with their
 * a and f) or of the keywords native, auto, all, all-major, that cli_suggest finds for it and
 * check() parses. check(item, ctx): 0 accepted, -1 does not parse, 1 parses but is refused.
 * Copied into out; false when no item fails to parse alone or none is close. */
bool cli_arch_suggest(const char *list, int (*check)(const char *item, void *ctx), void *ctx,
                      const struct cli_arches *ks, char *out, size_t size);

/* archprobe's arch-list resolver, which base cannot call itself: the tool hands it in. */
struct ap_archlist;
struct ap_error;
struct ap_resolve_opts;
struct cli_resolver {
	int (*resolve)(const char *text, const struct ap_resolve_opts *opts, struct ap_archlist **out,
	               struct ap_error *err); /* ap_archlist_resolve */
	void (*release)(struct ap_archlist *l); /* ap_archlist_free */
	int parse_error;                        /* resolve's status for text that does not parse: AP_EPARSE */
	const struct ap_resolve_opts *opts;     /* what each item is resolved with */
};
/* cli_arch_suggest's check for both tools: item resolved alone with ctx, a struct cli_resolver;
 * 0 it resolves, -1 it does not parse, 1 it is refused. */
int cli_arch_item_check(const char *item, void *ctx);

#endif
