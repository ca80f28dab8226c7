/* bytes.h: little-endian readers and writers and 8-byte alignment for on-disk formats. Private to
 * libfatbuild (any subsystem may use it); header-only. */
#ifndef FB_BYTES_H
#define FB_BYTES_H

#include <stdint.h>

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

static inline void
fb_wr16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void
fb_wr32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void
fb_wr64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

#endif
