/* fuzz_devcode.c: one file's device code and verdicts as fatbuild check reads it
 * (fatbuild/check/analyse.c): fb_scan_buffer and fb_scan_entries, the scan of the other
 * sections of a host ELF (fatbin/devcode.c: containers, cubins, PTX text, NVRTC built-ins), the
 * kernels of an image (fatbin/entryhead.c) and the verdict per device with its reasons.
 * Input: the file after its first 6 bytes ("\x7fELF", class 2, data 1), prepended here so that
 * every input reaches the section walks; an input starting with '!' is taken whole instead
 * (fatbins, cubins, PTX, ar archives).
 * Invariants (abort on violation): every window fb_devcode_scan is done with lies inside the
 * input; an entry is an error (one printable line) or a
 * verdict per device whose module counts add up and whose texts are terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "fatbin/devcode.h"
#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct windows {
	const unsigned char *lo, *hi;
};

/* Sections may overlap and come in any order, so only the bounds are checked. */
static void
window(const unsigned char *from, size_t n, void *ctx)
{
	struct windows *w = ctx;
	if (from < w->lo || from > w->hi || n > (size_t)(w->hi - from))
		abort();
}

static void
line(const char *s, size_t cap)
{
	if (!memchr(s, 0, cap))
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	unsigned char *b = malloc(size + 6);
	if (!b)
		return 0;
	size_t n;
	if (size && data[0] == '!') {
		memcpy(b, data + 1, size - 1);
		n = size - 1;
	} else {
		memcpy(b, "\x7f" "ELF\x02\x01", 6);
		memcpy(b + 6, data, size);
		n = size + 6;
	}
	struct fb_devcode d;
	struct fb_error err = {0};
	struct windows w = {b, b + n};
	if (fb_devcode_scan(b, n, "in.so", window, &w, &d, &err) == 0) {
		if (d.nimages > d.ncubins + d.nptx + 64 * (d.ncontainers + 1) || !memchr(d.sections, 0, sizeof(d.sections)))
			abort();
		fb_devcode_free(&d);
	} else {
		line(err.msg, sizeof(err.msg));
	}
	const struct ap_target dev[] = {{75, AP_ARCH, AP_SASS, 0}, {90, AP_ARCH, AP_SASS, 0}, {90, AP_PLAIN, AP_SASS, 0},
	                                {120, AP_ARCH, AP_SASS, 0}};
	struct fb_check_opts o = {.devices = dev, .ndevices = 4};
	struct fb_chk c = {.o = &o};
	struct fb_chk_result r = {0};
	fb_chk_analyse(&c, b, n, "in.so", false, false, &r);
	for (size_t i = 0; i < r.n; i++) {
		const struct fb_check_file *f = &r.files[i];
		if (f->error[0]) {
			line(f->error, sizeof(f->error));
			continue;
		}
		line(f->images, sizeof(f->images));
		line(f->other_images, sizeof(f->other_images));
		for (size_t k = 0; k < 4; k++) {
			const struct fb_check_arch *a = &f->arch[k];
			if (a->verdict < FB_CHECK_SASS || a->verdict > FB_CHECK_NOKERNEL ||
			    a->sass + a->jit + a->none + a->link + a->empty != f->modules)
				abort();
			line(a->why, sizeof(a->why));
			line(a->why_images, sizeof(a->why_images));
		}
	}
	fb_chk_result_free(&r);
	free(b);
	return 0;
}
