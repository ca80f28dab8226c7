/* prune_blob.c: pruning one blob of containers (docs/prune.md): per container, which entries
 * to keep (fb_select for each listed target; obfuscated, unknown and LTO-IR entries by the
 * rules of prune.c's file comment), and writing the kept entries back, compacted (with the
 * offset map a relocatable object's symbols follow) or in place. */
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "pruning.h"

void
fb_prune_note(struct pctx *c, const char *fmt, ...)
{
	c->nnotes++;
	if (c->nnotes > NOTE_LINES)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fb_text_oneline(line); /* member and section names come from the file */
	size_t l = strlen(line);
	if (c->nlen + l + 2 > c->ncap) {
		size_t nc = (c->ncap + l + 2) * 2;
		char *n = realloc(c->notes, nc);
		if (!n)
			return; /* notes are best effort; the counts stay exact */
		c->notes = n;
		c->ncap = nc;
	}
	memcpy(c->notes + c->nlen, line, l);
	c->nlen += l;
	c->notes[c->nlen++] = '\n';
	c->notes[c->nlen] = 0;
}

/* The ELF e_type of an ELF entry's image (from its first bytes), or -1 when unknown. */
static int
entry_elf_type(const struct fb_entry *e)
{
	unsigned char hdr[64];
	size_t got = 0;
	if (e->obfuscated)
		return -1;
	if (e->compress == FB_COMPRESS_NONE) {
		if (e->stored_size < 18)
			return -1;
		memcpy(hdr, e->payload, 18);
		got = 18;
	} else if (e->compress == FB_COMPRESS_ZSTD) {
		ZSTD_DStream *ds = ZSTD_createDStream();
		if (!ds)
			return -1;
		ZSTD_inBuffer in = {e->payload, e->stored_size, 0};
		ZSTD_outBuffer out = {hdr, sizeof(hdr), 0};
		while (out.pos < 18 && in.pos < in.size) {
			size_t r = ZSTD_decompressStream(ds, &out, &in);
			if (ZSTD_isError(r) || r == 0)
				break;
		}
		got = out.pos;
		ZSTD_freeDStream(ds);
	} else if (e->compress == FB_COMPRESS_LZ4 && e->stored_size <= INT32_MAX) {
		int r = LZ4_decompress_safe_partial((const char *)e->payload, (char *)hdr, (int)e->stored_size, 18,
		                                    (int)sizeof(hdr));
		got = r > 0 ? (size_t)r : 0;
	}
	if (got < 18 || memcmp(hdr, "\x7f" "ELF", 4) != 0)
		return -1;
	return fb_rd16(hdr + 16);
}

static bool
selectable(const struct fb_entry *e)
{
	return (e->disk_kind == FB_DISK_KIND_ELF || e->disk_kind == FB_DISK_KIND_PTX) && !e->obfuscated;
}

/* The candidates of one container for fb_select: its selectable images (im, entry indices in
 * idx), the PTX among them (pim, pidx), and the obfuscated ELF/PTX images kept as they are (oim). */
struct cands {
	struct fb_image *im, *pim, *oim;
	size_t *idx, *pidx;
	size_t n, np, no;
};

/* In a linked file without prune_relocatable, a container in a relocatable section or with a
 * relocatable cubin is kept whole (it is linked at load time). */
static bool
keep_relocatable(struct pctx *c, const struct fb_parsed *p, const struct fb_container *ct, bool relsection, bool *keep)
{
	if (!c->linked || c->o->prune_relocatable)
		return false;
	bool rel = relsection;
	for (size_t i = 0; i < ct->count && !rel; i++) {
		const struct fb_entry *e = &p->entries[ct->first + i];
		rel = e->disk_kind == FB_DISK_KIND_ELF && entry_elf_type(e) == 1;
	}
	if (!rel)
		return false;
	for (size_t i = 0; i < ct->count; i++)
		keep[i] = true;
	c->r->kept_relocatable++;
	return true;
}

/* Sorts the entries of ct into the candidates; LTO-IR (with prune_lto: for a listed SM),
 * unknown and obfuscated entries are kept here. */
static void
classify(struct pctx *c, const struct fb_parsed *p, const struct fb_container *ct, const char *where, size_t cindex,
         struct cands *k, bool *keep)
{
	const struct fb_prune_opts *o = c->o;
	struct fb_prune_report *r = c->r;
	for (size_t i = 0; i < ct->count; i++) {
		const struct fb_entry *e = &p->entries[ct->first + i];
		keep[i] = false;
		if (selectable(e)) {
			k->im[k->n].target = e->target;
			k->im[k->n].compat = (e->flags & FB_FLAG_COMPAT) != 0;
			k->idx[k->n++] = i;
			if (e->disk_kind == FB_DISK_KIND_PTX) {
				k->pim[k->np] = k->im[k->n - 1];
				k->pidx[k->np++] = i;
			}
		} else if (e->disk_kind == FB_DISK_KIND_LTO && o->prune_lto) {
			/* the header's arch is plain even when the payload is obfuscated (compressed LTO-IR) */
			for (size_t t = 0; t < o->ntargets; t++)
				keep[i] |= o->targets[t].sm == e->target.sm;
			if (keep[i])
				r->kept_lto++;
		} else {
			keep[i] = true;
			char kb[16];
			if (e->disk_kind == FB_DISK_KIND_LTO) {
				r->kept_lto++;
			} else {
				if (e->disk_kind == FB_DISK_KIND_ELF || e->disk_kind == FB_DISK_KIND_PTX) {
					k->oim[k->no].target = e->target; /* kept; its header arch still serves a GPU */
					k->oim[k->no++].compat = (e->flags & FB_FLAG_COMPAT) != 0;
				}
				r->kept_other++;
				fb_prune_note(c, "%s%scontainer %zu entry %zu: %s %s entry kept as it is", where, *where ? ": " : "", cindex,
				     e->index, e->obfuscated ? "obfuscated" : "unknown",
				     fb_disk_kind_name(e->disk_kind, kb, sizeof(kb)));
			}
		}
	}
}

/* Keeps the image fb_select picks for each listed target; notes the SASS targets left without
 * one. Returns true when some target is. */
static bool
pick(struct pctx *c, const struct cands *k, const char *where, size_t cindex, bool *keep)
{
	const struct fb_prune_opts *o = c->o;
	char tn[32];
	bool missing = false;
	for (size_t t = 0; t < o->ntargets; t++) {
		const struct ap_target *tg = &o->targets[t];
		struct ap_target dev = {tg->sm, AP_ARCH, AP_SASS, 0};
		if (tg->kind == AP_SASS) {
			long s = fb_select(k->im, k->n, &dev, NULL);
			if (s >= 0) {
				keep[k->idx[s]] = true;
			} else if (k->n > 0 && fb_select(k->oim, k->no, &dev, NULL) < 0) {
				missing = true;
				fb_prune_note(c, "%s%scontainer %zu has no image for %s (its kernels will not run there)", where,
				     *where ? ": " : "", cindex, ap_target_name(tg, tn, sizeof(tn)));
			}
		} else {
			dev.variant = tg->variant == AP_PLAIN ? AP_ARCH : tg->variant;
			long s = fb_select(k->pim, k->np, &dev, NULL);
			if (s >= 0)
				keep[k->pidx[s]] = true;
			else if (k->np > 0 || k->n > 0)
				c->r->missing_ptx++;
		}
	}
	return missing;
}

/* Decides which entries of container ct to keep (keep[i] for entry ct->first+i). Returns
 * true when the container is to be left whole. */
static bool
decide(struct pctx *c, const struct fb_parsed *p, const struct fb_container *ct, const char *where, size_t cindex,
       bool relsection, bool *keep)
{
	if (keep_relocatable(c, p, ct, relsection, keep))
		return true;
	size_t cnt = ct->count ? ct->count : 1;
	struct cands k = {calloc(cnt, sizeof(*k.im)), calloc(cnt, sizeof(*k.pim)), calloc(cnt, sizeof(*k.oim)),
	                  calloc(cnt, sizeof(*k.idx)), calloc(cnt, sizeof(*k.pidx)), 0, 0, 0};
	bool whole = !k.im || !k.idx || !k.pim || !k.pidx || !k.oim;
	if (whole) {
		for (size_t i = 0; i < ct->count; i++)
			keep[i] = true;
	} else {
		classify(c, p, ct, where, cindex, &k, keep);
		if (pick(c, &k, where, cindex, keep))
			c->r->missing++;
	}
	free(k.im), free(k.idx), free(k.pim), free(k.pidx), free(k.oim);
	return whole;
}

/* Writes the pruned container ct (of the blob at base) to dst; returns its size. */
static size_t
write_container(const unsigned char *base, const struct fb_parsed *p, const struct fb_container *ct,
                const bool *keep, unsigned char *dst)
{
	memcpy(dst, base + ct->offset, FB_CONTAINER_HDR);
	size_t w = FB_CONTAINER_HDR;
	for (size_t i = 0; i < ct->count; i++) {
		if (!keep[i])
			continue;
		const struct fb_entry *e = &p->entries[ct->first + i];
		size_t len = e->header_size + (size_t)e->payload_size;
		memmove(dst + w, base + e->offset, len);
		w += len;
	}
	fb_wr64(dst + 8, w - FB_CONTAINER_HDR);
	return w;
}

void
fb_prune_omap_free(struct omap *m)
{
	free(m->old_start), free(m->new_start), free(m->old_size), free(m->new_size);
	memset(m, 0, sizeof(*m));
}

uint64_t
fb_prune_omap_map(const struct omap *m, uint64_t off)
{
	/* containers are sorted; gaps keep their bytes and shift with what precedes them
	 * (arithmetic mod 2^64: symbol values come from the input) */
	uint64_t delta = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (off < m->old_start[i])
			break;
		if (off - m->old_start[i] < m->old_size[i]) {
			uint64_t in = off - m->old_start[i];
			return m->new_start[i] + (in < m->new_size[i] ? in : m->new_size[i]);
		}
		delta = (uint64_t)m->new_start[i] + m->new_size[i] - (uint64_t)m->old_start[i] - m->old_size[i];
	}
	return off + delta;
}

/* Counts the kept and removed entries of ct in the report; true when some are removed. */
static bool
count_kept(struct fb_prune_report *r, const struct fb_parsed *p, const struct fb_container *ct, const bool *keep)
{
	bool removed = false;
	for (size_t i = 0; i < ct->count; i++) {
		const struct fb_entry *e = &p->entries[ct->first + i];
		uint64_t len = e->header_size + e->payload_size;
		if (keep[i]) {
			r->kept_entries++;
			r->kept_bytes += len;
		} else {
			r->removed_entries++;
			r->removed_bytes += len;
			removed = true;
		}
	}
	return removed;
}

int
fb_prune_blob(struct pctx *c, const unsigned char *blob, size_t size, const char *where, bool in_place, bool relsection,
           unsigned char **out, size_t *outsize, struct omap *map, bool *changed)
{
	struct fb_parsed p;
	*out = NULL;
	*changed = false;
	int rc = fb_fatbin_parse(blob, size, 0, &p, c->err);
	if (rc) {
		if (c->err && *where) {
			char m[sizeof(c->err->msg)];
			memcpy(m, c->err->msg, sizeof(m));
			fb_seterr(c->err, rc, "%s: %.900s", where, m);
		}
		return rc;
	}
	unsigned char *o = malloc(size ? size : 1);
	bool *keep = calloc(p.nentries ? p.nentries : 1, sizeof(*keep));
	if (map) {
		memset(map, 0, sizeof(*map));
		map->old_start = calloc(p.ncontainers + 1, sizeof(size_t));
		map->new_start = calloc(p.ncontainers + 1, sizeof(size_t));
		map->old_size = calloc(p.ncontainers + 1, sizeof(size_t));
		map->new_size = calloc(p.ncontainers + 1, sizeof(size_t));
	}
	if (!o || !keep || (map && (!map->old_start || !map->new_start || !map->old_size || !map->new_size))) {
		free(o), free(keep);
		if (map)
			fb_prune_omap_free(map);
		fb_parsed_free(&p);
		return fb_seterr(c->err, FB_ENOMEM, "out of memory");
	}
	size_t rpos = 0, w = 0;
	if (in_place)
		memcpy(o, blob, size);
	for (size_t k = 0; k < p.ncontainers; k++) {
		const struct fb_container *ct = &p.containers[k];
		size_t ci = c->r->ncontainers++;
		c->r->nentries += ct->count;
		decide(c, &p, ct, where, ci, relsection, keep + ct->first);
		if (count_kept(c->r, &p, ct, keep + ct->first))
			*changed = true;
		if (in_place) {
			size_t nw = write_container(blob, &p, ct, keep + ct->first, o + ct->offset);
			memset(o + ct->offset + nw, 0, ct->size - nw);
		} else {
			memcpy(o + w, blob + rpos, ct->offset - rpos); /* gap before it, as it was */
			w += ct->offset - rpos;
			size_t nw = write_container(blob, &p, ct, keep + ct->first, o + w);
			if (map) {
				map->old_start[map->n] = ct->offset;
				map->old_size[map->n] = ct->size;
				map->new_start[map->n] = w;
				map->new_size[map->n++] = nw;
			}
			w += nw;
			rpos = ct->offset + ct->size;
		}
	}
	if (!in_place) {
		memcpy(o + w, blob + rpos, size - rpos);
		w += size - rpos;
	} else {
		w = size;
	}
	if (map) {
		map->old_total = size;
		map->new_total = w;
	}
	free(keep);
	fb_parsed_free(&p);
	*out = o;
	*outsize = w;
	return FB_OK;
}
