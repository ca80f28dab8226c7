/* strbuf.c: growable strings and string lists, the line of a tool's log that a one-line
 * message quotes, and a URL as messages show it (strbuf.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "strbuf.h"

/* Makes room for len more bytes and the terminator; false (and oom set) when there is none. */
static bool
room_for(struct fb_buf *b, size_t len)
{
	if (b->oom)
		return false;
	if (b->len + len + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + len + 1 && cap <= SIZE_MAX / 2)
		cap *= 2;
	char *p = cap >= b->len + len + 1 ? realloc(b->s, cap) : NULL;
	if (!p) {
		b->oom = true;
		return false;
	}
	b->s = p;
	b->cap = cap;
	return true;
}

void
fb_buf_put(struct fb_buf *b, const char *s, size_t len)
{
	if (!room_for(b, len))
		return;
	memcpy(b->s + b->len, s, len);
	b->len += len;
	b->s[b->len] = 0;
}

void
fb_buf_puts(struct fb_buf *b, const char *s)
{
	fb_buf_put(b, s, strlen(s));
}

void
fb_buf_printf(struct fb_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) { /* an encoding error: nothing can be appended */
		b->oom = true;
		return;
	}
	if (!room_for(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
fb_buf_json(struct fb_buf *b, const char *s, size_t n)
{
	fb_buf_put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fb_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fb_buf_printf(b, "\\u%04x", c);
		else
			fb_buf_put(b, (const char *)&c, 1);
	}
	fb_buf_put(b, "\"", 1);
}

int
fb_strlist_add(struct fb_strlist *l, const char *s)
{
	if (l->oom)
		return FB_BASE_ENOMEM;
	if (l->n + 1 >= l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->oom = true;
			return FB_BASE_ENOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	char *d = strdup(s);
	if (!d) {
		l->oom = true;
		return FB_BASE_ENOMEM;
	}
	l->v[l->n++] = d;
	l->v[l->n] = NULL;
	return 0;
}

void
fb_strlist_free(struct fb_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void
fb_log_first_line(const char *log, const char *const *needles, const char *fallback, char *buf, size_t size)
{
	const char *p = log ? log : "";
	const char *first = NULL;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (!first && len)
			first = p;
		for (const char *const *nd = needles; *nd; nd++) {
			size_t n = strlen(*nd);
			for (size_t i = 0; i + n <= len; i++)
				if (memcmp(p + i, *nd, n) == 0) {
					snprintf(buf, size, "%.*s", (int)len, p);
					return;
				}
		}
		p = e ? e + 1 : p + len;
	}
	if (first)
		snprintf(buf, size, "%.*s", (int)strcspn(first, "\n"), first);
	else
		snprintf(buf, size, "%s", fallback);
}

/* Appends n bytes of s to out (size bytes, k used so far), cut where it is full. */
static void
redact_put(char *out, size_t size, size_t *k, const char *s, size_t n)
{
	for (size_t i = 0; i < n && *k + 1 < size; i++)
		out[(*k)++] = s[i];
	if (size)
		out[*k] = 0;
}

/* scheme://[userinfo@]host[:port][/path][?query][#fragment]: every part that may hold a password
 * or a token becomes ***: the userinfo, a segment's parameters from its first ';' (`;token=`),
 * the value of a segment shaped key=value (a '=' in it, `%3B` spelt or not), and everything from
 * the '?' or '#' on (`?access_token=`, `&key=`: the whole query, whatever its names). Only
 * redacted pieces are ever written, so a cut short by size shows no secret either. */
void
fb_remote_url_redact(const char *url, char *out, size_t size)
{
	size_t k = 0;
	if (size)
		out[0] = 0;
	const char *sep = strstr(url, "://");
	if (sep && strcspn(url, "/?#@") < (size_t)(sep - url))
		sep = NULL; /* a "://" inside the path or query is no scheme */
	const char *host = sep ? sep + 3 : url;
	size_t hn = strcspn(host, "/?#");
	const char *at = NULL;
	for (const char *q = host; q < host + hn; q++)
		if (*q == '@')
			at = q;
	redact_put(out, size, &k, url, (size_t)(host - url));
	if (at)
		redact_put(out, size, &k, "***@", 4);
	const char *p = at ? at + 1 : host, *end = p + strcspn(p, "?#");
	while (p < end) {
		size_t seg = strcspn(p, "/?#"), cut = strcspn(p, ";=/?#");
		if (cut < seg) {
			redact_put(out, size, &k, p, cut + 1);
			redact_put(out, size, &k, "***", 3);
		} else {
			redact_put(out, size, &k, p, seg);
		}
		p += seg;
		if (p < end)
			redact_put(out, size, &k, p++, 1); /* the '/' */
	}
	if (*end) {
		redact_put(out, size, &k, end, 1);
		redact_put(out, size, &k, "***", 3);
	}
}
