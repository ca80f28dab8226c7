/* devcode.h: device code a host ELF carries outside the sections the CUDA runtime registers
 * (devcode.c). Private to the fatbin subsystem and the parts that may use it; symbols are hidden. */
#ifndef FB_DEVCODE_H
#define FB_DEVCODE_H

#include <stddef.h>

#include "fatbuild.h"

struct fb_devcode {
	size_t ncontainers, ncubins, nptx; /* found outside .nv_fatbin and __nv_relfatbin */
	size_t nlto;                       /* LTO-IR entries among those containers */
	char sections[160];                /* the sections they were found in, ", "-joined */
	struct fb_image *images;           /* the distinct ELF and PTX images among them */
	size_t nimages;
	int *nvrtc;                        /* NVRTC built-in headers: the SM of each getArchBuiltins<SM> */
	size_t nnvrtc;
};

/* Scans the 64-bit little-endian ELF p[0..size) (a shared library, executable or object) for
 * device code in its other allocated, non-executable PROGBITS sections, and its dynamic symbols
 * for NVRTC's built-in headers (docs/check-environment.md §3). release(from, n, ctx), when not
 * NULL, is told of each stretch that the scan of a section is done with (16 MiB or more, the
 * last of a section shorter; in order within a section), so that the caller can drop those
 * pages. Free *out with fb_devcode_free. 0, FB_ENOMEM, or the
 * section table's error (fb_elf_sections). */
int fb_devcode_scan(const unsigned char *p, size_t size, const char *name,
                    void (*release)(const unsigned char *from, size_t n, void *ctx), void *ctx,
                    struct fb_devcode *out, struct fb_error *err);
/* Whether anything was found. */
bool fb_devcode_any(const struct fb_devcode *d);
void fb_devcode_free(struct fb_devcode *d);

#endif
