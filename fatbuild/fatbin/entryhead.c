/* entryhead.c: the first bytes of an entry's image (docs/fatbin.md §4), for questions its ELF
 * header answers (is this cubin relocatable?) without decompressing a whole image: a library's
 * thousands of entries cost a few kilobytes of decoding each instead of their full size. */
#include <stdlib.h>
#include <string.h>

#define LZ4F_STATIC_LINKING_ONLY
#include <lz4.h>
#include <lz4frame.h>
#include <zstd.h>

#include "base/bytes.h"
#include "base/error.h"
#include "elfsect.h"
#include "entryhead.h"

static int
head_zstd(const struct fb_entry *e, unsigned char *buf, size_t n, size_t *got, struct fb_error *err)
{
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!dc)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	ZSTD_outBuffer out = {buf, n, 0};
	ZSTD_inBuffer in = {e->payload, e->compressed_size, 0};
	size_t r = 1;
	while (out.pos < n && in.pos < in.size && r != 0) {
		size_t before = in.pos + out.pos;
		r = ZSTD_decompressStream(dc, &out, &in);
		if (ZSTD_isError(r) || in.pos + out.pos == before)
			break;
	}
	ZSTD_freeDCtx(dc);
	if (ZSTD_isError(r))
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: zstd decompression failed: %s", e->container,
		                 e->index, ZSTD_getErrorName(r));
	*got = out.pos;
	return FB_OK;
}

static int
head_lz4_frame(const struct fb_entry *e, unsigned char *buf, size_t n, size_t *got, struct fb_error *err)
{
	LZ4F_dctx *dc;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	size_t si = 0, di = 0, r = 1;
	while (si < e->compressed_size && di < n && r != 0) {
		size_t sn = e->compressed_size - si, dn = n - di;
		r = LZ4F_decompress(dc, buf + di, &dn, e->payload + si, &sn, NULL);
		if (LZ4F_isError(r) || (sn == 0 && dn == 0))
			break;
		si += sn;
		di += dn;
	}
	LZ4F_freeDecompressionContext(dc);
	if (LZ4F_isError(r))
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: LZ4 frame decompression failed: %s", e->container,
		                 e->index, LZ4F_getErrorName(r));
	*got = di;
	return FB_OK;
}

int
fb_entry_head(const struct fb_entry *e, unsigned char *buf, size_t n, size_t *got, struct fb_error *err)
{
	*got = 0;
	if (e->disk_kind != FB_DISK_KIND_PTX && e->disk_kind != FB_DISK_KIND_ELF && e->disk_kind != FB_DISK_KIND_LTO)
		return fb_seterr(err, FB_EUNSUPPORTED, "container %zu: entry %zu: unknown kind %u cannot be decoded", e->container,
		                 e->index, e->disk_kind);
	if (e->obfuscated || ((e->flags & FB_FLAG_COMPRESS_OLD) && e->compress == FB_COMPRESS_NONE))
		return fb_seterr(err, FB_EUNSUPPORTED, "container %zu: entry %zu: payload cannot be decoded", e->container,
		                 e->index);
	if (e->compress == FB_COMPRESS_NONE) {
		*got = e->stored_size < n ? e->stored_size : n;
		memcpy(buf, e->payload, *got);
		return FB_OK;
	}
	if (e->compress == FB_COMPRESS_ZSTD)
		return head_zstd(e, buf, n, got, err);
	if (e->compressed_size >= 4 && fb_rd32(e->payload) == 0x184D2204u)
		return head_lz4_frame(e, buf, n, got, err);
	if (e->compressed_size > (size_t)INT32_MAX || n > (size_t)INT32_MAX)
		return fb_seterr(err, FB_ETOOBIG, "container %zu: entry %zu: LZ4 block sizes exceed 2 GiB", e->container,
		                 e->index);
	int want = (int)(e->uncompressed_size < n ? e->uncompressed_size : n);
	int r = LZ4_decompress_safe_partial((const char *)e->payload, (char *)buf, (int)e->compressed_size, want, (int)n);
	if (r < 0)
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: LZ4 block decompression failed", e->container,
		                 e->index);
	*got = (size_t)r;
	return FB_OK;
}

bool
fb_entry_relocatable(const struct fb_entry *e)
{
	unsigned char h[64];
	size_t got = 0;
	if (e->disk_kind != FB_DISK_KIND_ELF || fb_entry_head(e, h, sizeof(h), &got, NULL) != 0 || got < 0x12)
		return false;
	return memcmp(h, "\x7f" "ELF", 4) == 0 && h[5] == 1 && fb_rd16(h + 0x10) == 1; /* ET_REL */
}

/* fb_elf_sections' callback: counts the kernels of a cubin's SHT_SYMTAB (Elf64_Sym: st_info at
 * +4, low nibble STT_FUNC = 2; st_other at +5, STO_CUDA_ENTRY = 0x10). */
struct kernels {
	const unsigned char *p;
	size_t found;
};

static int
count_kernels(const struct fb_elf_section *s, void *ctx)
{
	struct kernels *k = ctx;
	if (s->type != 2 || !s->inside || s->entsize != 24)
		return 0;
	const unsigned char *sy = fb_elf_section_data(k->p, s);
	for (uint64_t i = 0; i < s->size / 24; i++)
		if ((sy[i * 24 + 4] & 0xf) == 2 && (sy[i * 24 + 5] & 0x10))
			k->found++;
	return 0;
}

static bool
ptx_entry(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i + 7 <= n; i++)
		if (p[i] == '.' && memcmp(p + i, ".entry", 6) == 0 && (p[i + 6] == ' ' || p[i + 6] == '\t') &&
		    (i == 0 || p[i - 1] == ' ' || p[i - 1] == '\t' || p[i - 1] == '\n'))
			return true;
	return false;
}

int
fb_entry_has_kernels(const struct fb_entry *e, uint64_t cap)
{
	unsigned char *img = NULL;
	size_t n = 0;
	if (fb_entry_image(e, cap, &img, &n, NULL) != 0)
		return -1;
	int r;
	if (e->disk_kind == FB_DISK_KIND_PTX) {
		r = ptx_entry(img, n);
	} else {
		struct kernels k = {img, 0};
		r = fb_elf_sections(img, n, "cubin", count_kernels, &k, NULL) == 0 ? k.found > 0 : -1;
	}
	free(img);
	return r;
}
