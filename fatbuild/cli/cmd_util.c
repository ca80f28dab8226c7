/* cmd_util.c: messages and die-on-OOM allocation for the fatbuild CLI only. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
vwarn(const char *fmt, va_list ap)
{
	int saved = errno;
	fputs("fatbuild: ", stderr);
	vfprintf(stderr, fmt, ap);
	if (fmt[0] && fmt[strlen(fmt) - 1] == ':')
		fprintf(stderr, " %s", strerror(saved));
	fputc('\n', stderr);
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
warn_lines(const char *text)
{
	for (const char *w = text ? text : ""; *w;) {
		size_t n = strcspn(w, "\n");
		warn("warning: %.*s", (int)n, w);
		w += n + (w[n] == '\n');
	}
}

void
warn_archlist(const struct ap_archlist *l)
{
	for (size_t i = 0; i < ap_archlist_nwarnings(l); i++)
		warn("warning: %s", ap_archlist_warning(l, i));
}

struct ap_target *
targets_copy(const struct ap_archlist *l, size_t *n)
{
	*n = ap_archlist_count(l);
	struct ap_target *ts = xcalloc(*n ? *n : 1, sizeof(*ts));
	for (size_t i = 0; i < *n; i++)
		ts[i] = *ap_archlist_get(l, i);
	return ts;
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

int
fail_fb(const struct fb_error *e)
{
	warn("%s", e->msg[0] ? e->msg : fb_strerror(e->code));
	return fb_error_exit_code(e);
}

int
fail_ap(const struct ap_error *e)
{
	warn("%s", e->msg[0] ? e->msg : ap_strerror(e->code));
	return ap_exit_code(e->code);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		fatal(AP_EXIT_FAIL, "out of memory");
	return p;
}

void *
xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		fatal(AP_EXIT_FAIL, "out of memory");
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t m)
{
	if (m && n > (size_t)-1 / m)
		fatal(AP_EXIT_FAIL, "out of memory");
	p = realloc(p, (n * m) != 0 ? n * m : 1);
	if (!p)
		fatal(AP_EXIT_FAIL, "out of memory");
	return p;
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

int
cli_remote_mode_env(const char *mode, const char *cmd)
{
	const char *env = getenv("FATBUILD_REMOTE_CACHE_MODE");
	if (!mode || mode != env || !*mode || strcmp(mode, "read") == 0 || strcmp(mode, "readwrite") == 0)
		return 0;
	char shown[48];
	size_t i = 0;
	for (; mode[i] && i + 1 < sizeof(shown); i++) /* the value as one printable line */
		shown[i] = mode[i] >= 0x20 && mode[i] < 0x7f ? mode[i] : '?';
	shown[i] = 0;
	warn("%s: FATBUILD_REMOTE_CACHE_MODE='%s' is neither read nor readwrite: unset it, or set read (never "
	     "upload) or readwrite",
	     cmd, shown);
	return AP_EXIT_USAGE;
}
