/* fuzz_depscan.c: the #include scan of NVRTC sources (fatbuild/compile/depfile.c). Input:
 * arbitrary bytes, a source file. They are written as k.cu, and as x.cuh and sub/y.h below the
 * one -I directory (so that includes resolve, recurse and go through "../"); then
 * fb_deps_scan and fb_deps_scan_root (what a remote job's input root needs) run on k.cu.
 * Invariants (abort on violation): no crash or over-read; both give the same deps in the same
 * order; every dep and every extra path names a regular file; the computed include's file is
 * "" or k.cu or one of the deps. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/depfile.h"

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

static int
regular(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	char dir[] = "/tmp/fuzz_depscan.XXXXXX";
	if (!mkdtemp(dir))
		return 0;
	char src[64], inc[64], sub[64], x[64], y[64];
	snprintf(src, sizeof(src), "%s/k.cu", dir);
	snprintf(inc, sizeof(inc), "%s/inc", dir);
	snprintf(sub, sizeof(sub), "%s/inc/sub", dir);
	snprintf(x, sizeof(x), "%s/inc/x.cuh", dir);
	snprintf(y, sizeof(y), "%s/inc/sub/y.h", dir);
	mkdir(inc, 0700);
	mkdir(sub, 0700);
	write_all(src, data, size);
	write_all(x, data, size);
	write_all(y, data, size);
	const char *dirs[] = {dir, inc};
	struct fb_strlist deps = {0}, rdeps = {0}, extra = {0};
	struct fb_error err = {0};
	char computed[4096];
	int a = fb_deps_scan(src, dirs, 2, &deps, &err);
	int b = fb_deps_scan_root(src, dirs, 2, &rdeps, &extra, computed, sizeof(computed), &err);
	if (a != b || deps.n != rdeps.n)
		abort();
	for (size_t i = 0; i < deps.n; i++)
		if (strcmp(deps.v[i], rdeps.v[i]) != 0 || !regular(deps.v[i]))
			abort();
	for (size_t i = 0; i < extra.n; i++)
		if (!regular(extra.v[i]))
			abort();
	if (!b && computed[0] && strcmp(computed, src) != 0) {
		int known = 0;
		for (size_t i = 0; i < deps.n && !known; i++)
			known = strcmp(computed, deps.v[i]) == 0;
		if (!known)
			abort();
	}
	fb_strlist_free(&deps);
	fb_strlist_free(&rdeps);
	fb_strlist_free(&extra);
	unlink(y);
	unlink(x);
	unlink(src);
	rmdir(sub);
	rmdir(inc);
	rmdir(dir);
	return 0;
}
