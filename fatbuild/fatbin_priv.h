/* fatbin_priv.h: helpers shared by the fatbin modules (fatbin.c, fatbin_read.c, cubin.c,
 * hostelf.c, select.c). Private to libfatbuild; symbols are hidden. */
#ifndef FB_FATBIN_PRIV_H
#define FB_FATBIN_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "error_priv.h"
#include "fatbuild.h"

#define FB_AL8(x) (((x) + 7) & ~(uint64_t)7)


static inline uint16_t
fb_rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
fb_rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
fb_rd64(const unsigned char *p)
{
	return (uint64_t)fb_rd32(p) | (uint64_t)fb_rd32(p + 4) << 32;
}

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
