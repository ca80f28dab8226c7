/* fuzz_scan.h: the shared body of fuzz_hostelf.c and fuzz_archive.c (not a fuzz target). */
#ifndef FUZZ_SCAN_H
#define FUZZ_SCAN_H

#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"

static void
fuzz_scan(const unsigned char *buf, size_t size)
{
	struct fb_scan s;
	struct fb_error err = {0};
	int rc = fb_scan_buffer(buf, size, "in.bin", &s, &err);
	if (rc) {
		if (err.code != rc || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		return;
	}
	for (size_t i = 0; i < s.nblobs; i++) {
		const struct fb_blob *b = &s.blobs[i];
		if (b->offset > size || b->size > size - b->offset || !memchr(b->where, 0, sizeof(b->where)))
			abort();
	}
	struct fb_parsed p;
	rc = fb_scan_entries(buf, &s, &p, &err);
	if (rc) {
		if (err.code != rc || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
	} else {
		for (size_t c = 0; c < p.ncontainers; c++)
			if (p.containers[c].offset > size || p.containers[c].size > size - p.containers[c].offset)
				abort();
		for (size_t e = 0; e < p.nentries; e++)
			if (p.entries[e].stored_size &&
			    (p.entries[e].payload < buf || p.entries[e].stored_size > (size_t)(buf + size - p.entries[e].payload)))
				abort();
		fb_parsed_free(&p);
	}
	fb_scan_free(&s);
}

#endif
