/* hardening_test.c: bad input through the library APIs, where the CLI cannot carry it
 * (an arch list of 100 000 items is past the 128 KiB limit of one argv string or env var; C
 * strings end at a NUL) or where a cap must be checked without writing a 1 GiB file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archprobe.h"
#include "check.h"
#include "fatbuild.h"
#include "base/error.h"
#include "extension/ninja.h"

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static struct ap_toolkit tk;

/* rc of resolving text (no probe); the message must be one printable line. */
static int
resolve(const char *text, size_t *count, struct ap_error *err)
{
	struct ap_resolve_opts o = {.toolkit = &tk, .no_probe = true};
	struct ap_archlist *l = NULL;
	memset(err, 0, sizeof(*err));
	int rc = ap_archlist_resolve(text, &o, &l, err);
	if (count)
		*count = l ? ap_archlist_count(l) : 0;
	if (rc) {
		CHECK(l == NULL);
		CHECK(err->msg[0] && printable(err->msg));
	}
	ap_archlist_free(l);
	return rc;
}

static char *
repeat(const char *item, size_t n)
{
	size_t len = strlen(item);
	char *s = malloc(len * n + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(s + i * len, item, len);
	s[len * n] = 0;
	return s;
}

static void
test_archlist(void)
{
	struct ap_error err;
	size_t n;
	CHECK(ap_toolkit_builtin(13000, &tk, NULL) == 0);

	/* 100 000 items: linear time, and duplicates collapse */
	char *big = repeat("8.0 ", 100000);
	double t0 = now();
	CHECK(resolve(big, &n, &err) == 0 && n == 1);
	free(big);
	big = repeat("8.0;9.0+PTX,sm_120 ", 100000);
	CHECK(resolve(big, &n, &err) == 0 && n == 4);
	free(big);
	big = repeat("86x ", 100000);
	CHECK(resolve(big, NULL, &err) == AP_EPARSE);
	CHECK(strstr(err.msg, "item 1 '86x'") != NULL);
	free(big);
	big = repeat(";", 100000);
	big[0] = '8', big[1] = '0';
	CHECK(resolve(big, &n, &err) == 0 && n == 2); /* "80" then only separators: CMake 80 = SASS+PTX */
	free(big);
	double dt = now() - t0;
	CHECK(dt < 5.0);
	if (dt >= 5.0)
		fprintf(stderr, "100 000-item lists took %.1f s\n", dt);

	/* a single item of 100 000 characters: refused with a bounded message */
	big = repeat("9", 100000);
	CHECK(resolve(big, NULL, &err) == AP_EPARSE);
	CHECK(strlen(err.msg) < sizeof(err.msg));
	free(big);

	/* the API takes C strings: a NUL ends the list (what follows is never read) */
	static const char withnul[] = "8.0\0garbage that is not an arch";
	CHECK(resolve(withnul, &n, &err) == 0 && n == 1);

	/* huge numbers: refused, no overflow (UBSan in the asan pass) */
	const char *huge[] = {"99999999999999999999.0", "8.99999999999999999999", "sm_4294967376", "compute_2147483648",
	                      "2147483647", "-8.0", "+PTX", "9.0a+PTX+PTX", "1e3", "0x50"};
	for (size_t i = 0; i < sizeof(huge) / sizeof(*huge); i++) {
		CHECK(resolve(huge[i], NULL, &err) != 0);
	}

	/* leading zeros: "sm_04" would print as "sm_4", which does not parse back */
	struct ap_target t;
	CHECK(ap_target_parse("sm_04", &t) != 0);
	CHECK(ap_target_parse("compute_080", &t) != 0);
	CHECK(ap_target_parse("sm_80", &t) == 0 && t.sm == 80);

	/* non-ASCII and control bytes: refused; the message shows them as '?' (no terminal escapes) */
	CHECK(resolve("8.0 \xc3\x84mpere", NULL, &err) == AP_EPARSE);
	CHECK(strstr(err.msg, "item 2") != NULL);
	CHECK(resolve("\x1b[31m8.0", NULL, &err) == AP_EPARSE);
	CHECK(strstr(err.msg, "'?[31m8.0'") != NULL);
	CHECK(resolve("8.0\x01", NULL, &err) == AP_EPARSE);
	CHECK(resolve("\xff\xfe", NULL, &err) == AP_EPARSE);

	/* fatbuild's error setter likewise: every control byte and DEL becomes '?' */
	struct fb_error fe = {0};
	CHECK(fb_seterr(&fe, FB_EFORMAT, "member '%s'", "a\nb\rc\x1b[31m\x7f" "d\x01") == FB_EFORMAT);
	CHECK_STR(fe.msg, "member 'a?b?c?[31m?d?'");
}

static const char ptx_head[] = ".version 8.0\n.target sm_80\n.address_size 64\n";

/* A container with one PTX entry of `size` bytes, compressed with c. */
static unsigned char *
container(size_t size, enum fb_compress c, size_t *outsize)
{
	char *ptx = malloc(size);
	memset(ptx, '/', size);
	memcpy(ptx, ptx_head, sizeof(ptx_head) - 1);
	struct ap_target t = {.sm = 80, .kind = AP_PTX};
	struct fb_fatbin *fb = fb_fatbin_new();
	struct fb_error err = {0};
	unsigned char *out = NULL;
	CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &t, ptx, size, NULL, NULL, &err) == 0);
	CHECK(fb_fatbin_write(fb, c, &out, outsize, &err) == 0);
	fb_fatbin_free(fb);
	free(ptx);
	return out;
}

static void
put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
test_bombs(void)
{
	static const enum fb_compress modes[] = {FB_COMPRESS_ZSTD, FB_COMPRESS_LZ4};
	for (size_t m = 0; m < 2; m++) {
		size_t size;
		/* 4 MiB of '/' compresses to a few KiB: a small bomb */
		unsigned char *buf = container(4u << 20, modes[m], &size);
		CHECK(buf && size < (64u << 10));
		struct fb_parsed p;
		struct fb_error err = {0};
		CHECK(fb_fatbin_parse(buf, size, 0, &p, &err) == 0 && p.nentries == 1);
		if (p.nentries != 1) {
			free(buf);
			continue;
		}
		unsigned char *img = NULL;
		size_t n = 0;
		/* the cap is checked before anything is allocated */
		CHECK(fb_entry_image(&p.entries[0], 1u << 20, &img, &n, &err) == FB_ETOOBIG && !img);
		CHECK(strstr(err.msg, "above the cap") != NULL && printable(err.msg));
		/* a cap that fits works, and yields the exact size */
		int rc = fb_entry_image(&p.entries[0], 8u << 20, &img, &n, &err);
		CHECK(rc == 0 && n >= (4u << 20) && n <= (4u << 20) + 8); /* PTX keeps its NUL */
		if (rc)
			fprintf(stderr, "compress %d: %s\n", (int)modes[m], err.msg);
		free(img);
		img = NULL;
		/* the header claims 1 TiB: refused by the default cap without allocating */
		struct fb_entry e = p.entries[0];
		e.uncompressed_size = UINT64_C(1) << 40;
		CHECK(fb_entry_image(&e, 0, &img, &n, &err) == FB_ETOOBIG && !img);
		/* the header claims less than the stream holds: refused, not truncated */
		e.uncompressed_size = 1000;
		CHECK(fb_entry_image(&e, 0, &img, &n, &err) == FB_EFORMAT && !img);
		CHECK(printable(err.msg));
		/* and more than it holds (within the cap) */
		e.uncompressed_size = (4u << 20) + 4096;
		CHECK(fb_entry_image(&e, 0, &img, &n, &err) == FB_EFORMAT && !img);
		/* the same lie written into the file: the reader sees it too */
		put64(buf + p.entries[0].offset + 0x38, UINT64_C(1) << 40);
		fb_parsed_free(&p);
		CHECK(fb_fatbin_parse(buf, size, 0, &p, &err) == 0 && p.nentries == 1);
		if (p.nentries == 1)
			CHECK(fb_entry_image(&p.entries[0], 0, &img, &n, &err) == FB_ETOOBIG && !img);
		fb_parsed_free(&p);
		free(buf);
	}
}

static void
test_ninja(void)
{
	char *o = NULL;
	struct fb_error err = {0};
	CHECK(fb_ninja_escape_path("a|b", &o, &err) == FB_EINVAL && !o);
	CHECK(strstr(err.msg, "'|'") != NULL);
	CHECK(fb_ninja_escape_path("/x y/$z:w'\"q", &o, &err) == 0);
	CHECK_STR(o, "/x$ y/$$z$:w'\"q");
	free(o);
	CHECK(fb_ninja_escape_value(" lead", &o, &err) == 0);
	CHECK_STR(o, "$ lead");
	free(o);
	CHECK(fb_ninja_escape_value("a\rb", &o, &err) == FB_EINVAL && !o);
	CHECK(fb_shell_quote("", &o, &err) == 0);
	CHECK_STR(o, "''");
	free(o);
	CHECK(fb_shell_quote("it's $HOME `x`", &o, &err) == 0);
	CHECK_STR(o, "'it'\\''s $HOME `x`'");
	free(o);
}

int
main(void)
{
	test_archlist();
	test_bombs();
	test_ninja();
	return check_done();
}
