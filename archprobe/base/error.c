/* error.c: the one error setter of both libraries (error.h says how one setter fills two public
 * structs). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

/* Each error is reached as struct fb_errlayout. That is sound because archprobe/apstatus.c and
 * fatbuild/fbstatus.c assert that layout of both public structs, and every access to an error's
 * fields is made in this file, to an int or a char member of that one type. */
static int
vset(struct fb_errlayout *e, int code, const char *fmt, va_list ap)
{
	if (e) {
		e->code = code;
		e->ap_code = 0;
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		fb_text_oneline(e->msg);
	}
	return code;
}

/* Two faces of vset, one per public struct: a C parameter takes one pointer type, and GCC's
 * transparent_union, which would take both, is refused under -Wpedantic; a cast at each of the
 * libraries' calls would hide a wrong argument where these two check it. */
int
fb_seterr(struct fb_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset((void *)err, code, fmt, ap);
	va_end(ap);
	return code;
}

int
ap_seterr(struct ap_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset((void *)err, code, fmt, ap);
	va_end(ap);
	return code;
}

int
fb_error_from_ap(struct fb_error *err, int code, const struct ap_error *from)
{
	struct fb_errlayout *e = (void *)err;
	const struct fb_errlayout *f = (const void *)from;
	if (e) {
		e->code = code;
		e->ap_code = f->code;
		memcpy(e->msg, f->msg, sizeof(e->msg));
	}
	return code;
}

void
fb_text_oneline(char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}
