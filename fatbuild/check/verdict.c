/* verdict.c: how a file's device code loads on each device (docs/check-environment.md §2).
 *
 * Every container of a file is a module of its own, loaded when the library first needs it: the
 * model of docs/fatbin.md §7 (fb_select) picks its image per device. A file runs on a device
 * when some module has an image for it (libraries ship per-arch modules, so a module without
 * one is reported, not failed); it needs JIT when some module takes PTX. Containers of
 * __nv_relfatbin, or holding only relocatable cubins and LTO-IR, are device-link inputs: the
 * loader never takes them. A library's module is loaded when one of its kernels is launched, so
 * a module without an image that defines no kernel (cuFFT's one .nv_fatbin container) fails
 * nothing; a fatbin or cubin file is one module, loaded whole, and has no such exemption. The §3 code found elsewhere in the file is judged the same way over
 * the distinct images found, but only reported: what the library does with it is its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fatbin/devcode.h"
#include "fatbin/entryhead.h"

/* One container: its loadable images (ELF that is not relocatable, PTX) and why it may be none. */
struct cinfo {
	bool link;       /* a device-link input */
	size_t first, n; /* its images in imgs[] / idx[] */
	size_t nreloc, nlto;
	int kernels;     /* 1 it defines a kernel, 0 none, -1 not known yet */
};

struct modules {
	struct cinfo *c;
	struct fb_image *imgs;
	size_t *idx;     /* the entry index of each image */
	size_t nimg;
	struct fb_image *all; /* every ELF and PTX image, relocatable or not; then LTO-IR as PTX
	                      * (lto_X links for X and later), nlto of them past all[nall] */
	size_t nall, nlto;
};

static void
modules_free(struct modules *m)
{
	free(m->c);
	free(m->imgs);
	free(m->idx);
	free(m->all);
}

static int
modules_make(const struct fb_parsed *p, const struct fb_scan *sc, struct modules *m)
{
	memset(m, 0, sizeof(*m));
	m->c = calloc(p->ncontainers ? p->ncontainers : 1, sizeof(*m->c));
	m->imgs = calloc(p->nentries ? p->nentries : 1, sizeof(*m->imgs));
	m->idx = calloc(p->nentries ? p->nentries : 1, sizeof(*m->idx));
	m->all = calloc(p->nentries ? p->nentries : 1, sizeof(*m->all));
	if (!m->c || !m->imgs || !m->idx || !m->all) {
		modules_free(m);
		return FB_ENOMEM;
	}
	for (size_t k = 0; k < p->ncontainers; k++) {
		const struct fb_container *ct = &p->containers[k];
		struct cinfo *ci = &m->c[k];
		ci->first = m->nimg;
		for (size_t i = 0; i < ct->count; i++) {
			const struct fb_entry *e = &p->entries[ct->first + i];
			if (e->disk_kind == FB_DISK_KIND_LTO)
				ci->nlto++;
			if (e->disk_kind != FB_DISK_KIND_ELF && e->disk_kind != FB_DISK_KIND_PTX)
				continue;
			m->all[m->nall++] = (struct fb_image){e->target, (e->flags & FB_FLAG_COMPAT) != 0};
			if (fb_entry_relocatable(e)) {
				ci->nreloc++;
				continue;
			}
			m->imgs[m->nimg] = (struct fb_image){e->target, (e->flags & FB_FLAG_COMPAT) != 0};
			m->idx[m->nimg++] = i;
		}
		ci->n = m->nimg - ci->first;
		ci->kernels = -1;
		bool rel_section = ct->blob < sc->nblobs && strstr(sc->blobs[ct->blob].where, "__nv_relfatbin");
		ci->link = rel_section || (ci->n == 0 && ci->nreloc + ci->nlto > 0 && ci->nreloc + ci->nlto == ct->count);
	}
	for (size_t i = 0; i < p->nentries; i++)
		if (p->entries[i].disk_kind == FB_DISK_KIND_LTO)
			m->all[m->nall + m->nlto++] = (struct fb_image){p->entries[i].target, false};
	return FB_OK;
}

static void
why_unlinked(const struct modules *m, size_t nc, char *buf, size_t size)
{
	size_t reloc = 0, lto = 0;
	for (size_t k = 0; k < nc; k++)
		reloc += m->c[k].nreloc, lto += m->c[k].nlto;
	snprintf(buf, size,
	         "only %s%s%s, not loadable until device-linked ('fatbuild dlink', or build with --rdc/--lto)",
	         reloc || !lto ? "relocatable cubins (-rdc)" : "", reloc && lto ? " and " : "", lto ? "LTO-IR" : "");
}

/* Whether container k defines a kernel, from its smallest image (every image of a container is
 * compiled from the same source); an image that cannot be decoded counts as defining one. */
static bool
has_kernels(const struct fb_parsed *p, struct modules *m, size_t k)
{
	struct cinfo *ci = &m->c[k];
	if (ci->kernels < 0) {
		const struct fb_entry *best = NULL;
		for (size_t i = 0; i < ci->n; i++) {
			const struct fb_entry *e = &p->entries[p->containers[k].first + m->idx[ci->first + i]];
			if (!best || (e->disk_kind == FB_DISK_KIND_ELF && best->disk_kind != FB_DISK_KIND_ELF) ||
			    (e->disk_kind == best->disk_kind && e->stored_size < best->stored_size))
				best = e;
		}
		ci->kernels = best ? fb_entry_has_kernels(best, 0) != 0 : 1;
	}
	return ci->kernels != 0;
}

/* The verdict from the counts: lazy says modules are loaded when a kernel of theirs is launched
 * (a library), so one without kernels cannot fail; other says the file has §3 code. */
static int
verdict(const struct fb_parsed *p, const struct fb_check_arch *a, bool link_file, bool lazy, bool other)
{
	if (p->ncontainers == 0)
		return FB_CHECK_OTHER;
	if (a->sass + a->jit)
		return a->jit ? FB_CHECK_JIT : FB_CHECK_SASS;
	if (a->none)
		return FB_CHECK_NONE;
	if (a->link && link_file)
		return FB_CHECK_LINK;
	/* a library whose modules are all relocatable code or LTO-IR: the runtime cannot load them,
	 * so the library links them itself at run time (nvJitLink) or ships them for others to */
	if (other || (a->link && lazy))
		return FB_CHECK_OTHER;
	return a->link ? FB_CHECK_NONE : FB_CHECK_NOKERNEL;
}

/* One device: the counts, the verdict and its reasons. */
static void
one_device(const struct fb_parsed *p, struct modules *m, bool link_file, bool lazy, bool other,
           const struct ap_target *dev, struct fb_image *scratch, struct fb_check_arch *a)
{
	memset(a, 0, sizeof(*a));
	a->entry = a->first_none = -1;
	long single = -1;
	for (size_t k = 0; k < p->ncontainers; k++) {
		const struct cinfo *ci = &m->c[k];
		if (ci->link) {
			a->link++;
			continue;
		}
		enum fb_how how;
		long r = fb_select(m->imgs + ci->first, ci->n, dev, &how);
		if (how == FB_HOW_SASS)
			a->sass++;
		else if (how == FB_HOW_PTX_JIT)
			a->jit++;
		else if (a->none++ == 0)
			a->first_none = (long)k;
		if (r >= 0 && p->ncontainers == 1)
			single = (long)ci->first + r;
	}
	if (lazy && a->none && a->sass + a->jit == 0) /* only then can kernel-less modules change the verdict */
		for (size_t k = 0; k < p->ncontainers; k++)
			if (!m->c[k].link && !has_kernels(p, m, k)) {
				a->none--;
				a->empty++;
				if (a->first_none == (long)k)
					a->first_none = -1;
			}
	if (a->none && a->first_none < 0)
		for (size_t k = 0; k < p->ncontainers && a->first_none < 0; k++)
			if (!m->c[k].link && m->c[k].kernels != 0)
				a->first_none = (long)k;
	if (single >= 0) {
		a->entry = (long)m->idx[single];
		a->chosen = m->imgs[single].target;
	}
	a->verdict = verdict(p, a, link_file, lazy, other);
	if (a->verdict == FB_CHECK_NONE && a->none == 0) {
		fb_chk_image_names(m->all, m->nall, a->why_images, sizeof(a->why_images));
		why_unlinked(m, p->ncontainers, a->why, sizeof(a->why));
	} else if (a->verdict == FB_CHECK_NONE) {
		size_t n = 0;
		for (size_t k = 0; k < p->ncontainers; k++)
			if (!m->c[k].link && (!lazy || m->c[k].kernels != 0)) {
				memcpy(scratch + n, m->imgs + m->c[k].first, m->c[k].n * sizeof(*scratch));
				n += m->c[k].n;
			}
		fb_chk_image_names(scratch, n, a->why_images, sizeof(a->why_images));
		fb_chk_why(scratch, n, dev, a->why, sizeof(a->why));
	} else if (a->first_none >= 0) {
		const struct cinfo *ci = &m->c[a->first_none];
		fb_chk_image_names(m->imgs + ci->first, ci->n, a->why_images, sizeof(a->why_images));
		fb_chk_why(m->imgs + ci->first, ci->n, dev, a->why, sizeof(a->why));
	}
}

/* The images of the §3 code, and those NVRTC's built-ins stand for (it compiles SASS and PTX for
 * each of their SMs), judged as one set. */
static int
other_how(const struct fb_devcode *dc, const struct ap_target *dev)
{
	size_t n = dc->nimages + 2 * dc->nnvrtc;
	struct fb_image *im = calloc(n ? n : 1, sizeof(*im));
	if (!im)
		return FB_HOW_NONE;
	if (dc->nimages) /* only NVRTC built-ins: no images to copy, and memcpy is not given NULL */
		memcpy(im, dc->images, dc->nimages * sizeof(*im));
	for (size_t i = 0; i < dc->nnvrtc; i++) {
		im[dc->nimages + 2 * i] = (struct fb_image){{dc->nvrtc[i], AP_PLAIN, AP_SASS, 0}, false};
		im[dc->nimages + 2 * i + 1] = (struct fb_image){{dc->nvrtc[i], AP_PLAIN, AP_PTX, 0}, false};
	}
	enum fb_how how;
	fb_select(im, n, dev, &how);
	free(im);
	return how;
}

int
fb_chk_verdicts(const struct fb_parsed *p, const struct fb_scan *sc, bool link_file, bool lazy,
                const struct fb_devcode *dc, const struct ap_target *dev, size_t ndev, struct fb_check_file *f)
{
	struct modules m;
	f->arch = calloc(ndev ? ndev : 1, sizeof(*f->arch));
	struct fb_image *scratch = calloc(p->nentries ? p->nentries : 1, sizeof(*scratch));
	if (!f->arch || !scratch || modules_make(p, sc, &m) != 0) {
		free(scratch);
		return FB_ENOMEM;
	}
	fb_chk_image_names(m.all, m.nall, f->images, sizeof(f->images));
	bool other = dc && fb_devcode_any(dc);
	/* A library with device code of its own elsewhere whose modules define no kernel (cuFFT: one
	 * kernel-less .nv_fatbin container beside 29342 containers in .ldata) launches nothing from
	 * them: its verdict is the other code's on every device. The search stops at the first
	 * module that defines a kernel, so most libraries decode one image at most. */
	bool kernels = !other || !lazy;
	for (size_t k = 0; k < p->ncontainers && !kernels; k++)
		kernels = !m.c[k].link && has_kernels(p, &m, k);
	for (size_t d = 0; d < ndev; d++) {
		one_device(p, &m, link_file, lazy, other, &dev[d], scratch, &f->arch[d]);
		enum fb_how how = FB_HOW_NONE;
		if (other)
			how = other_how(dc, &dev[d]);
		else if (f->arch[d].verdict == FB_CHECK_OTHER) /* relocatable code and LTO-IR only */
			fb_select(m.all, m.nall + m.nlto, &dev[d], &how);
		f->arch[d].other = how;
		if (!kernels && p->ncontainers) {
			f->arch[d].verdict = FB_CHECK_OTHER;
			f->arch[d].empty = f->arch[d].sass + f->arch[d].jit + f->arch[d].none + f->arch[d].empty;
			f->arch[d].sass = f->arch[d].jit = f->arch[d].none = 0;
			f->arch[d].entry = f->arch[d].first_none = -1;
			f->arch[d].why[0] = f->arch[d].why_images[0] = 0;
		}
	}
	modules_free(&m);
	free(scratch);
	return FB_OK;
}
