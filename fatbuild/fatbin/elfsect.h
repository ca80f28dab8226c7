/* elfsect.h: the section table of a host ELF, walked by hand from a buffer (elfsect.c). Private
 * to the fatbin subsystem and the parts that may use it; symbols are hidden. */
#ifndef FB_ELFSECT_H
#define FB_ELFSECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"

#define FB_SHT_NOBITS 8u
#define FB_SHT_DYNSYM 11u
#define FB_SHF_EXECINSTR 0x4u

/* One section (index >= 1) as fb_elf_sections reports it. offset and size are as stored:
 * inside says whether the bytes are in the buffer (never for SHT_NOBITS). */
struct fb_elf_section {
	size_t index;
	const char *name;       /* NUL-terminated, inside the section name table */
	uint32_t type, link;
	uint64_t flags, offset, size, entsize;
	bool inside;
};

/* Calls fn(section, ctx) for every section of the 64-bit little-endian ELF p[0..size), in table
 * order, until fn returns non-zero (then that value). The header, the table and every name are
 * bounds-checked first: FB_EFORMAT / FB_EUNSUPPORTED with "NAME: ..." messages. A file without
 * a section table has no sections. */
int fb_elf_sections(const unsigned char *p, size_t size, const char *name,
                    int (*fn)(const struct fb_elf_section *s, void *ctx), void *ctx, struct fb_error *err);
/* The section's bytes inside the file (s->inside), else NULL. */
const unsigned char *fb_elf_section_data(const unsigned char *p, const struct fb_elf_section *s);

#endif
