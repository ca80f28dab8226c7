/* why.c: why no image fits a device, in one line a user can act on (docs/check-environment.md
 * §2), from fb_select_misfit: the reasons are the rules of docs/fatbin.md §7 that the images
 * break, each said once, naming the GPUs they would run on. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Appends printf-style text to buf[0..size) at *len, cutting it off with "..." when full. */
static void
put(char *buf, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	if (*len + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if ((size_t)k >= size - *len) {
		*len = size - 1;
		if (size > 4)
			memcpy(buf + size - 4, "...", 4);
		return;
	}
	*len += (size_t)k;
}

static int
cmp_image(const void *a, const void *b)
{
	const struct fb_image *x = a, *y = b;
	if (x->target.kind != y->target.kind)
		return x->target.kind == AP_SASS ? -1 : 1;
	if (x->target.sm != y->target.sm)
		return x->target.sm < y->target.sm ? -1 : 1;
	return (int)x->target.variant - (int)y->target.variant;
}

void
fb_chk_image_names(const struct fb_image *images, size_t n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	struct fb_image *s = n ? malloc(n * sizeof(*s)) : NULL;
	if (!s)
		return; /* no images (qsort is not given NULL), or out of memory */
	memcpy(s, images, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_image);
	char tn[32], prev[32] = "";
	for (size_t i = 0; i < n; i++) {
		ap_target_name(&s[i].target, tn, sizeof(tn));
		if (strcmp(tn, prev) != 0)
			put(buf, size, &len, "%s%s", len ? ", " : "", tn);
		snprintf(prev, sizeof(prev), "%s", tn);
	}
	free(s);
}

/* Distinct values, sorted, at most 8 of them. */
struct set {
	int v[8];
	size_t n;
};

/* Adds v, keeping the set sorted; past 8 values the highest go. */
static void
set_add(struct set *s, int v)
{
	size_t i = 0;
	while (i < s->n && s->v[i] < v)
		i++;
	if ((i < s->n && s->v[i] == v) || i == 8)
		return;
	if (s->n == 8)
		s->n--;
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = v;
	s->n++;
}

/* "9.0" or "8.x, 10.x" (major_only) from SMs. */
static void
put_gpus(char *buf, size_t size, size_t *len, const struct set *s, bool major_only)
{
	for (size_t i = 0; i < s->n; i++) {
		if (major_only)
			put(buf, size, len, "%s%d.x", i ? ", " : "", s->v[i] / 10);
		else
			put(buf, size, len, "%s%d.%d", i ? ", " : "", s->v[i] / 10, s->v[i] % 10);
	}
}

void
fb_chk_why(const struct fb_image *images, size_t n, const struct ap_target *dev, char *buf, size_t size)
{
	struct set newer = {0}, major = {0}, isolated = {0}, arch = {0}, plain = {0}, compat = {0};
	char dn[32];
	bool ptx = false;
	for (size_t i = 0; i < n; i++) {
		const struct fb_image *im = &images[i];
		ptx |= im->target.kind == AP_PTX;
		switch (fb_select_misfit(im, dev)) {
		case FB_MISFIT_NEWER: set_add(&newer, im->target.sm); break;
		case FB_MISFIT_MAJOR: set_add(&major, im->target.sm / 10 * 10); break;
		case FB_MISFIT_ISOLATED: set_add(&isolated, im->target.sm); break;
		case FB_MISFIT_ARCH: set_add(&arch, im->target.sm); break;
		case FB_MISFIT_PLAIN: set_add(&plain, im->target.sm); break;
		case FB_MISFIT_COMPAT: set_add(&compat, im->target.sm); break;
		default: break;
		}
	}
	if (dev->variant == AP_ARCH)
		snprintf(dn, sizeof(dn), "%d.%d", dev->sm / 10, dev->sm % 10);
	else
		ap_target_name(dev, dn, sizeof(dn));
	size_t len = 0;
	buf[0] = 0;
	if (n == 0) {
		put(buf, size, &len, "no SASS or PTX image");
		return;
	}
	const char *sep = "";
	if (newer.n) {
		put(buf, size, &len, "%sbuilt for newer GPUs than %s (from %d.%d)", sep, dn, newer.v[0] / 10, newer.v[0] % 10);
		sep = "; ";
	}
	if (major.n) {
		put(buf, size, &len, "%sSASS runs only on GPUs of its own major (", sep);
		put_gpus(buf, size, &len, &major, true);
		put(buf, size, &len, ")");
		sep = "; ";
	}
	if (isolated.n) {
		if (dev->sm == 87 || dev->sm == 88)
			put(buf, size, &len, "%s%s runs only SASS built for sm_%d", sep, dn, dev->sm);
		else
			put(buf, size, &len, "%ssm_87 and sm_88 SASS runs on 8.7 and 8.8 only", sep);
		sep = "; ";
	}
	if (arch.n) {
		put(buf, size, &len, "%s%s on ", sep,
		    arch.n > 1 ? "arch-specific images run only on their own GPU" : "an arch-specific image runs");
		put_gpus(buf, size, &len, &arch, false);
		put(buf, size, &len, " exactly");
		sep = "; ";
	}
	if (plain.n) {
		put(buf, size, &len, "%sa plain %s consumer refuses 'a' images", sep, dn);
		sep = "; ";
	}
	if (compat.n) {
		put(buf, size, &len, "%sSASS without the compat blob runs only on its own GPU (", sep);
		put_gpus(buf, size, &len, &compat, false);
		put(buf, size, &len, ")");
		sep = "; ";
	}
	if (!ptx)
		put(buf, size, &len, "%sno PTX to JIT-compile", sep);
}
