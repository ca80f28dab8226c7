/* fuzz_elf.c: the ELF walkers on inputs that always look like 64-bit little-endian ELF: the
 * host section-table walk (.nv_fatbin / __nv_relfatbin) of fb_scan_buffer, the hand-written
 * cubin header/section reader behind fb_scan_entries, and the libelf-based fb_cubin_read.
 * Input: the ELF file after its first 6 bytes ("\x7fELF", class 2, data 1), which are
 * prepended here so that every input reaches the walkers; byte 0x12 (e_machine) comes from
 * the input, so both host objects and cubins (190) occur.
 * Invariants (abort on violation): errors are one printable line with the code returned;
 * blobs, containers, payloads and .nv.compat lie inside the input; kernels have names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
one_line(const struct fb_error *err, int rc)
{
	if (err->code != rc || !err->msg[0])
		abort();
	for (const char *p = err->msg; *p; p++)
		if ((unsigned char)*p < 0x20)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	unsigned char *b = malloc(size + 6);
	if (!b)
		return 0;
	memcpy(b, "\x7f" "ELF\x02\x01", 6);
	memcpy(b + 6, data, size);
	size_t n = size + 6;
	struct fb_scan s;
	struct fb_error err = {0};
	int rc = fb_scan_buffer(b, n, "in.elf", &s, &err);
	if (rc) {
		one_line(&err, rc);
		free(b);
		return 0;
	}
	for (size_t i = 0; i < s.nblobs; i++)
		if (s.blobs[i].offset > n || s.blobs[i].size > n - s.blobs[i].offset)
			abort();
	struct fb_parsed p;
	rc = fb_scan_entries(b, &s, &p, &err);
	if (rc) {
		one_line(&err, rc);
	} else {
		for (size_t e = 0; e < p.nentries; e++) {
			const struct fb_entry *x = &p.entries[e];
			if (x->payload < b || x->stored_size > (size_t)(b + n - x->payload))
				abort();
			if (x->compat && (x->compat < b || x->compat_len > (size_t)(b + n - x->compat)))
				abort();
		}
		fb_parsed_free(&p);
	}
	if (strcmp(s.type, "cubin") == 0) {
		struct fb_cubin c;
		rc = fb_cubin_read(b, n, &c, &err);
		if (rc) {
			one_line(&err, rc);
		} else {
			for (size_t k = 0; k < c.nkernels; k++)
				if (!c.kernels[k].name)
					abort();
			if (c.compat && (c.compat < b || c.compat_len > (size_t)(b + n - c.compat)))
				abort();
			fb_cubin_free(&c);
		}
	}
	fb_scan_free(&s);
	free(b);
	return 0;
}
