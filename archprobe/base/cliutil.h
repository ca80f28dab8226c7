/* cliutil.h: what both command-line tools say and allocate with (cliutil.c). Linked into the two
 * CLIs alone (archprobe/cli, fatbuild/cli): a library never prints or exits. Each tool defines
 * cli_prog, the name its messages start with. */
#ifndef FB_CLIUTIL_H
#define FB_CLIUTIL_H

#include <stdarg.h>
#include <stddef.h>

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

/* malloc, calloc, reallocarray and strdup that end the tool ("PROG: out of memory", exit 1:
 * AP_EXIT_FAIL of docs/exit-codes.md) instead of returning NULL; a size of 0 is 1. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xreallocarray(void *p, size_t n, size_t m);
char *xstrdup(const char *s);

/* s[0..n) as a JSON string on stdout (fb_buf_json: quotes and backslashes escaped, every other
 * byte outside 0x20..0x7e as \u00XX). */
void json_str(const char *s, size_t n);

#endif
