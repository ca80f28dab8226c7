/* select.c: which image of a fatbinary a consumer would use on a device (docs/fatbin.md §7).
 *
 * One function, fb_select; the rules are documented at its declaration in fatbuild.h. They
 * are what nvJitLink and nvlink 13.0 were observed to do (the driver's algorithm is closed
 * source): SASS of the same major with a minor <= the device's (87 and 88 isolated; for
 * sm >= 100 a lower minor needs the compat blob), 'a' SASS only on its own SM, 'f' within
 * its family, PTX compute_X on every sm >= X; the highest arch wins, SASS on a tie. */
#include "fatbin_priv.h"

static bool
isolated(int sm)
{
	return sm == 87 || sm == 88;
}

static bool
fits(const struct fb_image *im, const struct ap_target *dev)
{
	int x = im->target.sm, d = dev->sm;
	bool same_major = x / 10 == d / 10;
	if (x > d)
		return false;
	if (im->target.kind == AP_SASS) {
		if ((isolated(x) || isolated(d)) && x != d)
			return false;
		switch (im->target.variant) {
		case AP_ARCH:
			if (x != d)
				return false;
			return x >= 100 || dev->variant == AP_ARCH;
		case AP_FAMILY:
			return same_major;
		default:
			if (!same_major)
				return false;
			if (x >= 100 && x != d && !im->compat)
				return false;
			return true;
		}
	}
	switch (im->target.variant) {
	case AP_ARCH:
		return x == d && dev->variant == AP_ARCH;
	case AP_FAMILY:
		return same_major;
	default:
		return true;
	}
}

long
fb_select(const struct fb_image *images, size_t n, const struct ap_target *device, enum fb_how *how)
{
	long best = -1;
	for (size_t i = 0; i < n; i++) {
		if (!fits(&images[i], device))
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
