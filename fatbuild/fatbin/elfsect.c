/* elfsect.c: the section table of a host ELF (ELFCLASS64, little-endian), walked by hand from a
 * mapped buffer so that a 500 MB library costs a few page faults: e_shoff, e_shentsize (64),
 * e_shnum and e_shstrndx at 0x28, 0x3a, 0x3c and 0x3e, with the extended numbering of section 0
 * (count in its sh_size, name table index in its sh_link when e_shstrndx is 0xffff). Every
 * offset is checked against the buffer before it is read. */
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "elfsect.h"

/* Table offset, entry count and the name table, checked; 0 or the error. */
static int
table(const unsigned char *p, size_t size, const char *name, uint64_t *shoff, uint64_t *n, const char **strs,
      uint64_t *strsz, struct fb_error *err)
{
	if (size < 64)
		return fb_seterr(err, FB_EFORMAT, "%s: ELF header truncated (%zu bytes)", name, size);
	if (p[4] != 2 || p[5] != 1)
		return fb_seterr(err, FB_EUNSUPPORTED, "%s: only 64-bit little-endian ELF files are supported", name);
	*shoff = fb_rd64(p + 0x28);
	unsigned shent = fb_rd16(p + 0x3a), shnum = fb_rd16(p + 0x3c), shstrndx = fb_rd16(p + 0x3e);
	*n = 0;
	if (*shoff == 0 && shnum == 0)
		return FB_OK; /* no section table */
	if (shent != 64)
		return fb_seterr(err, FB_EFORMAT, "%s: ELF section header size %u is not 64", name, shent);
	if (*shoff > size || size - *shoff < 64)
		return fb_seterr(err, FB_EFORMAT, "%s: ELF section table offset 0x%llx is past the end (%zu bytes)", name,
		                 (unsigned long long)*shoff, size);
	const unsigned char *sh0 = p + *shoff;
	uint64_t cnt = shnum;
	if (cnt == 0)
		cnt = fb_rd64(sh0 + 0x20); /* extended numbering: count in section 0's sh_size */
	if (shstrndx == 0xffff)
		shstrndx = fb_rd32(sh0 + 0x28);
	if (cnt > (size - *shoff) / 64)
		return fb_seterr(err, FB_EFORMAT, "%s: ELF section table (%llu entries at 0x%llx) runs past the end (%zu bytes)",
		                 name, (unsigned long long)cnt, (unsigned long long)*shoff, size);
	if (shstrndx >= cnt)
		return fb_seterr(err, FB_EFORMAT, "%s: ELF section name table index %u is out of range (%llu sections)", name,
		                 shstrndx, (unsigned long long)cnt);
	const unsigned char *ss = sh0 + (uint64_t)shstrndx * 64;
	uint64_t stroff = fb_rd64(ss + 0x18);
	*strsz = fb_rd64(ss + 0x20);
	if (stroff > size || *strsz > size - stroff)
		return fb_seterr(err, FB_EFORMAT, "%s: ELF section name table runs past the end", name);
	*strs = (const char *)p + stroff;
	*n = cnt;
	return FB_OK;
}

int
fb_elf_sections(const unsigned char *p, size_t size, const char *name,
                int (*fn)(const struct fb_elf_section *s, void *ctx), void *ctx, struct fb_error *err)
{
	uint64_t shoff, n, strsz = 0;
	const char *strs = NULL;
	int rc = table(p, size, name, &shoff, &n, &strs, &strsz, err);
	if (rc || n == 0)
		return rc;
	for (uint64_t i = 1; i < n; i++) {
		const unsigned char *sh = p + shoff + i * 64;
		uint32_t nm = fb_rd32(sh);
		if (nm >= strsz)
			return fb_seterr(err, FB_EFORMAT, "%s: ELF section %llu has a name offset 0x%x past the name table", name,
			                 (unsigned long long)i, nm);
		if (!memchr(strs + nm, 0, (size_t)(strsz - nm)))
			return fb_seterr(err, FB_EFORMAT, "%s: ELF section %llu name is not terminated", name,
			                 (unsigned long long)i);
		struct fb_elf_section s = {
			.index = (size_t)i,
			.name = strs + nm,
			.type = fb_rd32(sh + 4),
			.flags = fb_rd64(sh + 8),
			.offset = fb_rd64(sh + 0x18),
			.size = fb_rd64(sh + 0x20),
			.link = fb_rd32(sh + 0x28),
			.entsize = fb_rd64(sh + 0x38),
		};
		s.inside = s.type != FB_SHT_NOBITS && s.offset <= size && s.size <= size - s.offset;
		rc = fn(&s, ctx);
		if (rc)
			return rc;
	}
	return FB_OK;
}

const unsigned char *
fb_elf_section_data(const unsigned char *p, const struct fb_elf_section *s)
{
	return s->inside ? p + s->offset : NULL;
}
