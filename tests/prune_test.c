/* prune_test.c: fb_prune_buffer / fb_prune / fb_size on synthesised inputs: which entries each
 * kind of target keeps, byte identity of what is kept, gaps between containers, the missing-image
 * guard, an ar archive whose symbol table must follow its members, and error cases. The
 * toolkit-built files (nvcc, cuobjdump, nvlink, libcurand) are in tests/prune.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fatbuild.h"
#include "base/safefs.h"

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

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A minimal CUDA ELF (header only, no sections), enough for the writer. */
static size_t
make_cubin(unsigned char *b, int sm)
{
	memset(b, 0, 256);
	memcpy(b, "\x7f" "ELF", 4);
	b[4] = 2;
	b[5] = 1;
	b[6] = 1;
	b[7] = 0x41;
	b[8] = 8;
	w16(b + 0x10, 2);
	w16(b + 0x12, 190);
	w32(b + 0x14, 1);
	w32(b + 0x30, 0x06000000u | (uint32_t)sm << 8 | 4);
	w16(b + 0x34, 64);
	b[100] = (unsigned char)sm; /* make the images differ */
	return 256;
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

/* sm_80, sm_86 SASS, compute_80 and compute_90 PTX, in that order. */
static unsigned char *
make_fatbin(size_t *n)
{
	static const char p80[] = ".version 9.0\n.target sm_80\n.address_size 64\n";
	static const char p90[] = ".version 9.0\n.target sm_90\n.address_size 64\n";
	unsigned char c80[256], c86[256];
	size_t n80 = make_cubin(c80, 80), n86 = make_cubin(c86, 86);
	struct fb_fatbin *fb = fb_fatbin_new();
	struct ap_target t80 = T("sm_80"), t86 = T("sm_86"), q80 = T("compute_80"), q90 = T("compute_90");
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t80, c80, n80, NULL, NULL, NULL) == 0);
	CHECK(fb_fatbin_add(fb, FB_KIND_ELF, &t86, c86, n86, NULL, NULL, NULL) == 0);
	CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &q80, p80, strlen(p80), NULL, NULL, NULL) == 0);
	CHECK(fb_fatbin_add(fb, FB_KIND_PTX, &q90, p90, strlen(p90), NULL, NULL, NULL) == 0);
	unsigned char *out = NULL;
	CHECK(fb_fatbin_write(fb, FB_COMPRESS_NONE, &out, n, NULL) == 0);
	fb_fatbin_free(fb);
	return out;
}

/* Prunes buf to the named targets; returns the kept arch names "sm_86 compute_80" (static). */
static const char *
kept(const unsigned char *buf, size_t n, const char *const *names, size_t nn, bool allow, int *rc,
     struct fb_prune_report *rep, unsigned char **outp, size_t *osz)
{
	static char res[1200];
	struct ap_target ts[8];
	for (size_t i = 0; i < nn; i++)
		ts[i] = T(names[i]);
	struct fb_prune_opts o = {ts, nn, allow, false, false, 0};
	struct fb_error err = {0};
	unsigned char *out = NULL;
	size_t sz = 0;
	*rc = fb_prune_buffer(buf, n, "t.fatbin", &o, &out, &sz, rep, &err);
	res[0] = 0;
	if (*rc) {
		snprintf(res, sizeof(res), "error %d: %s", *rc, err.msg);
		return res;
	}
	struct fb_parsed p;
	if (fb_fatbin_parse(out, sz, 0, &p, &err) == 0) {
		for (size_t i = 0; i < p.nentries; i++) {
			char tn[32];
			size_t l = strlen(res);
			snprintf(res + l, sizeof(res) - l, "%s%s", l ? " " : "", ap_target_name(&p.entries[i].target, tn, sizeof(tn)));
		}
		fb_parsed_free(&p);
	} else {
		snprintf(res, sizeof(res), "unparseable: %s", err.msg);
	}
	if (outp) {
		*outp = out;
		*osz = sz;
	} else {
		free(out);
	}
	return res;
}

static void
test_selection(void)
{
	size_t n;
	unsigned char *fb = make_fatbin(&n);
	struct fb_prune_report r;
	int rc;
	const char *a89[] = {"sm_89"}, *a90[] = {"sm_90"}, *a80[] = {"sm_80"}, *p86[] = {"compute_86"},
	           *two[] = {"sm_80", "sm_86"}, *a75[] = {"sm_75"}, *a90p[] = {"sm_89", "compute_90"};
	CHECK_STR(kept(fb, n, a89, 1, false, &rc, &r, NULL, NULL), "sm_86"); /* same major, lower minor */
	fb_prune_report_free(&r);
	CHECK_STR(kept(fb, n, a90, 1, false, &rc, &r, NULL, NULL), "compute_90"); /* no SASS: the PTX it JITs */
	CHECK(r.kept_entries == 1 && r.removed_entries == 3 && r.ncontainers == 1 && r.nentries == 4);
	CHECK_STR(r.type, "fatbin");
	CHECK(!r.in_place && r.out_size < r.in_size);
	fb_prune_report_free(&r);
	CHECK_STR(kept(fb, n, a80, 1, false, &rc, &r, NULL, NULL), "sm_80"); /* tie: SASS wins */
	fb_prune_report_free(&r);
	CHECK_STR(kept(fb, n, p86, 1, false, &rc, &r, NULL, NULL), "compute_80"); /* highest PTX <= 86 */
	fb_prune_report_free(&r);
	CHECK_STR(kept(fb, n, two, 2, false, &rc, &r, NULL, NULL), "sm_80 sm_86"); /* entry order kept */
	fb_prune_report_free(&r);
	CHECK_STR(kept(fb, n, a90p, 2, false, &rc, &r, NULL, NULL), "sm_86 compute_90");
	fb_prune_report_free(&r);

	/* the guard: no image for sm_75 */
	const char *m = kept(fb, n, a75, 1, false, &rc, &r, NULL, NULL);
	CHECK(rc == FB_ENOIMAGE);
	CHECK(strstr(m, "1 container would keep no image") != NULL);
	CHECK(r.missing == 1 && r.notes && strstr(r.notes, "container 0 has no image for sm_75"));
	fb_prune_report_free(&r);
	unsigned char *o;
	size_t osz;
	CHECK_STR(kept(fb, n, a75, 1, true, &rc, &r, &o, &osz), "");
	CHECK(rc == 0 && osz == 16 && memcmp(o, fb, 8) == 0 && o[8] == 0);
	free(o);
	fb_prune_report_free(&r);

	/* kept bytes are the input's, byte for byte */
	CHECK_STR(kept(fb, n, a89, 1, false, &rc, &r, &o, &osz), "sm_86");
	struct fb_parsed p;
	CHECK(fb_fatbin_parse(fb, n, 0, &p, NULL) == 0);
	const struct fb_entry *e = &p.entries[1];
	size_t one = 16 + e->header_size + (size_t)e->payload_size;
	CHECK(osz == one);
	CHECK(memcmp(o + 16, fb + e->offset, osz - 16) == 0);
	fb_parsed_free(&p);
	free(o);
	fb_prune_report_free(&r);

	/* two containers with zero padding between them: the gap stays */
	unsigned char *two_c = malloc(2 * n + 16);
	memcpy(two_c, fb, n);
	memset(two_c + n, 0, 16);
	memcpy(two_c + n + 16, fb, n);
	CHECK_STR(kept(two_c, 2 * n + 16, a89, 1, false, &rc, &r, &o, &osz), "sm_86 sm_86");
	CHECK(r.ncontainers == 2);
	CHECK(osz == 2 * one + 16);
	CHECK(o[one] == 0 && o[one + 15] == 0 && memcmp(o + one + 16, o, one) == 0);
	free(o);
	free(two_c);
	fb_prune_report_free(&r);

	/* obfuscated PTX is kept, reported, and counts as an image for the guard */
	struct fb_parsed q;
	unsigned char *ob = malloc(n);
	memcpy(ob, fb, n);
	CHECK(fb_fatbin_parse(ob, n, 0, &q, NULL) == 0);
	for (size_t i = 2; i < 4; i++)
		ob[q.entries[i].offset + 0x2a] |= 0x01; /* flags |= 0x10000 */
	fb_parsed_free(&q);
	CHECK_STR(kept(ob, n, a90, 1, false, &rc, &r, NULL, NULL), "compute_80 compute_90");
	CHECK(rc == 0 && r.kept_other == 2 && r.missing == 0);
	CHECK(r.notes && strstr(r.notes, "entry 2: obfuscated ptx entry kept as it is"));
	fb_prune_report_free(&r);
	CHECK_STR(kept(ob, n, a89, 1, false, &rc, &r, NULL, NULL), "sm_86 compute_80 compute_90");
	fb_prune_report_free(&r);
	free(ob);

	/* idempotent */
	CHECK_STR(kept(fb, n, a90p, 2, false, &rc, &r, &o, &osz), "sm_86 compute_90");
	fb_prune_report_free(&r);
	CHECK_STR(kept(o, osz, a90p, 2, false, &rc, &r, NULL, NULL), "sm_86 compute_90");
	CHECK(r.removed_entries == 0);
	fb_prune_report_free(&r);
	free(o);
	free(fb);
}

/* "!<arch>\n", a "/" symbol table naming the second member, a text member, the fatbin. */
static unsigned char *
make_archive(const unsigned char *fb, size_t fbn, size_t *n, size_t *fb_hdr)
{
	unsigned char *a = calloc(1, 8 + 60 + 12 + 60 + 2 + 60 + fbn + 2);
	size_t o = 0;
	memcpy(a, "!<arch>\n", 8);
	o = 8;
	char h[61];
	snprintf(h, sizeof(h), "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "/", "0", "0", "0", "0", 12);
	memcpy(a + o, h, 60);
	o += 60;
	size_t symtab = o;
	o += 12; /* count=1, offset, "kern\0\0\0\0" (4 + 4 + 4 bytes: "ker\0") */
	snprintf(h, sizeof(h), "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "odd.txt/", "0", "0", "0", "644", 1);
	memcpy(a + o, h, 60);
	o += 60;
	a[o++] = 'x';
	a[o++] = '\n';
	*fb_hdr = o;
	snprintf(h, sizeof(h), "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", "k.fatbin/", "0", "0", "0", "644", fbn);
	memcpy(a + o, h, 60);
	o += 60;
	memcpy(a + o, fb, fbn);
	o += fbn;
	unsigned char *s = a + symtab;
	s[3] = 1;
	s[4] = (unsigned char)(*fb_hdr >> 24);
	s[5] = (unsigned char)(*fb_hdr >> 16);
	s[6] = (unsigned char)(*fb_hdr >> 8);
	s[7] = (unsigned char)*fb_hdr;
	memcpy(s + 8, "ker", 4);
	*n = o;
	return a;
}

static void
test_archive(void)
{
	size_t n, an, hdr;
	unsigned char *fb = make_fatbin(&n);
	unsigned char *ar = make_archive(fb, n, &an, &hdr);
	/* the fatbin member is not the last, so shrinking it moves nothing after it: put a text
	 * member first and check the symbol table offset of the fatbin member itself, then an
	 * archive with the fatbin first and the text member after it. */
	struct ap_target t = T("sm_86");
	struct fb_prune_opts o = {&t, 1, false, false, false, 0};
	struct fb_prune_report r;
	struct fb_error err = {0};
	unsigned char *out;
	size_t osz;
	CHECK(fb_prune_buffer(ar, an, "lib.a", &o, &out, &osz, &r, &err) == 0);
	CHECK_STR(r.type, "archive");
	CHECK(r.kept_entries == 1 && r.removed_entries == 3);
	CHECK(osz < an);
	uint32_t off = be32(out + 8 + 60 + 4);
	CHECK(off == hdr && memcmp(out + off, "k.fatbin/", 9) == 0 && out[off + 58] == '`');
	struct fb_scan sc;
	struct fb_parsed p;
	CHECK(fb_scan_buffer(out, osz, "lib.a", &sc, &err) == 0);
	CHECK(fb_scan_entries(out, &sc, &p, &err) == 0);
	CHECK(p.nentries == 1 && p.entries[0].target.sm == 86);
	fb_parsed_free(&p);
	fb_scan_free(&sc);
	free(out);
	fb_prune_report_free(&r);

	/* fatbin member first, then a member the symbol table names: its offset must move */
	unsigned char *b = calloc(1, an + 64);
	size_t w = 0;
	memcpy(b, ar, 8 + 60 + 12);
	w = 8 + 60 + 12;
	size_t fbh = w;
	memcpy(b + w, ar + hdr, 60 + n);
	w += 60 + n;
	size_t txt = w;
	memcpy(b + w, ar + 8 + 60 + 12, 62);
	w += 62;
	b[8 + 60 + 4] = (unsigned char)(txt >> 24);
	b[8 + 60 + 5] = (unsigned char)(txt >> 16);
	b[8 + 60 + 6] = (unsigned char)(txt >> 8);
	b[8 + 60 + 7] = (unsigned char)txt;
	CHECK(fb_prune_buffer(b, w, "lib2.a", &o, &out, &osz, &r, &err) == 0);
	off = be32(out + 8 + 60 + 4);
	CHECK(off < txt && off + 62 == osz);
	CHECK(memcmp(out + off, "odd.txt/", 8) == 0 && out[off + 60] == 'x');
	CHECK(memcmp(out + fbh, "k.fatbin/", 9) == 0);
	free(out);
	fb_prune_report_free(&r);
	free(b);
	free(ar);
	free(fb);
}

static void
test_size(void)
{
	size_t n;
	unsigned char *fb = make_fatbin(&n);
	struct ap_target t = T("sm_89");
	struct fb_size_opts so = {&t, 1, false, false, 3};
	struct fb_size_report r;
	struct fb_error err = {0};
	CHECK(fb_size(fb, n, "t.fatbin", &so, &r, &err) == 0);
	CHECK(r.ncontainers == 1 && r.nentries == 4 && r.nrows == 4 && r.pruned);
	CHECK(r.stored == n - 16);
	uint64_t st = 0;
	for (size_t i = 0; i < r.nrows; i++) {
		st += r.rows[i].stored;
		bool is86 = r.rows[i].disk_kind == FB_DISK_KIND_ELF && r.rows[i].target.sm == 86;
		CHECK(r.rows[i].kept_entries == (is86 ? 1u : 0u));
		CHECK(!is86 || r.rows[i].kept_stored == r.rows[i].stored);
	}
	CHECK(st == r.stored);
	CHECK(r.rows[0].disk_kind == FB_DISK_KIND_PTX && r.rows[0].target.sm == 80); /* sorted: kind, arch */
	CHECK(r.kept_entries == 1 && r.pruned_file_size < n && r.zstd_before > 0 && r.zstd_after > 0);
	CHECK(r.containers[0].entries == 4 && r.containers[0].kept_entries == 1);
	fb_size_report_free(&r);
	CHECK(fb_size(fb, n, "t.fatbin", NULL, &r, &err) == 0 && !r.pruned && r.zstd_before == 0);
	fb_size_report_free(&r);
	free(fb);
}

static void
test_errors(void)
{
	size_t n;
	unsigned char *fb = make_fatbin(&n);
	struct ap_target t = T("sm_90");
	struct fb_prune_opts o = {&t, 1, false, false, false, 0};
	struct fb_prune_opts none = {&t, 0, false, false, false, 0};
	struct fb_error err = {0};
	unsigned char *out = NULL;
	size_t osz;
	CHECK(fb_prune_buffer(fb, n, "t", &none, &out, &osz, NULL, &err) == FB_EINVAL && !out);
	CHECK(strstr(err.msg, "empty") != NULL);
	unsigned char cub[256];
	make_cubin(cub, 80);
	CHECK(fb_prune_buffer(cub, sizeof(cub), "k.cubin", &o, &out, &osz, NULL, &err) == FB_EUNSUPPORTED);
	CHECK(strstr(err.msg, "nothing to prune") != NULL);
	CHECK(fb_prune_buffer("!<thin>\nxxxxxxxx", 16, "t.a", &o, &out, &osz, NULL, &err) == FB_EUNSUPPORTED);
	CHECK(fb_prune_buffer("hello world", 11, "t.txt", &o, &out, &osz, NULL, &err) == FB_EFORMAT);
	/* a truncated container: the reader's message, prefixed with nothing but one line */
	CHECK(fb_prune_buffer(fb, n - 8, "t.fatbin", &o, &out, &osz, NULL, &err) == FB_EFORMAT);
	CHECK(strchr(err.msg, '\n') == NULL && strstr(err.msg, "container 0") != NULL);
	CHECK(!out);

	/* fb_prune: file to file, mode kept, in place allowed at the library level */
	char dir[] = "/tmp/prune_test.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char in[64], outp[64];
	snprintf(in, sizeof(in), "%s/in.fatbin", dir);
	snprintf(outp, sizeof(outp), "%s/out.fatbin", dir);
	CHECK(fb_write_file_atomic(in, fb, n, 0750, &err) == 0);
	chmod(in, 0750);
	struct fb_prune_report r;
	CHECK(fb_prune(in, outp, &o, &r, &err) == 0);
	struct stat st;
	CHECK(stat(outp, &st) == 0 && (st.st_mode & 0777) == 0750 && (uint64_t)st.st_size == r.out_size);
	fb_prune_report_free(&r);
	CHECK(fb_prune(in, in, &o, NULL, &err) == 0);
	CHECK(stat(in, &st) == 0 && (uint64_t)st.st_size < n);
	struct ap_target t75 = T("sm_75");
	struct fb_prune_opts o75 = {&t75, 1, false, false, false, 0};
	unlink(outp);
	CHECK(fb_prune(in, outp, &o75, NULL, &err) == FB_ENOIMAGE);
	CHECK(access(outp, F_OK) != 0); /* nothing written on failure */
	unlink(in);
	rmdir(dir);
	free(fb);
}

int
main(void)
{
	test_selection();
	test_archive();
	test_size();
	test_errors();
	return check_done();
}
