/* select.c: which image of a fatbinary a consumer would use on a device (docs/fatbin.md §7).
 *
 * fb_select, and fb_select_misfit, which says why an image does not fit (the one rule both use);
 * the rules are documented at their declarations in fatbuild.h. They
 * are what nvJitLink and nvlink 13.0 were observed to do (the driver's algorithm is closed
 * source): SASS of the same major with a minor <= the device's (87 and 88 isolated; for
 * sm >= 100 a lower minor needs the compat blob), 'a' SASS only on its own SM, 'f' within
 * its family, PTX compute_X on every sm >= X; the highest arch wins, SASS on a tie. */
#include "shared.h"

static bool
isolated(int sm)
{
	return sm == 87 || sm == 88;
}

int
fb_select_misfit(const struct fb_image *im, const struct ap_target *dev)
{
	int x = im->target.sm, d = dev->sm;
	bool same_major = x / 10 == d / 10;
	if (x > d)
		return FB_MISFIT_NEWER;
	if (im->target.kind == AP_SASS) {
		if ((isolated(x) || isolated(d)) && x != d)
			return same_major ? FB_MISFIT_ISOLATED : FB_MISFIT_MAJOR;
		switch (im->target.variant) {
		case AP_ARCH:
			if (x != d)
				return FB_MISFIT_ARCH;
			return x >= 100 || dev->variant == AP_ARCH ? FB_FITS : FB_MISFIT_PLAIN;
		case AP_FAMILY:
			return same_major ? FB_FITS : FB_MISFIT_MAJOR;
		default:
			if (!same_major)
				return FB_MISFIT_MAJOR;
			if (x >= 100 && x != d && !im->compat)
				return FB_MISFIT_COMPAT;
			return FB_FITS;
		}
	}
	switch (im->target.variant) {
	case AP_ARCH:
		if (x != d)
			return FB_MISFIT_ARCH;
		return dev->variant == AP_ARCH ? FB_FITS : FB_MISFIT_PLAIN;
	case AP_FAMILY:
		return same_major ? FB_FITS : FB_MISFIT_MAJOR;
	default:
		return FB_FITS;
	}
}

long
fb_select(const struct fb_image *images, size_t n, const struct ap_target *device, enum fb_how *how)
{
	long best = -1;
	for (size_t i = 0; i < n; i++) {
		if (fb_select_misfit(&images[i], device) != FB_FITS)
			continue;
		if (best < 0) {
			best = (long)i;
			continue;
		}
		const struct fb_image *b = &images[best], *c = &images[i];
		if (c->target.sm > b->target.sm ||
		    (c->target.sm == b->target.sm && c->target.kind == AP_SASS && b->target.kind != AP_SASS))
			best = (long)i;
	}
	if (how)
		*how = best < 0 ? FB_HOW_NONE : images[best].target.kind == AP_SASS ? FB_HOW_SASS : FB_HOW_PTX_JIT;
	return best;
}
