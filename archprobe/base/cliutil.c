/* cliutil.c: messages, die-on-OOM allocation and JSON strings for the two CLIs only. */
#include <errno.h>
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
