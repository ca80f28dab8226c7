/* elfid.h: identify a CUDA ELF (cubin) without libelf. Private to the fatbin subsystem. */
#ifndef FB_ELFID_H
#define FB_ELFID_H

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

#endif
