/* check_text.c: the words of fatbuild check's report (docs/check-environment.md §2, §4): a
 * device's name ("9.0"), a verdict's name, the device code found outside the runtime's
 * sections, and one file's verdict on one device ("SASS sm_90a (entry 1)"). The text reports
 * (check_files.c, check_env.c) and the JSON one (check_json.c) say them alike. */
#include <stdio.h>
#include <string.h>

#include "check_report.h"
#include "cli.h"

void
check_dev_name(const struct ap_target *d, char *buf, size_t n)
{
	if (d->variant == AP_ARCH)
		snprintf(buf, n, "%d.%d", d->sm / 10, d->sm % 10);
	else
		ap_target_name(d, buf, n);
}

const char *
check_verdict_name(int v)
{
	switch (v) {
	case FB_CHECK_SASS: return "sass";
	case FB_CHECK_JIT: return "jit";
	case FB_CHECK_NONE: return "none";
	case FB_CHECK_OTHER: return "other";
	case FB_CHECK_LINK: return "link";
	default: return "nokernel";
	}
}

/* "3 containers, 42 cubins and 1 PTX in .rodata, .data" for the §3 code found outside the
 * runtime's sections; "" when there is none. */
void
check_other_text(const struct fb_check_file *f, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = 0;
	struct {
		size_t k;
		const char *one, *many;
	} parts[] = {{f->other_containers, "container", "containers"},
	             {f->other_cubins, "cubin", "cubins"},
	             {f->other_ptx, "PTX text", "PTX texts"}};
	size_t np = 0, done = 0;
	for (size_t i = 0; i < 3; i++)
		np += parts[i].k != 0;
	for (size_t i = 0; i < 3 && l < n; i++) {
		if (!parts[i].k)
			continue;
		done++;
		l += (size_t)snprintf(buf + l, n - l, "%s%zu %s", done == 1 ? "" : done == np ? " and " : ", ", parts[i].k,
		                      parts[i].k == 1 ? parts[i].one : parts[i].many);
	}
	if (l && l < n)
		l += (size_t)snprintf(buf + l, n - l, " in %s", f->other_sections);
	if (f->other_lto && l < n)
		l += (size_t)snprintf(buf + l, n - l, " (%zu LTO-IR entries)", f->other_lto);
	if (f->nvrtc && l < n)
		snprintf(buf + l, n - l, "%sNVRTC built-in headers for sm_%d to sm_%d", l ? "; " : "", f->nvrtc_min,
		         f->nvrtc_max);
}

/* What the other means amount to on one device: "SASS for 12.0 among its images". */
static void
other_fit(const struct fb_check_file *f, const struct fb_check_arch *a, const char *dn, char *buf, size_t n)
{
	const char *how = a->other == FB_HOW_SASS ? "SASS" : a->other == FB_HOW_PTX_JIT ? "PTX to JIT-compile" : "no image";
	if (f->nvrtc && !f->other_containers && !f->other_cubins && !f->other_ptx)
		snprintf(buf, n, "%s", a->other == FB_HOW_SASS    ? "NVRTC compiles SASS for it"
		                       : a->other == FB_HOW_PTX_JIT ? "NVRTC compiles PTX for an older GPU, which the driver JIT-compiles"
		                                                    : "NVRTC has no built-ins for it or an older GPU");
	else
		snprintf(buf, n, "%s for %s among the images found", how, dn);
}

/* The verdict of one file on one device, without the device and path; brief leaves out what the
 * library's own line already said (the device code found outside .nv_fatbin). */
void
check_verdict_text(const struct fb_check_file *f, const struct fb_check_arch *a, const char *dn, bool brief, char *buf,
                   size_t n)
{
	char tn[32], extra[800] = "", other[256];
	if (a->none && a->verdict != FB_CHECK_NONE)
		snprintf(extra, sizeof(extra), ", %zu without an image (their kernels cannot run on %s; container %ld has %s: %s)",
		         a->none, dn, a->first_none, a->why_images, a->why);
	switch (a->verdict) {
	case FB_CHECK_SASS:
	case FB_CHECK_JIT:
		if (f->modules == 1) {
			ap_target_name(&a->chosen, tn, sizeof(tn));
			snprintf(buf, n, "%s %s (entry %ld)", a->verdict == FB_CHECK_SASS ? "SASS" : "PTX JIT from", tn, a->entry);
		} else {
			char link[128] = "";
			if (a->link)
				snprintf(link, sizeof(link), ", %zu of relocatable code (device-link inputs: __nv_relfatbin, -rdc; not loaded)",
				         a->link);
			snprintf(buf, n, "%zu containers: %zu SASS, %zu PTX JIT%s%s", f->modules, a->sass, a->jit, link, extra);
		}
		break;
	case FB_CHECK_NONE: {
		/* a few images read best first ("sm_90a only: ..."); a long list goes last */
		const char *imgs = a->why_images[0] ? a->why_images : f->images;
		size_t commas = 0;
		for (const char *c = imgs; *c; c++)
			commas += *c == ',';
		if (commas < 3)
			snprintf(buf, n, "no kernel image: %s only: %s", imgs, a->why);
		else
			snprintf(buf, n, "no kernel image: %s; its images: %s", a->why, imgs);
		break;
	}
	case FB_CHECK_OTHER:
		check_other_text(f, other, sizeof(other));
		if (!other[0]) { /* the library's line does not say it: relocatable code alone */
			snprintf(other, sizeof(other), "%zu %s of relocatable code or LTO-IR, which the CUDA runtime does not load",
			         a->link, a->link == 1 ? "container" : "containers");
			brief = false;
		}
		other_fit(f, a, dn, extra, sizeof(extra));
		if (brief)
			snprintf(buf, n, "loaded at run time by other means; %s%s", extra,
			         a->empty ? "; its .nv_fatbin modules define no kernel" : "");
		else
			snprintf(buf, n, "device code found (%s), loaded at run time by other means; %s%s", other, extra,
			         a->empty ? "; its .nv_fatbin modules define no kernel" : "");
		break;
	case FB_CHECK_LINK:
		snprintf(buf, n, "device-link input (%s): its relocatable code is checked where it is linked", f->images);
		break;
	default:
		snprintf(buf, n, "no kernel: its %zu %s without an image for %s define%s no kernel, so nothing is launched",
		         a->empty, a->empty == 1 ? "module" : "modules", dn, a->empty == 1 ? "s" : "");
		break;
	}
}
