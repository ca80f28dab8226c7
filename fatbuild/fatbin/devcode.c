/* devcode.c: device code a host ELF carries outside .nv_fatbin and __nv_relfatbin, the sections
 * the CUDA runtime registers at load time (docs/check-environment.md §3): fatbin containers,
 * cubins and PTX text kept in a library's own data (cuFFT's .ldata, cuBLASLt's .cask_resource,
 * CUPTI's .rodata), which the library hands to the driver or nvJitLink itself, and NVRTC's
 * built-in headers (one getArchBuiltins<SM> symbol per arch that NVRTC compiles for).
 *
 * Only allocated, non-executable PROGBITS sections are read: a library can give the driver only
 * data it has mapped, and code sections hold instructions. A candidate counts only when it
 * parses: a container at an 8-aligned offset (magic, version 1, header size 0x10) whose entries
 * pass fb_fatbin_parse, a cubin at an 8-aligned offset that fb_elf_ident accepts (EM_CUDA, an SM
 * number), PTX text whose first directive after comments is .version and that names a .target.
 * Whatever lies inside a container or cubin already taken is skipped. The scan goes forward in
 * windows of WINDOW bytes and reports each finished window, so a caller can drop its pages. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "devcode.h"
#include "elfid.h"
#include "elfsect.h"

#define WINDOW ((size_t)16 << 20)
#define PTX_PREFIX_MAX 65536
#define CONTAINER_HEAD UINT64_C(0x00100001BA55ED50) /* magic, version 1, header size 0x10 */
#define EM_CUDA_ 190

struct scan {
	const unsigned char *base;
	struct fb_devcode *d;
	size_t icap, ncap;
	void (*release)(const unsigned char *from, size_t n, void *ctx);
	void *ctx;
	int oom;
};

static void
add_image(struct scan *s, const struct ap_target *t, bool compat)
{
	struct fb_devcode *d = s->d;
	for (size_t i = 0; i < d->nimages; i++) {
		const struct fb_image *im = &d->images[i];
		if (im->target.sm == t->sm && im->target.variant == t->variant && im->target.kind == t->kind &&
		    im->compat == compat)
			return;
	}
	if (d->nimages == s->icap) {
		size_t nc = s->icap ? s->icap * 2 : 16;
		struct fb_image *ni = realloc(d->images, nc * sizeof(*ni));
		if (!ni) {
			s->oom = 1;
			return;
		}
		d->images = ni;
		s->icap = nc;
	}
	d->images[d->nimages++] = (struct fb_image){*t, compat};
}

/* A container at q (left bytes to the section end): its length, or 0 when it does not parse. */
static size_t
take_container(struct scan *s, const unsigned char *q, size_t left)
{
	struct fb_parsed pr;
	if (fb_fatbin_parse(q, left, FB_PARSE_FIRST, &pr, NULL) != 0)
		return 0;
	size_t len = pr.ncontainers ? pr.containers[0].size : 0;
	for (size_t i = 0; i < pr.nentries; i++) {
		const struct fb_entry *e = &pr.entries[i];
		if (e->disk_kind == FB_DISK_KIND_LTO)
			s->d->nlto++;
		else if (e->disk_kind == FB_DISK_KIND_ELF || e->disk_kind == FB_DISK_KIND_PTX)
			add_image(s, &e->target, (e->flags & FB_FLAG_COMPAT) != 0);
	}
	fb_parsed_free(&pr);
	if (len)
		s->d->ncontainers++;
	return len;
}

/* A cubin at q: its extent, or 0 when it is not one. */
static size_t
take_cubin(struct scan *s, const unsigned char *q, size_t left)
{
	struct fb_elfid id;
	if (left < 64 || memcmp(q, "\x7f" "ELF\x02\x01\x01", 7) != 0 || fb_rd16(q + 0x12) != EM_CUDA_ ||
	    fb_elf_ident(q, left, &id, NULL) != 0)
		return 0;
	struct ap_target t = {id.sm, fb_elfid_arch_specific(&id) ? AP_ARCH : AP_PLAIN, AP_SASS, 0};
	add_image(s, &t, id.sm >= 100 && id.compat != NULL);
	s->d->ncubins++;
	size_t len = fb_elf_extent(q, left);
	return len < 64 ? 64 : len;
}

/* Where the PTX text whose ".version" is at v starts: back to a NUL or lo, with only blank space
 * and // comment lines before the directive; NULL when it is not the first directive. */
static const unsigned char *
ptx_start(const unsigned char *lo, const unsigned char *v)
{
	const unsigned char *st = v;
	while (st > lo && st[-1] != 0 && v - st < PTX_PREFIX_MAX)
		st--;
	if (st > lo && st[-1] != 0)
		return NULL;
	for (const unsigned char *q = st; q < v;) {
		if (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') {
			q++;
		} else if (v - q >= 2 && q[0] == '/' && q[1] == '/') {
			while (q < v && *q != '\n')
				q++;
			if (q >= v)
				return NULL; /* .version inside a comment */
		} else {
			return NULL;
		}
	}
	return st;
}

/* PTX whose .version is at v (section bytes lo..hi): where its text ends, or NULL. */
static const unsigned char *
take_ptx(struct scan *s, const unsigned char *lo, const unsigned char *hi, const unsigned char *v)
{
	const unsigned char *st = ptx_start(lo, v);
	if (!st)
		return NULL;
	const unsigned char *end = memchr(v, 0, (size_t)(hi - v));
	if (!end)
		end = hi;
	struct ap_target t;
	if (fb_ptx_info(st, (size_t)(end - st), NULL, NULL, &t, NULL) != 0)
		return NULL;
	add_image(s, &t, false);
	s->d->nptx++;
	return end;
}

/* The next container or cubin at an 8-aligned offset of [from, to) (section end hi): its start,
 * *len set; NULL when none. */
static const unsigned char *
next_object(struct scan *s, const unsigned char *from, const unsigned char *to, const unsigned char *hi, size_t *len)
{
	size_t skew = (size_t)(from - s->base) & 7;
	const unsigned char *q = skew ? from + (8 - skew) : from;
	for (; q + 8 <= to; q += 8) {
		uint64_t w = fb_rd64(q);
		if (w == CONTAINER_HEAD) {
			if ((*len = take_container(s, q, (size_t)(hi - q))) != 0)
				return q;
		} else if ((uint32_t)w == 0x464c457fu) { /* "\x7fELF" */
			if ((*len = take_cubin(s, q, (size_t)(hi - q))) != 0)
				return q;
		}
	}
	return NULL;
}

static void
note_section(struct fb_devcode *d, const char *name)
{
	size_t l = strlen(d->sections);
	if (l + strlen(name) + 3 < sizeof(d->sections))
		snprintf(d->sections + l, sizeof(d->sections) - l, "%s%s", l ? ", " : "", name);
}

/* The next ".version" at or after pos within the next window, remembered in *v; NULL when
 * there is none before *searched, which then ends the stretch known to hold none. */
static const unsigned char *
next_version(const unsigned char *pos, const unsigned char *hi, const unsigned char **v, const unsigned char **searched)
{
	if (*v && *v >= pos)
		return *v;
	const unsigned char *from = *searched > pos ? *searched : pos;
	if (from >= hi) {
		*searched = hi;
		return NULL;
	}
	const unsigned char *to = (size_t)(hi - from) > WINDOW ? from + WINDOW : hi;
	*v = memmem(from, (size_t)(to - from), ".version", 8);
	if (*v)
		return *v;
	/* a match may straddle the window's end: search its last 7 bytes again next time */
	*searched = to == hi || to - from <= 8 ? to : to - 7;
	return NULL;
}

/* Scans one section's bytes lo..hi, objects in the order they start, a window at a time. */
static void
scan_bytes(struct scan *s, const unsigned char *lo, const unsigned char *hi, const char *name)
{
	size_t before = s->d->ncontainers + s->d->ncubins + s->d->nptx;
	const unsigned char *pos = lo, *done = lo, *vcache = NULL, *searched = lo;
	while (pos < hi && !s->oom) {
		const unsigned char *v = next_version(pos, hi, &vcache, &searched);
		const unsigned char *limit = v ? v : searched > pos ? searched : hi;
		size_t len = 0;
		const unsigned char *obj = next_object(s, pos, limit, hi, &len);
		if (obj) {
			pos = obj + len;
		} else if (v) {
			const unsigned char *end = take_ptx(s, lo, hi, v);
			pos = end ? end : v + 8;
		} else {
			pos = limit > pos ? limit : hi;
		}
		if (s->release && pos - done >= (ptrdiff_t)WINDOW) {
			s->release(done, (size_t)(pos - done), s->ctx);
			done = pos;
		}
	}
	if (s->release && pos > done)
		s->release(done, (size_t)((pos < hi ? pos : hi) - done), s->ctx);
	if (s->d->ncontainers + s->d->ncubins + s->d->nptx > before)
		note_section(s->d, name);
}

/* "getArchBuiltins<digits>" at the end of an NVRTC built-ins symbol: the SM, or 0. */
static int
builtins_sm(const char *sym)
{
	if (strncmp(sym, "__nvrtc_builtins", 16) != 0)
		return 0;
	const char *g = strstr(sym, "getArchBuiltins");
	if (!g)
		return 0;
	g += 15;
	int sm = 0, nd = 0;
	while (*g >= '0' && *g <= '9' && nd < 4)
		sm = sm * 10 + (*g++ - '0'), nd++;
	return *g == 0 && nd >= 2 ? sm : 0;
}

/* What the section walk keeps: the dynamic symbol table, and its string table once found. */
struct walk {
	struct scan *s;
	struct fb_elf_section dynsym, dynstr;
	bool have_dynsym, have_dynstr;
};

static bool
scanned(const struct fb_elf_section *sec)
{
	static const char *const skip[] = {".nv_fatbin", "__nv_relfatbin", ".eh_frame", ".eh_frame_hdr",
	                                   ".gcc_except_table", ".got", ".got.plt"};
	if (sec->type != 1 || !(sec->flags & 0x2) || (sec->flags & FB_SHF_EXECINSTR) || !sec->inside || sec->size < 8)
		return false; /* PROGBITS, SHF_ALLOC, not SHF_EXECINSTR, with bytes */
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(sec->name, skip[i]) == 0)
			return false;
	return true;
}

static int
each_section(const struct fb_elf_section *sec, void *ctx)
{
	struct walk *w = ctx;
	if (sec->type == FB_SHT_DYNSYM && sec->inside && sec->entsize == 24 && !w->have_dynsym) {
		w->dynsym = *sec;
		w->have_dynsym = true;
	}
	if (scanned(sec)) {
		const unsigned char *lo = w->s->base + sec->offset;
		scan_bytes(w->s, lo, lo + sec->size, sec->name);
	}
	return w->s->oom ? FB_ENOMEM : 0;
}

static int
find_dynstr(const struct fb_elf_section *sec, void *ctx)
{
	struct walk *w = ctx;
	if (sec->index != w->dynsym.link)
		return 0;
	if (sec->inside) {
		w->dynstr = *sec;
		w->have_dynstr = true;
	}
	return 1;
}

static void
add_sm(struct scan *s, int sm)
{
	struct fb_devcode *d = s->d;
	for (size_t i = 0; i < d->nnvrtc; i++)
		if (d->nvrtc[i] == sm)
			return;
	if (d->nnvrtc == s->ncap) {
		size_t nc = s->ncap ? s->ncap * 2 : 16;
		int *n = realloc(d->nvrtc, nc * sizeof(*n));
		if (!n) {
			s->oom = 1;
			return;
		}
		d->nvrtc = n;
		s->ncap = nc;
	}
	d->nvrtc[d->nnvrtc++] = sm;
}

/* The SMs of the getArchBuiltins<SM> symbols in .dynsym (Elf64_Sym: st_name u32 at 0). */
static void
nvrtc_builtins(struct scan *s, const struct walk *w)
{
	const unsigned char *sy = s->base + w->dynsym.offset;
	const char *str = (const char *)s->base + w->dynstr.offset;
	size_t strsz = (size_t)w->dynstr.size;
	for (uint64_t i = 1; i < w->dynsym.size / 24 && !s->oom; i++) {
		uint32_t nm = fb_rd32(sy + i * 24);
		if (nm >= strsz || !memchr(str + nm, 0, strsz - nm))
			continue;
		int sm = builtins_sm(str + nm);
		if (sm)
			add_sm(s, sm);
	}
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int
fb_devcode_scan(const unsigned char *p, size_t size, const char *name,
                void (*release)(const unsigned char *from, size_t n, void *ctx), void *ctx,
                struct fb_devcode *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	struct scan s = {.base = p, .d = out, .release = release, .ctx = ctx};
	struct walk w = {.s = &s};
	int rc = fb_elf_sections(p, size, name, each_section, &w, err);
	if (rc == FB_OK && w.have_dynsym) {
		fb_elf_sections(p, size, name, find_dynstr, &w, NULL);
		if (w.have_dynstr)
			nvrtc_builtins(&s, &w);
	}
	if (rc == FB_OK && s.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	if (rc) {
		fb_devcode_free(out);
		return rc == FB_ENOMEM ? fb_seterr(err, FB_ENOMEM, "out of memory") : rc;
	}
	if (out->nnvrtc)
		qsort(out->nvrtc, out->nnvrtc, sizeof(*out->nvrtc), cmp_int);
	return FB_OK;
}

bool
fb_devcode_any(const struct fb_devcode *d)
{
	return d->ncontainers || d->ncubins || d->nptx || d->nnvrtc;
}

void
fb_devcode_free(struct fb_devcode *d)
{
	if (!d)
		return;
	free(d->images);
	free(d->nvrtc);
	memset(d, 0, sizeof(*d));
}
