/* fuzz_backend.c: the --backend auto scan (docs/backend.md). Input: arbitrary bytes, a source
 * file. fb_pp_eval on the text as an #if expression; fb_pp_blank_inactive on a copy; and
 * fb_cu_needs_nvcc on the bytes written to a temporary .cu with a temporary -I dir holding the
 * same bytes as "x.cuh" (so includes resolve and recurse).
 * Invariants (abort on violation): no crash or over-read; fb_pp_eval returns -1, 0 or 1, and a
 * known value is negated by "!(...)"; blanking keeps the length, every '\n' in place and writes
 * only blanks; the reason the scan gives is one NUL-terminated line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan/backend.h"
#include "scan/ppcond.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
write_all(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(data, 1, size, f);
	fclose(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	char *s = malloc(size + 8);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	size_t len = strlen(s);

	int v = fb_pp_eval(s);
	if (v != -1 && v != 0 && v != 1)
		abort();
	if (v != -1 && len < 8192) {
		char *w = malloc(len + 4);
		if (w) {
			snprintf(w, len + 4, "!(%s)", s);
			if (fb_pp_eval(w) != !v)
				abort();
			free(w);
		}
	}

	char *b = strdup(s);
	if (b) {
		fb_pp_blank_inactive(b, size & 1);
		if (strlen(b) != len)
			abort();
		for (size_t i = 0; i < len; i++)
			if ((s[i] == '\n') != (b[i] == '\n') || (b[i] != s[i] && b[i] != ' '))
				abort();
		free(b);
	}

	char dir[] = "/tmp/fuzz_backend.XXXXXX";
	if (mkdtemp(dir)) {
		char src[64], hdr[64];
		snprintf(src, sizeof(src), "%s/k.cu", dir);
		snprintf(hdr, sizeof(hdr), "%s/x.cuh", dir);
		write_all(src, data, size);
		write_all(hdr, data, size);
		const char *inc[] = {dir};
		char why[700];
		memset(why, 'x', sizeof(why));
		fb_cu_needs_nvcc(src, inc, 1, dir, why, sizeof(why));
		if (!memchr(why, 0, sizeof(why)))
			abort();
		unlink(src);
		unlink(hdr);
		rmdir(dir);
	}
	free(s);
	return 0;
}
