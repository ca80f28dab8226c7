/* check_test.c: fatbuild check's pieces (fatbuild/check/, fatbin/devcode.c, fatbin/entryhead.c,
 * fb_select_misfit): why an image does not fit, the reasons in words, distribution metadata,
 * what a file's first bytes say, the device code of a host ELF outside .nv_fatbin (a host ELF
 * built here), the verdicts of a library's modules, and fb_check without libarchive. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "check/check.h"
#include "fatbin/devcode.h"
#include "fatbin/entryhead.h"
#include "fatbuild.h"

static void
w16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void
w32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
w64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static struct ap_target
T(const char *name)
{
	struct ap_target t;
	if (fb_target_parse(name, &t) != 0) {
		fprintf(stderr, "bad target %s\n", name);
		exit(2);
	}
	return t;
}

/* A real GPU X.Y (sm = 10X + Y) */
#define GPU(sm) (&(struct ap_target){(sm), AP_ARCH, AP_SASS, 0})

static struct fb_image
I(const char *name, bool compat)
{
	return (struct fb_image){T(name), compat};
}

static void
test_misfit(void)
{
	struct fb_image im;
	struct ap_target plain90 = T("sm_90");
	CHECK(fb_select_misfit((im = I("sm_80", false), &im), GPU(86)) == FB_FITS);
	CHECK(fb_select_misfit((im = I("sm_90", false), &im), GPU(89)) == FB_MISFIT_NEWER);
	CHECK(fb_select_misfit((im = I("compute_90", false), &im), GPU(89)) == FB_MISFIT_NEWER);
	CHECK(fb_select_misfit((im = I("sm_80", false), &im), GPU(90)) == FB_MISFIT_MAJOR);
	CHECK(fb_select_misfit((im = I("sm_100f", false), &im), GPU(120)) == FB_MISFIT_MAJOR);
	CHECK(fb_select_misfit((im = I("sm_80", false), &im), GPU(87)) == FB_MISFIT_ISOLATED);
	CHECK(fb_select_misfit((im = I("sm_87", false), &im), GPU(89)) == FB_MISFIT_ISOLATED);
	CHECK(fb_select_misfit((im = I("sm_90a", false), &im), GPU(100)) == FB_MISFIT_ARCH);
	CHECK(fb_select_misfit((im = I("compute_90a", false), &im), GPU(120)) == FB_MISFIT_ARCH);
	CHECK(fb_select_misfit((im = I("sm_90a", false), &im), &plain90) == FB_MISFIT_PLAIN);
	CHECK(fb_select_misfit((im = I("sm_90a", false), &im), GPU(90)) == FB_FITS);
	CHECK(fb_select_misfit((im = I("sm_100", false), &im), GPU(103)) == FB_MISFIT_COMPAT);
	CHECK(fb_select_misfit((im = I("sm_100", true), &im), GPU(103)) == FB_FITS);
	CHECK(fb_select_misfit((im = I("compute_80", false), &im), GPU(120)) == FB_FITS);
	/* fb_select keeps its table (docs/fatbin.md §7) through the misfit rules */
	struct fb_image set[] = {I("sm_80", false), I("sm_86", false), I("compute_80", false)};
	enum fb_how how;
	CHECK(fb_select(set, 3, GPU(89), &how) == 1 && how == FB_HOW_SASS);
	CHECK(fb_select(set, 3, GPU(120), &how) == 2 && how == FB_HOW_PTX_JIT);
	CHECK(fb_select(set, 2, GPU(87), &how) == -1 && how == FB_HOW_NONE);
}

static void
test_why(void)
{
	char buf[384];
	struct fb_image a[] = {I("sm_90a", false)};
	fb_chk_why(a, 1, GPU(120), buf, sizeof(buf));
	CHECK_STR(buf, "an arch-specific image runs on 9.0 exactly; no PTX to JIT-compile");
	struct fb_image b[] = {I("sm_90a", false), I("sm_80", false), I("sm_86", false)};
	fb_chk_why(b, 3, GPU(120), buf, sizeof(buf));
	CHECK_STR(buf, "SASS runs only on GPUs of its own major (8.x); an arch-specific image runs on 9.0 exactly; no PTX to "
	               "JIT-compile");
	fb_chk_image_names(b, 3, buf, sizeof(buf));
	CHECK_STR(buf, "sm_80, sm_86, sm_90a");
	struct fb_image c[] = {I("compute_90", false), I("sm_90", false), I("sm_100", false)};
	fb_chk_why(c, 3, GPU(86), buf, sizeof(buf));
	CHECK_STR(buf, "built for newer GPUs than 8.6 (from 9.0)");
	struct fb_image d[] = {I("sm_100", false)};
	fb_chk_why(d, 1, GPU(103), buf, sizeof(buf));
	CHECK_STR(buf, "SASS without the compat blob runs only on its own GPU (10.0); no PTX to JIT-compile");
	fb_chk_why(NULL, 0, GPU(80), buf, sizeof(buf));
	CHECK_STR(buf, "no SASS or PTX image");
	struct fb_image e[] = {I("sm_80", false), I("sm_80", false), I("compute_80", false)};
	fb_chk_image_names(e, 3, buf, sizeof(buf));
	CHECK_STR(buf, "sm_80, compute_80");
	/* a long list is cut with "..." and stays terminated */
	char small[16];
	fb_chk_image_names(b, 3, small, sizeof(small));
	CHECK(strlen(small) < sizeof(small) && strstr(small, "..."));
}

static int
collect(const char *path, size_t len, void *ctx)
{
	char *out = ctx;
	size_t l = strlen(out);
	snprintf(out + l, 512 - l, "[%.*s]", (int)len, path);
	return 0;
}

static void
test_distinfo(void)
{
	char *name, *version;
	const char meta[] = "Metadata-Version: 2.1\r\nname: torch\r\nVersion: 2.15.0+cu132 \r\nSummary: x\r\n\r\nName: not\n";
	CHECK(fb_dist_metadata(meta, sizeof(meta) - 1, &name, &version) == 0);
	CHECK_STR(name, "torch");
	CHECK_STR(version, "2.15.0+cu132");
	free(name), free(version);
	const char nover[] = "Name: a\x01" "b\n";
	CHECK(fb_dist_metadata(nover, sizeof(nover) - 1, &name, &version) == 0);
	CHECK_STR(name, "a?b");
	CHECK_STR(version, "");
	free(name), free(version);
	const char body[] = "Version: 1\n\nName: late\n";
	CHECK(fb_dist_metadata(body, sizeof(body) - 1, &name, &version) == FB_EFORMAT && !name && !version);
	CHECK(fb_dist_metadata("Name:   \n", 9, &name, &version) == FB_EFORMAT);

	char got[512] = "";
	const char rec[] = "torch/__init__.py,sha256=abc,12\n\"a,b/c\"\"d.so\",sha256=x,3\r\nlast/file,,\nno/newline";
	CHECK(fb_dist_record(rec, sizeof(rec) - 1, collect, got) == 0);
	CHECK_STR(got, "[torch/__init__.py][a,b/c\"d.so][last/file][no/newline]");

	char out[64];
	CHECK(fb_path_join("lib/python3.11/site-packages", "../../../bin/torchrun", 21, out, sizeof(out)) == 0);
	CHECK_STR(out, "bin/torchrun");
	CHECK(fb_path_join("site", "./a//b/../c.so", 14, out, sizeof(out)) == 0);
	CHECK_STR(out, "site/a/c.so");
	CHECK(fb_path_join("", "../x", 4, out, sizeof(out)) == -1);
	CHECK(fb_path_join("a", "/etc/passwd", 11, out, sizeof(out)) == -1);
	CHECK(fb_path_join("a", "b\0c", 3, out, sizeof(out)) == -1);
	CHECK(fb_path_join("a", "0123456789012345678901234567890123456789012345678901234567890123456789", 70, out,
	                   sizeof(out)) == -1);

	CHECK(fb_dist_from_filename("/w/torch-2.15.0+cu132-cp311-cp311-manylinux_2_28_x86_64.whl", &name, &version) == 0);
	CHECK_STR(name, "torch");
	CHECK_STR(version, "2.15.0+cu132");
	free(name), free(version);
	CHECK(fb_dist_from_filename("flash-attn-2.8.3.tar.gz", &name, &version) == 0);
	CHECK_STR(name, "flash-attn");
	CHECK_STR(version, "2.8.3");
	free(name), free(version);
	CHECK(fb_dist_from_filename("nvidia_cublas-13.4.1.3.dist-info", &name, &version) == 0);
	CHECK_STR(name, "nvidia_cublas");
	free(name), free(version);
	CHECK(fb_dist_from_filename("stuff.zip", &name, &version) == -1);
	CHECK_STR(name, "stuff.zip");
	CHECK_STR(version, "");
	free(name), free(version);
}

static void
test_sniff(void)
{
	unsigned char b[600] = {0};
	memcpy(b, "\x7f" "ELF\x02\x01", 6);
	CHECK(fb_sniff(b, 64) == FB_SNIFF_ELF);
	b[4] = 1;
	CHECK(fb_sniff(b, 64) == FB_SNIFF_ELF_OTHER);
	w32(b, 0xBA55ED50u);
	CHECK(fb_sniff(b, 16) == FB_SNIFF_FATBIN);
	CHECK(fb_sniff((const unsigned char *)"!<arch>\nxx", 10) == FB_SNIFF_AR);
	CHECK(fb_sniff((const unsigned char *)"PK\x03\x04", 4) == FB_SNIFF_ARCHIVE);
	CHECK(fb_sniff((const unsigned char *)"\x1f\x8b\x08", 3) == FB_SNIFF_ARCHIVE);
	memset(b, 'x', sizeof(b));
	memcpy(b + 257, "ustar", 5);
	CHECK(fb_sniff(b, 512) == FB_SNIFF_ARCHIVE);
	const char ptx[] = "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 8.5\n.target sm_80\n";
	CHECK(fb_sniff((const unsigned char *)ptx, sizeof(ptx) - 1) == FB_SNIFF_PTX);
	const char notptx[] = "# config\n.version 8.5\n";
	CHECK(fb_sniff((const unsigned char *)notptx, sizeof(notptx) - 1) == FB_SNIFF_PLAIN);
	const char nul[] = ".version 8.5\n\0";
	CHECK(fb_sniff((const unsigned char *)nul, sizeof(nul) - 1) == FB_SNIFF_PLAIN);
	CHECK(fb_sniff((const unsigned char *)"hello", 5) == FB_SNIFF_PLAIN);
}

/* ---- a host ELF built here ---- */

struct sec {
	const char *name;
	uint32_t type;
	uint64_t flags;
	const void *data;
	size_t size;
	uint32_t link;
	uint64_t entsize;
};

/* ELF64 header, the sections' bytes (each 8-aligned), .shstrtab, then the section table. */
static unsigned char *
make_elf(const struct sec *s, size_t ns, uint16_t type, size_t *n)
{
	size_t cap = 1 << 16, off = 64;
	unsigned char *b = calloc(1, cap);
	uint64_t offs[16];
	char names[512] = "";
	size_t nl = 1, noff[16];
	for (size_t i = 0; i < ns; i++) {
		off = (off + 7) & ~(size_t)7;
		offs[i] = off;
		if (s[i].type != 8)
			memcpy(b + off, s[i].data, s[i].size), off += s[i].size;
		noff[i] = nl;
		memcpy(names + nl, s[i].name, strlen(s[i].name) + 1);
		nl += strlen(s[i].name) + 1;
	}
	size_t stroff = off, strname = nl;
	memcpy(names + nl, ".shstrtab", 10);
	nl += 10;
	memcpy(b + stroff, names, nl);
	off = (stroff + nl + 7) & ~(size_t)7;
	size_t shoff = off;
	memcpy(b, "\x7f" "ELF\x02\x01\x01", 7);
	w16(b + 0x10, type);
	w16(b + 0x12, 62);
	w64(b + 0x28, shoff);
	w16(b + 0x3a, 64);
	w16(b + 0x3c, (unsigned)(ns + 2));
	w16(b + 0x3e, (unsigned)(ns + 1));
	for (size_t i = 0; i < ns; i++) {
		unsigned char *h = b + shoff + (i + 1) * 64;
		w32(h, (uint32_t)noff[i]);
		w32(h + 4, s[i].type);
		w64(h + 8, s[i].flags);
		w64(h + 0x18, offs[i]);
		w64(h + 0x20, s[i].size);
		w32(h + 0x28, s[i].link);
		w64(h + 0x38, s[i].entsize);
	}
	unsigned char *h = b + shoff + (ns + 1) * 64;
	w32(h, (uint32_t)strname);
	w32(h + 4, 3);
	w64(h + 0x18, stroff);
	w64(h + 0x20, nl);
	*n = shoff + (ns + 2) * 64;
	return b;
}

/* A minimal cubin (no symbols, so no kernels) for sm, 'a' when arch_a (.nv.compat attribute 9). */
static size_t
make_cubin(unsigned char *b, int sm, int arch_a)
{
	memset(b, 0, 512);
	memcpy(b, "\x7f" "ELF\x02\x01\x01\x41\x08", 9);
	w16(b + 0x10, 2);
	w16(b + 0x12, 190);
	w32(b + 0x30, 0x06000000u | (uint32_t)sm << 8 | (sm >= 100 ? 2 : 4));
	static const char strs[] = "\0.shstrtab\0.nv.compat\0";
	memcpy(b + 64, strs, sizeof(strs));
	const unsigned char compat[4] = {2, 9, (unsigned char)arch_a, 0};
	memcpy(b + 96, compat, sizeof(compat));
	w64(b + 0x28, 104);
	w16(b + 0x3a, 64);
	w16(b + 0x3c, 3);
	w16(b + 0x3e, 1);
	unsigned char *sh = b + 104 + 64;
	w32(sh, 1);
	w32(sh + 4, 3);
	w64(sh + 0x18, 64);
	w64(sh + 0x20, sizeof(strs));
	sh += 64;
	w32(sh, 11);
	w32(sh + 4, 0x70000086u);
	w64(sh + 0x18, 96);
	w64(sh + 0x20, sizeof(compat));
	return 104 + 3 * 64;
}

static const char ptx90[] = ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";

/* A container of the given images (cubins are made, PTX is ptx90). */
static unsigned char *
make_container_c(const char *const *names, size_t n, enum fb_compress c, size_t *size)
{
	struct fb_fatbin *fb = fb_fatbin_new();
	struct fb_error err = {0};
	unsigned char cub[512];
	const unsigned char lto[16] = {0xed, 0x43, 0x4e, 0x7f, 1, 0};
	for (size_t i = 0; i < n; i++) {
		struct ap_target t = T(names[i]);
		if (strncmp(names[i], "lto_", 4) == 0)
			CHECK(fb_fatbin_add(fb, FB_KIND_LTO, &t, lto, sizeof(lto), NULL, NULL, &err) == 0);
		else if (t.kind == AP_PTX)
			CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &t, ptx90, sizeof(ptx90) - 1, NULL, NULL, &err) == 0);
		else
			CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t, cub, make_cubin(cub, t.sm, t.variant == AP_ARCH), NULL, NULL,
			                    &err) == 0);
	}
	unsigned char *out = NULL;
	CHECK(fb_fatbin_write(fb, c, &out, size, &err) == 0);
	fb_fatbin_free(fb);
	return out;
}

static unsigned char *
make_container(const char *const *names, size_t n, size_t *size)
{
	return make_container_c(names, n, FB_COMPRESS_ZSTD, size);
}

static void
test_devcode(void)
{
	size_t c1n, c2n, c3n;
	/* stored as is: the cubin and PTX inside must not be found again on their own */
	unsigned char *c1 = make_container_c((const char *[]){"sm_80", "compute_90"}, 2, FB_COMPRESS_NONE, &c1n);
	unsigned char *c2 = make_container((const char *[]){"lto_90", "sm_100"}, 2, &c2n);
	unsigned char *c3 = make_container((const char *[]){"sm_75"}, 1, &c3n);
	unsigned char rodata[4096] = {0}, text[1024] = {0}, cub[512];
	size_t r = 3;
	const char ptx[] = "// a comment\n.version 8.0\n.target sm_75\n.address_size 64\n";
	const char cmt[] = "// .version 9.0\n.target sm_90\n"; /* .version inside a comment */
	const char mid[] = "see .version 9.0\n.target sm_90\n"; /* not the first directive */
	memcpy(rodata + r, ptx, sizeof(ptx)), r += sizeof(ptx);
	memcpy(rodata + r, cmt, sizeof(cmt)), r += sizeof(cmt);
	memcpy(rodata + r, mid, sizeof(mid)), r += sizeof(mid);
	r = (r + 7) & ~(size_t)7;
	memcpy(rodata + r, c1, c1n), r += c1n;
	r = (r + 7) & ~(size_t)7;
	size_t cl = make_cubin(cub, 120, 1);
	memcpy(rodata + r, cub, cl), r += cl;
	memcpy(text + 8, c3, c3n);
	const char dynstr[] = "\0__nvrtc_builtins__13_2_getArchBuiltins80\0__nvrtc_builtins__13_2_getArchBuiltins120\0"
	                      "getArchBuiltins90\0__nvrtc_builtins__13_2_getArchBuiltins\0";
	unsigned char dynsym[5 * 24] = {0};
	w32(dynsym + 24, 1);
	w32(dynsym + 48, 42);
	w32(dynsym + 72, 84);
	w32(dynsym + 96, 102);
	const struct sec secs[] = {
		{".text", 1, 0x6, text, sizeof(text), 0, 0},
		{".rodata", 1, 0x2, rodata, r, 0, 0},
		{".nv_fatbin", 1, 0x2, c3, c3n, 0, 0},
		{".ldata", 1, 0x3, c2, c2n, 0, 0},
		{".bss", 8, 0x3, NULL, 1 << 20, 0, 0},
		{".dynstr", 3, 0x2, dynstr, sizeof(dynstr), 0, 0},
		{".dynsym", 11, 0x2, dynsym, sizeof(dynsym), 6, 24},
	};
	size_t n;
	unsigned char *elf = make_elf(secs, sizeof(secs) / sizeof(secs[0]), 3, &n);
	struct fb_devcode d;
	struct fb_error err = {0};
	CHECK(fb_devcode_scan(elf, n, "lib.so", NULL, NULL, &d, &err) == 0);
	CHECK(d.ncontainers == 2 && d.ncubins == 1 && d.nptx == 1 && d.nlto == 1);
	CHECK_STR(d.sections, ".rodata, .ldata");
	char names[256];
	fb_chk_image_names(d.images, d.nimages, names, sizeof(names));
	CHECK_STR(names, "sm_80, sm_100, sm_120a, compute_75, compute_90");
	CHECK(d.nnvrtc == 2 && d.nvrtc[0] == 80 && d.nvrtc[1] == 120);
	CHECK(fb_devcode_any(&d));
	fb_devcode_free(&d);
	/* the same without anything outside the runtime's sections */
	const struct sec plain[] = {{".text", 1, 0x6, text, sizeof(text), 0, 0}, {".nv_fatbin", 1, 0x2, c3, c3n, 0, 0}};
	free(elf);
	elf = make_elf(plain, 2, 3, &n);
	CHECK(fb_devcode_scan(elf, n, "lib.so", NULL, NULL, &d, &err) == 0 && !fb_devcode_any(&d));
	fb_devcode_free(&d);
	/* a section table past the end is the section walk's error */
	w64(elf + 0x28, n);
	CHECK(fb_devcode_scan(elf, n, "lib.so", NULL, NULL, &d, &err) == FB_EFORMAT && strstr(err.msg, "lib.so: ELF section"));
	free(elf);
	free(c1);
	free(c2);
	free(c3);
}

/* The verdicts of the containers in buf (a fatbin of several containers) on each device. */
static void
verdicts(const unsigned char *buf, size_t n, bool lazy, bool link, const struct ap_target *dev, size_t ndev,
         struct fb_check_file *f)
{
	struct fb_scan sc;
	struct fb_parsed p;
	struct fb_error err = {0};
	memset(f, 0, sizeof(*f));
	CHECK(fb_scan_buffer(buf, n, "x", &sc, &err) == 0 && fb_scan_entries(buf, &sc, &p, &err) == 0);
	CHECK(fb_chk_verdicts(&p, &sc, link, lazy, NULL, dev, ndev, f) == 0);
	fb_parsed_free(&p);
	fb_scan_free(&sc);
}

static void
test_verdicts(void)
{
	size_t an, bn;
	unsigned char *a = make_container((const char *[]){"sm_80"}, 1, &an); /* a cubin without kernels */
	unsigned char *b = make_container((const char *[]){"compute_90"}, 1, &bn); /* PTX with .entry */
	unsigned char *ab = malloc(an + bn);
	memcpy(ab, a, an);
	memcpy(ab + an, b, bn);
	struct ap_target dev[] = {*GPU(80), *GPU(90), *GPU(75)};
	struct fb_check_file f;
	/* a fatbin file: each module counts */
	verdicts(ab, an + bn, false, false, dev, 3, &f);
	CHECK_STR(f.images, "sm_80, compute_90");
	CHECK(f.arch[0].verdict == FB_CHECK_SASS && f.arch[0].sass == 1 && f.arch[0].none == 1 && f.arch[0].first_none == 1);
	CHECK_STR(f.arch[0].why_images, "compute_90");
	CHECK_STR(f.arch[0].why, "built for newer GPUs than 8.0 (from 9.0)");
	CHECK(f.arch[1].verdict == FB_CHECK_JIT && f.arch[1].jit == 1 && f.arch[1].none == 1);
	CHECK(f.arch[2].verdict == FB_CHECK_NONE && f.arch[2].none == 2 && f.arch[2].empty == 0);
	CHECK_STR(f.arch[2].why_images, "sm_80, compute_90");
	free(f.arch);
	/* a library: on 9.0 the module without an image defines no kernel; on 7.5 the other one does */
	verdicts(ab, an + bn, true, false, dev, 3, &f);
	CHECK(f.arch[1].verdict == FB_CHECK_JIT && f.arch[1].none == 1);
	CHECK(f.arch[2].verdict == FB_CHECK_NONE && f.arch[2].none == 1 && f.arch[2].empty == 1 && f.arch[2].first_none == 1);
	CHECK_STR(f.arch[2].why_images, "compute_90");
	free(f.arch);
	verdicts(a, an, true, false, dev + 1, 1, &f);
	CHECK(f.arch[0].verdict == FB_CHECK_NOKERNEL && f.arch[0].empty == 1 && f.arch[0].none == 0);
	free(f.arch);
	/* one module: the image chosen */
	verdicts(a, an, false, false, dev, 1, &f);
	CHECK(f.arch[0].verdict == FB_CHECK_SASS && f.arch[0].entry == 0 && f.arch[0].chosen.sm == 80);
	free(f.arch);
	/* relocatable code only: a fatbin file cannot run, a library links it itself, an object is
	 * a device-link input */
	unsigned char rel[512];
	size_t rl = make_cubin(rel, 80, 0);
	w16(rel + 0x10, 1); /* ET_REL */
	struct fb_fatbin *fb = fb_fatbin_new();
	struct fb_error err = {0};
	struct ap_target t80 = T("sm_80");
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t80, rel, rl, NULL, NULL, &err) == 0);
	unsigned char *rc = NULL;
	size_t rcn = 0;
	CHECK(fb_fatbin_write(fb, FB_COMPRESS_NONE, &rc, &rcn, &err) == 0);
	fb_fatbin_free(fb);
	verdicts(rc, rcn, false, false, dev, 1, &f);
	CHECK(f.arch[0].verdict == FB_CHECK_NONE && f.arch[0].link == 1);
	CHECK_STR(f.arch[0].why, "only relocatable cubins (-rdc), not loadable until device-linked ('fatbuild dlink', or build with "
	                         "--rdc/--lto)");
	free(f.arch);
	verdicts(rc, rcn, true, false, dev, 3, &f);
	CHECK(f.arch[0].verdict == FB_CHECK_OTHER && f.arch[0].other == FB_HOW_SASS && f.arch[0].link == 1);
	CHECK(f.arch[2].verdict == FB_CHECK_OTHER && f.arch[2].other == FB_HOW_NONE);
	free(f.arch);
	verdicts(rc, rcn, true, true, dev, 1, &f);
	CHECK(f.arch[0].verdict == FB_CHECK_LINK);
	free(f.arch);
	free(rc);
	CHECK(fb_entry_has_kernels(&(struct fb_entry){.disk_kind = FB_DISK_KIND_PTX, .payload = (const unsigned char *)ptx90,
	                                              .stored_size = sizeof(ptx90) - 1, .payload_size = sizeof(ptx90) - 1},
	                           0) == 1);
	free(a);
	free(b);
	free(ab);
}

static char root[256];

static const char *
at(const char *name)
{
	static char buf[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, name);
	return buf[i];
}

static void
test_open_below(void)
{
	CHECK(mkdir(at("real"), 0700) == 0 && mkdir(at("real/d"), 0700) == 0);
	FILE *f = fopen(at("real/d/file"), "w");
	CHECK(f && fputs("x", f) >= 0 && fclose(f) == 0);
	CHECK(symlink("real", at("link")) == 0 && symlink("file", at("real/d/flink")) == 0);
	CHECK(mkfifo(at("real/fifo"), 0600) == 0);
	int rfd = open(root, O_RDONLY | O_DIRECTORY);
	int fd = fb_chk_open_below(rfd, "real/d/file");
	CHECK(fd >= 0);
	close(fd);
	errno = 0;
	CHECK(fb_chk_open_below(rfd, "link/d/file") < 0 && (errno == ELOOP || errno == ENOTDIR));
	CHECK(fb_chk_open_below(rfd, "real/d/flink") < 0 && errno == ELOOP);
	fd = fb_chk_open_below(rfd, "real/fifo"); /* O_NONBLOCK: opening it does not wait for a writer */
	struct stat st;
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode));
	close(fd);
	close(rfd);
}

static void
test_no_libarchive(void)
{
	CHECK(mkdir(at("wheels"), 0700) == 0);
	FILE *f = fopen(at("wheels/a-1.0-py3-none-any.whl"), "w");
	CHECK(f && fwrite("PK\x03\x04junk", 1, 8, f) == 8 && fclose(f) == 0);
	struct ap_target dev = *GPU(90);
	const char *paths[] = {at("wheels")};
	struct fb_check_opts o = {.devices = &dev, .ndevices = 1, .paths = paths, .npaths = 1, .jobs = 2,
	                          .libarchive = "/nonexistent/libarchive.so.13"};
	struct fb_check_report r;
	struct fb_error err = {0};
	CHECK(fb_check(&o, &r, &err) == 0);
	CHECK(r.nfiles == 1 && strstr(r.files[0].error, "a-1.0-py3-none-any.whl: cannot load /nonexistent/libarchive.so.13") &&
	      strstr(r.files[0].error, "libarchive13"));
	CHECK(r.ngroups == 1 && r.groups[0].archive && strcmp(r.groups[0].name, "a") == 0);
	fb_check_report_free(&r);
	/* a path that does not exist fails the call */
	paths[0] = at("missing");
	CHECK(fb_check(&o, &r, &err) == FB_EIO && strstr(err.msg, "missing"));
	CHECK(fb_check(&(struct fb_check_opts){0}, &r, &err) == FB_EINVAL);
}

int
main(void)
{
	snprintf(root, sizeof(root), "%s/fbcheck.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_misfit();
	test_why();
	test_distinfo();
	test_sniff();
	test_devcode();
	test_verdicts();
	test_open_below();
	test_no_libarchive();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return check_done();
}
