/* strbuf.h: a growable string and a list of strings, both with a sticky out-of-memory flag so
 * that a caller appends freely and checks once; the line of a log a message quotes. Private;
 * symbols are hidden. */
#ifndef FB_STRBUF_H
#define FB_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

/* Zero-initialised is empty. s is NUL-terminated once anything was appended (NULL before). */
struct fb_buf {
	char *s;
	size_t len, cap;
	bool oom; /* an append failed: s holds what came before it, later appends do nothing */
};

/* Appends len bytes of s. */
void fb_buf_put(struct fb_buf *b, const char *s, size_t len);
/* Appends the string s. */
void fb_buf_puts(struct fb_buf *b, const char *s);
/* Appends the formatted text. */
void fb_buf_printf(struct fb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0..n) as a JSON string: quotes and backslashes escaped, and every byte outside
 * 0x20..0x7e as \u00XX, so the text is valid JSON (and ASCII) whatever bytes s holds. */
void fb_buf_json(struct fb_buf *b, const char *s, size_t n);

/* Zero-initialised is empty; v[0..n) are malloc'd copies and v[n] is NULL (v itself is NULL
 * until the first add). */
struct fb_strlist {
	char **v;
	size_t n, cap;
	bool oom; /* an add failed: later adds fail too */
};

/* Appends a copy of s; returns 0 or FB_ENOMEM (then, and ever after, oom is set). */
int fb_strlist_add(struct fb_strlist *l, const char *s);
/* Frees every string and the vector; leaves l empty. */
void fb_strlist_free(struct fb_strlist *l);

/* The first line of log (NULL: empty) that holds one of needles (NULL-terminated), else its first
 * non-empty line, else fallback, into buf (NVRTC's compile logs, nvJitLink's link logs). */
void fb_log_first_line(const char *log, const char *const *needles, const char *fallback, char *buf, size_t size);

/* A remote's URL (the compile cache's, an executor's) as messages show it: a user:password@ and
 * any ?query or #fragment become *** (either may hold a credential). Cut to fit size. */
void fb_remote_url_redact(const char *url, char *out, size_t size);

#endif
