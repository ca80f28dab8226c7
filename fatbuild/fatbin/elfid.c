/* elfid.c: the identity of a CUDA ELF (cubin) from its header and section table, read by hand
 * with every offset bounds-checked: no libelf, so it is cheap enough for every entry of a library.
 *
 * Facts used (docs/fatbin.md §8): ELFCLASS64, little-endian, e_machine 190 (EM_CUDA);
 * EI_ABIVERSION 7 (CUDA <= 12.x): SM in e_flags bits 0-7, ABI 8 (13.0): bits 8-15;
 * .nv.compat is section type 0x70000086. */
#include <string.h>

#include "common/bytes.h"
#include "common/error_priv.h"
#include "elfid.h"

#define EM_CUDA_ 190
#define SHT_NV_COMPAT 0x70000086u

static int
sm_from_flags(int abi, uint32_t f)
{
	return abi >= 8 ? (int)((f >> 8) & 0xff) : (int)(f & 0xff);
}

int
fb_elf_ident(const void *data, size_t size, struct fb_elfid *id, struct fb_error *err)
{
	const unsigned char *p = data;
	memset(id, 0, sizeof(*id));
	if (size < 64 || memcmp(p, "\x7f" "ELF", 4) != 0)
		return fb_seterr(err, FB_EFORMAT, "not an ELF file (%zu bytes)", size);
	if (p[4] != 2)
		return fb_seterr(err, FB_EFORMAT, "cubin is not ELFCLASS64 (32-bit device code is not supported)");
	if (p[5] != 1)
		return fb_seterr(err, FB_EFORMAT, "cubin is not little-endian");
	if (fb_rd16(p + 0x12) != EM_CUDA_)
		return fb_seterr(err, FB_EFORMAT, "ELF e_machine %u is not EM_CUDA (190)", fb_rd16(p + 0x12));
	id->abi = p[8];
	id->type = fb_rd16(p + 0x10);
	id->e_flags = fb_rd32(p + 0x30);
	id->sm = sm_from_flags(id->abi, id->e_flags);
	if (id->sm < 10)
		return fb_seterr(err, FB_EFORMAT, "cubin e_flags 0x%08x (ABI %d) give no SM number", id->e_flags, id->abi);
	uint64_t shoff = fb_rd64(p + 0x28);
	unsigned shentsize = fb_rd16(p + 0x3a), shnum = fb_rd16(p + 0x3c);
	if (shnum == 0 || shoff == 0)
		return FB_OK;
	if (shentsize != 64)
		return fb_seterr(err, FB_EFORMAT, "ELF section header size %u is not 64", shentsize);
	if (shoff > size || (uint64_t)shnum * 64 > size - shoff)
		return fb_seterr(err, FB_EFORMAT, "ELF section table (offset 0x%llx, %u entries) runs past the end (%zu bytes)",
		                 (unsigned long long)shoff, shnum, size);
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = p + shoff + (uint64_t)i * 64;
		if (fb_rd32(sh + 4) != SHT_NV_COMPAT)
			continue;
		uint64_t off = fb_rd64(sh + 0x18), sz = fb_rd64(sh + 0x20);
		if (off > size || sz > size - off)
			return fb_seterr(err, FB_EFORMAT, "ELF section %u (.nv.compat) runs past the end", i);
		id->compat = p + off;
		id->compat_len = (size_t)sz;
		break;
	}
	return FB_OK;
}

bool
fb_elfid_arch_specific(const struct fb_elfid *id)
{
	const unsigned char *c = id->compat;
	for (size_t i = 0; c && i + 3 <= id->compat_len && c[i] != 0; i += c[i] == 3 ? 4 : 3) {
		if (c[i] == 2 && c[i + 1] == 9)
			return c[i + 2] == 1;
		if (c[i] != 2 && c[i] != 3)
			break;
	}
	return false;
}

/* The bytes an ELF image really occupies (headers, sections, program headers). */
size_t
fb_elf_extent(const unsigned char *p, size_t n)
{
	if (n < 64 || memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2)
		return n;
	uint64_t end = 64;
	uint64_t shoff = fb_rd64(p + 0x28), phoff = fb_rd64(p + 0x20);
	unsigned shnum = fb_rd16(p + 0x3c), phnum = fb_rd16(p + 0x38);
	unsigned shent = fb_rd16(p + 0x3a), phent = fb_rd16(p + 0x36);
	if (shoff && shoff <= n && (uint64_t)shnum * shent <= n - shoff) {
		if (shoff + (uint64_t)shnum * shent > end)
			end = shoff + (uint64_t)shnum * shent;
		for (unsigned i = 0; i < shnum && shent >= 64; i++) {
			const unsigned char *sh = p + shoff + (uint64_t)i * shent;
			if (fb_rd32(sh + 4) == 8) /* SHT_NOBITS */
				continue;
			uint64_t o = fb_rd64(sh + 0x18), s = fb_rd64(sh + 0x20);
			if (o <= n && s <= n - o && o + s > end)
				end = o + s;
		}
	} else {
		return n;
	}
	if (phoff && phoff <= n && (uint64_t)phnum * phent <= n - phoff && phoff + (uint64_t)phnum * phent > end)
		end = phoff + (uint64_t)phnum * phent;
	return end < n ? (size_t)end : n;
}
