/* format.h: the fatbinary container on disk (docs/fatbin.md §1-§3): the container and entry
 * header layouts and the two walk steps, over the containers of a buffer and over the entries
 * of one container. Header-only, so that the runtime (which links nothing but its own code)
 * and the test driver tests/fakecuda walk containers exactly as fatbin/ and fatbin/embed.c do.
 * Entry kinds and flags are the public FB_DISK_KIND_* and FB_FLAG_* of fatbuild.h.
 *
 * Layout (docs/fatbin.md §1-§3, checked against CUDA 13.0 fatbinary; all integers little-endian,
 * al8(x) = (x+7)&~7):
 *
 *   container header, 16 bytes:
 *     +0x00 u32 magic 0xBA55ED50   +0x04 u16 version 1   +0x06 u16 header size 0x10
 *     +0x08 u64 fatSize: bytes of all entries that follow (a multiple of 8)
 *   entries, back to back, no index, no terminator. Each entry:
 *     +0x00 u16 kind (1 PTX, 2 ELF, 8 LTO-IR)     +0x02 u16 entry header version 0x0101
 *     +0x04 u32 header size (entry start → payload; multiple of 8, >= 0x40)
 *     +0x08 u64 payload size = al8(stored bytes), zero padded
 *     +0x10 u32 compressed size (exact) or 0      +0x14 u32 options descriptor offset or 0
 *     +0x18 u16 minor   +0x1a u16 major  (ELF: 1.EI_ABIVERSION; PTX: ISA; LTO: 1.byte5 of NVVM)
 *     +0x1c u32 arch: 10*major+minor, no 'a'/'f' (those are flags)
 *     +0x20 u32 identifier offset (0x40) or 0     +0x24 u32 identifier length without NUL
 *     +0x28 u64 flags: 0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 LZ4 block, 0x8000 zstd,
 *               0x10000 obfuscated, 0x100000 'a', 0x200000 'f', 0x1000000 compat blob
 *     +0x30 u64 obfuscation key (0)               +0x38 u64 uncompressed size (exact) or 0
 *   variable tail, each piece NUL-padded to 8: [identifier NUL] at 0x40, then the descriptor
 *   {u32 off, u32 len} at +0x14, then the string (PTX/LTO options, NUL-terminated) or, for an
 *   ELF entry with arch >= 100, the compat blob 0x00 ‖ .nv.compat cut to len(.nv.compat). */
#ifndef FB_FATBIN_FORMAT_H
#define FB_FATBIN_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "base/bytes.h"
#include "fatbuild.h"

#define FB_CONTAINER_MAGIC 0xBA55ED50u
#define FB_CONTAINER_OLD_MAGIC 0x1EE55A01u /* refused */
#define FB_WRAPPER_MAGIC 0x466243B1u       /* nvcc's 24-byte .nvFatBinSegment wrapper */
#define FB_CONTAINER_HDR 16u
#define FB_ENTRY_HDR 0x40u
#define FB_ENTRY_VERSION 0x0101u

/* The fixed 0x40 bytes of an entry header. */
struct fb_fmt_entry {
	uint16_t kind, version;
	uint32_t header_size;
	uint64_t payload_size;
	uint32_t compressed_size, options_offset;
	uint16_t minor, major;
	uint32_t arch, ident_offset, ident_len;
	uint64_t flags, okey, uncompressed_size;
};

/* Decodes the FB_ENTRY_HDR bytes at h. */
static inline void
fb_fmt_entry_read(const unsigned char *h, struct fb_fmt_entry *e)
{
	e->kind = fb_rd16(h);
	e->version = fb_rd16(h + 0x02);
	e->header_size = fb_rd32(h + 0x04);
	e->payload_size = fb_rd64(h + 0x08);
	e->compressed_size = fb_rd32(h + 0x10);
	e->options_offset = fb_rd32(h + 0x14);
	e->minor = fb_rd16(h + 0x18);
	e->major = fb_rd16(h + 0x1a);
	e->arch = fb_rd32(h + 0x1c);
	e->ident_offset = fb_rd32(h + 0x20);
	e->ident_len = fb_rd32(h + 0x24);
	e->flags = fb_rd64(h + 0x28);
	e->okey = fb_rd64(h + 0x30);
	e->uncompressed_size = fb_rd64(h + 0x38);
}

/* Encodes e into the FB_ENTRY_HDR bytes at h. */
static inline void
fb_fmt_entry_write(unsigned char *h, const struct fb_fmt_entry *e)
{
	fb_wr16(h, e->kind);
	fb_wr16(h + 0x02, e->version);
	fb_wr32(h + 0x04, e->header_size);
	fb_wr64(h + 0x08, e->payload_size);
	fb_wr32(h + 0x10, e->compressed_size);
	fb_wr32(h + 0x14, e->options_offset);
	fb_wr16(h + 0x18, e->minor);
	fb_wr16(h + 0x1a, e->major);
	fb_wr32(h + 0x1c, e->arch);
	fb_wr32(h + 0x20, e->ident_offset);
	fb_wr32(h + 0x24, e->ident_len);
	fb_wr64(h + 0x28, e->flags);
	fb_wr64(h + 0x30, e->okey);
	fb_wr64(h + 0x38, e->uncompressed_size);
}

/* Writes a container header (version 1, header size 0x10) for fat bytes of entries at p. */
static inline void
fb_fmt_container_write(unsigned char *p, uint64_t fat)
{
	fb_wr32(p, FB_CONTAINER_MAGIC);
	fb_wr16(p + 4, 1);
	fb_wr16(p + 6, FB_CONTAINER_HDR);
	fb_wr64(p + 8, fat);
}

/* What a walk step found; each failed check has its own value, in the order they are made. */
enum fb_fmt_status {
	FB_FMT_OK = 0,
	FB_FMT_END,            /* nothing but padding is left */
	FB_FMT_SHORT,          /* fewer bytes left than a header */
	FB_FMT_OLD_MAGIC,      /* container magic 0x1EE55A01 */
	FB_FMT_MAGIC,          /* any other magic */
	FB_FMT_VERSION,        /* container version is not 1 */
	FB_FMT_HEADER_SMALL,   /* container header size is not 0x10; entry header size below 0x40 */
	FB_FMT_HEADER_ALIGN,   /* entry header size is not a multiple of 8 */
	FB_FMT_HEADER_PAST,    /* entry header runs past the container end */
	FB_FMT_SIZE_ALIGN,     /* fatSize or payload size is not a multiple of 8 */
	FB_FMT_SIZE_PAST,      /* container or payload runs past the end */
};

/* Checks of a walk step besides the bounds (which are always checked). */
#define FB_FMT_CHECK_VERSION 0x1u /* container version 1 */
#define FB_FMT_CHECK_LAYOUT 0x2u  /* container header size 0x10; sizes multiples of 8 */

/* Checks the container header at p, left bytes before the end. FB_FMT_OK with its fatSize in
 * *fat (may be NULL). */
static inline enum fb_fmt_status
fb_fmt_container_check(const unsigned char *p, size_t left, unsigned checks, uint64_t *fat)
{
	if (left < FB_CONTAINER_HDR)
		return FB_FMT_SHORT;
	uint32_t magic = fb_rd32(p);
	if (magic != FB_CONTAINER_MAGIC)
		return magic == FB_CONTAINER_OLD_MAGIC ? FB_FMT_OLD_MAGIC : FB_FMT_MAGIC;
	if ((checks & FB_FMT_CHECK_VERSION) && fb_rd16(p + 4) != 1)
		return FB_FMT_VERSION;
	uint64_t f = fb_rd64(p + 8);
	if ((checks & FB_FMT_CHECK_LAYOUT) && fb_rd16(p + 6) != FB_CONTAINER_HDR)
		return FB_FMT_HEADER_SMALL;
	if ((checks & FB_FMT_CHECK_LAYOUT) && f % 8)
		return FB_FMT_SIZE_ALIGN;
	if (f > left - FB_CONTAINER_HDR)
		return FB_FMT_SIZE_PAST;
	if (fat)
		*fat = f;
	return FB_FMT_OK;
}

/* How a container walk steps over what lies between containers. */
enum fb_fmt_pad {
	FB_PAD_NONE,  /* a container starts right here */
	FB_PAD_BYTES, /* zero bytes, one at a time (fb_fatbin_parse after the first container) */
	FB_PAD_WORDS, /* 8 bytes at a time while the first of them is zero (fb_embed, fb_container_merge) */
	FB_PAD_SCAN,  /* 8 bytes at a time over anything but the container magic (the runtime) */
};

/* One step of a walk over the containers of buf[0..size): steps over padding from *off as pad
 * says, then checks the container header there. FB_FMT_OK: the container starts at *at and is
 * *csize bytes (header included), *off is past it. FB_FMT_END: only padding was left (for
 * FB_PAD_SCAN: less than a header). Else the failed check, with *at where it was made. */
static inline enum fb_fmt_status
fb_fmt_container_next(const unsigned char *buf, size_t size, size_t *off, enum fb_fmt_pad pad, unsigned checks,
                      size_t *at, size_t *csize)
{
	size_t o = *off;
	switch (pad) {
	case FB_PAD_NONE:
		break;
	case FB_PAD_BYTES:
		while (o < size && buf[o] == 0)
			o++;
		break;
	case FB_PAD_WORDS:
		while (o < size && buf[o] == 0)
			o += 8;
		break;
	case FB_PAD_SCAN:
		while (o <= size && size - o >= FB_CONTAINER_HDR && fb_rd32(buf + o) != FB_CONTAINER_MAGIC)
			o += 8;
		if (o > size || size - o < FB_CONTAINER_HDR)
			return FB_FMT_END;
		break;
	}
	if (o >= size)
		return FB_FMT_END;
	*off = o;
	*at = o;
	uint64_t fat;
	enum fb_fmt_status st = fb_fmt_container_check(buf + o, size - o, checks, &fat);
	if (st != FB_FMT_OK)
		return st;
	*csize = FB_CONTAINER_HDR + (size_t)fat;
	*off = o + *csize;
	return FB_FMT_OK;
}

/* One step of a walk over the entries of a container: decodes the entry header at c[off], the
 * container ending at cend, into *e, and bounds its header and payload by cend (with
 * FB_FMT_CHECK_LAYOUT, both sizes must be multiples of 8 too). FB_FMT_OK: the next entry starts
 * at off + e->header_size + e->payload_size. */
static inline enum fb_fmt_status
fb_fmt_entry_next(const unsigned char *c, size_t off, size_t cend, unsigned checks, struct fb_fmt_entry *e)
{
	size_t left = cend - off;
	if (left < FB_ENTRY_HDR)
		return FB_FMT_SHORT;
	fb_fmt_entry_read(c + off, e);
	if (e->header_size < FB_ENTRY_HDR)
		return FB_FMT_HEADER_SMALL;
	if ((checks & FB_FMT_CHECK_LAYOUT) && e->header_size % 8)
		return FB_FMT_HEADER_ALIGN;
	if (e->header_size > left)
		return FB_FMT_HEADER_PAST;
	if ((checks & FB_FMT_CHECK_LAYOUT) && e->payload_size % 8)
		return FB_FMT_SIZE_ALIGN;
	if (e->payload_size > left - e->header_size)
		return FB_FMT_SIZE_PAST;
	return FB_FMT_OK;
}

#endif
