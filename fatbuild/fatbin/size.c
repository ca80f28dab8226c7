/* size.c: what the device code of a file costs, per kind and arch, and what a prune to an
 * arch list would keep (docs/prune.md).
 *
 * Every container of the file (fb_scan_buffer + fb_scan_entries) is counted: an entry's
 * stored bytes are its header plus its stored payload, its uncompressed bytes its header
 * plus the uncompressed size (or the stored payload when not compressed); nothing is
 * decompressed. With targets the file is pruned in memory (fb_prune_buffer, missing images
 * allowed) and the result is counted the same way; the containers of both come in the same
 * order, so container i before is container i after. With zstd_level the whole file, and the
 * pruned file, are compressed as a stream to measure what an archive or an image layer holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "shared.h"
#include "plumbing.h"

int
fb_zstd_size(const void *data, size_t size, int level, uint64_t *out, struct fb_error *err)
{
	*out = 0;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	if (!cc)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setPledgedSrcSize(cc, size); /* the parameters the zstd CLI picks for a file */
	size_t cap = ZSTD_CStreamOutSize();
	unsigned char *buf = malloc(cap);
	if (!buf) {
		ZSTD_freeCCtx(cc);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	ZSTD_inBuffer in = {data, size, 0};
	uint64_t total = 0;
	int rc = FB_OK;
	for (;;) {
		ZSTD_outBuffer ob = {buf, cap, 0};
		size_t left = ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_end);
		if (ZSTD_isError(left)) {
			rc = fb_seterr(err, FB_EFORMAT, "zstd: %s", ZSTD_getErrorName(left));
			break;
		}
		total += ob.pos;
		if (left == 0)
			break;
	}
	free(buf);
	ZSTD_freeCCtx(cc);
	*out = total;
	return rc;
}

static int
row_cmp(const struct fb_size_row *a, const struct fb_size_row *b)
{
	if (a->disk_kind != b->disk_kind)
		return a->disk_kind < b->disk_kind ? -1 : 1;
	if (a->target.sm != b->target.sm)
		return a->target.sm < b->target.sm ? -1 : 1;
	if (a->target.variant != b->target.variant)
		return a->target.variant < b->target.variant ? -1 : 1;
	if (a->obfuscated != b->obfuscated)
		return a->obfuscated ? 1 : -1;
	return 0;
}

static int
row_qsort(const void *a, const void *b)
{
	return row_cmp(a, b);
}

static uint64_t
entry_stored(const struct fb_entry *e)
{
	return e->header_size + e->payload_size;
}

static uint64_t
entry_uncompressed(const struct fb_entry *e)
{
	return e->header_size + (e->compress != FB_COMPRESS_NONE && e->uncompressed_size ? e->uncompressed_size
	                                                                                : e->payload_size);
}

/* Adds the entries of p to rows (before, or kept when kept is set). */
static int
count(const struct fb_parsed *p, struct fb_size_row **rows, size_t *nrows, size_t *cap, bool kept)
{
	for (size_t i = 0; i < p->nentries; i++) {
		const struct fb_entry *e = &p->entries[i];
		struct fb_size_row key = {0};
		key.disk_kind = e->disk_kind;
		key.target.sm = e->target.sm;
		key.target.variant = e->target.variant;
		key.target.kind = e->target.kind;
		key.obfuscated = e->obfuscated;
		struct fb_size_row *r = NULL;
		for (size_t k = 0; k < *nrows; k++)
			if (row_cmp(&(*rows)[k], &key) == 0) {
				r = &(*rows)[k];
				break;
			}
		if (!r) {
			if (*nrows == *cap) {
				size_t nc = *cap ? *cap * 2 : 16;
				struct fb_size_row *n = realloc(*rows, nc * sizeof(*n));
				if (!n)
					return FB_ENOMEM;
				*rows = n;
				*cap = nc;
			}
			r = &(*rows)[(*nrows)++];
			*r = key;
		}
		if (kept) {
			r->kept_entries++;
			r->kept_stored += entry_stored(e);
			r->kept_uncompressed += entry_uncompressed(e);
		} else {
			r->entries++;
			r->stored += entry_stored(e);
			r->uncompressed += entry_uncompressed(e);
		}
	}
	return FB_OK;
}

static int
scan_all(const void *data, size_t size, const char *name, struct fb_scan *sc, struct fb_parsed *p, struct fb_error *err)
{
	int rc = fb_scan_buffer(data, size, name, sc, err);
	if (rc)
		return rc;
	rc = fb_scan_entries(data, sc, p, err);
	if (rc)
		fb_scan_free(sc);
	return rc;
}

/* The sizes after pruning to opts->targets: the pruned file's rows, containers and totals. */
static int
size_pruned(const void *data, size_t size, const char *name, const struct fb_size_opts *opts,
            const struct fb_parsed *p, struct fb_size_report *out, size_t *cap, struct fb_error *err)
{
	struct fb_prune_opts po = {opts->targets, opts->ntargets, true, opts->prune_lto, opts->prune_relocatable, 0};
	unsigned char *pb;
	size_t psz;
	int rc = fb_prune_buffer(data, size, name, &po, &pb, &psz, &out->prune, err);
	if (rc)
		return rc;
	out->pruned = true;
	out->pruned_file_size = psz;
	struct fb_scan sc2;
	struct fb_parsed p2;
	rc = scan_all(pb, psz, name, &sc2, &p2, err);
	if (!rc) {
		if (p2.ncontainers != p->ncontainers) {
			rc = fb_seterr(err, FB_EFORMAT, "%s: the pruned file has %zu containers, the file %zu", name,
			               p2.ncontainers, p->ncontainers);
		} else if (count(&p2, &out->rows, &out->nrows, cap, true)) {
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		} else {
			for (size_t c = 0; c < p2.ncontainers; c++) {
				const struct fb_container *ct = &p2.containers[c];
				out->containers[c].kept_entries = ct->count;
				for (size_t i = 0; i < ct->count; i++)
					out->containers[c].kept_stored += entry_stored(&p2.entries[ct->first + i]);
			}
			out->kept_entries = p2.nentries;
			for (size_t i = 0; i < p2.nentries; i++) {
				out->kept_stored += entry_stored(&p2.entries[i]);
				out->kept_uncompressed += entry_uncompressed(&p2.entries[i]);
			}
		}
		fb_parsed_free(&p2);
		fb_scan_free(&sc2);
	}
	if (!rc && opts->zstd_level > 0)
		rc = fb_zstd_size(pb, psz, opts->zstd_level, &out->zstd_after, err);
	free(pb);
	return rc;
}

int
fb_size(const void *data, size_t size, const char *name, const struct fb_size_opts *opts, struct fb_size_report *out,
        struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	struct fb_size_opts none = {0};
	if (!opts)
		opts = &none;
	if (!name)
		name = "input";
	struct fb_scan sc;
	struct fb_parsed p;
	int rc = scan_all(data, size, name, &sc, &p, err);
	if (rc)
		return rc;
	size_t cap = 0;
	snprintf(out->type, sizeof(out->type), "%s", sc.type);
	out->file_size = size;
	out->ncontainers = p.ncontainers;
	out->nentries = p.nentries;
	out->containers = calloc(p.ncontainers ? p.ncontainers : 1, sizeof(*out->containers));
	if (!out->containers || count(&p, &out->rows, &out->nrows, &cap, false)) {
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t c = 0; c < p.ncontainers; c++) {
		const struct fb_container *ct = &p.containers[c];
		struct fb_size_container *oc = &out->containers[c];
		snprintf(oc->where, sizeof(oc->where), "%s", sc.blobs[ct->blob].where);
		oc->offset = ct->offset;
		oc->size = ct->size;
		oc->entries = ct->count;
		for (size_t i = 0; i < ct->count; i++)
			oc->stored += entry_stored(&p.entries[ct->first + i]);
	}
	for (size_t i = 0; i < p.nentries; i++) {
		out->stored += entry_stored(&p.entries[i]);
		out->uncompressed += entry_uncompressed(&p.entries[i]);
	}
	if (opts->zstd_level > 0 && (rc = fb_zstd_size(data, size, opts->zstd_level, &out->zstd_before, err)) != 0)
		goto done;
	if (opts->targets && opts->ntargets)
		rc = size_pruned(data, size, name, opts, &p, out, &cap, err);
	if (out->nrows)
		qsort(out->rows, out->nrows, sizeof(*out->rows), row_qsort);
done:
	fb_parsed_free(&p);
	fb_scan_free(&sc);
	if (rc)
		fb_size_report_free(out);
	return rc;
}

void
fb_size_report_free(struct fb_size_report *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r->containers);
	fb_prune_report_free(&r->prune);
	r->rows = NULL;
	r->containers = NULL;
	r->nrows = 0;
}
