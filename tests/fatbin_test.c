/* fatbin_test.c: the container writer and reader, decompression, the selection model, and
 * every reader check on malformed input. Fixtures are synthesised here (a minimal CUDA ELF
 * with a .nv.compat section, PTX text); the toolkit oracles live in fatbin_*.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <zstd.h>

#include "check.h"
#include "fatbuild.h"
#include "fatbin/elfid.h"

static void
w16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void
w32(unsigned char *p, uint32_t v)
{
	w16(p, v & 0xffff);
	w16(p + 2, v >> 16);
}

static void
w64(unsigned char *p, uint64_t v)
{
	w32(p, (uint32_t)v);
	w32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t
r64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A minimal CUDA ELF: header, .shstrtab, .nv.compat (attr 9 = arch_a), section table. */
static size_t
make_cubin(unsigned char *b, int sm, int abi, int arch_a)
{
	memset(b, 0, 512);
	memcpy(b, "\x7f" "ELF", 4);
	b[4] = 2;
	b[5] = 1;
	b[6] = 1;
	b[7] = 0x41;
	b[8] = (unsigned char)abi;
	w16(b + 0x10, 2);
	w16(b + 0x12, 190);
	w32(b + 0x14, 1);
	w32(b + 0x30, abi >= 8 ? 0x06000000u | (uint32_t)sm << 8 | (sm >= 100 ? 2 : 4) : (uint32_t)sm << 16 | 0x500 | (uint32_t)sm);
	w16(b + 0x34, 64);
	static const char strs[] = "\0.shstrtab\0.nv.compat\0";
	memcpy(b + 64, strs, sizeof(strs));
	const unsigned char compat[12] = {2, 9, (unsigned char)arch_a, 0, 2, 2, 1, 0, 2, 5, 5, 0};
	memcpy(b + 96, compat, sizeof(compat));
	size_t shoff = 112;
	w64(b + 0x28, shoff);
	w16(b + 0x3a, 64);
	w16(b + 0x3c, 3);
	w16(b + 0x3e, 1);
	unsigned char *sh = b + shoff + 64;
	w32(sh, 1);
	w32(sh + 4, 3);
	w64(sh + 0x18, 64);
	w64(sh + 0x20, sizeof(strs));
	sh += 64;
	w32(sh, 11);
	w32(sh + 4, 0x70000086u);
	w64(sh + 0x18, 96);
	w64(sh + 0x20, sizeof(compat));
	return shoff + 3 * 64;
}

static const char ptx80[] = ".version 9.0\n.target sm_80\n.address_size 64\n\n.visible .entry k()\n{\nret;\n}\n";
static const char ptx90a[] = ".version 8.8\n.target sm_90a\n.address_size 64\n";

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

/* A container: sm_80 cubin, sm_100 cubin (compat), compute_80 PTX with ident+options. */
static unsigned char *
make_fatbin(enum fb_compress c, size_t *n)
{
	unsigned char cub[512], cub100[512];
	size_t c80 = make_cubin(cub, 80, 8, 0), c100 = make_cubin(cub100, 100, 8, 0);
	struct fb_fatbin *fb = fb_fatbin_new();
	struct fb_error err = {0};
	struct ap_target t80 = T("sm_80"), t100 = T("sm_100"), p80 = T("compute_80");
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t80, cub, c80, NULL, NULL, &err) == 0);
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t100, cub100, c100, NULL, NULL, &err) == 0);
	CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &p80, ptx80, strlen(ptx80), "myident", "-O3", &err) == 0);
	unsigned char *out = NULL;
	CHECK(fb_fatbin_write(fb, c, &out, n, &err) == 0);
	fb_fatbin_free(fb);
	return out;
}

static void
test_names(void)
{
	char buf[32];
	struct ap_target t;
	CHECK(fb_target_parse("sm_90a", &t) == 0 && t.sm == 90 && t.variant == AP_ARCH && t.kind == AP_SASS);
	CHECK(fb_target_parse("compute_100f", &t) == 0 && t.sm == 100 && t.variant == AP_FAMILY && t.kind == AP_PTX);
	CHECK_STR(ap_target_name(&t, buf, sizeof(buf)), "compute_100f");
	CHECK(fb_target_parse("sm_9", &t) != 0);
	CHECK(fb_target_parse("sm_90x", &t) != 0);
	CHECK(fb_target_parse("gfx90a", &t) != 0);
	int ma, mi;
	CHECK(fb_ptx_info(ptx90a, strlen(ptx90a), &ma, &mi, &t, NULL) == 0 && ma == 8 && mi == 8 && t.sm == 90 &&
	      t.variant == AP_ARCH && t.kind == AP_PTX);
	struct fb_error err = {0};
	CHECK(fb_ptx_info(".target sm_80\n", 14, &ma, &mi, NULL, &err) == FB_EFORMAT && strstr(err.msg, ".version"));
}

static void
test_layout(void)
{
	size_t n;
	unsigned char *b = make_fatbin(FB_COMPRESS_NONE, &n);
	CHECK(b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba);
	CHECK(r64(b + 8) == n - 16 && n % 8 == 0);
	/* first entry: ELF sm_80, header 0x40, version [1,8], flags 0x11 */
	unsigned char *e = b + 16;
	CHECK(e[0] == 2 && e[2] == 1 && e[3] == 1 && e[4] == 0x40);
	CHECK(e[0x18] == 8 && e[0x1a] == 1 && e[0x1c] == 80 && r64(e + 0x28) == 0x11);
	/* second: sm_100 with the compat blob 00 ‖ .nv.compat[:-1] (12 bytes) → header 0x40+8+16 */
	e += e[4] | e[5] << 8;
	e += 0; /* payload follows */
	struct fb_parsed p;
	struct fb_error err = {0};
	CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == 0);
	CHECK(p.ncontainers == 1 && p.nentries == 3);
	if (p.nentries == 3) {
		const struct fb_entry *x = &p.entries[1];
		CHECK(x->header_size == 0x58 && x->compat_len == 12 && x->flags == 0x1000011);
		CHECK(x->compat && x->compat[0] == 0 && x->compat[1] == 2 && x->compat[2] == 9);
		const struct fb_entry *y = &p.entries[2];
		CHECK(y->disk_kind == FB_DISK_KIND_PTX && y->major == 9 && y->minor == 0);
		CHECK(y->ident_len == 7 && memcmp(y->ident, "myident", 7) == 0);
		CHECK(y->options_len == 3 && memcmp(y->options, "-O3", 3) == 0);
		CHECK(y->header_size == 0x58); /* ident 8 + desc 8 + "-O3\0" 8 */
		CHECK(y->payload_size == ((strlen(ptx80) + 1 + 7) & ~(size_t)7));
		unsigned char *img;
		size_t in;
		CHECK(fb_entry_image(y, 0, &img, &in, &err) == 0 && in == y->payload_size);
		CHECK(memcmp(img, ptx80, strlen(ptx80)) == 0 && img[strlen(ptx80)] == 0);
		free(img);
		unsigned char cub[512];
		size_t cn = make_cubin(cub, 80, 8, 0);
		CHECK(fb_entry_image(&p.entries[0], 0, &img, &in, &err) == 0 && in == cn && memcmp(img, cub, cn) == 0);
		free(img);
	}
	fb_parsed_free(&p);
	free(b);
}

static void
test_compress(void)
{
	for (int c = FB_COMPRESS_ZSTD; c <= FB_COMPRESS_LZ4; c++) {
		size_t n;
		unsigned char *b = make_fatbin((enum fb_compress)c, &n);
		struct fb_parsed p;
		struct fb_error err = {0};
		CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == 0 && p.nentries == 3);
		for (size_t i = 0; i < p.nentries; i++) {
			const struct fb_entry *e = &p.entries[i];
			CHECK(e->compress == (enum fb_compress)c);
			CHECK(e->payload_size == ((e->compressed_size + 7u) & ~7u));
			unsigned char *img;
			size_t in;
			CHECK(fb_entry_image(e, 0, &img, &in, &err) == 0 && in == e->uncompressed_size);
			if (i == 2)
				CHECK(in == strlen(ptx80) + 1 && memcmp(img, ptx80, in) == 0);
			free(img);
			/* the cap is honoured */
			CHECK(fb_entry_image(e, 16, &img, &in, &err) == FB_ETOOBIG && strstr(err.msg, "cap"));
		}
		fb_parsed_free(&p);
		free(b);
	}
	/* FB_WRITE_COMPRESS_TEXT leaves cubins alone */
	unsigned char cub[512];
	size_t cn = make_cubin(cub, 80, 8, 0);
	struct fb_fatbin *fb = fb_fatbin_new();
	struct ap_target t80 = T("sm_80"), p80 = T("compute_80");
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t80, cub, cn, NULL, NULL, NULL) == 0);
	CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &p80, ptx80, sizeof(ptx80), NULL, NULL, NULL) == 0);
	fb_fatbin_set_options(fb, FB_WRITE_COMPRESS_TEXT);
	unsigned char *b;
	size_t n;
	CHECK(fb_fatbin_write(fb, FB_COMPRESS_ZSTD, &b, &n, NULL) == 0);
	struct fb_parsed p;
	CHECK(fb_fatbin_parse(b, n, 0, &p, NULL) == 0 && p.nentries == 2 && p.entries[0].compress == FB_COMPRESS_NONE &&
	      p.entries[1].compress == FB_COMPRESS_ZSTD && p.entries[1].flags == 0x8011);
	fb_parsed_free(&p);
	free(b);
	fb_fatbin_free(fb);
}

/* An LZ4 frame payload (04 22 4d 18) is decoded too. */
static void
test_lz4_frame(void)
{
	unsigned char src[300];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i % 7 + 'a');
	unsigned char fr[1024];
	size_t fn = LZ4F_compressFrame(fr, sizeof(fr), src, sizeof(src), NULL);
	CHECK(!LZ4F_isError(fn));
	struct fb_entry e = {0};
	e.disk_kind = FB_DISK_KIND_LTO;
	e.compress = FB_COMPRESS_LZ4;
	e.flags = 0x2011;
	e.payload = fr;
	e.compressed_size = (uint32_t)fn;
	e.stored_size = fn;
	e.uncompressed_size = sizeof(src);
	unsigned char *img;
	size_t n;
	struct fb_error err = {0};
	CHECK(fb_entry_image(&e, 0, &img, &n, &err) == 0 && n == sizeof(src) && memcmp(img, src, n) == 0);
	free(img);
	e.uncompressed_size = sizeof(src) + 8; /* the header lies */
	CHECK(fb_entry_image(&e, 0, &img, &n, &err) == FB_EFORMAT && strstr(err.msg, "LZ4 frame"));
}

static void
test_writer_errors(void)
{
	struct fb_fatbin *fb = fb_fatbin_new();
	struct fb_error err = {0};
	unsigned char cub[512];
	size_t cn = make_cubin(cub, 80, 8, 0);
	struct ap_target t86 = T("sm_86"), p80 = T("compute_80"), t80 = T("sm_80");
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t86, cub, cn, NULL, NULL, &err) == FB_EFORMAT && strstr(err.msg, "sm_80"));
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &p80, cub, cn, NULL, NULL, &err) == FB_EINVAL);
	CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &t80, ptx80, strlen(ptx80), NULL, NULL, &err) == FB_EINVAL);
	CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &p80, ".target sm_80\n", 14, NULL, NULL, &err) == FB_EFORMAT);
	CHECK(fb_fatbin_add(fb, FB_KIND_LTO, &p80, "nope", 4, NULL, NULL, &err) == FB_EFORMAT);
	cub[4] = 1; /* ELFCLASS32 */
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t80, cub, cn, NULL, NULL, &err) == FB_EFORMAT && strstr(err.msg, "64"));
	/* an ABI 7 cubin keeps the SM in the low byte */
	cn = make_cubin(cub, 75, 7, 0);
	struct ap_target t75 = T("sm_75");
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t75, cub, cn, NULL, NULL, &err) == 0);
	/* LTO always gets an options descriptor */
	unsigned char lto[16] = {0xed, 0x43, 0x4e, 0x7f, 0, 0x41, 0, 0};
	CHECK(fb_fatbin_add(fb, FB_KIND_LTO, &p80, lto, sizeof(lto), NULL, NULL, &err) == 0);
	unsigned char *b;
	size_t n;
	struct fb_parsed p;
	CHECK(fb_fatbin_write(fb, FB_COMPRESS_NONE, &b, &n, &err) == 0);
	CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == 0 && p.nentries == 2);
	if (p.nentries == 2) {
		CHECK(p.entries[0].target.sm == 75 && p.entries[0].minor == 7);
		CHECK(p.entries[1].disk_kind == FB_DISK_KIND_LTO && p.entries[1].options && p.entries[1].minor == 0x41);
	}
	fb_parsed_free(&p);
	free(b);
	fb_fatbin_free(fb);
	fb_fatbin_free(NULL);
}

/* Mutates a valid container and expects a specific error. */
struct bad {
	const char *what;
	size_t off;     /* byte offset to patch (relative to the buffer) */
	int width;      /* 2, 4 or 8; 0 = truncate to `off` bytes */
	uint64_t value;
	int code;
	const char *msg; /* substring of the message */
};

static void
test_malformed(void)
{
	size_t n;
	unsigned char *good = make_fatbin(FB_COMPRESS_NONE, &n);
	const size_t e0 = 16; /* first entry */
	const struct bad cases[] = {
		{"truncated container header", 10, 0, 0, FB_EFORMAT, "header truncated"},
		{"truncated entry", 40, 0, 0, FB_EFORMAT, "runs past the end"},
		{"bad magic", 0, 4, 0x12345678, FB_EFORMAT, "bad magic"},
		{"old magic", 0, 4, 0x1EE55A01, FB_EUNSUPPORTED, "old-style"},
		{"version", 4, 2, 2, FB_EFORMAT, "version 2"},
		{"container header size", 6, 2, 0x18, FB_EFORMAT, "header size 0x18"},
		{"fatSize odd", 8, 8, 13, FB_EFORMAT, "multiple of 8"},
		{"fatSize past end", 8, 8, 0x100000, FB_EFORMAT, "runs past the end of the data"},
		{"fatSize overflow", 8, 8, UINT64_MAX - 7, FB_EFORMAT, "runs past the end"},
		{"entry header size not multiple of 8", e0 + 4, 4, 0x44, FB_EFORMAT, "not a multiple of 8"},
		{"entry header size below 0x40", e0 + 4, 4, 0x38, FB_EFORMAT, "below 0x40"},
		{"entry header size huge", e0 + 4, 4, 0xfffffff8u, FB_EFORMAT, "runs past the container end"},
		{"payload size past end", e0 + 8, 8, 0x100000, FB_EFORMAT, "payload size"},
		{"payload size overflow", e0 + 8, 8, UINT64_MAX - 7, FB_EFORMAT, "payload size"},
		{"payload size odd", e0 + 8, 8, 9, FB_EFORMAT, "not a multiple of 8"},
		{"compressed size lies", e0 + 0x10, 4, 0x7ffffff0u, FB_EFORMAT, "compressed size"},
		{"identifier outside header", e0 + 0x20, 4, 0x3000, FB_EFORMAT, "identifier"},
		{"options outside header", e0 + 0x14, 4, 0x3000, FB_EFORMAT, "options descriptor"},
		{"both compressions", e0 + 0x28, 8, 0xa011, FB_EFORMAT, "both LZ4 and zstd"},
		{"arch not an SM", e0 + 0x1c, 4, 0x10000000u, FB_EFORMAT, "arch"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *c = &cases[i];
		unsigned char *b = malloc(n);
		memcpy(b, good, n);
		size_t len = n;
		if (c->width == 0)
			len = c->off;
		else if (c->width == 2)
			w16(b + c->off, (unsigned)c->value);
		else if (c->width == 4)
			w32(b + c->off, (uint32_t)c->value);
		else
			w64(b + c->off, c->value);
		struct fb_parsed p;
		struct fb_error err = {0};
		int rc = fb_fatbin_parse(b, len, 0, &p, &err);
		if (rc != c->code || !strstr(err.msg, c->msg))
			fprintf(stderr, "case '%s': rc %d msg '%s'\n", c->what, rc, err.msg);
		CHECK(rc == c->code && strstr(err.msg, c->msg));
		CHECK(p.entries == NULL && p.nentries == 0);
		free(b);
	}
	/* unknown kinds and flags are kept for reporting but never decoded */
	unsigned char *b = malloc(n);
	memcpy(b, good, n);
	w16(b + e0, 7);
	w64(b + e0 + 0x28, 0x40000011);
	struct fb_parsed p;
	struct fb_error err = {0};
	CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == 0 && p.entries[0].disk_kind == 7);
	unsigned char *img;
	size_t in;
	CHECK(fb_entry_image(&p.entries[0], 0, &img, &in, &err) == FB_EUNSUPPORTED && strstr(err.msg, "kind7"));
	fb_parsed_free(&p);
	/* obfuscated payloads are reported, not decoded */
	memcpy(b, good, n);
	w64(b + e0 + 0x28, 0x10011);
	w64(b + e0 + 0x30, 0x12345);
	CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == 0 && p.entries[0].obfuscated);
	CHECK(fb_entry_image(&p.entries[0], 0, &img, &in, &err) == FB_EUNSUPPORTED && strstr(err.msg, "obfuscated"));
	fb_parsed_free(&p);
	/* an options descriptor {0, 0} says "no options" (cuFFT's PTX entries in .ldata) */
	memcpy(b, good, n);
	CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == 0 && p.nentries == 3 && p.entries[2].options);
	size_t pe = p.entries[2].offset;
	fb_parsed_free(&p);
	uint32_t od = (uint32_t)b[pe + 0x14] | (uint32_t)b[pe + 0x15] << 8;
	w32(b + pe + od, 0);
	w32(b + pe + od + 4, 0);
	CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == 0 && p.nentries == 3 && !p.entries[2].options);
	fb_parsed_free(&p);
	w32(b + pe + od + 4, 3); /* a length with offset 0 is still refused */
	CHECK(fb_fatbin_parse(b, n, 0, &p, &err) == FB_EFORMAT && strstr(err.msg, "options string"));
	/* empty input */
	CHECK(fb_fatbin_parse(b, 0, 0, &p, &err) == FB_EFORMAT && strstr(err.msg, "no fatbin container"));
	free(b);

	/* two containers with zero padding between them; FB_PARSE_FIRST reads one */
	b = calloc(1, 2 * n + 24);
	memcpy(b, good, n);
	memcpy(b + n + 24, good, n);
	CHECK(fb_fatbin_parse(b, 2 * n + 24, 0, &p, &err) == 0 && p.ncontainers == 2 && p.nentries == 6 &&
	      p.containers[1].offset == n + 24 && p.entries[3].container == 1 && p.entries[3].index == 0);
	fb_parsed_free(&p);
	CHECK(fb_fatbin_parse(b, 2 * n + 24, FB_PARSE_FIRST, &p, &err) == 0 && p.ncontainers == 1);
	fb_parsed_free(&p);
	/* trailing garbage after the first container */
	b[n + 24] = 0x99;
	CHECK(fb_fatbin_parse(b, 2 * n + 24, 0, &p, &err) == FB_EFORMAT && strstr(err.msg, "container 1"));
	free(b);
	free(good);

	/* compressed payloads that lie */
	good = make_fatbin(FB_COMPRESS_ZSTD, &n);
	CHECK(fb_fatbin_parse(good, n, 0, &p, &err) == 0);
	struct fb_entry e = p.entries[2];
	e.uncompressed_size -= 8; /* frame content size disagrees */
	CHECK(fb_entry_image(&e, 0, &img, &in, &err) == FB_EFORMAT && strstr(err.msg, "zstd frame holds"));
	e = p.entries[2];
	e.compressed_size -= 3; /* truncated frame */
	CHECK(fb_entry_image(&e, 0, &img, &in, &err) == FB_EFORMAT && strstr(err.msg, "zstd"));
	e = p.entries[2];
	e.uncompressed_size = UINT64_C(1) << 40; /* bomb: refused before allocating */
	CHECK(fb_entry_image(&e, 0, &img, &in, &err) == FB_ETOOBIG);
	fb_parsed_free(&p);
	free(good);
	good = make_fatbin(FB_COMPRESS_LZ4, &n);
	CHECK(fb_fatbin_parse(good, n, 0, &p, &err) == 0);
	e = p.entries[2];
	e.uncompressed_size += 8;
	CHECK(fb_entry_image(&e, 0, &img, &in, &err) == FB_EFORMAT && strstr(err.msg, "LZ4 block"));
	fb_parsed_free(&p);
	free(good);
}

/* A zstd bomb: a small frame that expands far past the cap. */
static void
test_bomb(void)
{
	size_t big = 64u << 20;
	unsigned char *z = calloc(1, big);
	size_t bound = ZSTD_compressBound(big);
	unsigned char *c = malloc(bound);
	size_t cn = ZSTD_compress(c, bound, z, big, 3);
	CHECK(!ZSTD_isError(cn) && cn < 8192);
	struct fb_entry e = {0};
	e.disk_kind = FB_DISK_KIND_PTX;
	e.compress = FB_COMPRESS_ZSTD;
	e.flags = 0x8011;
	e.payload = c;
	e.compressed_size = (uint32_t)cn;
	e.stored_size = cn;
	e.uncompressed_size = big;
	unsigned char *img;
	size_t n;
	struct fb_error err = {0};
	CHECK(fb_entry_image(&e, 1 << 20, &img, &n, &err) == FB_ETOOBIG && strstr(err.msg, "--max-size"));
	CHECK(fb_entry_image(&e, 0, &img, &n, &err) == 0 && n == big);
	free(img);
	free(c);
	free(z);
}

static void
test_elf_checks(void)
{
	unsigned char b[512];
	size_t n = make_cubin(b, 90, 8, 1);
	struct fb_scan sc;
	struct fb_parsed p;
	struct fb_error err = {0};
	CHECK(fb_scan_buffer(b, n, "k.cubin", &sc, &err) == 0 && strcmp(sc.type, "cubin") == 0);
	CHECK(fb_scan_entries(b, &sc, &p, &err) == 0 && p.nentries == 1 && p.entries[0].target.sm == 90 &&
	      p.entries[0].target.variant == AP_ARCH && p.containers[0].bare);
	fb_parsed_free(&p);
	/* broken section table */
	w64(b + 0x28, 0x10000);
	CHECK(fb_scan_entries(b, &sc, &p, &err) == FB_EFORMAT && strstr(err.msg, "section table"));
	fb_scan_free(&sc);
	n = make_cubin(b, 90, 8, 0);
	w16(b + 0x3a, 40);
	CHECK(fb_scan_buffer(b, n, "k.cubin", &sc, &err) == 0);
	CHECK(fb_scan_entries(b, &sc, &p, &err) == FB_EFORMAT && strstr(err.msg, "section header size"));
	fb_scan_free(&sc);
	n = make_cubin(b, 90, 8, 0);
	w64(b + 112 + 128 + 0x20, 0xffffffff); /* .nv.compat size past the end */
	CHECK(fb_scan_buffer(b, n, "k.cubin", &sc, &err) == 0);
	CHECK(fb_scan_entries(b, &sc, &p, &err) == FB_EFORMAT && strstr(err.msg, ".nv.compat"));
	fb_scan_free(&sc);

	/* a host ELF whose section table is broken, and a non-ELF .so */
	n = make_cubin(b, 90, 8, 0);
	w16(b + 0x12, 62); /* EM_X86_64: a host object */
	w16(b + 0x3e, 9);  /* shstrndx out of range */
	CHECK(fb_scan_buffer(b, n, "x.o", &sc, &err) == FB_EFORMAT && strstr(err.msg, "name table index"));
	w16(b + 0x3e, 1);
	w32(b + 112 + 64, 0x4000); /* section name past the table */
	CHECK(fb_scan_buffer(b, n, "x.o", &sc, &err) == FB_EFORMAT && strstr(err.msg, "name offset"));
	CHECK(fb_scan_buffer("hello world, not a library", 26, "libx.so", &sc, &err) == FB_EFORMAT &&
	      strstr(err.msg, "libx.so: not a fatbin"));
	CHECK(fb_scan_buffer("!<thin>\nxxxxxxxx", 16, "t.a", &sc, &err) == FB_EUNSUPPORTED);
}

/* What a cache entry claims to be (fb_image_check, fb_elf_host_object): each wrong kind is
 * named, as the caches report it (docs/remote-cache.md §5). */
static void
test_image_check(void)
{
	unsigned char b[512];
	struct fb_error err = {0};
	struct ap_target s80 = T("sm_80"), s90 = T("sm_90"), s90a = T("sm_90a"), s100f = T("sm_100f");
	struct ap_target p80 = T("compute_80"), p90a = T("compute_90a"), p90 = T("compute_90");
	size_t n = make_cubin(b, 80, 8, 0);
	CHECK(fb_image_check(FB_KIND_ELF, &s80, b, n, &err) == 0);
	CHECK(fb_image_check(FB_KIND_ELF, &s90, b, n, &err) == FB_EFORMAT &&
	      strstr(err.msg, "cubin is for sm_80, not the requested sm_90"));
	n = make_cubin(b, 90, 7, 1); /* ABI 7: the SM in the low byte */
	CHECK(fb_image_check(FB_KIND_ELF, &s90a, b, n, &err) == 0);
	CHECK(fb_image_check(FB_KIND_ELF, &s90, b, n, &err) == FB_EFORMAT && strstr(err.msg, "sm_90a, not the requested sm_90"));
	n = make_cubin(b, 90, 8, 0);
	CHECK(fb_image_check(FB_KIND_ELF, &s90a, b, n, &err) == FB_EFORMAT && strstr(err.msg, "sm_90, not the requested sm_90a"));
	n = make_cubin(b, 100, 8, 0); /* 'f' is not recorded in a cubin: a plain one serves it */
	CHECK(fb_image_check(FB_KIND_ELF, &s100f, b, n, &err) == 0);
	w16(b + 0x12, 62);
	CHECK(fb_image_check(FB_KIND_ELF, &s80, b, n, &err) == FB_EFORMAT && strstr(err.msg, "e_machine 62"));
	CHECK(fb_image_check(FB_KIND_ELF, &s80, ptx80, sizeof(ptx80), &err) == FB_EFORMAT && strstr(err.msg, "not an ELF"));
	/* PTX: its .target, text without NUL (trailing ones allowed) */
	CHECK(fb_image_check(FB_KIND_PTX, &p80, ptx80, sizeof(ptx80), &err) == 0);
	CHECK(fb_image_check(FB_KIND_PTX, &p90a, ptx90a, strlen(ptx90a), &err) == 0);
	CHECK(fb_image_check(FB_KIND_PTX, &p90, ptx90a, strlen(ptx90a), &err) == FB_EFORMAT &&
	      strstr(err.msg, "PTX .target is sm_90a, not the requested compute_90"));
	CHECK(fb_image_check(FB_KIND_PTX, &p80, ptx90a, strlen(ptx90a), &err) == FB_EFORMAT);
	char nul[sizeof(ptx80)];
	memcpy(nul, ptx80, sizeof(ptx80));
	nul[20] = 0;
	CHECK(fb_image_check(FB_KIND_PTX, &p80, nul, sizeof(nul), &err) == FB_EFORMAT && strstr(err.msg, "NUL"));
	CHECK(fb_image_check(FB_KIND_PTX, &p80, "", 0, &err) == FB_EFORMAT && strstr(err.msg, "empty"));
	CHECK(fb_image_check(FB_KIND_PTX, &p80, b, n, &err) == FB_EFORMAT);
	/* LTO-IR: the NVVM magic */
	CHECK(fb_image_check(FB_KIND_LTO, &s80, "\xed\x43\x4e\x7f\x01\x02\x03\x04", 8, &err) == 0);
	CHECK(fb_image_check(FB_KIND_LTO, &s80, b, n, &err) == FB_EFORMAT && strstr(err.msg, "NVVM"));
	/* a host object: ET_REL of this machine */
	n = make_cubin(b, 80, 8, 0);
	CHECK(fb_elf_host_object(b, n, &err) == FB_EFORMAT && strstr(err.msg, "e_type 2 is not ET_REL"));
	w16(b + 0x10, 1);
	CHECK(fb_elf_host_object(b, n, &err) == FB_EFORMAT && strstr(err.msg, "e_machine 190"));
#if defined(__x86_64__)
	w16(b + 0x12, 62);
	CHECK(fb_elf_host_object(b, n, &err) == 0);
	b[4] = 1; /* ELFCLASS32 */
	CHECK(fb_elf_host_object(b, n, &err) == FB_EFORMAT && strstr(err.msg, "class 1"));
#endif
	CHECK(fb_elf_host_object(ptx80, sizeof(ptx80), &err) == FB_EFORMAT && strstr(err.msg, "not an ELF"));
}

/* ar archives: one member holding a fatbin, then members with odd sizes. */
static void
test_archive(void)
{
	size_t fn;
	unsigned char *fat = make_fatbin(FB_COMPRESS_NONE, &fn);
	size_t cap = 8 + 3 * 60 + fn + 64;
	unsigned char *a = calloc(1, cap);
	memcpy(a, "!<arch>\n", 8);
	size_t off = 8;
	char hdr[61];
	snprintf(hdr, sizeof(hdr), "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", "k.fatbin/", "0", "0", "0", "644", fn);
	memcpy(a + off, hdr, 60);
	memcpy(a + off + 60, fat, fn);
	off += 60 + fn;
	snprintf(hdr, sizeof(hdr), "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "odd.txt/", "0", "0", "0", "644", 3);
	memcpy(a + off, hdr, 60);
	memcpy(a + off + 60, "abc", 3);
	off += 60 + 4; /* padded to even */
	struct fb_scan sc;
	struct fb_parsed p;
	struct fb_error err = {0};
	CHECK(fb_scan_buffer(a, off, "lib.a", &sc, &err) == 0 && sc.nblobs == 1 &&
	      strcmp(sc.blobs[0].where, "lib.a(k.fatbin)") == 0);
	CHECK(fb_scan_entries(a, &sc, &p, &err) == 0 && p.nentries == 3 && p.containers[0].offset == 68);
	fb_parsed_free(&p);
	fb_scan_free(&sc);
	/* a member whose size runs past the end */
	snprintf(hdr, sizeof(hdr), "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "big.o/", "0", "0", "0", "644", 999999);
	memcpy(a + off, hdr, 60);
	CHECK(fb_scan_buffer(a, off + 60, "lib.a", &sc, &err) == FB_EFORMAT && strstr(err.msg, "runs past the end"));
	snprintf(hdr, sizeof(hdr), "%-16s%-12s%-6s%-6s%-8s%-10s`\n", "neg.o/", "0", "0", "0", "644", "-5");
	memcpy(a + off, hdr, 60);
	CHECK(fb_scan_buffer(a, off + 60, "lib.a", &sc, &err) == FB_EFORMAT && strstr(err.msg, "bad size field"));
	CHECK(fb_scan_buffer(a, off + 30, "lib.a", &sc, &err) == FB_EFORMAT && strstr(err.msg, "truncated"));
	a[off + 58] = 'x';
	CHECK(fb_scan_buffer(a, off + 60, "lib.a", &sc, &err) == FB_EFORMAT && strstr(err.msg, "corrupt"));
	free(a);
	free(fat);
}

struct selcase {
	const char *images; /* space-separated: sm_80 compute_86 sm_100+ (+ = compat blob) */
	const char *device; /* "8.9" real device (AP_ARCH) or "sm_90" (nvJitLink plain) */
	const char *want;   /* chosen image name or "-" */
};

static void
test_select(void)
{
	static const struct selcase cases[] = {
		/* docs/fatbin.md §7, observed with nvJitLink 13.0 */
		{"sm_80 compute_80 compute_86", "sm_80", "sm_80"},
		{"sm_80 compute_80 compute_86", "sm_86", "compute_86"},
		{"sm_80 compute_80 compute_86", "sm_89", "compute_86"},
		{"sm_80 compute_80 compute_86", "sm_90", "compute_86"},
		{"sm_80 sm_86 compute_80", "sm_89", "sm_86"},
		{"sm_80 compute_80", "sm_86", "sm_80"},
		{"sm_80 compute_80", "sm_89", "sm_80"},
		{"sm_80 sm_86", "sm_87", "-"},
		{"sm_80 sm_86", "sm_88", "-"},
		{"sm_87", "sm_88", "-"},
		{"sm_88", "sm_89", "-"},
		{"sm_87 compute_80", "sm_87", "sm_87"},
		{"sm_90a", "sm_90", "-"},
		{"sm_90a", "sm_90a", "sm_90a"},
		{"sm_90a", "9.0", "sm_90a"},
		{"compute_90a", "sm_90", "-"},
		{"compute_90a", "sm_90a", "compute_90a"},
		{"sm_100a+", "sm_100", "sm_100a"},
		{"sm_100a+", "sm_103", "-"},
		{"sm_100f+", "sm_100", "sm_100f"},
		{"sm_100f+", "sm_103", "sm_100f"},
		{"sm_100f+", "sm_110", "-"},
		{"sm_100f+", "sm_120", "-"},
		{"compute_100f", "sm_103", "compute_100f"},
		{"compute_100f", "sm_120", "-"},
		{"sm_100+", "sm_103", "sm_100"},
		{"sm_100", "sm_103", "-"},
		{"sm_120+", "sm_121", "sm_120"},
		{"sm_100+", "sm_110", "-"},
		{"sm_100+", "sm_120", "-"},
		{"sm_110+", "sm_120", "-"},
		{"sm_75", "sm_80", "-"},
		{"compute_100", "sm_110", "compute_100"},
		{"compute_100", "sm_120", "compute_100"},
		{"compute_90 sm_90", "sm_90", "sm_90"},
		{"sm_90 compute_90", "sm_90", "sm_90"},
		{"compute_100", "9.0", "-"},
		{"", "8.0", "-"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct selcase *c = &cases[i];
		struct fb_image im[8];
		size_t n = 0;
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", c->images);
		for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			size_t l = strlen(t);
			im[n].compat = l && t[l - 1] == '+';
			if (im[n].compat)
				t[l - 1] = 0;
			im[n].target = T(t);
			n++;
		}
		struct ap_target dev;
		if (strncmp(c->device, "sm_", 3) == 0) {
			dev = T(c->device);
		} else {
			dev = (struct ap_target){0};
			dev.sm = (c->device[0] - '0') * 10 + (c->device[2] - '0');
			dev.variant = AP_ARCH;
		}
		enum fb_how how;
		long r = fb_select(im, n, &dev, &how);
		char got[32] = "-";
		if (r >= 0)
			ap_target_name(&im[r].target, got, sizeof(got));
		if (strcmp(got, c->want) != 0)
			fprintf(stderr, "select {%s} on %s: got %s, want %s\n", c->images, c->device, got, c->want);
		CHECK_STR(got, c->want);
		CHECK((r < 0) == (how == FB_HOW_NONE));
		if (r >= 0)
			CHECK((how == FB_HOW_SASS) == (im[r].target.kind == AP_SASS));
	}
}

int
main(void)
{
	test_names();
	test_layout();
	test_compress();
	test_lz4_frame();
	test_writer_errors();
	test_malformed();
	test_bomb();
	test_elf_checks();
	test_image_check();
	test_archive();
	test_select();
	return check_done();
}
