/* entryhead.h: the first bytes of an entry's image without decoding the rest (entryhead.c).
 * Private to the fatbin subsystem and the parts that may use it; symbols are hidden. */
#ifndef FB_ENTRYHEAD_H
#define FB_ENTRYHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"

/* Decodes at most n leading bytes of e's image into buf (*got of them: fewer only when the image
 * is shorter). zstd is decoded as a stream that stops once buf is full; an LZ4 block with
 * LZ4_decompress_safe_partial; an LZ4 frame a step at a time. 0, or FB_EUNSUPPORTED (unknown
 * kind, obfuscated, old compression flag) / FB_EFORMAT naming the entry as fb_entry_image does. */
int fb_entry_head(const struct fb_entry *e, unsigned char *buf, size_t n, size_t *got, struct fb_error *err);
/* Whether e is a relocatable cubin (ELF e_type ET_REL: -rdc code, loadable only after a device
 * link), read from the image's first 64 bytes; false for anything else or an undecodable image. */
bool fb_entry_relocatable(const struct fb_entry *e);

/* Whether e's image defines a kernel: a cubin's STT_FUNC symbol with STO_CUDA_ENTRY (docs/fatbin.md
 * §8), a PTX .entry directive. 1, 0, or -1 when the image cannot be decoded (cap: as for
 * fb_entry_image). */
int fb_entry_has_kernels(const struct fb_entry *e, uint64_t cap);

#endif
