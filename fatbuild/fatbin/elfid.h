/* elfid.h: identify a CUDA ELF (cubin) without libelf, and check that an image or a host
 * object is what a cache entry claims. Private to libfatbuild. */
#ifndef FB_ELFID_H
#define FB_ELFID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archprobe.h"
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
	bool arch_a;             /* .nv.compat attribute 9 = 1: arch-specific ('a') code */
};
int fb_elf_ident(const void *data, size_t size, struct fb_elfid *id, struct fb_error *err);
/* Whether the cubin holds arch-specific ('a') code: .nv.compat record {format 2, attribute 9}
 * with value 1 (docs/fatbin.md §8). */
bool fb_elfid_arch_specific(const struct fb_elfid *id);
/* The bytes an ELF image p[0..n) really occupies (headers, sections, program headers); n when
 * its tables do not fit in n. */
size_t fb_elf_extent(const unsigned char *p, size_t n);

/* Whether data is an image of kind for target t (docs/fatbin.md §8): a cubin (FB_KIND_ELF) is
 * EM_CUDA for t's SM, arch-specific exactly when t is an 'a' target ('f' is not recorded in a
 * cubin); PTX is text (no NUL but trailing ones) whose .target is t's SM and variant; LTO-IR
 * starts with the NVVM magic. 0, or FB_EFORMAT with err saying what the image is instead. */
int fb_image_check(enum fb_entry_kind kind, const struct ap_target *t, const void *data, size_t size,
                   struct fb_error *err);
/* Whether data is a relocatable object (ET_REL) for the machine fatbuild itself runs on: ELF
 * class, byte order and e_machine of this build (x86-64, AArch64 or ppc64le). 0 or FB_EFORMAT. */
int fb_elf_host_object(const void *data, size_t size, struct fb_error *err);

#endif
