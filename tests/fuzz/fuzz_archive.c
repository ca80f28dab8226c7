/* fuzz_archive.c: the ar archive walker inside fb_scan_buffer (member headers, decimal size
 * fields, odd-size padding, "/" and "//" tables, long names "/<offset>", members that are host
 * ELF objects). Input: the archive after its "!<arch>\n" magic (prepended here so that every
 * input reaches the walker). Invariants: as fuzz_hostelf.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "fuzz_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf = malloc(size + 8);
	if (!buf)
		return 0;
	memcpy(buf, "!<arch>\n", 8);
	memcpy(buf + 8, data, size);
	fuzz_scan(buf, size + 8);
	free(buf);
	return 0;
}
