/* compile_test.c: the NVRTC compile path (hash, log rewriting, include scanning, depfiles,
 * the cache, the job pool) and, with the argument "oracle", the comparison of our cubins with
 * `nvcc -cubin` (kernels and register counts, cross-checked against ptxas -v).
 * Fixtures are written by the test itself; NVRTC and nvcc come from the toolkit in use. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cache/store.h"
#include "compile/compile.h"
#include "compile/run.h"
#include "fatbuild.h"
#include "plumbing.h"

static char tmp[PATH_MAX];

static void
put(const char *rel, const char *text)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	char *slash = strrchr(p, '/');
	*slash = 0;
	fb_mkdirs(p, NULL);
	*slash = '/';
	FILE *f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static char *
at(const char *rel)
{
	static char bufs[8][PATH_MAX * 2];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, PATH_MAX * 2, "%s/%s", tmp, rel);
	return b;
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
hexof(const char *s, size_t n, char out[65])
{
	struct fb_sha256 h;
	unsigned char d[32];
	fb_sha256_init(&h);
	fb_sha256_update(&h, s, n);
	fb_sha256_final(&h, d);
	fb_sha256_hex(d, out);
}

static void
test_sha256(void)
{
	char hex[65];
	hexof("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hexof("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	hexof(two, strlen(two), hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* a million 'a', fed in odd pieces */
	char *m = malloc(1000000);
	memset(m, 'a', 1000000);
	struct fb_sha256 h;
	unsigned char d[32];
	fb_sha256_init(&h);
	for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 3 % 997 + 1)
		fb_sha256_update(&h, m + off, off + step > 1000000 ? 1000000 - off : step);
	fb_sha256_final(&h, d);
	fb_sha256_hex(d, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(m);
}

#ifndef FB_TEST_LIBCRYPTO
#define FB_TEST_LIBCRYPTO 0
#endif

/* the portable streaming code, in pieces of step bytes */
static void
portable(const unsigned char *p, size_t n, size_t step, unsigned char d[32])
{
	struct fb_sha256 h;
	fb_sha256_init(&h);
	for (size_t off = 0; off < n; off += step)
		fb_sha256_update(&h, p + off, n - off < step ? n - off : step);
	fb_sha256_final(&h, d);
}

static uint64_t
xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* fb_sha256_buf and fb_sha256_fd (libcrypto when the build has it, which the test is told)
 * against the portable code, at the padding boundaries, on a buffer fed in odd pieces and on
 * a file of some hundred MB (partly a hole) */
static void
test_sha256_paths(void)
{
	static const size_t lens[] = {0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000};
	unsigned char m[1000], a[32], b[32];
	for (size_t i = 0; i < sizeof(m); i++)
		m[i] = (unsigned char)(i * 7 + 3);
	memcpy(m, "abc", 3);
	for (size_t i = 0; i < sizeof(lens) / sizeof(*lens); i++) {
		CHECK(fb_sha256_buf(lens[i] ? m : NULL, lens[i], a) == FB_TEST_LIBCRYPTO);
		portable(m, lens[i], lens[i] ? lens[i] : 1, b);
		CHECK(memcmp(a, b, 32) == 0);
	}
	char hex[65];
	fb_sha256_buf(m, 3, a);
	fb_sha256_hex(a, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	size_t n = (5u << 20) + 12345;
	unsigned char *big = malloc(n);
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (size_t i = 0; i < n; i++)
		big[i] = (unsigned char)(xorshift(&x) >> 56);
	CHECK(fb_sha256_buf(big, n, a) == FB_TEST_LIBCRYPTO);
	struct fb_sha256 h;
	fb_sha256_init(&h);
	for (size_t off = 0, step = 1; off < n; off += step, step = step * 7 % 100003 + 1)
		fb_sha256_update(&h, big + off, n - off < step ? n - off : step);
	fb_sha256_final(&h, b);
	CHECK(memcmp(a, b, 32) == 0);

	/* 256 MB of data (each MiB a different piece of big) then a 64 MB hole */
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/big.bin", tmp);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	if (fd < 0) {
		free(big);
		return;
	}
	for (size_t i = 0; i < 256; i++)
		CHECK(write(fd, big + i * 16384, 1u << 20) == 1 << 20);
	CHECK(ftruncate(fd, (off_t)320 << 20) == 0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	double t0 = now();
	CHECK(fb_sha256_fd(fd, NULL, a) == 0);
	double t1 = now();
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	fb_sha256_init(&h);
	ssize_t k;
	while ((k = read(fd, big, 1u << 20)) > 0)
		fb_sha256_update(&h, big, (size_t)k);
	fb_sha256_final(&h, b);
	double t2 = now();
	CHECK(k == 0);
	CHECK(memcmp(a, b, 32) == 0);
	printf("sha256 of 320 MB: fb_sha256_fd %.3f s (%s), portable %.3f s\n", t1 - t0,
	       FB_TEST_LIBCRYPTO ? "libcrypto" : "portable", t2 - t1);
	/* a set cancel flag stops it before the first chunk */
	volatile sig_atomic_t stop = SIGTERM;
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(fb_sha256_fd(fd, &stop, a) == -1);
	close(fd);
	CHECK(unlink(path) == 0);
	free(big);
}

static void
test_log_rewrite(void)
{
	const char *log = "dir/k.cu(12): error: identifier \"x\" is undefined\n"
	                  "      int y = x + 1;\n"
	                  "              ^\n"
	                  "\n"
	                  "inc/h.cuh(3): warning #177-D: variable \"z\" was declared but never referenced\n"
	                  "  \treturn\tzz;\n"
	                  "  \t      \t^\n"
	                  "\n"
	                  "1 error detected in the compilation of \"dir/k.cu\".\n";
	char *rw = fb_nvrtc_log_rewrite(log, "sm_90");
	CHECK_STR(rw, "dir/k.cu:12:13: error: identifier \"x\" is undefined [sm_90]\n"
	              "      int y = x + 1;\n"
	              "              ^\n"
	              "\n"
	              "inc/h.cuh:3:9: warning #177-D: variable \"z\" was declared but never referenced [sm_90]\n"
	              "  \treturn\tzz;\n"
	              "  \t      \t^\n"
	              "\n"
	              "1 error detected in the compilation of \"dir/k.cu\".\n");
	char first[256];
	fb_nvrtc_log_first(rw, first, sizeof(first));
	CHECK_STR(first, "dir/k.cu:12:13: error: identifier \"x\" is undefined [sm_90]");
	free(rw);
	/* no caret line: no column; a non-diagnostic line stays as it is */
	rw = fb_nvrtc_log_rewrite("nvrtc: error: unrecognized option --x found\na.cu(7): error: boom\n", "sm_80");
	CHECK_STR(rw, "nvrtc: error: unrecognized option --x found\na.cu:7: error: boom [sm_80]\n");
	free(rw);
	/* odd input: no crash, no invented diagnostics */
	static const char *const odd[] = {"", "(", "(1): x", "a(", "a(1)", "a(1):", "a(123456789012345678901): e\n",
	                                  "a(2): e\n\n^", "a(2): e\nsrc\n", "\n\n\n", "a(x): e\n"};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		rw = fb_nvrtc_log_rewrite(odd[i], "t");
		CHECK(rw != NULL);
		fb_nvrtc_log_first(rw, first, sizeof(first));
		free(rw);
	}
	rw = fb_nvrtc_log_rewrite("a(2): e\n\n^", "t"); /* a caret without the two-space indent */
	CHECK_STR(rw, "a:2: e [t]\n\n^\n");
	free(rw);
	rw = fb_nvrtc_log_rewrite(NULL, NULL);
	CHECK_STR(rw, "");
	free(rw);
}

static void
test_depfile(void)
{
	char *e = fb_depfile_escape("a b/$x#y.h");
	CHECK_STR(e, "a\\ b/$$x\\#y.h");
	free(e);
	const char *deps[] = {"k.cu", "my dir/h.cuh"};
	struct fb_error err = {0};
	CHECK(fb_depfile_write(at("k.d"), "out.fatbin", deps, 2, &err) == 0);
	char *text;
	size_t n;
	CHECK(fb_read_file(at("k.d"), &text, &n, NULL) == 0);
	CHECK_STR(text, "out.fatbin: \\\n  k.cu \\\n  my\\ dir/h.cuh\n");
	free(text);
	const char *bad[] = {"new\nline"};
	CHECK(fb_depfile_write(at("k2.d"), "o", bad, 1, &err) == FB_EINVAL);
	CHECK(access(at("k2.d"), F_OK) != 0);
}

static int
has(const struct fb_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

static void
test_scan(void)
{
	put("s/main.cu", "#include \"a.h\"\n"
	                 "  #  include <b.h>\n"
	                 "// #include \"commented.h\"\n"
	                 "/* #include \"commented.h\"\n */\n"
	                 "#include \"sub/c.h\"\n"
	                 "#include \"absent.h\"\n"
	                 "#include <cuda_fp16.h>\n"
	                 "#include MACRO_HEADER\n"
	                 "#if 0\n#include \"inactive.h\"\n#endif\n"
	                 "const char *s = \"#include \\\"not_a_directive.h\\\"\";\n");
	put("s/a.h", "#pragma once\n#include \"a.h\"\n#include <b.h>\n");
	put("s/commented.h", "");
	put("s/inactive.h", "");
	put("s/not_a_directive.h", "");
	put("inc/b.h", "#include \"b2.h\"\n");
	put("inc/b2.h", "");
	put("s/sub/c.h", "#include \"../d.h\"\n#include \"e.h\"\n");
	put("s/d.h", "");
	put("inc/e.h", ""); /* found through -I, not beside sub/c.h */
	struct fb_strlist deps = {0};
	const char *dirs[] = {at("s"), at("inc")};
	struct fb_error err = {0};
	CHECK(fb_deps_scan(at("s/main.cu"), dirs, 2, &deps, &err) == 0);
	CHECK(deps.n == 7);
	CHECK(has(&deps, at("s/a.h")));
	CHECK(has(&deps, at("inc/b.h")));
	CHECK(has(&deps, at("inc/b2.h")));
	CHECK(has(&deps, at("s/sub/c.h")));
	CHECK(has(&deps, at("inc/e.h")));
	CHECK(has(&deps, at("s/inactive.h"))); /* conservative: every branch counts */
	char real[PATH_MAX];
	CHECK(realpath(at("s/d.h"), real) && has(&deps, real)); /* "../" resolved */
	CHECK(!has(&deps, at("s/commented.h")));
	CHECK(!has(&deps, at("s/not_a_directive.h")));
	for (size_t i = 0; i < deps.n; i++)
		CHECK(strstr(deps.v[i], "absent") == NULL);
	fb_strlist_free(&deps);
	/* a missing source is an error */
	CHECK(fb_deps_scan(at("s/none.cu"), dirs, 2, &deps, &err) == FB_EIO);
	fb_strlist_free(&deps);
}

/* fb_deps_scan_root: what a remote job's input root needs beside the deps (offload.c). */
static void
test_scan_root(void)
{
	put("r/main.cu", "#include <lib/sub/x.h>\n"
	                 "#if __has_include(<probe.h>) || _CCCL_HAS_INCLUDE( \"probe2.h\" )\n#endif\n"
	                 "#if __has_include(<absent_probe.h>)\n#endif\n"
	                 "#define _X_HAS_INCLUDE(_X) __has_include(_X)\n");
	put("rinc/lib/sub/x.h", "#include \"../y.h\"\n#include <lib/y.h>\n");
	put("rinc/lib/y.h", "#include \"z.h\"\n");
	put("rinc/lib/z.h", "");
	put("rinc/probe.h", "");
	put("rinc/probe2.h", "");
	put("rinc2/m.h", "#include THE_HEADER\n");
	char d0[PATH_MAX * 2], d1[PATH_MAX * 2], d2[PATH_MAX * 2]; /* at()'s buffers are reused */
	snprintf(d0, sizeof(d0), "%s", at("r"));
	snprintf(d1, sizeof(d1), "%s", at("rinc"));
	snprintf(d2, sizeof(d2), "%s", at("rinc2"));
	const char *dirs[] = {d0, d1, d2};
	struct fb_strlist deps = {0}, extra = {0};
	char computed[PATH_MAX] = "stale";
	struct fb_error err = {0};
	CHECK(fb_deps_scan_root(at("r/main.cu"), dirs, 3, &deps, &extra, computed, sizeof(computed), &err) == 0);
	CHECK(computed[0] == 0);
	/* the deps are fb_deps_scan's, unchanged */
	struct fb_strlist plain = {0};
	CHECK(fb_deps_scan(at("r/main.cu"), dirs, 3, &plain, &err) == 0);
	CHECK(plain.n == deps.n && deps.n == 3);
	for (size_t i = 0; i < deps.n && i < plain.n; i++)
		CHECK(strcmp(deps.v[i], plain.v[i]) == 0);
	/* y.h as NVRTC opens it from x.h ("../y.h", not the realpath deps has), and z.h beside it */
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/../y.h", at("rinc/lib/sub"));
	CHECK(has(&extra, p));
	snprintf(p, sizeof(p), "%s/../z.h", at("rinc/lib/sub"));
	CHECK(has(&extra, p));
	/* the probes that find a file, in either spelling; not the one that finds none */
	CHECK(has(&extra, at("rinc/probe.h")));
	CHECK(has(&extra, at("rinc/probe2.h")));
	for (size_t i = 0; i < extra.n; i++)
		CHECK(strstr(extra.v[i], "absent_probe") == NULL);
	fb_strlist_free(&deps);
	fb_strlist_free(&extra);
	fb_strlist_free(&plain);
	/* the first file with "#include MACRO" */
	put("r/m.cu", "#include <m.h>\n");
	CHECK(fb_deps_scan_root(at("r/m.cu"), dirs, 3, &deps, &extra, computed, sizeof(computed), &err) == 0);
	CHECK(strcmp(computed, at("rinc2/m.h")) == 0);
	fb_strlist_free(&deps);
	fb_strlist_free(&extra);
}

/* fb_deps_dirs and fb_deps_find: the lookup offload.c asks again after an executor's "cannot
 * open source file": beside the including file, then the source's directory and each -I. */
static void
test_find(void)
{
	put("f/src/k.cu", "");
	put("f/src/sub/beside.h", "");
	put("f/src/in_src.h", "");
	put("f/inc/in_inc.h", "");
	CHECK(mkdir(at("f/inc/dir.h"), 0755) == 0);
	char src[PATH_MAX * 2], inc[PATH_MAX * 2 + 2], incl[PATH_MAX * 2];
	snprintf(src, sizeof(src), "%s", at("f/src"));
	snprintf(inc, sizeof(inc), "-I%s", at("f/inc"));
	snprintf(incl, sizeof(incl), "%s", at("f/src/sub/x.h"));
	char *opts[] = {"-default-device", inc, "-std=c++17"};
	size_t n = 0;
	const char **dirs = fb_deps_dirs(src, opts, 3, &n);
	CHECK(dirs && n == 2 && strcmp(dirs[0], src) == 0 && strcmp(dirs[1], inc + 2) == 0);
	char path[PATH_MAX];
	CHECK(fb_deps_find("beside.h", incl, dirs, n, path, sizeof(path)) == 1);
	CHECK(strcmp(path, at("f/src/sub/beside.h")) == 0);
	CHECK(fb_deps_find("beside.h", NULL, dirs, n, path, sizeof(path)) == 0); /* no including file */
	CHECK(fb_deps_find("in_src.h", incl, dirs, n, path, sizeof(path)) == 1);
	CHECK(fb_deps_find("in_inc.h", NULL, dirs, n, path, sizeof(path)) == 1);
	CHECK(strcmp(path, at("f/inc/in_inc.h")) == 0);
	CHECK(fb_deps_find("dir.h", incl, dirs, n, path, sizeof(path)) == 0); /* a directory */
	CHECK(fb_deps_find("nowhere.h", incl, dirs, n, path, sizeof(path)) == 0);
	CHECK(fb_deps_find(at("f/inc/in_inc.h"), NULL, NULL, 0, path, sizeof(path)) == 1); /* absolute */
	free(dirs);
}

static void
test_cache(void)
{
	char dir[PATH_MAX * 2];
	snprintf(dir, sizeof(dir), "%s/cache", tmp);
	const char *key = "00aa11bb22cc33dd44ee55ff66778899aabbccddeeff00112233445566778899";
	struct fb_cache_entry e = {.cubin = (unsigned char *)"CUBIN", .cubin_size = 5,
	                           .ptx = (unsigned char *)".version 9.0", .ptx_size = 12, .log = "warn"};
	struct fb_cache_entry g = {0};
	struct fb_error err = {0};
	CHECK(fb_store_get(dir, 0, key, &g, &err) == FB_ENOIMAGE);
	CHECK(fb_store_put(dir, 0, key, &e, &err) == 0);
	CHECK(fb_store_get(dir, 0, key, &g, &err) == 0);
	CHECK(g.cubin_size == 5 && memcmp(g.cubin, "CUBIN", 5) == 0);
	CHECK(g.ptx_size == 12 && memcmp(g.ptx, ".version 9.0", 12) == 0);
	CHECK_STR(g.log, "warn");
	fb_cache_entry_clear(&g);
	struct fb_cache_stats st;
	CHECK(fb_cache_stats(dir, &st, &err) == 0);
	CHECK(st.entries == 1 && st.bytes >= 0x40 + 5 + 12 + 4); /* on disk: at least its length */
	/* flip one payload byte: the verified read says corrupt, names the entry and drops it */
	char path[PATH_MAX * 3];
	snprintf(path, sizeof(path), "%s/00/%s", dir, key);
	FILE *f = fopen(path, "r+b");
	fseek(f, 0x42, SEEK_SET);
	fputc('X', f);
	fclose(f);
	char want[PATH_MAX * 3 + 64];
	CHECK(fb_store_get(dir, 0, key, &g, &err) == FB_EFORMAT);
	snprintf(want, sizeof(want), "cache entry %s: size or checksum mismatch (85 bytes)", path);
	CHECK_STR(err.msg, want);
	CHECK(access(path, F_OK) != 0);
	CHECK(fb_store_get(dir, 0, key, &g, &err) == FB_ENOIMAGE); /* now a plain miss */
	/* truncated entry: corrupt too */
	CHECK(fb_store_put(dir, 0, key, &e, &err) == 0);
	CHECK(truncate(path, 0x45) == 0);
	CHECK(fb_store_get(dir, 0, key, &g, &err) == FB_EFORMAT);
	snprintf(want, sizeof(want), "cache entry %s: size or checksum mismatch (69 bytes)", path);
	CHECK_STR(err.msg, want);
	CHECK(fb_store_put(dir, 0, key, &e, &err) == 0);
	uint64_t removed = 0;
	CHECK(fb_cache_clear(dir, &removed, &err) == 0 && removed == 1);
	CHECK(fb_cache_stats(dir, &st, &err) == 0 && st.entries == 0);
	/* the default location */
	char buf[4096];
	setenv("FATBUILD_CACHE_DIR", "/x/y", 1);
	CHECK(fb_cache_dir(buf, sizeof(buf), NULL) == 0);
	CHECK_STR(buf, "/x/y");
	unsetenv("FATBUILD_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	CHECK(fb_cache_dir(buf, sizeof(buf), NULL) == 0);
	CHECK_STR(buf, "/xdg/fatbuild");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	CHECK(fb_cache_dir(buf, sizeof(buf), NULL) == 0);
	CHECK_STR(buf, "/home/u/.cache/fatbuild");
}

static void
test_jobs(void)
{
	setenv("MAX_JOBS", "3", 1);
	CHECK(fb_compile_default_jobs() == 3);
	setenv("MAX_JOBS", "0", 1);
	CHECK(fb_compile_default_jobs() == FB_JOBS_MAX);
	setenv("MAX_JOBS", "999999", 1); /* more than the compile server serves */
	CHECK(fb_compile_default_jobs() == FB_JOBS_MAX);
	CHECK(fb_compile_jobs(999999) == FB_JOBS_MAX && fb_compile_jobs(7) == 7);
	CHECK(fb_compile_jobs(0) == FB_JOBS_MAX);
	setenv("MAX_JOBS", "2x", 1); /* not all digits: ignored, as PyTorch does */
	int cpus = fb_compile_default_jobs();
	setenv("MAX_JOBS", "", 1);
	CHECK(fb_compile_default_jobs() == cpus);
	unsetenv("MAX_JOBS");
	CHECK(fb_compile_default_jobs() == cpus);
	CHECK(cpus >= 1);
}

/* ---- end to end with NVRTC ---- */

struct prog {
	size_t ncalls, ncached;
	char seen[64][64];
};

static void
on_progress(void *ctx, const struct fb_compile_progress *p)
{
	struct prog *pg = ctx;
	if (pg->ncalls < 64)
		snprintf(pg->seen[pg->ncalls], 64, "%s %s%s", p->target, strrchr(p->source, '/') + 1,
		         p->cached ? " cached" : "");
	pg->ncalls++;
	pg->ncached += p->cached;
}

static int
seen(const struct prog *pg, const char *what)
{
	for (size_t i = 0; i < pg->ncalls && i < 64; i++)
		if (strcmp(pg->seen[i], what) == 0)
			return 1;
	return 0;
}

static struct ap_target
T(const char *name)
{
	struct ap_target t = {0};
	if (ap_target_parse(name, &t) != 0)
		fprintf(stderr, "cannot parse %s\n", name);
	return t;
}

static unsigned char *
pack(const struct fb_compile_result *r, const struct fb_compile_opts *o, size_t *n)
{
	unsigned char *out = NULL;
	struct fb_error err = {0};
	if (fb_compile_pack(r, o, FB_COMPRESS_ZSTD, false, &out, n, &err) != 0)
		fprintf(stderr, "pack: %s\n", err.msg);
	return out;
}

/* The PCH directory and policy (worker.c), then PCH on vs off through fb_compile: the same
 * images, a PCH made and used, nothing left behind. */
static void
test_pch(void)
{
	char d[PATH_MAX * 2], why[PATH_MAX + 128], lnk[PATH_MAX * 2];
	snprintf(d, sizeof(d), "%s/pchdir", tmp);
	CHECK(mkdir(d, 0755) == 0);
	chmod(d, 0755);
	CHECK(fb_pch_dir_check(d, why, sizeof(why)) == -1 && strstr(why, "mode 755") != NULL);
	chmod(d, 0770);
	CHECK(fb_pch_dir_check(d, why, sizeof(why)) == -1); /* the group could reach it */
	chmod(d, 0700);
	CHECK(fb_pch_dir_check(d, why, sizeof(why)) == 0);
	snprintf(lnk, sizeof(lnk), "%s/pchlink", tmp);
	CHECK(symlink(d, lnk) == 0);
	CHECK(fb_pch_dir_check(lnk, why, sizeof(why)) == -1 && strstr(why, "not a directory") != NULL);
	snprintf(lnk, sizeof(lnk), "%s/pchnone", tmp);
	CHECK(fb_pch_dir_check(lnk, why, sizeof(why)) == -1);
	char made[PATH_MAX * 2], w[PATH_MAX * 3], parent[PATH_MAX * 2];
	struct stat st;
	struct fb_error err = {0};
	snprintf(parent, sizeof(parent), "%s/pchparent/sub", tmp);
	CHECK(fb_pch_dir_new(parent, made, sizeof(made), &err) == 0);
	CHECK(strncmp(made, parent, strlen(parent)) == 0 && strstr(made, "/pch.") != NULL);
	CHECK(lstat(made, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	CHECK(fb_pch_worker_dir(made, 3, w, sizeof(w), why, sizeof(why)) == 0);
	CHECK(lstat(w, &st) == 0 && (st.st_mode & 0777) == 0700 && strstr(w, "/w3") != NULL);
	put("pchparent/sub/x", "x");
	char f[PATH_MAX * 4];
	snprintf(f, sizeof(f), "%s/a_0.pch", w);
	FILE *fp = fopen(f, "w");
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	fb_pch_dir_remove(made);
	CHECK(lstat(made, &st) != 0);
	/* a worker directory someone else made open is refused */
	CHECK(fb_pch_dir_new(parent, made, sizeof(made), &err) == 0);
	snprintf(w, sizeof(w), "%s/w0", made);
	CHECK(mkdir(w, 0777) == 0);
	chmod(w, 0777);
	CHECK(fb_pch_worker_dir(made, 0, w, sizeof(w), why, sizeof(why)) == -1);
	fb_pch_dir_remove(made);

	char log[] = "k.cu(3): warning: x\n\"k.cu\": using precompiled header file \"/p/k_0.pch\"\nctx\n";
	int used = 0;
	fb_pch_log_strip(log, &used);
	CHECK_STR(log, "k.cu(3): warning: x\nctx\n");
	CHECK(used == 1);
	char log2[] = "Warning #630-D: the initial sequence of preprocessing directives is not compatible with those "
	              "of precompiled header file \"/p/a_0.pch\"\n\nRemark: The warnings can be suppressed with "
	              "\"-diag-suppress <warning-number>\"\n\n\"k.cu\": creating precompiled header file \"/p/k_0.pch\"\n";
	fb_pch_log_strip(log2, &used);
	CHECK_STR(log2, "");
	CHECK(used == 0);
	char log3[] = "k.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n\n"
	              "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n"
	              "\"k.cu\": creating precompiled header file \"/p/k_0.pch\"\n";
	fb_pch_log_strip(log3, &used);
	CHECK_STR(log3, "k.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n\n"
	                "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n");

	/* heap policy: exhausted once -> a larger heap, exhausted again -> off */
	struct fb_pch_state ps = {0};
	char note[256];
	fb_pch_verdict(&ps, 14, 200u << 20, 0, 100u << 20, note, sizeof(note));
	CHECK(ps.heap > (200u << 20) && ps.retried && !ps.off && strstr(note, "retried") != NULL);
	fb_pch_verdict(&ps, 14, 300u << 20, 0, 225u << 20, note, sizeof(note));
	CHECK(ps.off && strstr(note, "again") != NULL);
	struct fb_pch_state ps2 = {0};
	fb_pch_verdict(&ps2, 0, 50u << 20, 0, 64u << 20, note, sizeof(note));
	CHECK(ps2.made == 1 && strncmp(note, "PCH made", 8) == 0);
	fb_pch_verdict(&ps2, 13, 0, 1, 64u << 20, note, sizeof(note));
	CHECK_STR(note, "PCH used");
	fb_pch_verdict(&ps2, 15, 0, 0, 64u << 20, note, sizeof(note));
	CHECK(ps2.off && strncmp(note, "PCH refused", 11) == 0);

	/* through fb_compile: three files sharing CUB headers, one arch */
	struct fb_nvrtc_info info;
	if (fb_nvrtc_info(NULL, &info, &err) != 0)
		return; /* test_compile already failed for this */
	const char *body = "#include <cub/block/block_reduce.cuh>\n"
	                   "template <typename T> __global__ void k%d(T *x) {\n"
	                   "  using R = cub::BlockReduce<T, 128>;\n  __shared__ typename R::TempStorage t;\n"
	                   "  T v = R(t).Sum(x[threadIdx.x]);\n  if (threadIdx.x == 0) x[0] = v;\n}\n"
	                   "template __global__ void k%d<float>(float *);\n";
	char text[1024], name[64];
	const char *srcs[3];
	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), body, i, i);
		snprintf(name, sizeof(name), "pch/p%d.cu", i);
		put(name, text);
		srcs[i] = strdup(at(name));
	}
	struct ap_target tg[] = {T("sm_80")};
	struct fb_compile_opts o = {.targets = tg, .ntargets = 1, .no_cache = true, .jobs = 1};
	snprintf(parent, sizeof(parent), "%s/pchrun", tmp);
	o.pch_parent = parent;
	struct fb_compile_result *on = NULL, *off = NULL;
	CHECK(fb_compile(srcs, 3, &o, &on, &err) == 0);
	o.no_pch = true;
	CHECK(fb_compile(srcs, 3, &o, &off, &err) == 0);
	if (on && off) {
		CHECK(on->nimages == 3 && off->nimages == 3);
		for (size_t i = 0; i < 3 && i < on->nimages && i < off->nimages; i++)
			CHECK(on->images[i].size == off->images[i].size &&
			      memcmp(on->images[i].data, off->images[i].data, on->images[i].size) == 0);
		CHECK(on->pch_made == 1 && on->pch_used == 2 && on->pch_refused == 0);
		CHECK(off->pch_made == 0 && off->pch_used == 0);
		CHECK(!on->log && !off->log); /* no PCH message is taken for a warning */
	}
	DIR *dd = opendir(parent);
	int left = 0;
	for (struct dirent *e; dd && (e = readdir(dd));)
		left += strncmp(e->d_name, "pch.", 4) == 0;
	if (dd)
		closedir(dd);
	CHECK(left == 0);
	fb_compile_result_free(on);
	fb_compile_result_free(off);
	for (int i = 0; i < 3; i++)
		free((void *)srcs[i]);
}

static void
test_compile(void)
{
	struct fb_nvrtc_info info;
	struct fb_error err = {0};
	if (fb_nvrtc_info(NULL, &info, &err) != 0) {
		fprintf(stderr, "no NVRTC: %s\n", err.msg);
		CHECK(!"NVRTC must be available for this test (set CUDA_HOME)");
		return;
	}
	CHECK(info.version >= 12000 && info.narchs > 0);
	char cache[PATH_MAX * 2];
	snprintf(cache, sizeof(cache), "%s/ccache", tmp);
	put("k/common.cuh", "#pragma once\n#include <cuda_fp16.h>\n__device__ inline float twice(float x) { return 2.f * x; }\n");
	put("k/only_b.cuh", "#pragma once\n#define B_SCALE 3.0f\n");
	put("k/a.cu", "#include \"common.cuh\"\n"
	              "extern \"C\" __global__ void ka(float *p) { p[threadIdx.x] = twice(p[threadIdx.x]); }\n");
	put("k/b.cu", "#include \"common.cuh\"\n#include \"only_b.cuh\"\n"
	              "extern \"C\" __global__ void kb(__half *p) { p[threadIdx.x] = __float2half(B_SCALE * twice(__half2float(p[threadIdx.x]))); }\n");
	struct ap_target tg[] = {T("sm_75"), T("sm_80"), T("compute_80")};
	const char *srcs[] = {at("k/a.cu"), at("k/b.cu")};
	struct prog pg = {0};
	struct fb_compile_opts o = {.targets = tg, .ntargets = 3, .cache_dir = cache, .jobs = 2,
	                            .progress = on_progress, .progress_ctx = &pg};
	struct fb_compile_result *r = NULL;
	CHECK(fb_compile(srcs, 2, &o, &r, &err) == 0);
	if (!r) {
		fprintf(stderr, "compile: %s\n", err.msg);
		return;
	}
	/* compute_80 rides on the sm_80 job: 2 jobs per source */
	CHECK(r->njobs == 4 && r->ncompiled == 4 && r->ncached == 0 && pg.ncalls == 4);
	CHECK(r->nimages == 6);
	CHECK(r->images[0].kind == FB_KIND_ELF && r->images[0].target.sm == 75 && r->images[0].source == 0);
	CHECK(r->images[2].kind == FB_KIND_PTX && r->images[2].target.sm == 80);
	CHECK(r->images[3].source == 1);
	CHECK(r->images[0].size > 64 && memcmp(r->images[0].data, "\177ELF", 4) == 0);
	CHECK(strstr((char *)r->images[2].data, ".target sm_80") != NULL);
	CHECK(strstr((char *)r->images[2].data, "ka") != NULL);
	CHECK(r->ndeps >= 4);
	CHECK_STR(r->deps[0], at("k/a.cu"));
	CHECK_STR(r->deps[1], at("k/b.cu"));
	int fp16 = 0, onlyb = 0;
	for (size_t i = 0; i < r->ndeps; i++) {
		fp16 |= strstr(r->deps[i], "cuda_fp16.h") != NULL;
		onlyb |= strstr(r->deps[i], "only_b.cuh") != NULL;
	}
	CHECK(fp16 && onlyb);
	size_t n1;
	unsigned char *fat1 = pack(r, &o, &n1);
	CHECK(fat1 != NULL);

	/* the PTX from the sm_80 job equals a compute_80-only compile */
	struct ap_target ptxonly[] = {T("compute_80")};
	struct fb_compile_opts o2 = {.targets = ptxonly, .ntargets = 1, .no_cache = true};
	struct fb_compile_result *r2 = NULL;
	CHECK(fb_compile(srcs, 1, &o2, &r2, &err) == 0);
	CHECK(r2 && r2->nimages == 1 && r2->images[0].size == r->images[2].size &&
	      memcmp(r2->images[0].data, r->images[2].data, r->images[2].size) == 0);
	fb_compile_result_free(r2);

	/* warm: everything from the cache, same bytes; -j 1 */
	memset(&pg, 0, sizeof(pg));
	o.jobs = 1;
	CHECK(fb_compile(srcs, 2, &o, &r2, &err) == 0);
	CHECK(r2 && r2->ncached == 4 && r2->ncompiled == 0 && pg.ncached == 4);
	size_t n2;
	unsigned char *fat2 = r2 ? pack(r2, &o, &n2) : NULL;
	CHECK(fat2 && n2 == n1 && memcmp(fat1, fat2, n1) == 0);
	free(fat2);
	fb_compile_result_free(r2);

	/* a header only b.cu reads changes: only b.cu's jobs run again */
	put("k/only_b.cuh", "#pragma once\n#define B_SCALE 4.0f\n");
	memset(&pg, 0, sizeof(pg));
	o.jobs = 2;
	CHECK(fb_compile(srcs, 2, &o, &r2, &err) == 0);
	CHECK(r2 && r2->ncached == 2 && r2->ncompiled == 2);
	CHECK(seen(&pg, "sm_75 a.cu cached") && seen(&pg, "sm_80 a.cu cached"));
	CHECK(seen(&pg, "sm_75 b.cu") && seen(&pg, "sm_80 b.cu"));
	fb_compile_result_free(r2);
	/* touching without a change recompiles nothing (content, not time stamps) */
	put("k/only_b.cuh", "#pragma once\n#define B_SCALE 4.0f\n");
	CHECK(fb_compile(srcs, 2, &o, &r2, &err) == 0);
	CHECK(r2 && r2->ncached == 4);
	fb_compile_result_free(r2);
	/* a header both read: all four */
	put("k/common.cuh", "#pragma once\n#include <cuda_fp16.h>\n__device__ inline float twice(float x) { return x + x; }\n");
	CHECK(fb_compile(srcs, 2, &o, &r2, &err) == 0);
	CHECK(r2 && r2->ncompiled == 4);
	fb_compile_result_free(r2);
	/* an option change: all four */
	const char *defs[] = {"EXTRA=1"};
	o.defines = defs;
	o.ndefines = 1;
	CHECK(fb_compile(srcs, 2, &o, &r2, &err) == 0);
	CHECK(r2 && r2->ncompiled == 4);
	fb_compile_result_free(r2);
	o.defines = NULL;
	o.ndefines = 0;
	/* a damaged entry is rebuilt, not used */
	CHECK(fb_cache_clear(cache, NULL, &err) == 0);
	CHECK(fb_compile(srcs, 2, &o, &r2, &err) == 0);
	CHECK(r2 && r2->ncompiled == 4);
	fb_compile_result_free(r2);
	DIR *d = opendir(cache);
	struct dirent *de;
	int damaged = 0;
	while (d && (de = readdir(d)) && !damaged) {
		if (de->d_name[0] == '.')
			continue;
		char sub[PATH_MAX * 3];
		snprintf(sub, sizeof(sub), "%s/%s", cache, de->d_name);
		DIR *s = opendir(sub);
		struct dirent *fe;
		while (s && (fe = readdir(s)) && !damaged) {
			if (fe->d_name[0] == '.')
				continue;
			char p[PATH_MAX * 4];
			snprintf(p, sizeof(p), "%s/%s", sub, fe->d_name);
			FILE *f = fopen(p, "r+b");
			if (f) {
				fseek(f, 0x100, SEEK_SET);
				fputc(0x5a, f);
				fputc(0xa5, f);
				fclose(f);
				damaged = 1;
			}
		}
		if (s)
			closedir(s);
	}
	if (d)
		closedir(d);
	CHECK(damaged);
	CHECK(fb_compile(srcs, 2, &o, &r2, &err) == 0);
	CHECK(r2 && r2->ncompiled == 1 && r2->ncached == 3);
	fb_compile_result_free(r2);

	/* determinism: -j 1 vs -j 4 without the cache, byte-identical containers */
	struct fb_compile_opts o3 = o;
	o3.no_cache = true;
	o3.progress = NULL;
	o3.jobs = 1;
	struct fb_compile_result *ra = NULL, *rb = NULL;
	CHECK(fb_compile(srcs, 2, &o3, &ra, &err) == 0);
	o3.jobs = 4;
	CHECK(fb_compile(srcs, 2, &o3, &rb, &err) == 0);
	size_t na = 0, nb = 0;
	unsigned char *fa = ra ? pack(ra, &o3, &na) : NULL, *fb = rb ? pack(rb, &o3, &nb) : NULL;
	CHECK(fa && fb && na == nb && memcmp(fa, fb, na) == 0);
	free(fa);
	free(fb);
	fb_compile_result_free(ra);
	fb_compile_result_free(rb);

	free(fat1);
	fb_compile_result_free(r);
}

static void
test_errors(void)
{
	struct fb_error err = {0};
	struct ap_target tg[] = {T("sm_80"), T("sm_90")};
	put("e/bad.cu", "extern \"C\" __global__ void k(int *p)\n{\n\t*p = undefined_name;\n}\n");
	put("e/miss.cu", "#include \"no_such_header.cuh\"\n");
	const char *bad[] = {at("e/bad.cu")};
	struct fb_compile_opts o = {.targets = tg, .ntargets = 2, .no_cache = true, .jobs = 1};
	struct fb_compile_result *r = NULL;
	CHECK(fb_compile(bad, 1, &o, &r, &err) == FB_ECOMPILE);
	CHECK(r && r->log && strstr(r->log, "e/bad.cu:3:7: error: identifier \"undefined_name\" is undefined [sm_80]"));
	CHECK(strstr(err.msg, "bad.cu:3:7: error:") && strstr(err.msg, "[sm_80]"));
	CHECK(r && strcmp(r->failed_target, "sm_80") == 0 && r->nimages == 0);
	fb_compile_result_free(r);
	const char *miss[] = {at("e/miss.cu")};
	CHECK(fb_compile(miss, 1, &o, &r, &err) == FB_ECOMPILE);
	CHECK(r && r->log && strstr(r->log, "cannot open source file \"no_such_header.cuh\""));
	CHECK(strstr(err.msg, "miss.cu:1:"));
	fb_compile_result_free(r);
	/* a bad pass-through option is a usage error */
	const char *x[] = {"--no-such-option"};
	o.nvrtc_opts = x;
	o.nnvrtc_opts = 1;
	put("e/ok.cu", "extern \"C\" __global__ void k(int *p) { *p = 1; }\n");
	const char *ok[] = {at("e/ok.cu")};
	CHECK(fb_compile(ok, 1, &o, &r, &err) == FB_EINVAL && r == NULL);
	CHECK(strstr(err.msg, "no-such-option") != NULL);
	o.nvrtc_opts = NULL;
	o.nnvrtc_opts = 0;
	/* the standards NVRTC takes, and only those */
	CHECK(fb_compile_std_ok("c++03") && fb_compile_std_ok("c++11") && fb_compile_std_ok("c++20"));
	CHECK(!fb_compile_std_ok("c++98") && !fb_compile_std_ok("c++23") && !fb_compile_std_ok("gnu++17"));
	CHECK(!fb_compile_std_ok("") && !fb_compile_std_ok(NULL));
	o.std = "c++98";
	CHECK(fb_compile(ok, 1, &o, &r, &err) == FB_EINVAL && strstr(err.msg, "unsupported --std 'c++98'"));
	o.std = NULL;
	/* bad arguments */
	CHECK(fb_compile(ok, 0, &o, &r, &err) == FB_EINVAL);
	const char *twice[] = {at("e/ok.cu"), at("e/ok.cu")};
	CHECK(fb_compile(twice, 2, &o, &r, &err) == FB_EINVAL);
	const char *none[] = {at("e/none.cu")};
	CHECK(fb_compile(none, 1, &o, &r, &err) == FB_EIO && r == NULL);
	/* no NVRTC in the named toolkit: says where it looked */
	char empty[PATH_MAX * 2];
	snprintf(empty, sizeof(empty), "%s/notoolkit", tmp);
	fb_mkdirs(empty, NULL);
	o.cuda_home = empty;
	CHECK(fb_compile(ok, 1, &o, &r, &err) == FB_ENOTOOL);
	CHECK(strstr(err.msg, "notoolkit/lib64/libnvrtc.so.13") != NULL);
	struct fb_nvrtc_info info;
	CHECK(fb_nvrtc_info(empty, &info, &err) == FB_ENOTOOL);
}

/* The first failure cancels the rest: slow CUB compiles are killed, not waited for. */
static void
test_cancel(void)
{
	struct fb_error err = {0};
	struct ap_target tg[] = {T("sm_75"), T("sm_80"), T("sm_86"), T("sm_90")};
	const char *sortk = "#include <cub/block/block_radix_sort.cuh>\n"
	                    "extern \"C\" __global__ void s(unsigned *p) {\n"
	                    "  using S = cub::BlockRadixSort<unsigned, 128, 8, int>;\n"
	                    "  __shared__ typename S::TempStorage t; unsigned k[8]; int v[8];\n"
	                    "  for (int i = 0; i < 8; i++) { k[i] = p[threadIdx.x * 8 + i]; v[i] = i; }\n"
	                    "  S(t).Sort(k, v);\n"
	                    "  for (int i = 0; i < 8; i++) p[threadIdx.x * 8 + i] = k[i] + v[i];\n}\n";
	put("c/slow.cu", sortk);
	put("c/fails.cu", "extern \"C\" __global__ void k(int *p) { static_assert(sizeof(int) == 3, \"fails\"); }\n");
	const char *srcs[] = {at("c/slow.cu"), at("c/fails.cu")};
	struct prog pg = {0};
	/* all eight jobs at once: the failing ones are quick, the CUB ones take seconds each */
	struct fb_compile_opts o = {.targets = tg, .ntargets = 4, .no_cache = true, .jobs = 8,
	                            .progress = on_progress, .progress_ctx = &pg};
	struct fb_compile_result *r = NULL;
	double t0 = now();
	CHECK(fb_compile(srcs, 2, &o, &r, &err) == FB_ECOMPILE);
	double t = now() - t0;
	CHECK(r && r->log && strstr(r->log, "fails.cu:1:") && strstr(r->log, "static assertion failed"));
	/* none of the slow jobs got to finish */
	CHECK(pg.ncalls == 0);
	/* every child was reaped */
	CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD);
	fb_compile_result_free(r);
	/* for scale: one slow job alone */
	struct ap_target one[] = {T("sm_80")};
	struct fb_compile_opts o1 = {.targets = one, .ntargets = 1, .no_cache = true, .jobs = 1};
	double t1 = now();
	CHECK(fb_compile(srcs, 1, &o1, &r, &err) == 0);
	t1 = now() - t1;
	fb_compile_result_free(r);
	printf("cancel: failed run %.2fs, one CUB job alone %.2fs\n", t, t1);
	CHECK(t < 4 * t1); /* four CUB jobs on this machine would take at least ~4 x t1 / cores */
}

/* ---- the nvcc oracle ----
 *
 * For each bundled kernel and arch: our cubin must hold the same kernels with the same static
 * shared memory as `nvcc -cubin`; its register counts must be exactly what ptxas makes of
 * NVRTC's PTX (which shows -arch and the options reach code generation); and where NVRTC's PTX
 * for a kernel is the same as nvcc's (register numbering aside), the register counts must
 * match nvcc's. They do not always match otherwise: nvcc 13.0 addresses __shared__ with 32-bit
 * pointers (cicc -nvptx-short-ptr) and NVRTC 13.0 with 64-bit ones, and has no option to
 * change that, so kernels that use shared memory can differ by a few registers. */

static char *
run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap);
	size_t k;
	while ((k = fread(out + n, 1, cap - n - 1, p)) > 0) {
		n += k;
		if (cap - n < 4096)
			out = realloc(out, cap *= 2);
	}
	out[n] = 0;
	int st = pclose(p);
	if (st != 0) {
		fprintf(stderr, "%s: exit %d\n%s\n", cmd, st, out);
		free(out);
		return NULL;
	}
	return out;
}

/* "ptxas info    : Compiling entry function 'NAME' for 'sm_80'" ... "Used N registers" */
static int
ptxas_regs(const char *log, const char *name)
{
	char pat[512];
	snprintf(pat, sizeof(pat), "entry function '%s'", name);
	const char *p = log ? strstr(log, pat) : NULL;
	if (!p)
		return -1;
	const char *u = strstr(p, "Used ");
	int regs = -1;
	if (u)
		sscanf(u, "Used %d registers", &regs);
	return regs;
}

/* The body of ".entry NAME(" up to the closing brace at column 0, with register numbers and
 * comments dropped: two PTX texts of one kernel compare equal when only numbering differs. */
static char *
ptx_entry(const char *ptx, const char *name)
{
	char pat[512];
	snprintf(pat, sizeof(pat), ".entry %s(", name);
	const char *p = ptx ? strstr(ptx, pat) : NULL;
	if (!p)
		return NULL;
	const char *e = strstr(p, "\n}");
	size_t n = e ? (size_t)(e - p) : strlen(p);
	char *out = malloc(n + 1), *w = out;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '/' && p[i + 1] == '/') {
			while (i < n && p[i] != '\n')
				i++;
		}
		if (i >= n)
			break;
		*w++ = p[i];
		if (p[i] == '%' || p[i] == '$') {
			while (i + 1 < n && ((p[i + 1] >= 'a' && p[i + 1] <= 'z') || p[i + 1] == '_'))
				*w++ = p[++i];
			while (i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9')
				i++;
		}
	}
	*w = 0;
	return out;
}

static int
oracle(void)
{
	const char *src = getenv("FB_SOURCE_DIR");
	const char *home = getenv("CUDA_HOME");
	char nvcc[PATH_MAX], ptxas[PATH_MAX];
	snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
	snprintf(ptxas, sizeof(ptxas), "%s/bin/ptxas", home && *home ? home : "/usr/local/cuda");
	if (!src || access(nvcc, X_OK) != 0) {
		fprintf(stderr, "needs FB_SOURCE_DIR and %s\n", nvcc);
		return 1;
	}
	static const char *const kernels[] = {"reduce.cu",    "gemm.cu",       "softmax.cu",
	                                      "layernorm.cu", "radix_sort.cu", "elementwise.cu"};
	static const char *const arches[] = {"sm_80", "compute_80", "sm_120", "compute_120"};
	const size_t nk = sizeof(kernels) / sizeof(kernels[0]), na = sizeof(arches) / sizeof(arches[0]);
	struct ap_target tg[4];
	for (size_t a = 0; a < na; a++)
		tg[a] = T(arches[a]);
	char paths[6][PATH_MAX];
	const char *srcs[6];
	for (size_t k = 0; k < nk; k++) {
		snprintf(paths[k], sizeof(paths[k]), "%s/examples/kernels/%s", src, kernels[k]);
		srcs[k] = paths[k];
	}
	/* the same options on both sides; a define to show they travel */
	const char *defs[] = {"FB_ORACLE=1"};
	struct fb_compile_opts o = {.targets = tg, .ntargets = na, .no_cache = true, .defines = defs, .ndefines = 1};
	struct fb_compile_result *r = NULL;
	struct fb_error err = {0};
	if (fb_compile(srcs, nk, &o, &r, &err) != 0) {
		fprintf(stderr, "fb_compile: %s\n%s", err.msg, r && r->log ? r->log : "");
		fb_compile_result_free(r);
		return 1;
	}
	size_t compared = 0, same_ptx = 0, same_regs = 0;
	printf("%-13s %-6s %-26s %5s %5s %6s %s\n", "file", "arch", "kernel", "ours", "nvcc", "ptxas", "PTX");
	for (size_t i = 0; i < r->nimages; i++) {
		const struct fb_compile_image *im = &r->images[i];
		if (im->kind != FB_KIND_ELF)
			continue;
		const struct fb_compile_image *ptx = &r->images[i + 1]; /* compute_X follows sm_X */
		CHECK(ptx->kind == FB_KIND_PTX && ptx->target.sm == im->target.sm);
		char arch[32], cmd[PATH_MAX * 8], cub[PATH_MAX * 3], keep[PATH_MAX * 2], optx[PATH_MAX * 3];
		ap_target_name(&im->target, arch, sizeof(arch));
		snprintf(keep, sizeof(keep), "%s/keep_%zu_%s", tmp, im->source, arch);
		fb_mkdirs(keep, NULL);
		snprintf(cub, sizeof(cub), "%s/nvcc.cubin", keep);
		snprintf(cmd, sizeof(cmd),
		         "'%s' -cubin -arch=%s -std=c++17 -DFB_ORACLE=1 -Xptxas -v -keep -keep-dir '%s' -o '%s' '%s' 2>&1",
		         nvcc, arch, keep, cub, srcs[im->source]);
		char *log = run(cmd);
		CHECK(log != NULL);
		/* nvcc's PTX, kept */
		char nvptx_path[PATH_MAX * 3], stem[256];
		snprintf(stem, sizeof(stem), "%s", kernels[im->source]);
		*strrchr(stem, '.') = 0;
		snprintf(nvptx_path, sizeof(nvptx_path), "%s/%s.ptx", keep, stem);
		char *nvptx = NULL, *theirs = NULL;
		size_t tn = 0, pn = 0;
		CHECK(fb_read_file(nvptx_path, &nvptx, &pn, NULL) == 0);
		CHECK(log && fb_read_file(cub, &theirs, &tn, NULL) == 0);
		/* ptxas on NVRTC's PTX */
		snprintf(optx, sizeof(optx), "%s/ours.ptx", keep);
		FILE *f = fopen(optx, "wb");
		if (f) {
			fwrite(ptx->data, 1, ptx->size, f);
			fclose(f);
		}
		snprintf(cmd, sizeof(cmd), "'%s' -arch=%s -v -o '%s/ours_ptxas.cubin' '%s' 2>&1", ptxas, arch, keep, optx);
		char *plog = run(cmd);
		CHECK(plog != NULL);
		struct fb_cubin a = {0}, b = {0};
		int ra = fb_cubin_read(im->data, im->size, &a, &err);
		int rb = theirs ? fb_cubin_read(theirs, tn, &b, &err) : -1;
		CHECK(ra == 0 && rb == 0);
		if (ra == 0 && rb == 0) {
			CHECK(a.sm == b.sm && a.nkernels == b.nkernels && a.nkernels > 0);
			for (size_t k = 0; k < a.nkernels; k++) {
				const struct fb_kernel *ka = &a.kernels[k], *kb = NULL;
				for (size_t m = 0; m < b.nkernels; m++)
					if (strcmp(b.kernels[m].name, ka->name) == 0)
						kb = &b.kernels[m];
				CHECK(kb != NULL); /* the same kernels */
				if (!kb)
					continue;
				int pregs = ptxas_regs(plog, ka->name), nregs = ptxas_regs(log, ka->name);
				char *e1 = ptx_entry((char *)ptx->data, ka->name), *e2 = ptx_entry(nvptx, ka->name);
				CHECK(e1 && e2);
				int same = e1 && e2 && strcmp(e1, e2) == 0;
				printf("%-13s %-6s %-26.26s %5d %5d %6d %s\n", kernels[im->source], arch, ka->name, ka->registers,
				       kb->registers, pregs, same ? "same" : "differs");
				CHECK(nregs == kb->registers);           /* the cubin reader agrees with ptxas -v */
				CHECK(ka->registers == pregs);           /* ours = ptxas(NVRTC's PTX) */
				CHECK(ka->shared_stored == kb->shared_stored);
				if (same) {
					CHECK(ka->registers == kb->registers);
					same_ptx++;
				}
				same_regs += ka->registers == kb->registers;
				compared++;
				free(e1);
				free(e2);
			}
		}
		fb_cubin_free(&a);
		fb_cubin_free(&b);
		free(theirs);
		free(nvptx);
		free(log);
		free(plog);
	}
	printf("%zu kernels compared: %zu with the same PTX as nvcc, %zu with nvcc's register count\n", compared,
	       same_ptx, same_regs);
	CHECK(compared == 15 * 2);
	CHECK(same_ptx >= 3 * 2); /* elementwise.cu: no shared memory, the same PTX */
	fb_compile_result_free(r);
	return 0;
}

static void
rmtree(const char *dir)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

int
main(int argc, char **argv)
{
	snprintf(tmp, sizeof(tmp), "%s/fbcompile.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	if (argc > 1 && strcmp(argv[1], "oracle") == 0) {
		int rc = oracle();
		rmtree(tmp);
		return rc ? rc : check_done();
	}
	test_sha256();
	test_sha256_paths();
	test_log_rewrite();
	test_depfile();
	test_scan();
	test_scan_root();
	test_find();
	test_cache();
	test_jobs();
	test_compile();
	test_pch();
	test_errors();
	if (!(argc > 1 && strcmp(argv[1], "quick") == 0))
		test_cancel();
	rmtree(tmp);
	return check_done();
}
