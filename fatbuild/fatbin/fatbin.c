/* fatbin.c: the fatbinary container writer (and target-name helpers).
 *
 * Format (docs/fatbin.md §1-§5, checked against CUDA 13.0 fatbinary; all integers little-endian,
 * al8(x) = (x+7)&~7):
 *
 *   container header, 16 bytes:
 *     +0x00 u32 magic 0xBA55ED50   +0x04 u16 version 1   +0x06 u16 header size 0x10
 *     +0x08 u64 fatSize: bytes of all entries that follow (a multiple of 8)
 *   entries, back to back, no index, no terminator. Each entry:
 *     +0x00 u16 kind (1 PTX, 2 ELF, 8 LTO-IR)     +0x02 u16 entry header version 0x0101
 *     +0x04 u32 header size (entry start → payload; multiple of 8, >= 0x40)
 *     +0x08 u64 payload size = al8(stored bytes), zero padded
 *     +0x10 u32 compressed size (exact) or 0      +0x14 u32 options descriptor offset or 0
 *     +0x18 u16 minor   +0x1a u16 major  (ELF: 1.EI_ABIVERSION; PTX: ISA; LTO: 1.byte5 of NVVM)
 *     +0x1c u32 arch: 10*major+minor, no 'a'/'f' (those are flags)
 *     +0x20 u32 identifier offset (0x40) or 0     +0x24 u32 identifier length without NUL
 *     +0x28 u64 flags: 0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 LZ4 block, 0x8000 zstd,
 *               0x10000 obfuscated, 0x100000 'a', 0x200000 'f', 0x1000000 compat blob
 *     +0x30 u64 obfuscation key (0)               +0x38 u64 uncompressed size (exact) or 0
 *   variable tail, each piece NUL-padded to 8: [identifier NUL] at 0x40, then the descriptor
 *   {u32 off, u32 len} at +0x14, then the string (PTX/LTO options, NUL-terminated) or, for an
 *   ELF entry with arch >= 100, the compat blob 0x00 ‖ .nv.compat cut to len(.nv.compat).
 *   PTX payloads are the text plus one NUL. ELF entries below sm_100 have no descriptor.
 *
 * The writer reproduces `fatbinary --compress-mode=none` byte for byte for the same inputs
 * (fatbinary also strips PTX comments and indentation; we store PTX as given), and its
 * default zstd output (level 5) with FB_WRITE_COMPRESS_TEXT. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "fatbin_priv.h"

struct wentry {
	unsigned disk_kind;
	struct ap_target target;
	unsigned char *data;   /* the image (PTX: text + exactly one NUL) */
	size_t size;
	char *ident, *options;
	uint16_t major, minor;
	unsigned char *compat; /* ELF sm >= 100: the blob (0x00 ‖ .nv.compat)[:len] */
	size_t compat_len;
};

struct fb_fatbin {
	struct wentry *e;
	size_t n, cap;
	unsigned options;
	int zstd_level;
};

int
fb_target_parse(const char *name, struct ap_target *t)
{
	char tmp[32];
	if (!name || !t)
		return FB_EINVAL;
	if (strncmp(name, "lto_", 4) == 0) { /* LTO-IR arches read like PTX ones */
		if (snprintf(tmp, sizeof(tmp), "compute_%s", name + 4) >= (int)sizeof(tmp))
			return FB_EINVAL;
		name = tmp;
	}
	if (strncmp(name, "sm_", 3) != 0 && strncmp(name, "compute_", 8) != 0)
		return FB_EINVAL;
	struct ap_target r;
	if (ap_target_parse(name, &r) != 0)
		return FB_EINVAL;
	r.origin = 0;
	*t = r;
	return FB_OK;
}

/* Finds a directive at the start of a line (after blanks), outside // comments. */
static const char *
find_directive(const char *s, size_t n, const char *dir)
{
	size_t dl = strlen(dir);
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (n - j > dl && memcmp(s + j, dir, dl) == 0 && (s[j + dl] == ' ' || s[j + dl] == '\t'))
			return s + j + dl;
		while (i < n && s[i] != '\n')
			i++;
		i++;
	}
	return NULL;
}

int
fb_ptx_info(const void *ptx, size_t size, int *major, int *minor, struct ap_target *target,
            struct fb_error *err)
{
	const char *s = ptx;
	const char *end = s + size;
	const char *v = find_directive(s, size, ".version");
	if (!v)
		return fb_seterr(err, FB_EFORMAT, "PTX has no .version directive");
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	int ma = 0, mi = 0, nd = 0;
	while (v < end && isdigit((unsigned char)*v) && ma < 1000)
		ma = ma * 10 + (*v++ - '0'), nd++;
	if (!nd || v >= end || *v != '.')
		return fb_seterr(err, FB_EFORMAT, "PTX .version is not X.Y");
	v++;
	nd = 0;
	while (v < end && isdigit((unsigned char)*v) && mi < 1000)
		mi = mi * 10 + (*v++ - '0'), nd++;
	if (!nd)
		return fb_seterr(err, FB_EFORMAT, "PTX .version is not X.Y");
	if (major)
		*major = ma;
	if (minor)
		*minor = mi;
	if (target) {
		const char *t = find_directive(s, size, ".target");
		if (!t)
			return fb_seterr(err, FB_EFORMAT, "PTX has no .target directive");
		while (t < end && (*t == ' ' || *t == '\t'))
			t++;
		char name[32];
		size_t k = 0;
		while (t < end && k + 1 < sizeof(name) && (isalnum((unsigned char)*t) || *t == '_'))
			name[k++] = *t++;
		name[k] = 0;
		struct ap_target tt;
		if (strncmp(name, "sm_", 3) != 0 || fb_target_parse(name, &tt) != 0)
			return fb_seterr(err, FB_EFORMAT, "PTX .target '%s' is not sm_XY[a|f]", name);
		tt.kind = AP_PTX;
		*target = tt;
	}
	return FB_OK;
}

struct fb_fatbin *
fb_fatbin_new(void)
{
	struct fb_fatbin *fb = calloc(1, sizeof(*fb));
	if (fb)
		fb->zstd_level = 5;
	return fb;
}

static void
wentry_free(struct wentry *e)
{
	free(e->data);
	free(e->ident);
	free(e->options);
	free(e->compat);
}

void
fb_fatbin_free(struct fb_fatbin *fb)
{
	if (!fb)
		return;
	for (size_t i = 0; i < fb->n; i++)
		wentry_free(&fb->e[i]);
	free(fb->e);
	free(fb);
}

void
fb_fatbin_set_options(struct fb_fatbin *fb, unsigned options)
{
	if (fb)
		fb->options = options;
}

int
fb_fatbin_set_zstd_level(struct fb_fatbin *fb, int level, struct fb_error *err)
{
	if (!fb || level < 1 || level > ZSTD_maxCLevel())
		return fb_seterr(err, FB_EINVAL, "zstd level %d out of range 1..%d", level, ZSTD_maxCLevel());
	fb->zstd_level = level;
	return FB_OK;
}

static char *
dupstr(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	return d ? memcpy(d, s, n) : NULL;
}

int
fb_fatbin_add(struct fb_fatbin *fb, enum fb_entry_kind kind, const struct ap_target *target,
              const void *data, size_t size, const char *ident, const char *options,
              struct fb_error *err)
{
	char tn[32];
	if (!fb || !target || (!data && size))
		return fb_seterr(err, FB_EINVAL, "fb_fatbin_add: NULL argument");
	if (target->sm < 10 || target->sm > 9999)
		return fb_seterr(err, FB_EINVAL, "arch %d out of range", target->sm);
	if (size > UINT32_MAX - 64)
		return fb_seterr(err, FB_ETOOBIG, "image of %zu bytes is too large for a fatbin entry", size);
	struct wentry e = {0};
	e.target = *target;
	ap_target_name(target, tn, sizeof(tn));
	switch (kind) {
	case FB_KIND_PTX: {
		if (target->kind != AP_PTX)
			return fb_seterr(err, FB_EINVAL, "PTX image given SASS target %s (use compute_%d)", tn, target->sm);
		const char *s = data;
		size_t len = size;
		while (len && s[len - 1] == 0)
			len--;
		if (memchr(s, 0, len))
			return fb_seterr(err, FB_EFORMAT, "PTX for %s contains a NUL byte", tn);
		int ma, mi;
		int rc = fb_ptx_info(s, len, &ma, &mi, NULL, err);
		if (rc)
			return rc;
		if (ma > 0xffff || mi > 0xffff)
			return fb_seterr(err, FB_EFORMAT, "PTX .version %d.%d out of range", ma, mi);
		e.disk_kind = FB_DISK_KIND_PTX;
		e.major = (uint16_t)ma;
		e.minor = (uint16_t)mi;
		e.size = len + 1;
		e.data = malloc(e.size);
		if (!e.data)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		memcpy(e.data, s, len);
		e.data[len] = 0;
		if (!options)
			options = "";
		break;
	}
	case FB_KIND_ELF: {
		if (target->kind != AP_SASS)
			return fb_seterr(err, FB_EINVAL, "cubin given PTX target %s (use sm_%d)", tn, target->sm);
		struct fb_elfid id;
		int rc = fb_elf_ident(data, size, &id, err);
		if (rc)
			return rc;
		if (id.sm != target->sm)
			return fb_seterr(err, FB_EFORMAT, "cubin is for sm_%d, not the requested %s", id.sm, tn);
		e.disk_kind = FB_DISK_KIND_ELF;
		e.major = 1;
		e.minor = (uint16_t)id.abi;
		e.size = size;
		e.data = malloc(size ? size : 1);
		if (!e.data)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		memcpy(e.data, data, size);
		if (target->sm >= 100 && id.compat && id.compat_len) {
			e.compat_len = id.compat_len;
			e.compat = calloc(1, id.compat_len);
			if (!e.compat) {
				wentry_free(&e);
				return fb_seterr(err, FB_ENOMEM, "out of memory");
			}
			memcpy(e.compat + 1, id.compat, id.compat_len - 1);
			options = NULL;
		}
		break;
	}
	case FB_KIND_LTO: {
		const unsigned char *p = data;
		if (size < 8 || fb_rd32(p) != 0x7F4E43EDu)
			return fb_seterr(err, FB_EFORMAT, "LTO-IR for arch %d is not an NVVM container (magic ed 43 4e 7f)",
			                 target->sm);
		e.disk_kind = FB_DISK_KIND_LTO;
		e.major = 1;
		e.minor = p[5];
		e.size = size;
		e.data = malloc(size);
		if (!e.data)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		memcpy(e.data, data, size);
		if (!options)
			options = ""; /* nvJitLink crashes on an LTO entry without a descriptor */
		break;
	}
	default:
		return fb_seterr(err, FB_EINVAL, "unknown entry kind %d", (int)kind);
	}
	if ((ident && !(e.ident = dupstr(ident))) || (options && !(e.options = dupstr(options)))) {
		wentry_free(&e);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (fb->n == fb->cap) {
		size_t nc = fb->cap ? fb->cap * 2 : 8;
		struct wentry *ne = realloc(fb->e, nc * sizeof(*ne));
		if (!ne) {
			wentry_free(&e);
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		fb->e = ne;
		fb->cap = nc;
	}
	fb->e[fb->n++] = e;
	return FB_OK;
}

/* A growable output buffer. */
struct obuf {
	unsigned char *p;
	size_t len, cap;
};

static int
ob_reserve(struct obuf *b, size_t more)
{
	if (more > SIZE_MAX - b->len)
		return -1;
	if (b->len + more <= b->cap)
		return 0;
	size_t nc = b->cap ? b->cap : 4096;
	while (nc < b->len + more) {
		if (nc > SIZE_MAX / 2)
			return -1;
		nc *= 2;
	}
	unsigned char *np = realloc(b->p, nc);
	if (!np)
		return -1;
	b->p = np;
	b->cap = nc;
	return 0;
}

static void
put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void
put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void
put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Compresses src into a malloc'd buffer. */
static int
compress_image(enum fb_compress c, int level, const unsigned char *src, size_t n, unsigned char **out,
               size_t *outn, struct fb_error *err)
{
	if (c == FB_COMPRESS_ZSTD) {
		size_t bound = ZSTD_compressBound(n);
		unsigned char *d = malloc(bound ? bound : 1);
		if (!d)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		size_t r = ZSTD_compress(d, bound, src, n, level);
		if (ZSTD_isError(r)) {
			free(d);
			return fb_seterr(err, FB_EFORMAT, "zstd compression failed: %s", ZSTD_getErrorName(r));
		}
		*out = d;
		*outn = r;
		return FB_OK;
	}
	if (n > LZ4_MAX_INPUT_SIZE)
		return fb_seterr(err, FB_ETOOBIG, "image of %zu bytes is too large for LZ4", n);
	int bound = LZ4_compressBound((int)n);
	unsigned char *d = malloc((size_t)bound + 1);
	if (!d)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int r = LZ4_compress_default((const char *)src, (char *)d, (int)n, bound);
	if (r <= 0) {
		free(d);
		return fb_seterr(err, FB_EFORMAT, "LZ4 compression failed");
	}
	*out = d;
	*outn = (size_t)r;
	return FB_OK;
}

int
fb_fatbin_write(const struct fb_fatbin *fb, enum fb_compress compress, unsigned char **out,
                size_t *outsize, struct fb_error *err)
{
	if (!fb || !out || !outsize)
		return fb_seterr(err, FB_EINVAL, "fb_fatbin_write: NULL argument");
	*out = NULL;
	*outsize = 0;
	if (compress != FB_COMPRESS_NONE && compress != FB_COMPRESS_ZSTD && compress != FB_COMPRESS_LZ4)
		return fb_seterr(err, FB_EINVAL, "unknown compression %d", (int)compress);
	struct obuf b = {0};
	if (ob_reserve(&b, 16))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memset(b.p, 0, 16);
	b.len = 16;
	bool debug = fb->options & FB_WRITE_DEBUG;
	for (size_t i = 0; i < fb->n; i++) {
		const struct wentry *e = &fb->e[i];
		bool comp = compress != FB_COMPRESS_NONE;
		if (comp && (fb->options & FB_WRITE_COMPRESS_TEXT) && e->disk_kind == FB_DISK_KIND_ELF && !debug)
			comp = false;
		unsigned char *cdata = NULL;
		size_t clen = 0;
		if (comp) {
			int rc = compress_image(compress, fb->zstd_level, e->data, e->size, &cdata, &clen, err);
			if (rc) {
				free(b.p);
				return rc;
			}
			if (clen > UINT32_MAX) {
				free(cdata);
				free(b.p);
				return fb_seterr(err, FB_ETOOBIG, "entry %zu: compressed size does not fit in 32 bits", i);
			}
		}
		const unsigned char *stored = comp ? cdata : e->data;
		size_t nstored = comp ? clen : e->size;
		uint64_t hsz = 0x40;
		uint32_t ident_off = 0, ident_len = 0, opt_off = 0;
		if (e->ident) {
			ident_off = (uint32_t)hsz;
			ident_len = (uint32_t)strlen(e->ident);
			hsz += FB_AL8((uint64_t)ident_len + 1);
		}
		size_t strlen_opt = 0;
		if (e->compat) {
			opt_off = (uint32_t)hsz;
			hsz += 8 + FB_AL8(e->compat_len);
		} else if (e->options) {
			opt_off = (uint32_t)hsz;
			strlen_opt = strlen(e->options);
			hsz += 8 + FB_AL8((uint64_t)strlen_opt + 1);
		}
		uint64_t psz = FB_AL8((uint64_t)nstored);
		if (hsz > UINT32_MAX || ob_reserve(&b, (size_t)(hsz + psz))) {
			free(cdata);
			free(b.p);
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		unsigned char *h = b.p + b.len;
		memset(h, 0, (size_t)(hsz + psz));
		uint64_t flags = FB_FLAG_64BIT | FB_FLAG_LINUX;
		if (debug)
			flags |= FB_FLAG_DEBUG;
		if (e->target.variant == AP_ARCH)
			flags |= FB_FLAG_ARCH_A;
		else if (e->target.variant == AP_FAMILY)
			flags |= FB_FLAG_FAMILY_F;
		if (e->compat)
			flags |= FB_FLAG_COMPAT;
		if (comp)
			flags |= compress == FB_COMPRESS_ZSTD ? FB_FLAG_ZSTD : FB_FLAG_LZ4;
		put16(h + 0x00, (uint16_t)e->disk_kind);
		put16(h + 0x02, 0x0101);
		put32(h + 0x04, (uint32_t)hsz);
		put64(h + 0x08, psz);
		put32(h + 0x10, comp ? (uint32_t)clen : 0);
		put32(h + 0x14, opt_off);
		put16(h + 0x18, e->minor);
		put16(h + 0x1a, e->major);
		put32(h + 0x1c, (uint32_t)e->target.sm);
		put32(h + 0x20, ident_off);
		put32(h + 0x24, ident_len);
		put64(h + 0x28, flags);
		put64(h + 0x30, 0);
		put64(h + 0x38, comp ? (uint64_t)e->size : 0);
		if (e->ident)
			memcpy(h + ident_off, e->ident, ident_len);
		if (e->compat) {
			put32(h + opt_off, opt_off + 8);
			put32(h + opt_off + 4, (uint32_t)e->compat_len);
			memcpy(h + opt_off + 8, e->compat, e->compat_len);
		} else if (e->options) {
			put32(h + opt_off, opt_off + 8);
			put32(h + opt_off + 4, (uint32_t)strlen_opt);
			memcpy(h + opt_off + 8, e->options, strlen_opt);
		}
		memcpy(h + hsz, stored, nstored);
		b.len += (size_t)(hsz + psz);
		free(cdata);
	}
	put32(b.p, FB_CONTAINER_MAGIC);
	put16(b.p + 4, 1);
	put16(b.p + 6, 0x10);
	put64(b.p + 8, (uint64_t)(b.len - 16));
	*out = b.p;
	*outsize = b.len;
	return FB_OK;
}
