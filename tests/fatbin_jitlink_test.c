/* fatbin_jitlink_test.c: nvJitLink 13 as the oracle for our containers and our selection
 * model (docs/fatbin.md §7, §10).
 *
 * Fixtures: a marker PTX (`.global .u32 mark = N`, N unique per image) for each image of a
 * matrix, compiled with `ptxas -c` into relocatable cubins (nvJitLink silently drops ET_EXEC
 * cubins). Each image set is packed by our writer (none, zstd and LZ4), linked with
 * nvJitLink for a list of -arch values in a child process with a timeout, and the marker in
 * the linked cubin's .nv.global.init says which image was chosen; fb_select must agree.
 * Skips (77) when libnvJitLink.so.13 or ptxas is missing. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fatbuild.h"

/* The few nvJitLink declarations we need (no CUDA headers at build time). */
typedef void *nvjl_handle;
enum { NVJITLINK_INPUT_FATBIN = 4 };
typedef int (*create_fn)(nvjl_handle *, uint32_t, const char **);
typedef int (*add_fn)(nvjl_handle, int, const void *, size_t, const char *);
typedef int (*complete_fn)(nvjl_handle);
typedef int (*size_fn)(nvjl_handle, size_t *);
typedef int (*get_fn)(nvjl_handle, void *);
typedef int (*destroy_fn)(nvjl_handle *);

static const char *jl_path = "/usr/local/cuda/lib64/libnvJitLink.so.13";
static char ptxas[1024];
static char workdir[256];

static const char ptx_template[] =
	".version 9.0\n.target %s\n.address_size 64\n\n"
	".visible .global .align 4 .u32 mark = %d;\n\n"
	".visible .entry kern(\n\t.param .u64 kern_param_0\n)\n{\n"
	"\t.reg .b32 \t%%r<2>;\n\t.reg .b64 \t%%rd<3>;\n\n"
	"\tld.param.u64 \t%%rd1, [kern_param_0];\n\tcvta.to.global.u64 \t%%rd2, %%rd1;\n"
	"\tld.global.u32 \t%%r1, [mark];\n\tst.global.u32 \t[%%rd2], %%r1;\n\tret;\n}\n";

static void *
sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "nvJitLink lacks %s\n", name);
		exit(1);
	}
	return p;
}

/* First u32 of .nv.global.init of a linked cubin, or -1. */
static long
read_mark(const unsigned char *c, size_t n)
{
	if (n < 64)
		return -1;
	uint64_t shoff;
	memcpy(&shoff, c + 0x28, 8);
	uint16_t shnum, shstrndx;
	memcpy(&shnum, c + 0x3c, 2);
	memcpy(&shstrndx, c + 0x3e, 2);
	if (shoff > n || (uint64_t)shnum * 64 > n - shoff || shstrndx >= shnum)
		return -1;
	uint64_t stro;
	memcpy(&stro, c + shoff + (uint64_t)shstrndx * 64 + 0x18, 8);
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = c + shoff + (uint64_t)i * 64;
		uint32_t nm;
		uint64_t off, sz;
		memcpy(&nm, sh, 4);
		memcpy(&off, sh + 0x18, 8);
		memcpy(&sz, sh + 0x20, 8);
		if (stro + nm + 16 > n)
			continue;
		if (strcmp((const char *)c + stro + nm, ".nv.global.init") == 0 && sz >= 4 && off + 4 <= n) {
			uint32_t v;
			memcpy(&v, c + off, 4);
			return (long)v;
		}
	}
	return -1;
}

/* Links buf for -arch=arch in a child; returns the marker, 0 for "no image" (bad input or an
 * empty link), or -2 on a crash/timeout. */
static long
link_child(const unsigned char *buf, size_t n, const char *arch, bool lto)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -2;
	pid_t pid = fork();
	if (pid < 0)
		return -2;
	if (pid == 0) {
		close(fd[0]);
		alarm(60);
		long result = 0;
		void *h = dlopen(jl_path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "cannot load %s: %s\n", jl_path, dlerror());
			_exit(3);
		}
		create_fn create;
		add_fn add;
		complete_fn complete;
		size_fn getsize;
		get_fn get;
		destroy_fn destroy;
		*(void **)&create = sym(h, "__nvJitLinkCreate_13_0");
		*(void **)&add = sym(h, "__nvJitLinkAddData_13_0");
		*(void **)&complete = sym(h, "__nvJitLinkComplete_13_0");
		*(void **)&getsize = sym(h, "__nvJitLinkGetLinkedCubinSize_13_0");
		*(void **)&get = sym(h, "__nvJitLinkGetLinkedCubin_13_0");
		*(void **)&destroy = sym(h, "__nvJitLinkDestroy_13_0");
		char opt[64];
		snprintf(opt, sizeof(opt), "-arch=%s", arch);
		const char *opts[] = {opt, "-lto"};
		nvjl_handle jh = NULL;
		if (create(&jh, lto ? 2 : 1, opts) != 0)
			_exit(4);
		int rc = add(jh, NVJITLINK_INPUT_FATBIN, buf, n, "test.fatbin");
		if (rc == 0 && complete(jh) == 0) {
			size_t cn = 0;
			if (getsize(jh, &cn) == 0 && cn) {
				unsigned char *c = malloc(cn);
				if (c && get(jh, c) == 0) {
					long m = read_mark(c, cn);
					result = m < 0 ? 0 : m;
				}
				free(c);
			}
		}
		destroy(&jh);
		if (write(fd[1], &result, sizeof(result)) != (ssize_t)sizeof(result))
			_exit(5);
		_exit(0);
	}
	close(fd[1]);
	long result = -2;
	ssize_t r;
	do
		r = read(fd[0], &result, sizeof(result));
	while (r < 0 && errno == EINTR);
	close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	if (r != (ssize_t)sizeof(result) || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -2;
	return result;
}

struct img {
	const char *name; /* sm_80, compute_86, sm_100+ (+: with the compat blob, i.e. a real cubin) */
	int mark;
	unsigned char *data;
	size_t size;
	struct ap_target t;
};

static int
make_image(struct img *im)
{
	char name[32];
	snprintf(name, sizeof(name), "%s", im->name);
	if (fb_target_parse(name, &im->t) != 0)
		return -1;
	char tgt[32];
	struct ap_target st = im->t;
	st.kind = AP_SASS;
	ap_target_name(&st, tgt, sizeof(tgt));
	char ptx[2048];
	int pn = snprintf(ptx, sizeof(ptx), ptx_template, tgt, im->mark);
	if (im->t.kind == AP_PTX) {
		im->size = (size_t)pn;
		im->data = malloc(im->size);
		memcpy(im->data, ptx, im->size);
		return 0;
	}
	char pf[512], cf[512], cmd[4096];
	snprintf(pf, sizeof(pf), "%s/%s.ptx", workdir, name);
	snprintf(cf, sizeof(cf), "%s/%s.cubin", workdir, name);
	FILE *f = fopen(pf, "w");
	if (!f)
		return -1;
	fputs(ptx, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' -c -arch=%s '%s' -o '%s'", ptxas, tgt, pf, cf);
	if (system(cmd) != 0) {
		fprintf(stderr, "failed: %s\n", cmd);
		return -1;
	}
	f = fopen(cf, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	im->size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	im->data = malloc(im->size);
	size_t got = fread(im->data, 1, im->size, f);
	fclose(f);
	return got == im->size ? 0 : -1;
}

struct set {
	const char *images;  /* names from the pool, space-separated */
	const char *archs;   /* -arch values */
};

int
main(void)
{
	const char *home = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
	snprintf(ptxas, sizeof(ptxas), "%s/bin/ptxas", home);
	struct stat st;
	/* only children load nvJitLink (it keeps libstdc++'s pool alive, which LSan reports) */
	if (stat(jl_path, &st) != 0 || stat(ptxas, &st) != 0) {
		printf("skip: needs %s and %s\n", jl_path, ptxas);
		return 77;
	}
	snprintf(workdir, sizeof(workdir), "%s/fbjl.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(workdir))
		return 1;

	struct img pool[] = {
		{"sm_80", 1080, 0, 0, {0}},    {"sm_86", 1086, 0, 0, {0}},     {"sm_87", 1087, 0, 0, {0}},
		{"sm_90", 1090, 0, 0, {0}},    {"sm_90a", 1091, 0, 0, {0}},    {"sm_100", 1100, 0, 0, {0}},
		{"sm_100a", 1101, 0, 0, {0}},  {"sm_100f", 1102, 0, 0, {0}},   {"sm_120", 1120, 0, 0, {0}},
		{"compute_80", 2080, 0, 0, {0}}, {"compute_86", 2086, 0, 0, {0}}, {"compute_90a", 2091, 0, 0, {0}},
		{"compute_100", 2100, 0, 0, {0}}, {"compute_100f", 2102, 0, 0, {0}},
	};
	size_t npool = sizeof(pool) / sizeof(pool[0]);
	for (size_t i = 0; i < npool; i++)
		if (make_image(&pool[i]) != 0) {
			fprintf(stderr, "cannot make fixture %s\n", pool[i].name);
			return 1;
		}
	static const struct set sets[] = {
		{"sm_80 compute_80 compute_86", "sm_80 sm_86 sm_89 sm_90"},
		{"sm_80 sm_86 compute_80", "sm_86 sm_89 sm_87"},
		{"sm_80 compute_80", "sm_86 sm_89 sm_75"},
		{"sm_80 sm_86 sm_87", "sm_87 sm_88"},
		{"sm_90a compute_80", "sm_90 sm_90a"},
		{"compute_90a", "sm_90 sm_90a sm_100"},
		{"sm_100a", "sm_100 sm_103"},
		{"sm_100f compute_100f", "sm_100 sm_103 sm_110 sm_120"},
		{"sm_100", "sm_103 sm_110 sm_120"},
		{"sm_120 compute_100", "sm_120 sm_121 sm_110"},
		{"sm_90 compute_90a sm_80", "sm_90 sm_90a"},
	};
	static const enum fb_compress comps[] = {FB_COMPRESS_NONE, FB_COMPRESS_ZSTD, FB_COMPRESS_LZ4};
	int nlinks = 0, nchosen = 0, nnone = 0, nptx = 0;
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		struct fb_fatbin *fb = fb_fatbin_new();
		struct fb_image ims[8];
		int marks[8];
		size_t n = 0;
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", sets[s].images);
		struct fb_error err = {0};
		for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			struct img *im = NULL;
			for (size_t i = 0; i < npool; i++)
				if (strcmp(pool[i].name, t) == 0)
					im = &pool[i];
			if (!im) {
				fprintf(stderr, "no fixture %s\n", t);
				return 1;
			}
			enum fb_entry_kind k = im->t.kind == AP_PTX ? FB_KIND_PTX : FB_KIND_ELF;
			CHECK(fb_fatbin_add(fb, k, &im->t, im->data, im->size, NULL, NULL, &err) == 0);
			ims[n].target = im->t;
			ims[n].compat = k == FB_KIND_ELF && im->t.sm >= 100;
			marks[n] = im->mark;
			n++;
		}
		for (size_t c = 0; c < sizeof(comps) / sizeof(comps[0]); c++) {
			unsigned char *out = NULL;
			size_t on = 0;
			CHECK(fb_fatbin_write(fb, comps[c], &out, &on, &err) == 0);
			snprintf(buf, sizeof(buf), "%s", sets[s].archs);
			for (char *save = NULL, *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
				/* compression does not change the choice: check every arch for none, one per other mode */
				struct ap_target dev;
				CHECK(fb_target_parse(a, &dev) == 0);
				enum fb_how how;
				long r = fb_select(ims, n, &dev, &how);
				long want = r < 0 ? 0 : marks[r];
				long got = link_child(out, on, a, false);
				nlinks++;
				nchosen += got > 0;
				nnone += got == 0;
				nptx += got >= 2000;
				if (getenv("FB_TEST_VERBOSE"))
					printf("{%s} compress %d -arch=%s: %ld\n", sets[s].images, (int)comps[c], a, got);
				if (got != want)
					fprintf(stderr, "{%s} %s, compress %d, -arch=%s: nvJitLink took %ld, model says %ld\n",
					        sets[s].images, "", (int)comps[c], a, got, want);
				CHECK(got == want);
				if (comps[c] != FB_COMPRESS_NONE)
					break;
			}
			free(out);
		}
		fb_fatbin_free(fb);
	}
	/* LTO-IR (kind 8): extracted from an nvcc -dc -arch=lto_80 object by our reader, packed by
	 * our writer raw, zstd (not obfuscated) and LZ4; nvJitLink -lto must link each. */
	char nvcc[1024], cmd[4096], cu[512], obj[512];
	snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", home);
	snprintf(cu, sizeof(cu), "%s/l.cu", workdir);
	snprintf(obj, sizeof(obj), "%s/l.o", workdir);
	FILE *f = fopen(cu, "w");
	if (f && stat(nvcc, &st) == 0) {
		fputs("__device__ int mark = 3080;\nextern \"C\" __global__ void kern(int *p) { *p = mark; }\n", f);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "'%s' -dc -arch=lto_80 -Xfatbin=-compress-mode=none -o '%s' '%s'", nvcc, obj, cu);
		CHECK(system(cmd) == 0);
		struct fb_mapped m;
		struct fb_scan sc;
		struct fb_parsed p;
		struct fb_error err = {0};
		CHECK(fb_map_file(obj, &m, &err) == 0);
		CHECK(fb_scan_buffer(m.data, m.size, obj, &sc, &err) == 0);
		CHECK(fb_scan_entries(m.data, &sc, &p, &err) == 0 && p.nentries == 1);
		if (p.nentries == 1 && p.entries[0].disk_kind == FB_DISK_KIND_LTO) {
			unsigned char *ir;
			size_t irn;
			CHECK(fb_entry_image(&p.entries[0], 0, &ir, &irn, &err) == 0);
			struct ap_target t;
			fb_target_parse("lto_80", &t);
			for (size_t c = 0; c < sizeof(comps) / sizeof(comps[0]); c++) {
				struct fb_fatbin *fb = fb_fatbin_new();
				unsigned char *out = NULL;
				size_t on = 0;
				CHECK(fb_fatbin_add(fb, FB_KIND_LTO, &t, ir, irn, NULL, NULL, &err) == 0);
				CHECK(fb_fatbin_write(fb, comps[c], &out, &on, &err) == 0);
				long got = link_child(out, on, "sm_86", true);
				if (got != 3080)
					fprintf(stderr, "LTO compress %d: nvJitLink -lto gave %ld\n", (int)comps[c], got);
				CHECK(got == 3080);
				nlinks++;
				free(out);
				fb_fatbin_free(fb);
			}
			free(ir);
		} else {
			fprintf(stderr, "nvcc -dc -arch=lto_80 gave no LTO entry\n");
			CHECK(0);
		}
		fb_parsed_free(&p);
		fb_scan_free(&sc);
		fb_unmap_file(&m);
	} else if (f) {
		fclose(f);
		printf("note: %s not found; LTO links skipped\n", nvcc);
	}
	printf("%d links: %d chose an image (%d PTX), %d found none\n", nlinks, nchosen, nptx, nnone);
	/* the oracle must really have linked: both outcomes, SASS and PTX, occur */
	CHECK(nchosen >= 20 && nnone >= 10 && nptx >= 5 && nchosen - nptx >= 5);
	for (size_t i = 0; i < npool; i++)
		free(pool[i].data);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", workdir);
	return check_done();
}
