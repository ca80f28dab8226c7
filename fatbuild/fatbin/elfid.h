/* elfid.h: identify a CUDA ELF (cubin) without libelf. Private to the fatbin subsystem. */
#ifndef FB_ELFID_H
#define FB_ELFID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"

/* The identity of a CUDA ELF from its header and section table, parsed by hand with every
 * offset bounds-checked (no libelf, so it is cheap enough for every entry of a library). */
struct fb_elfid {
	int abi;                 /* EI_ABIVERSION */
	int sm;                  /* from e_flags by ABI version */
	int type;                /* e_type: 1 ET_REL, 2 ET_EXEC */
	uint32_t e_flags;
	const unsigned char *compat; /* .nv.compat contents, or NULL */
	size_t compat_len;
};
int fb_elf_ident(const void *data, size_t size, struct fb_elfid *id, struct fb_error *err);
/* Whether the cubin holds arch-specific ('a') code: .nv.compat record {format 2, attribute 9}
 * with value 1 (docs/fatbin.md §8). */
bool fb_elfid_arch_specific(const struct fb_elfid *id);
/* The bytes an ELF image p[0..n) really occupies (headers, sections, program headers); n when
 * its tables do not fit in n. */
size_t fb_elf_extent(const unsigned char *p, size_t n);

#endif
