/* fuzz_hostelf.c: finding device code in files (fb_scan_buffer: host ELF objects, shared
 * libraries, ar archives, bare fatbins, cubins and PTX) and parsing what was found
 * (fb_scan_entries). Input: the file's bytes.
 * Invariants (abort on violation): errors are one line with the code returned; every blob lies
 * inside the input with a NUL-terminated `where`; every parsed container lies inside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "fuzz_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	fuzz_scan(buf, size);
	free(buf);
	return 0;
}
