/* fatbin.c: the fatbinary container writer.
 *
 * Format: docs/fatbin.md §1-§5; the layout is at the top of format.h. PTX payloads are the text
 * plus one NUL; ELF entries below sm_100 have no options descriptor.
 *
 * The writer reproduces `fatbinary --compress-mode=none` byte for byte for the same inputs
 * (fatbinary also strips PTX comments and indentation; we store PTX as given), and its
 * default zstd output (level 5) with FB_WRITE_COMPRESS_TEXT. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "shared.h"

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

/* A PTX image: the text up to its trailing NULs, then exactly one NUL; options default to "". */
static int
set_ptx(struct wentry *e, const char *tn, const void *data, size_t size, const char **options, struct fb_error *err)
{
	if (e->target.kind != AP_PTX)
		return fb_seterr(err, FB_EINVAL, "PTX image given SASS target %s (use compute_%d)", tn, e->target.sm);
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
	e->disk_kind = FB_DISK_KIND_PTX;
	e->major = (uint16_t)ma;
	e->minor = (uint16_t)mi;
	e->size = len + 1;
	e->data = malloc(e->size);
	if (!e->data)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memcpy(e->data, s, len);
	e->data[len] = 0;
	if (!*options)
		*options = "";
	return FB_OK;
}

/* A cubin for the target's SM; from sm_100 on with its compat blob instead of options. */
static int
set_elf(struct wentry *e, const char *tn, const void *data, size_t size, const char **options, struct fb_error *err)
{
	if (e->target.kind != AP_SASS)
		return fb_seterr(err, FB_EINVAL, "cubin given PTX target %s (use sm_%d)", tn, e->target.sm);
	struct fb_elfid id;
	int rc = fb_elf_ident(data, size, &id, err);
	if (rc)
		return rc;
	if (id.sm != e->target.sm)
		return fb_seterr(err, FB_EFORMAT, "cubin is for sm_%d, not the requested %s", id.sm, tn);
	e->disk_kind = FB_DISK_KIND_ELF;
	e->major = 1;
	e->minor = (uint16_t)id.abi;
	e->size = size;
	e->data = malloc(size ? size : 1);
	if (!e->data)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memcpy(e->data, data, size);
	if (e->target.sm >= 100 && id.compat && id.compat_len) {
		e->compat_len = id.compat_len;
		e->compat = calloc(1, id.compat_len);
		if (!e->compat) {
			wentry_free(e);
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		memcpy(e->compat + 1, id.compat, id.compat_len - 1);
		*options = NULL;
	}
	return FB_OK;
}

/* An NVVM (LTO-IR) container; options default to "". */
static int
set_lto(struct wentry *e, const void *data, size_t size, const char **options, struct fb_error *err)
{
	const unsigned char *p = data;
	if (size < 8 || fb_rd32(p) != 0x7F4E43EDu)
		return fb_seterr(err, FB_EFORMAT, "LTO-IR for arch %d is not an NVVM container (magic ed 43 4e 7f)",
		                 e->target.sm);
	e->disk_kind = FB_DISK_KIND_LTO;
	e->major = 1;
	e->minor = p[5];
	e->size = size;
	e->data = malloc(size);
	if (!e->data)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memcpy(e->data, data, size);
	if (!*options)
		*options = ""; /* nvJitLink crashes on an LTO entry without a descriptor */
	return FB_OK;
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
	int rc;
	switch (kind) {
	case FB_KIND_PTX:
		rc = set_ptx(&e, tn, data, size, &options, err);
		break;
	case FB_KIND_ELF:
		rc = set_elf(&e, tn, data, size, &options, err);
		break;
	case FB_KIND_LTO:
		rc = set_lto(&e, data, size, &options, err);
		break;
	default:
		return fb_seterr(err, FB_EINVAL, "unknown entry kind %d", (int)kind);
	}
	if (rc)
		return rc;
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

/* The flags of entry e as written. */
static uint64_t
entry_flags(const struct wentry *e, bool debug, enum fb_compress compress, bool comp)
{
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
	return flags;
}

/* Appends entry i (header, tail and the stored bytes, compressed or not) to b. */
static int
write_entry(const struct fb_fatbin *fb, size_t i, enum fb_compress compress, bool debug, struct obuf *b,
            struct fb_error *err)
{
	const struct wentry *e = &fb->e[i];
	bool comp = compress != FB_COMPRESS_NONE;
	if (comp && (fb->options & FB_WRITE_COMPRESS_TEXT) && e->disk_kind == FB_DISK_KIND_ELF && !debug)
		comp = false;
	unsigned char *cdata = NULL;
	size_t clen = 0;
	if (comp) {
		int rc = compress_image(compress, fb->zstd_level, e->data, e->size, &cdata, &clen, err);
		if (rc)
			return rc;
		if (clen > UINT32_MAX) {
			free(cdata);
			return fb_seterr(err, FB_ETOOBIG, "entry %zu: compressed size does not fit in 32 bits", i);
		}
	}
	const unsigned char *stored = comp ? cdata : e->data;
	size_t nstored = comp ? clen : e->size;
	uint64_t hsz = FB_ENTRY_HDR;
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
	if (hsz > UINT32_MAX || ob_reserve(b, (size_t)(hsz + psz))) {
		free(cdata);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	unsigned char *h = b->p + b->len;
	memset(h, 0, (size_t)(hsz + psz));
	struct fb_fmt_entry fe = {
		.kind = (uint16_t)e->disk_kind,
		.version = FB_ENTRY_VERSION,
		.header_size = (uint32_t)hsz,
		.payload_size = psz,
		.compressed_size = comp ? (uint32_t)clen : 0,
		.options_offset = opt_off,
		.minor = e->minor,
		.major = e->major,
		.arch = (uint32_t)e->target.sm,
		.ident_offset = ident_off,
		.ident_len = ident_len,
		.flags = entry_flags(e, debug, compress, comp),
		.okey = 0,
		.uncompressed_size = comp ? (uint64_t)e->size : 0,
	};
	fb_fmt_entry_write(h, &fe);
	if (e->ident)
		memcpy(h + ident_off, e->ident, ident_len);
	if (e->compat || e->options) {
		size_t len = e->compat ? e->compat_len : strlen_opt;
		fb_wr32(h + opt_off, opt_off + 8);
		fb_wr32(h + opt_off + 4, (uint32_t)len);
		memcpy(h + opt_off + 8, e->compat ? (const void *)e->compat : (const void *)e->options, len);
	}
	memcpy(h + hsz, stored, nstored);
	b->len += (size_t)(hsz + psz);
	free(cdata);
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
	if (ob_reserve(&b, FB_CONTAINER_HDR))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memset(b.p, 0, FB_CONTAINER_HDR);
	b.len = FB_CONTAINER_HDR;
	bool debug = fb->options & FB_WRITE_DEBUG;
	for (size_t i = 0; i < fb->n; i++) {
		int rc = write_entry(fb, i, compress, debug, &b, err);
		if (rc) {
			free(b.p);
			return rc;
		}
	}
	fb_fmt_container_write(b.p, (uint64_t)(b.len - FB_CONTAINER_HDR));
	*out = b.p;
	*outsize = b.len;
	return FB_OK;
}
