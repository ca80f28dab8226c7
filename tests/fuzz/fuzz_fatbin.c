/* fuzz_fatbin.c: the fatbin container reader (fb_fatbin_parse) and the entry decoder
 * (fb_entry_image: zstd, LZ4 block, LZ4 frame) on arbitrary bytes.
 * Input: the bytes of a buffer holding zero or more containers. The first byte's low bit picks
 * FB_PARSE_FIRST. Invariants (abort on violation): an error is one line with the code it
 * returned and leaves nothing allocated; every container and entry lies inside the buffer and
 * entries are numbered in order; a decoded image has exactly the header's uncompressed size
 * (compressed entries) or the stored size (plain entries), and never more than the cap; every
 * decoded entry packs again (fb_fatbin_add/write) and the result parses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP (UINT64_C(1) << 20) /* small cap: bombs must be refused, not allocated */

static void
one_line(const struct fb_error *err, int rc)
{
	if (err->code != rc || !err->msg[0] || strchr(err->msg, '\n'))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags = size && (data[0] & 1) ? FB_PARSE_FIRST : 0;
	struct fb_parsed p;
	struct fb_error err = {0};
	int rc = fb_fatbin_parse(data, size, flags, &p, &err);
	if (rc) {
		one_line(&err, rc);
		if (p.entries || p.containers || p.nentries || p.ncontainers)
			abort();
		return 0;
	}
	const unsigned char *end = data + size;
	for (size_t c = 0; c < p.ncontainers; c++) {
		const struct fb_container *k = &p.containers[c];
		if (k->offset > size || k->size > size - k->offset || k->first + k->count > p.nentries)
			abort();
	}
	struct fb_fatbin *fb = fb_fatbin_new();
	if (!fb)
		return 0;
	size_t added = 0;
	for (size_t i = 0; i < p.nentries; i++) {
		const struct fb_entry *e = &p.entries[i];
		if (e->container >= p.ncontainers || e->offset >= size)
			abort();
		if (e->stored_size && (e->payload < data || e->payload > end || e->stored_size > (size_t)(end - e->payload)))
			abort();
		if (e->ident && (e->ident < (const char *)data || e->ident_len > (size_t)((const char *)end - e->ident)))
			abort();
		if (e->options && (e->options < (const char *)data || e->options_len > (size_t)((const char *)end - e->options)))
			abort();
		if (e->compat && (e->compat < data || e->compat_len > (size_t)(end - e->compat)))
			abort();
		char kb[16];
		if (!fb_disk_kind_name(e->disk_kind, kb, sizeof(kb)))
			abort();
		unsigned char *img = NULL;
		size_t n = 0;
		struct fb_error ierr = {0};
		int irc = fb_entry_image(e, CAP, &img, &n, &ierr);
		if (irc) {
			one_line(&ierr, irc);
			if (img)
				abort();
			continue;
		}
		if (n > CAP)
			abort();
		if (e->compress != FB_COMPRESS_NONE && n != e->uncompressed_size)
			abort();
		enum fb_entry_kind kind = e->disk_kind == FB_DISK_KIND_ELF ? FB_KIND_ELF
		                        : e->disk_kind == FB_DISK_KIND_LTO ? FB_KIND_LTO : FB_KIND_PTX;
		if ((e->disk_kind == FB_DISK_KIND_PTX || e->disk_kind == FB_DISK_KIND_ELF ||
		     e->disk_kind == FB_DISK_KIND_LTO) && n && added < 8) {
			struct fb_error aerr = {0};
			if (fb_fatbin_add(fb, kind, &e->target, img, n, NULL, NULL, &aerr) == 0)
				added++;
			else
				one_line(&aerr, aerr.code);
		}
		free(img);
	}
	if (added) {
		unsigned char *out = NULL;
		size_t outsize = 0;
		struct fb_error werr = {0};
		int wrc = fb_fatbin_write(fb, (size && (data[0] & 2)) ? FB_COMPRESS_ZSTD : FB_COMPRESS_NONE, &out,
		                          &outsize, &werr);
		if (wrc == 0) {
			struct fb_parsed q;
			if (fb_fatbin_parse(out, outsize, 0, &q, &werr) != 0 || q.nentries != added)
				abort();
			fb_parsed_free(&q);
			free(out);
		} else {
			one_line(&werr, wrc);
		}
	}
	fb_fatbin_free(fb);
	fb_parsed_free(&p);
	return 0;
}
