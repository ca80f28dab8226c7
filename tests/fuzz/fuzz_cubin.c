/* fuzz_cubin.c: the CUBIN reader (fb_cubin_read: ELF header, section table, symbols, .nv.info
 * attributes, .nv.shared.*, .nv.compat) on arbitrary bytes.
 * Invariants (abort on violation): an error is one line with the code returned and leaves the
 * result empty; every kernel has a name; compat points inside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libelf wants an aligned buffer it may not write to; a private copy also lets ASan see
	 * reads past the end exactly. */
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct fb_cubin c;
	struct fb_error err = {0};
	int rc = fb_cubin_read(buf, size, &c, &err);
	if (rc) {
		if (err.code != rc || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		free(buf);
		return 0;
	}
	for (size_t i = 0; i < c.nkernels; i++) {
		if (!c.kernels[i].name)
			abort();
		(void)strlen(c.kernels[i].name);
	}
	if (c.compat && (c.compat < buf || c.compat_len > (size_t)(buf + size - c.compat)))
		abort();
	fb_cubin_free(&c);
	free(buf);
	return 0;
}
