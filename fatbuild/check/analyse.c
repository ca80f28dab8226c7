/* analyse.c: one file's device code (docs/check-environment.md §1-§3): the modules the CUDA
 * runtime loads (fb_scan_buffer: a fatbin, cubin or PTX file, the .nv_fatbin and __nv_relfatbin
 * sections of a host ELF or of an ar archive's members), the device code a host ELF keeps
 * elsewhere (fb_devcode_scan), and the verdict per device. The file is mapped; the scan of its
 * other sections gives back each window it is done with (MADV_DONTNEED), so a 500 MB library
 * never stays resident whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "base/bytes.h"
#include "fatbin/devcode.h"

struct fb_check_file *
fb_chk_add_file(struct fb_chk_result *r, const char *path)
{
	if (r->n == r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 4;
		struct fb_check_file *nf = realloc(r->files, nc * sizeof(*nf));
		if (!nf)
			return NULL;
		r->files = nf;
		r->cap = nc;
	}
	struct fb_check_file *f = &r->files[r->n];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	r->n++;
	return f;
}

void
fb_chk_files_free(struct fb_check_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(files[i].path);
		free(files[i].arch);
	}
	free(files);
}

void
fb_chk_result_free(struct fb_chk_result *r)
{
	if (!r)
		return;
	fb_chk_files_free(r->files, r->n);
	free(r->dist_name);
	free(r->dist_version);
	memset(r, 0, sizeof(*r));
}

/* fb_devcode_scan's release: the whole pages of from[0..n) go back to the page cache. */
static void
drop_pages(const unsigned char *from, size_t n, void *ctx)
{
	size_t pg = *(const size_t *)ctx;
	uintptr_t a = ((uintptr_t)from + pg - 1) & ~(uintptr_t)(pg - 1), e = ((uintptr_t)from + n) & ~(uintptr_t)(pg - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

/* An error entry for path; false when even that could not be made. */
static void
file_error(struct fb_chk_result *r, const char *path, const char *msg)
{
	struct fb_check_file *f = fb_chk_add_file(r, path);
	if (f)
		snprintf(f->error, sizeof(f->error), "%s", msg);
}

static void
fill_other(struct fb_check_file *f, const struct fb_devcode *dc)
{
	f->other_containers = dc->ncontainers;
	f->other_cubins = dc->ncubins;
	f->other_ptx = dc->nptx;
	f->other_lto = dc->nlto;
	snprintf(f->other_sections, sizeof(f->other_sections), "%s", dc->sections);
	fb_chk_image_names(dc->images, dc->nimages, f->other_images, sizeof(f->other_images));
	f->nvrtc = dc->nnvrtc;
	if (dc->nnvrtc) {
		f->nvrtc_min = dc->nvrtc[0];
		f->nvrtc_max = dc->nvrtc[dc->nnvrtc - 1];
	}
}

void
fb_chk_analyse(const struct fb_chk *c, const unsigned char *p, size_t size, const char *path, bool text, bool mapped,
               struct fb_chk_result *r)
{
	struct fb_error err = {0};
	struct fb_scan sc;
	if (fb_scan_buffer(p, size, path, &sc, &err) != 0) {
		if (text) /* text that only began like PTX */
			r->without_code++;
		else
			file_error(r, path, err.msg);
		return;
	}
	struct fb_parsed pr;
	if (fb_scan_entries(p, &sc, &pr, &err) != 0) {
		fb_scan_free(&sc);
		file_error(r, path, err.msg);
		return;
	}
	bool elf = strcmp(sc.type, "elf") == 0;
	struct fb_devcode dc = {0};
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	/* the other sections are read from end to end, with readahead, and dropped behind */
	if (mapped)
		madvise((void *)p, size, MADV_SEQUENTIAL);
	int drc = elf ? fb_devcode_scan(p, size, path, mapped ? drop_pages : NULL, &pg, &dc, &err) : 0;
	if (mapped)
		madvise((void *)p, size, MADV_NORMAL);
	if (drc != 0) {
		fb_parsed_free(&pr);
		fb_scan_free(&sc);
		file_error(r, path, err.msg);
		return;
	}
	if (pr.ncontainers == 0 && !fb_devcode_any(&dc)) {
		r->without_code++;
		r->elf_without_code += elf;
	} else {
		struct fb_check_file *f = fb_chk_add_file(r, path);
		/* an ar archive, or a relocatable host object (e_type ET_REL): its device code is linked */
		bool link_file = strcmp(sc.type, "archive") == 0 || (elf && fb_rd16(p + 0x10) == 1);
		if (f) {
			snprintf(f->type, sizeof(f->type), "%s", sc.type);
			f->size = size;
			f->modules = pr.ncontainers;
			f->entries = pr.nentries;
			fill_other(f, &dc);
			if (fb_chk_verdicts(&pr, &sc, link_file, elf, &dc, c->o->devices, c->o->ndevices, f) != 0)
				snprintf(f->error, sizeof(f->error), "%s: out of memory", path);
		}
	}
	fb_devcode_free(&dc);
	fb_parsed_free(&pr);
	fb_scan_free(&sc);
}
