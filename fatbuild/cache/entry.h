/* entry.h: what the cache holds under a key: one compile's outputs (the local store's file,
 * store.c; the remote's action record and blobs, remote.c). Private to libfatbuild. */
#ifndef FB_CACHE_ENTRY_H
#define FB_CACHE_ENTRY_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct fb_cache_entry {
	unsigned char *cubin;    /* a cubin, LTO-IR, or a host edge's object */
	size_t cubin_size;
	unsigned char *ptx;      /* PTX text, or a host edge's manifest */
	size_t ptx_size;
	char *log;               /* NUL-terminated */
};

/* Frees what e holds and zeroes it; an entry already cleared is fine. */
static inline void
fb_cache_entry_clear(struct fb_cache_entry *e)
{
	free(e->cubin);
	free(e->ptx);
	free(e->log);
	memset(e, 0, sizeof(*e));
}

/* A copy of p[0..n) with a NUL after it (for text); NULL on OOM. */
static inline unsigned char *
fb_dup_bytes(const unsigned char *p, size_t n)
{
	unsigned char *d = malloc(n + 1);
	if (d) {
		memcpy(d, p, n);
		d[n] = 0;
	}
	return d;
}

#endif
