/* repro.c: reproducible compiler commands for extension builds.
 *
 * nvcc's front end names internal-linkage entities of a translation unit that has no external
 * definition to borrow a name from (template-only files, CUB's anonymous-namespace objects)
 * "_INTERNAL_<hash>_<pid>"; -Xcudafe --frandom-seed=SEED puts SEED there instead. The seed
 * comes from the content that decides the output, never from a path or a constant, so the same
 * sources give the same object in any directory and different files keep different names. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repro.h"
#include "compile/compile.h"

void
fb_repro_root(const char *const *sources, size_t n, char *root, size_t size)
{
	size_t len = 0;
	int have = 0;
	char abs[PATH_MAX];
	snprintf(root, size, "/");
	for (size_t i = 0; i < n; i++) {
		if (!realpath(sources[i], abs))
			continue;
		char *slash = strrchr(abs, '/');
		if (slash)
			*slash = 0;
		if (!have) {
			snprintf(root, size, "%s", abs);
			len = strlen(root);
			have = 1;
			continue;
		}
		size_t k = 0;
		while (k < len && abs[k] && abs[k] == root[k])
			k++;
		/* back to a whole component */
		if (!(k == len && (abs[k] == '/' || abs[k] == 0)))
			while (k > 0 && root[k] != '/')
				k--;
		len = k;
		root[len] = 0;
	}
	if (!root[0])
		snprintf(root, size, "/");
}

int
fb_repro_seed(const char *src, const char *const *dirs, size_t ndirs, const char *flags, char seed[17],
              struct fb_error *err)
{
	char *text;
	size_t size;
	int rc = fb_read_file(src, &text, &size, err);
	if (rc)
		return rc;
	struct fb_strlist deps = {0};
	rc = fb_deps_scan(src, dirs, ndirs, &deps, err);
	struct fb_sha256 h;
	unsigned char d[32];
	char hex[65];
	const char *base = strrchr(src, '/');
	fb_sha256_init(&h);
	fb_sha256_str(&h, "fatbuild-nvcc-seed-v1");
	fb_sha256_str(&h, base ? base + 1 : src);
	fb_sha256_update(&h, text, size);
	free(text);
	for (size_t i = 0; !rc && i < deps.n; i++) {
		char *t;
		size_t n;
		if (fb_read_file(deps.v[i], &t, &n, NULL) != 0)
			continue;
		fb_sha256_buf(t, n, d);
		free(t);
		fb_sha256_update(&h, d, 32);
	}
	fb_strlist_free(&deps);
	fb_sha256_str(&h, flags ? flags : "");
	fb_sha256_final(&h, d);
	fb_sha256_hex(d, hex);
	memcpy(seed, hex, 16);
	seed[16] = 0;
	return rc;
}
