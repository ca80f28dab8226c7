/* fuzz_distinfo.c: the distribution metadata readers of fatbuild check (fatbuild/check/distinfo.c)
 * and what a file's first bytes say it is (sniff.c). The first input byte picks the reader:
 * 0 METADATA / PKG-INFO headers, 1 RECORD lines, 2 an archive's file name, 3 a RECORD path joined
 * to a base ("BASE\0PATH"); every input also goes through fb_sniff.
 * Invariants (abort on violation): a name read is non-empty and printable; every RECORD path lies
 * inside the input; a joined path is relative, has no empty, "." or ".." component, and fits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct span {
	const char *lo, *hi;
};

static int
in_input(const char *path, size_t len, void *ctx)
{
	(void)path;
	const struct span *s = ctx;
	if (len == 0 || len > (size_t)(s->hi - s->lo))
		abort();
	return 0;
}

static void
printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
}

static void
joined(const char *out)
{
	if (out[0] == '/')
		abort();
	for (const char *c = out; *c;) {
		size_t l = strcspn(c, "/");
		if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
			abort();
		c += l;
		if (*c == '/')
			c++;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 16))
		return 0;
	fb_sniff(data, size < FB_SNIFF_BYTES ? size : FB_SNIFF_BYTES);
	const char *t = (const char *)data + 1;
	size_t n = size - 1;
	char *s = malloc(n + 1), *name = NULL, *version = NULL;
	if (!s)
		return 0;
	memcpy(s, t, n);
	s[n] = 0;
	switch (data[0] % 4) {
	case 0:
		if (fb_dist_metadata(t, n, &name, &version) == 0) {
			if (!name[0])
				abort();
			printable(name);
			printable(version);
		}
		break;
	case 1: {
		struct span sp = {t, t + n};
		fb_dist_record(t, n, in_input, &sp);
		break;
	}
	case 2:
		if (fb_dist_from_filename(s, &name, &version) != FB_ENOMEM) {
			printable(version);
		}
		break;
	default: {
		char out[256];
		size_t bl = strlen(s);
		const char *path = bl < n ? s + bl + 1 : "";
		if (fb_path_join(s, path, bl < n ? n - bl - 1 : 0, out, sizeof(out)) == 0)
			joined(out);
		break;
	}
	}
	free(name);
	free(version);
	free(s);
	return 0;
}
