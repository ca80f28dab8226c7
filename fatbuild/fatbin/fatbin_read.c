/* fatbin_read.c: the fatbinary container reader and entry decoder.
 *
 * Layout and walk steps: format.h (docs/fatbin.md §1-§4). Reader rules:
 *   - walk entries by entry + header size + payload size; never assume a 0x40 header;
 *   - every size and offset is bounds-checked against the container end with subtraction
 *     (no overflow); header and payload sizes must be multiples of 8, header size >= 0x40;
 *   - several containers may follow each other; zero padding between them is skipped;
 *   - unknown kinds are kept (and refused by fb_entry_image); flag 0x10000 (obfuscated)
 *     payloads are reported, never decoded;
 *   - zstd: a single frame whose content size equals the header's uncompressed size;
 *     LZ4: a raw block (LZ4_decompress_safe into exactly usz bytes) or, when the payload
 *     starts with 04 22 4d 18, an LZ4 frame; the uncompressed size is capped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LZ4F_STATIC_LINKING_ONLY
#include <lz4.h>
#include <lz4frame.h>
#include <zstd.h>

#include "shared.h"

const char *
fb_disk_kind_name(unsigned k, char *buf, size_t size)
{
	switch (k) {
	case FB_DISK_KIND_PTX: return "ptx";
	case FB_DISK_KIND_ELF: return "elf";
	case FB_DISK_KIND_LTO: return "lto";
	case FB_DISK_KIND_OLDCUBIN: return "oldcubin";
	default: snprintf(buf, size, "kind%u", k); return buf;
	}
}

void
fb_parsed_free(struct fb_parsed *p)
{
	if (!p)
		return;
	free(p->containers);
	free(p->entries);
	memset(p, 0, sizeof(*p));
}

/* arr (n used of *cap elements of elem bytes) with room for one more: arr itself, or a
 * reallocation with the capacity doubled (first: the first capacity); NULL when out of memory. */
static void *
grow(void *arr, size_t n, size_t *cap, size_t first, size_t elem)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap * 2 : first;
	void *na = realloc(arr, nc * elem);
	if (na)
		*cap = nc;
	return na;
}

static int
push_entry(struct fb_parsed *p, size_t *cap, const struct fb_entry *e)
{
	struct fb_entry *ne = grow(p->entries, p->nentries, cap, 16, sizeof(*e));
	if (!ne)
		return -1;
	p->entries = ne;
	p->entries[p->nentries++] = *e;
	return 0;
}

static int
push_container(struct fb_parsed *p, size_t *cap, const struct fb_container *c)
{
	struct fb_container *nc = grow(p->containers, p->ncontainers, cap, 4, sizeof(*c));
	if (!nc)
		return -1;
	p->containers = nc;
	p->containers[p->ncontainers++] = *c;
	return 0;
}

/* The message of a failed entry walk step (fb_fmt_entry_next) at an entry left bytes before its
 * container's end. */
static int
entry_walk_error(struct fb_error *err, enum fb_fmt_status st, const struct fb_fmt_entry *h, size_t left, size_t ci,
                 size_t ei)
{
	uint32_t hsz = h->header_size;
	switch (st) {
	case FB_FMT_SHORT:
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: header truncated (%zu bytes left, need 64)", ci,
		                 ei, left);
	case FB_FMT_HEADER_SMALL:
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: header size 0x%x is below 0x40", ci, ei, hsz);
	case FB_FMT_HEADER_ALIGN:
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: header size 0x%x is not a multiple of 8", ci, ei,
		                 hsz);
	case FB_FMT_HEADER_PAST:
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: header size 0x%x runs past the container end (0x%zx left)",
		                 ci, ei, hsz, left);
	case FB_FMT_SIZE_ALIGN:
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: payload size 0x%llx is not a multiple of 8", ci, ei,
		                 (unsigned long long)h->payload_size);
	default:
		return fb_seterr(err, FB_EFORMAT,
		                 "container %zu: entry %zu: payload size 0x%llx runs past the container end (0x%zx left)", ci, ei,
		                 (unsigned long long)h->payload_size, left - hsz);
	}
}

/* Fills e's identifier and its options string or compat blob from the entry header at h. */
static int
entry_tail(const unsigned char *h, const struct fb_fmt_entry *fe, size_t ci, size_t ei, struct fb_entry *e,
           struct fb_error *err)
{
	uint32_t hsz = fe->header_size, idoff = fe->ident_offset, idlen = fe->ident_len, optoff = fe->options_offset;
	if (idoff) {
		if (idoff < 0x40 || idoff >= hsz || idlen >= hsz - idoff)
			return fb_seterr(err, FB_EFORMAT,
			                 "container %zu: entry %zu: identifier (offset 0x%x, length %u) lies outside the 0x%x-byte header",
			                 ci, ei, idoff, idlen, hsz);
		e->ident = (const char *)h + idoff;
		e->ident_len = idlen;
	}
	if (optoff) {
		if (optoff < 0x40 || optoff > hsz - 8)
			return fb_seterr(err, FB_EFORMAT,
			                 "container %zu: entry %zu: options descriptor offset 0x%x lies outside the 0x%x-byte header", ci,
			                 ei, optoff, hsz);
		uint32_t so = fb_rd32(h + optoff), sl = fb_rd32(h + optoff + 4);
		if (so == 0 && sl == 0)
			return FB_OK; /* {0, 0}: no options (docs/fatbin.md §2) */
		if (so < 0x40 || so > hsz || sl > hsz - so)
			return fb_seterr(err, FB_EFORMAT,
			                 "container %zu: entry %zu: options string (offset 0x%x, length %u) lies outside the 0x%x-byte header",
			                 ci, ei, so, sl, hsz);
		if (e->disk_kind == FB_DISK_KIND_ELF && (e->flags & FB_FLAG_COMPAT)) {
			e->compat = h + so;
			e->compat_len = sl;
		} else {
			e->options = (const char *)h + so;
			e->options_len = sl;
		}
	}
	return FB_OK;
}

/* Parses the entry at base[off] (container-relative checks against cend). */
static int
parse_entry(const unsigned char *base, size_t off, size_t cend, size_t ci, size_t ei, struct fb_entry *e,
            struct fb_error *err)
{
	const unsigned char *h = base + off;
	struct fb_fmt_entry fe = {0};
	memset(e, 0, sizeof(*e));
	e->container = ci;
	e->index = ei;
	e->offset = off;
	enum fb_fmt_status st = fb_fmt_entry_next(base, off, cend, FB_FMT_CHECK_LAYOUT, &fe);
	if (st != FB_FMT_OK)
		return entry_walk_error(err, st, &fe, cend - off, ci, ei);
	e->disk_kind = fe.kind;
	e->header_size = fe.header_size;
	e->payload_size = fe.payload_size;
	e->compressed_size = fe.compressed_size;
	e->minor = fe.minor;
	e->major = fe.major;
	e->flags = fe.flags;
	e->okey = fe.okey;
	e->uncompressed_size = fe.uncompressed_size;
	uint32_t arch = fe.arch;
	if (arch > 0xffff)
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: arch %u is not an SM number", ci, ei, arch);
	if ((e->flags & FB_FLAG_LZ4) && (e->flags & FB_FLAG_ZSTD))
		return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: both LZ4 and zstd flags are set (0x%llx)", ci, ei,
		                 (unsigned long long)e->flags);
	bool comp = e->flags & (FB_FLAG_LZ4 | FB_FLAG_ZSTD | FB_FLAG_COMPRESS_OLD);
	e->compress = (e->flags & FB_FLAG_ZSTD) ? FB_COMPRESS_ZSTD : (e->flags & FB_FLAG_LZ4) ? FB_COMPRESS_LZ4 : FB_COMPRESS_NONE;
	e->obfuscated = e->flags & FB_FLAG_OBFUSCATED;
	if (comp) {
		if (e->compressed_size == 0 || e->compressed_size > e->payload_size)
			return fb_seterr(err, FB_EFORMAT,
			                 "container %zu: entry %zu: compressed size 0x%x does not fit the payload size 0x%llx", ci, ei,
			                 e->compressed_size, (unsigned long long)e->payload_size);
		if (e->uncompressed_size == 0)
			return fb_seterr(err, FB_EFORMAT, "container %zu: entry %zu: compressed entry has uncompressed size 0", ci, ei);
		e->stored_size = e->compressed_size;
	} else {
		if (e->compressed_size != 0)
			return fb_seterr(err, FB_EFORMAT,
			                 "container %zu: entry %zu: compressed size 0x%x set without a compression flag (flags 0x%llx)",
			                 ci, ei, e->compressed_size, (unsigned long long)e->flags);
		e->stored_size = (size_t)e->payload_size;
	}
	e->payload = h + fe.header_size;
	int rc = entry_tail(h, &fe, ci, ei, e, err);
	if (rc)
		return rc;
	e->target.sm = (int)arch;
	e->target.variant = (e->flags & FB_FLAG_ARCH_A) ? AP_ARCH : (e->flags & FB_FLAG_FAMILY_F) ? AP_FAMILY : AP_PLAIN;
	e->target.kind = e->disk_kind == FB_DISK_KIND_ELF || e->disk_kind == FB_DISK_KIND_OLDCUBIN ? AP_SASS : AP_PTX;
	return FB_OK;
}

/* The message of a failed container walk step (fb_fmt_container_next) for container ci at
 * base[off], size bytes in all. */
static int
container_walk_error(struct fb_error *err, enum fb_fmt_status st, const unsigned char *base, size_t size, size_t off,
                     size_t ci)
{
	const unsigned char *p = base + off;
	size_t left = size - off;
	switch (st) {
	case FB_FMT_SHORT:
		return fb_seterr(err, FB_EFORMAT, "container %zu at 0x%zx: header truncated (%zu bytes, need 16)", ci, off, left);
	case FB_FMT_OLD_MAGIC:
		return fb_seterr(err, FB_EUNSUPPORTED, "container %zu at 0x%zx: old-style fatbin (magic 0x1EE55A01) is not supported",
		                 ci, off);
	case FB_FMT_MAGIC:
		return fb_seterr(err, FB_EFORMAT, "container %zu at 0x%zx: bad magic 0x%08x (want 0xBA55ED50)", ci, off,
		                 fb_rd32(p));
	case FB_FMT_VERSION:
		return fb_seterr(err, FB_EFORMAT, "container %zu at 0x%zx: version %u is not 1", ci, off,
		                 (unsigned)fb_rd16(p + 4));
	case FB_FMT_HEADER_SMALL:
		return fb_seterr(err, FB_EFORMAT, "container %zu at 0x%zx: header size 0x%x is not 0x10", ci, off,
		                 (unsigned)fb_rd16(p + 6));
	case FB_FMT_SIZE_ALIGN:
		return fb_seterr(err, FB_EFORMAT, "container %zu at 0x%zx: size 0x%llx is not a multiple of 8", ci, off,
		                 (unsigned long long)fb_rd64(p + 8));
	default:
		return fb_seterr(err, FB_EFORMAT, "container %zu at 0x%zx: size 0x%llx runs past the end of the data (0x%zx bytes left)",
		                 ci, off, (unsigned long long)fb_rd64(p + 8), left - 16);
	}
}

int
fb_fatbin_parse(const void *data, size_t size, unsigned flags, struct fb_parsed *out, struct fb_error *err)
{
	const unsigned char *base = data;
	size_t ccap = 0, ecap = 0, off = 0;
	int rc = FB_OK;
	memset(out, 0, sizeof(*out));
	if (!data && size)
		return fb_seterr(err, FB_EINVAL, "fb_fatbin_parse: NULL data");
	for (;;) {
		size_t ci = out->ncontainers, at = off, csize = 0;
		/* zero padding is skipped between containers, not before the first */
		enum fb_fmt_status st = fb_fmt_container_next(base, size, &off, ci ? FB_PAD_BYTES : FB_PAD_NONE,
		                                              FB_FMT_CHECK_VERSION | FB_FMT_CHECK_LAYOUT, &at, &csize);
		if (st == FB_FMT_END)
			break;
		if (st != FB_FMT_OK) {
			rc = container_walk_error(err, st, base, size, at, ci);
			goto fail;
		}
		struct fb_container c = {at, csize, out->nentries, 0, 0, false};
		size_t cend = at + csize, e = at + FB_CONTAINER_HDR;
		while (e < cend) {
			struct fb_entry ent;
			rc = parse_entry(base, e, cend, ci, c.count, &ent, err);
			if (rc)
				goto fail;
			if (push_entry(out, &ecap, &ent)) {
				rc = fb_seterr(err, FB_ENOMEM, "out of memory");
				goto fail;
			}
			c.count++;
			e += ent.header_size + (size_t)ent.payload_size;
		}
		if (push_container(out, &ccap, &c)) {
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
			goto fail;
		}
		if (flags & FB_PARSE_FIRST)
			break;
	}
	if (out->ncontainers == 0) {
		rc = fb_seterr(err, FB_EFORMAT, "no fatbin container (%zu bytes)", size);
		goto fail;
	}
	return FB_OK;
fail:
	fb_parsed_free(out);
	return rc;
}

static int
ename(const struct fb_entry *e, char *buf, size_t size)
{
	return snprintf(buf, size, "container %zu: entry %zu", e->container, e->index);
}

/* Decompresses the zstd frame src[0..csz) into exactly usz bytes at d. */
static int
unzstd(const char *where, const unsigned char *src, size_t csz, unsigned char *d, size_t usz, struct fb_error *err)
{
	unsigned long long fcs = ZSTD_getFrameContentSize(src, csz);
	if (fcs == ZSTD_CONTENTSIZE_ERROR)
		return fb_seterr(err, FB_EFORMAT, "%s: payload is not a zstd frame", where);
	if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != usz)
		return fb_seterr(err, FB_EFORMAT, "%s: zstd frame holds %llu bytes but the header says %llu", where, fcs,
		                 (unsigned long long)usz);
	size_t r = ZSTD_decompress(d, usz, src, csz);
	if (ZSTD_isError(r) || r != usz)
		return fb_seterr(err, FB_EFORMAT, "%s: zstd decompression failed: %s", where,
		                 ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong decompressed size");
	return FB_OK;
}

/* Decompresses the LZ4 frame src[0..csz) into exactly usz bytes at d. */
static int
unlz4_frame(const char *where, const unsigned char *src, size_t csz, unsigned char *d, size_t usz,
            struct fb_error *err)
{
	LZ4F_dctx *dc;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	size_t si = 0, di = 0;
	size_t r = 1;
	while (si < csz && r != 0) {
		size_t sn = csz - si, dn = usz - di;
		r = LZ4F_decompress(dc, d + di, &dn, src + si, &sn, NULL);
		if (LZ4F_isError(r))
			break;
		si += sn;
		di += dn;
		if (sn == 0 && dn == 0)
			break;
	}
	LZ4F_freeDecompressionContext(dc);
	if (LZ4F_isError(r) || r != 0 || di != usz)
		return fb_seterr(err, FB_EFORMAT, "%s: LZ4 frame decompression failed: %s", where,
		                 LZ4F_isError(r) ? LZ4F_getErrorName(r) : "wrong decompressed size");
	return FB_OK;
}

/* Decompresses the raw LZ4 block src[0..csz) into exactly usz bytes at d. */
static int
unlz4_block(const char *where, const unsigned char *src, size_t csz, unsigned char *d, uint64_t usz,
            struct fb_error *err)
{
	if (usz > LZ4_MAX_INPUT_SIZE || csz > (size_t)INT32_MAX)
		return fb_seterr(err, FB_ETOOBIG, "%s: LZ4 block sizes exceed 2 GiB", where);
	int r = LZ4_decompress_safe((const char *)src, (char *)d, (int)csz, (int)usz);
	if (r < 0 || (uint64_t)r != usz)
		return fb_seterr(err, FB_EFORMAT, "%s: LZ4 block decompression failed (%d of %llu bytes)", where, r,
		                 (unsigned long long)usz);
	return FB_OK;
}

int
fb_entry_image(const struct fb_entry *e, uint64_t cap, unsigned char **out, size_t *outsize, struct fb_error *err)
{
	char where[64], kb[16];
	if (!e || !out || !outsize)
		return fb_seterr(err, FB_EINVAL, "fb_entry_image: NULL argument");
	*out = NULL;
	*outsize = 0;
	ename(e, where, sizeof(where));
	if (!cap)
		cap = FB_DEFAULT_DECOMPRESS_CAP;
	if (e->disk_kind != FB_DISK_KIND_PTX && e->disk_kind != FB_DISK_KIND_ELF && e->disk_kind != FB_DISK_KIND_LTO)
		return fb_seterr(err, FB_EUNSUPPORTED, "%s: unknown kind %s cannot be decoded", where,
		                 fb_disk_kind_name(e->disk_kind, kb, sizeof(kb)));
	if (e->obfuscated)
		return fb_seterr(err, FB_EUNSUPPORTED, "%s: payload is obfuscated (flag 0x10000, key 0x%llx) and cannot be decoded",
		                 where, (unsigned long long)e->okey);
	if ((e->flags & FB_FLAG_COMPRESS_OLD) && e->compress == FB_COMPRESS_NONE)
		return fb_seterr(err, FB_EUNSUPPORTED, "%s: old compression flag 0x1000 is not supported", where);
	if (e->compress == FB_COMPRESS_NONE) {
		size_t n = e->stored_size;
		if (e->disk_kind == FB_DISK_KIND_ELF)
			n = fb_elf_extent(e->payload, n);
		unsigned char *d = malloc(n ? n : 1);
		if (!d)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		memcpy(d, e->payload, n);
		*out = d;
		*outsize = n;
		return FB_OK;
	}
	uint64_t usz = e->uncompressed_size;
	if (usz > cap || usz > SIZE_MAX)
		return fb_seterr(err, FB_ETOOBIG, "%s: uncompressed size %llu is above the cap of %llu bytes (raise it with --max-size)",
		                 where, (unsigned long long)usz, (unsigned long long)cap);
	unsigned char *d = malloc((size_t)usz);
	if (!d)
		return fb_seterr(err, FB_ENOMEM, "%s: cannot allocate %llu bytes", where, (unsigned long long)usz);
	int rc;
	if (e->compress == FB_COMPRESS_ZSTD)
		rc = unzstd(where, e->payload, e->compressed_size, d, (size_t)usz, err);
	else if (e->compressed_size >= 4 && fb_rd32(e->payload) == 0x184D2204u)
		rc = unlz4_frame(where, e->payload, e->compressed_size, d, (size_t)usz, err);
	else
		rc = unlz4_block(where, e->payload, e->compressed_size, d, usz, err);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	*outsize = (size_t)usz;
	return FB_OK;
}
