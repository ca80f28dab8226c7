/* target.c: target names and the target a PTX text declares: fb_target_parse ("sm_90a",
 * "compute_86", "lto_90") and fb_ptx_info (its ".version" and ".target" directives). The
 * writer (fatbin.c), the readers (hostelf.c, devcode.c) and the image check (elfid.c) use them. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "fatbuild.h"

int
fb_target_parse(const char *name, struct ap_target *t)
{
	char tmp[32];
	if (!name || !t)
		return FB_EINVAL;
	if (strncmp(name, "lto_", 4) == 0) { /* LTO-IR arches read like PTX ones */
		if (snprintf(tmp, sizeof(tmp), "compute_%s", name + 4) >= (int)sizeof(tmp))
			return FB_EINVAL;
		name = tmp;
	}
	if (strncmp(name, "sm_", 3) != 0 && strncmp(name, "compute_", 8) != 0)
		return FB_EINVAL;
	struct ap_target r;
	if (ap_target_parse(name, &r) != 0)
		return FB_EINVAL;
	r.origin = 0;
	*t = r;
	return FB_OK;
}

/* Finds a directive at the start of a line (after blanks), outside // comments. */
static const char *
find_directive(const char *s, size_t n, const char *dir)
{
	size_t dl = strlen(dir);
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (n - j > dl && memcmp(s + j, dir, dl) == 0 && (s[j + dl] == ' ' || s[j + dl] == '\t'))
			return s + j + dl;
		while (i < n && s[i] != '\n')
			i++;
		i++;
	}
	return NULL;
}

int
fb_ptx_info(const void *ptx, size_t size, int *major, int *minor, struct ap_target *target,
            struct fb_error *err)
{
	const char *s = ptx;
	const char *end = s + size;
	const char *v = find_directive(s, size, ".version");
	if (!v)
		return fb_seterr(err, FB_EFORMAT, "PTX has no .version directive");
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	int ma = 0, mi = 0, nd = 0;
	while (v < end && isdigit((unsigned char)*v) && ma < 1000)
		ma = ma * 10 + (*v++ - '0'), nd++;
	if (!nd || v >= end || *v != '.')
		return fb_seterr(err, FB_EFORMAT, "PTX .version is not X.Y");
	v++;
	nd = 0;
	while (v < end && isdigit((unsigned char)*v) && mi < 1000)
		mi = mi * 10 + (*v++ - '0'), nd++;
	if (!nd)
		return fb_seterr(err, FB_EFORMAT, "PTX .version is not X.Y");
	if (major)
		*major = ma;
	if (minor)
		*minor = mi;
	if (target) {
		const char *t = find_directive(s, size, ".target");
		if (!t)
			return fb_seterr(err, FB_EFORMAT, "PTX has no .target directive");
		while (t < end && (*t == ' ' || *t == '\t'))
			t++;
		char name[32];
		size_t k = 0;
		while (t < end && k + 1 < sizeof(name) && (isalnum((unsigned char)*t) || *t == '_'))
			name[k++] = *t++;
		name[k] = 0;
		struct ap_target tt;
		if (strncmp(name, "sm_", 3) != 0 || fb_target_parse(name, &tt) != 0)
			return fb_seterr(err, FB_EFORMAT, "PTX .target '%s' is not sm_XY[a|f]", name);
		tt.kind = AP_PTX;
		*target = tt;
	}
	return FB_OK;
}
