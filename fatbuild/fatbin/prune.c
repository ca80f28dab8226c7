/* prune.c: keeping only the images the loader would use for a list of GPUs, in every
 * container of a .fatbin, a relocatable object, an ar archive, a shared library or an
 * executable (docs/prune.md).
 *
 * Per container, fb_select decides: for each SASS target sm_X of the list the image a real
 * X GPU would load (SASS, or the PTX it would JIT when no SASS fits); for each PTX target
 * compute_X the PTX image a compute_X JIT would start from (the highest PTX arch <= X).
 * Everything else is removed; kept entries are copied byte for byte (header, identifier,
 * options, payload), and only the container's fatSize changes. Obfuscated entries and
 * unknown kinds are kept, LTO-IR is kept unless opts->prune_lto (then only the listed archs'
 * lto_X stay).
 *
 * Files:
 * - a .fatbin: the containers are compacted (the file shrinks);
 * - a relocatable ELF (.o, and .o members of archives): .nv_fatbin and __nv_relfatbin are
 *   rewritten to their new size with libelf, which lays the file out again; symbols defined
 *   in those sections and relocation addends against them follow their container;
 * - an ar archive: every member as above, member sizes and the symbol table's member
 *   offsets updated;
 * - a linked ELF (ET_EXEC, ET_DYN): each container is rewritten where it starts, inside its
 *   section, and the bytes it no longer uses are zeroed. Every address stays valid (the
 *   .nvFatBinSegment wrappers point at container starts), the file keeps its size and the
 *   zeros compress to nothing. Containers of __nv_relfatbin, and containers holding
 *   relocatable (ET_REL) cubins, are kept unless opts->prune_relocatable. */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "fatbin_priv.h"

#define NOTE_LINES 20

struct pctx {
	const struct fb_prune_opts *o;
	struct fb_prune_report *r;
	struct fb_error *err;
	char *notes;
	size_t nlen, ncap, nnotes;
	bool linked;
};

static void
note(struct pctx *c, const char *fmt, ...)
{
	c->nnotes++;
	if (c->nnotes > NOTE_LINES)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
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

static void
wr64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
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

/* Decides which entries of container ct to keep (keep[i] for entry ct->first+i). Returns
 * true when the container is to be left whole. */
static bool
decide(struct pctx *c, const struct fb_parsed *p, const struct fb_container *ct, const char *where, size_t cindex,
       bool relsection, bool *keep)
{
	const struct fb_prune_opts *o = c->o;
	struct fb_prune_report *r = c->r;
	char tn[32];
	if (c->linked && !o->prune_relocatable) {
		bool rel = relsection;
		for (size_t i = 0; i < ct->count && !rel; i++) {
			const struct fb_entry *e = &p->entries[ct->first + i];
			rel = e->disk_kind == FB_DISK_KIND_ELF && entry_elf_type(e) == 1;
		}
		if (rel) {
			for (size_t i = 0; i < ct->count; i++)
				keep[i] = true;
			r->kept_relocatable++;
			return true;
		}
	}
	struct fb_image *im = calloc(ct->count ? ct->count : 1, sizeof(*im));
	size_t *idx = calloc(ct->count ? ct->count : 1, sizeof(*idx));
	struct fb_image *pim = calloc(ct->count ? ct->count : 1, sizeof(*pim));
	size_t *pidx = calloc(ct->count ? ct->count : 1, sizeof(*pidx));
	struct fb_image *oim = calloc(ct->count ? ct->count : 1, sizeof(*oim)); /* obfuscated ELF/PTX */
	if (!im || !idx || !pim || !pidx || !oim) {
		free(im), free(idx), free(pim), free(pidx), free(oim);
		for (size_t i = 0; i < ct->count; i++)
			keep[i] = true;
		return true;
	}
	size_t n = 0, np = 0, no = 0;
	bool missing = false;
	for (size_t i = 0; i < ct->count; i++) {
		const struct fb_entry *e = &p->entries[ct->first + i];
		keep[i] = false;
		if (selectable(e)) {
			im[n].target = e->target;
			im[n].compat = (e->flags & FB_FLAG_COMPAT) != 0;
			idx[n++] = i;
			if (e->disk_kind == FB_DISK_KIND_PTX) {
				pim[np] = im[n - 1];
				pidx[np++] = i;
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
					oim[no].target = e->target; /* kept; its header arch still serves a GPU */
					oim[no++].compat = (e->flags & FB_FLAG_COMPAT) != 0;
				}
				r->kept_other++;
				note(c, "%s%scontainer %zu entry %zu: %s %s entry kept as it is", where, *where ? ": " : "", cindex,
				     e->index, e->obfuscated ? "obfuscated" : "unknown",
				     fb_disk_kind_name(e->disk_kind, kb, sizeof(kb)));
			}
		}
	}
	for (size_t t = 0; t < o->ntargets; t++) {
		const struct ap_target *tg = &o->targets[t];
		struct ap_target dev = {tg->sm, AP_ARCH, AP_SASS, 0};
		if (tg->kind == AP_SASS) {
			long s = fb_select(im, n, &dev, NULL);
			if (s >= 0) {
				keep[idx[s]] = true;
			} else if (n > 0 && fb_select(oim, no, &dev, NULL) < 0) {
				missing = true;
				note(c, "%s%scontainer %zu has no image for %s (its kernels will not run there)", where,
				     *where ? ": " : "", cindex, fb_target_name(tg, tn, sizeof(tn)));
			}
		} else {
			dev.variant = tg->variant == AP_PLAIN ? AP_ARCH : tg->variant;
			long s = fb_select(pim, np, &dev, NULL);
			if (s >= 0)
				keep[pidx[s]] = true;
			else if (np > 0 || n > 0)
				r->missing_ptx++;
		}
	}
	if (missing)
		r->missing++;
	free(im), free(idx), free(pim), free(pidx), free(oim);
	return false;
}

/* Writes the pruned container ct (of the blob at base) to dst; returns its size. */
static size_t
write_container(const unsigned char *base, const struct fb_parsed *p, const struct fb_container *ct,
                const bool *keep, unsigned char *dst)
{
	memcpy(dst, base + ct->offset, 16);
	size_t w = 16;
	for (size_t i = 0; i < ct->count; i++) {
		if (!keep[i])
			continue;
		const struct fb_entry *e = &p->entries[ct->first + i];
		size_t len = e->header_size + (size_t)e->payload_size;
		memmove(dst + w, base + e->offset, len);
		w += len;
	}
	wr64(dst + 8, w - 16);
	return w;
}

/* An old offset in a compacted blob to its new one. */
struct omap {
	size_t *old_start, *new_start, *old_size, *new_size;
	size_t n;
	size_t old_total, new_total;
};

static void
omap_free(struct omap *m)
{
	free(m->old_start), free(m->new_start), free(m->old_size), free(m->new_size);
	memset(m, 0, sizeof(*m));
}

static uint64_t
omap_map(const struct omap *m, uint64_t off)
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

/* Prunes one blob of containers. In place (linked files): out has the blob's size, each
 * container stays where it starts, freed bytes are zero. Compacted: out is as long as
 * needed (*outsize), gaps between containers kept. *changed says whether any entry went. */
static int
prune_blob(struct pctx *c, const unsigned char *blob, size_t size, const char *where, bool in_place, bool relsection,
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
			omap_free(map);
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
		for (size_t i = 0; i < ct->count; i++) {
			const struct fb_entry *e = &p.entries[ct->first + i];
			uint64_t len = e->header_size + e->payload_size;
			if (keep[ct->first + i]) {
				c->r->kept_entries++;
				c->r->kept_bytes += len;
			} else {
				c->r->removed_entries++;
				c->r->removed_bytes += len;
				*changed = true;
			}
		}
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

/* ---- relocatable ELF (libelf) ---- */

struct grow {
	unsigned char *d;
	size_t n, cap;
};

static int
grow_put(struct grow *g, const void *p, size_t n)
{
	if (g->n + n > g->cap) {
		size_t nc = g->cap ? g->cap : 4096;
		while (nc < g->n + n)
			nc *= 2;
		unsigned char *d = realloc(g->d, nc);
		if (!d)
			return FB_ENOMEM;
		g->d = d;
		g->cap = nc;
	}
	if (n && p)
		memcpy(g->d + g->n, p, n);
	g->n += n;
	return FB_OK;
}

static int
elf_err(struct pctx *c, const char *name, const char *what)
{
	return fb_seterr(c->err, FB_EFORMAT, "%s: %s: %s", name, what, elf_errmsg(-1));
}

/* Symbols defined in section idx and relocation addends against them follow the map. */
static int
fix_refs(struct pctx *c, Elf *e, size_t idx, const struct omap *m, const char *name)
{
	Elf_Scn *s = NULL;
	while ((s = elf_nextscn(e, s))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		size_t nsym = sh.sh_size / sh.sh_entsize;
		size_t symtab = elf_ndxscn(s);
		/* relocation sections that use this symbol table */
		Elf_Scn *rs = NULL;
		while ((rs = elf_nextscn(e, rs))) {
			GElf_Shdr rh;
			if (!gelf_getshdr(rs, &rh) || rh.sh_link != symtab || (rh.sh_type != SHT_RELA && rh.sh_type != SHT_REL))
				continue;
			Elf_Data *rd = elf_getdata(rs, NULL);
			if (!rd || !rh.sh_entsize)
				continue;
			bool dirty = false;
			size_t nrel = rh.sh_size / rh.sh_entsize;
			for (size_t i = 0; i < nrel; i++) {
				GElf_Rela ra;
				GElf_Rel rl;
				GElf_Sym sym;
				size_t si;
				if (rh.sh_type == SHT_RELA) {
					if (!gelf_getrela(rd, (int)i, &ra))
						return elf_err(c, name, "reading a relocation");
				} else {
					if (!gelf_getrel(rd, (int)i, &rl))
						return elf_err(c, name, "reading a relocation");
					ra.r_offset = rl.r_offset;
					ra.r_info = rl.r_info;
					ra.r_addend = 0;
				}
				bool changed = false;
				if (rh.sh_info == idx) { /* a relocation applied inside the pruned section */
					uint64_t no = omap_map(m, ra.r_offset);
					changed |= no != ra.r_offset;
					ra.r_offset = no;
				}
				si = GELF_R_SYM(ra.r_info);
				if (rh.sh_type == SHT_RELA && si < nsym && gelf_getsym(d, (int)si, &sym) && sym.st_shndx == idx) {
					uint64_t at = sym.st_value + (uint64_t)ra.r_addend;
					uint64_t nu = omap_map(m, at) - omap_map(m, sym.st_value);
					int64_t na;
					memcpy(&na, &nu, sizeof(na));
					changed |= na != ra.r_addend;
					ra.r_addend = na;
				}
				if (!changed)
					continue;
				if (rh.sh_type == SHT_RELA) {
					if (!gelf_update_rela(rd, (int)i, &ra))
						return elf_err(c, name, "writing a relocation");
				} else {
					rl.r_offset = ra.r_offset;
					if (!gelf_update_rel(rd, (int)i, &rl))
						return elf_err(c, name, "writing a relocation");
				}
				dirty = true;
			}
			if (dirty)
				elf_flagdata(rd, ELF_C_SET, ELF_F_DIRTY);
		}
		bool dirty = false;
		for (size_t i = 0; i < nsym; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx != idx)
				continue;
			uint64_t nv = omap_map(m, sym.st_value);
			uint64_t end = sym.st_value + sym.st_size;
			uint64_t ne = end >= m->old_total ? m->new_total : omap_map(m, end);
			if (nv == sym.st_value && ne - nv == sym.st_size)
				continue;
			sym.st_value = nv;
			sym.st_size = ne - nv;
			if (!gelf_update_sym(d, (int)i, &sym))
				return elf_err(c, name, "writing a symbol");
			dirty = true;
		}
		if (dirty)
			elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
	}
	return FB_OK;
}

/* A relocatable host ELF in memory: rewritten with libelf into out. */
static int
prune_relocatable(struct pctx *c, const unsigned char *data, size_t size, const char *name, struct grow *out,
                  bool *changed)
{
	*changed = false;
	int fd = memfd_create("fatbuild-prune", MFD_CLOEXEC);
	if (fd < 0)
		return fb_seterr(c->err, FB_EIO, "%s: memfd_create: %s", name, strerror(errno));
	size_t done = 0;
	while (done < size) {
		ssize_t k = write(fd, data + done, size - done);
		if (k <= 0) {
			close(fd);
			return fb_seterr(c->err, FB_EIO, "%s: writing a scratch copy: %s", name, strerror(errno));
		}
		done += (size_t)k;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
	int rc = FB_OK;
	unsigned char **bufs = NULL;
	size_t nbufs = 0;
	if (!e || elf_kind(e) != ELF_K_ELF) {
		rc = elf_err(c, name, "not an ELF file libelf can rewrite");
		goto out;
	}
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0) {
		rc = elf_err(c, name, "section names");
		goto out;
	}
	Elf_Scn *s = NULL;
	while ((s = elf_nextscn(e, s))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh))
			continue;
		const char *sn = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sn || sh.sh_type == SHT_NOBITS || sh.sh_size == 0 ||
		    (strcmp(sn, ".nv_fatbin") != 0 && strcmp(sn, "__nv_relfatbin") != 0))
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size || elf_getdata(s, d)) {
			rc = elf_err(c, name, "reading a device-code section");
			goto out;
		}
		char where[300];
		snprintf(where, sizeof(where), "%s %s", name, sn);
		unsigned char *nb;
		size_t nsz;
		struct omap m;
		bool ch;
		rc = prune_blob(c, d->d_buf, d->d_size, where, false, false, &nb, &nsz, &m, &ch);
		if (rc)
			goto out;
		if (!ch) {
			free(nb);
			omap_free(&m);
			continue;
		}
		unsigned char **nbs = realloc(bufs, (nbufs + 1) * sizeof(*bufs));
		if (!nbs) {
			free(nb);
			omap_free(&m);
			rc = fb_seterr(c->err, FB_ENOMEM, "out of memory");
			goto out;
		}
		bufs = nbs;
		bufs[nbufs++] = nb;
		rc = fix_refs(c, e, elf_ndxscn(s), &m, name);
		omap_free(&m);
		if (rc)
			goto out;
		d->d_buf = nb;
		d->d_size = nsz;
		elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
		sh.sh_size = nsz;
		gelf_update_shdr(s, &sh);
		*changed = true;
	}
	if (!*changed) {
		rc = grow_put(out, data, size) ? fb_seterr(c->err, FB_ENOMEM, "out of memory") : FB_OK;
		goto out;
	}
	/* lay out first: a corrupt alignment or offset must not make libelf write gigabytes */
	off_t lay = elf_update(e, ELF_C_NULL);
	if (lay < 0) {
		rc = elf_err(c, name, "laying out the rewritten object");
		goto out;
	}
	if ((uint64_t)lay > (uint64_t)size + (1u << 20)) {
		rc = fb_seterr(c->err, FB_EFORMAT, "%s: rewriting would grow the object from %zu to %lld bytes (corrupt alignment?)",
		               name, size, (long long)lay);
		goto out;
	}
	off_t nsize = elf_update(e, ELF_C_WRITE);
	if (nsize < 0) {
		rc = elf_err(c, name, "rewriting");
		goto out;
	}
	size_t base = out->n;
	if (grow_put(out, NULL, (size_t)nsize)) {
		rc = fb_seterr(c->err, FB_ENOMEM, "out of memory");
		goto out;
	}
	if (pread(fd, out->d + base, (size_t)nsize, 0) != nsize)
		rc = fb_seterr(c->err, FB_EIO, "%s: reading the rewritten object back: %s", name, strerror(errno));
out:
	if (e)
		elf_end(e);
	close(fd);
	for (size_t i = 0; i < nbufs; i++)
		free(bufs[i]);
	free(bufs);
	return rc;
}

/* ---- ar archives ---- */

static int
parse_size(const char *h, uint64_t *v)
{
	uint64_t r = 0;
	int nd = 0;
	for (int i = 0; i < 10 && h[i] != ' '; i++) {
		if (h[i] < '0' || h[i] > '9' || r > UINT64_MAX / 10 - 9)
			return -1;
		r = r * 10 + (uint64_t)(h[i] - '0');
		nd++;
	}
	*v = r;
	return nd ? 0 : -1;
}

static uint64_t
rdbe(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void
wrbe(unsigned char *p, int n, uint64_t v)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static int
prune_archive(struct pctx *c, const unsigned char *data, size_t size, const char *name, struct grow *out)
{
	struct memb { size_t old_hdr, new_hdr, symtab_at; int symw; };
	struct memb *ms = NULL;
	size_t nm = 0, cap = 0;
	int rc = grow_put(out, data, 8) ? FB_ENOMEM : FB_OK;
	size_t off = 8;
	while (!rc && off < size) {
		if (size - off < 60 || data[off + 58] != '`' || data[off + 59] != '\n') {
			rc = fb_seterr(c->err, FB_EFORMAT, "%s: archive member header at 0x%zx is corrupt", name, off);
			break;
		}
		const char *h = (const char *)data + off;
		uint64_t msz;
		if (parse_size(h + 48, &msz) != 0 || msz > size - off - 60) {
			rc = fb_seterr(c->err, FB_EFORMAT, "%s: archive member at 0x%zx has a bad size", name, off);
			break;
		}
		if (nm == cap) {
			cap = cap ? cap * 2 : 16;
			struct memb *n = realloc(ms, cap * sizeof(*ms));
			if (!n) {
				rc = FB_ENOMEM;
				break;
			}
			ms = n;
		}
		struct memb *mb = &ms[nm++];
		mb->old_hdr = off;
		mb->new_hdr = out->n;
		mb->symtab_at = 0;
		mb->symw = 0;
		if (h[0] == '/' && h[1] == ' ')
			mb->symw = 4;
		else if (memcmp(h, "/SYM64/ ", 8) == 0)
			mb->symw = 8;
		const unsigned char *m = data + off + 60;
		char mname[160];
		size_t j = 0;
		while (j < 16 && h[j] != '/' && h[j] != ' ')
			j++;
		snprintf(mname, sizeof(mname), "%s(%.*s)", name, (int)j, h);
		if (h[0] == '/' && h[1] >= '0' && h[1] <= '9')
			snprintf(mname, sizeof(mname), "%s(member at 0x%zx)", name, off);
		size_t hdr_at = out->n;
		if (grow_put(out, h, 60)) {
			rc = FB_ENOMEM;
			break;
		}
		size_t start = out->n;
		mb->symtab_at = mb->symw ? start : 0;
		bool handled = false;
		if (!mb->symw && msz >= 64 && memcmp(m, "\x7f" "ELF", 4) == 0 && m[4] == 2 && m[5] == 1 &&
		    fb_rd16(m + 0x12) != 190 && fb_rd16(m + 16) == 1) {
			struct fb_scan sc;
			struct fb_error e2 = {0};
			if (fb_scan_buffer(m, (size_t)msz, mname, &sc, &e2) == 0) {
				bool any = sc.nblobs > 0;
				fb_scan_free(&sc);
				if (any) {
					bool ch;
					rc = prune_relocatable(c, m, (size_t)msz, mname, out, &ch);
					handled = true;
				}
			}
		} else if (!mb->symw && msz >= 16 && fb_rd32(m) == FB_CONTAINER_MAGIC) {
			unsigned char *nb;
			size_t nsz;
			bool ch;
			rc = prune_blob(c, m, (size_t)msz, mname, false, false, &nb, &nsz, NULL, &ch);
			if (!rc && grow_put(out, nb, nsz))
				rc = FB_ENOMEM;
			free(nb);
			handled = true;
		}
		if (!rc && !handled && grow_put(out, m, (size_t)msz))
			rc = FB_ENOMEM;
		if (rc)
			break;
		size_t nsz = out->n - start;
		char f[11];
		snprintf(f, sizeof(f), "%-10zu", nsz);
		memcpy(out->d + hdr_at + 48, f, 10);
		if (nsz & 1 && grow_put(out, "\n", 1)) {
			rc = FB_ENOMEM;
			break;
		}
		off += 60 + (size_t)msz;
		if (off & 1)
			off++;
	}
	/* symbol tables: member offsets follow their members */
	for (size_t i = 0; !rc && i < nm; i++) {
		if (!ms[i].symw)
			continue;
		int w = ms[i].symw;
		unsigned char *t = out->d + ms[i].symtab_at;
		uint64_t tsz = 0;
		parse_size((const char *)out->d + ms[i].new_hdr + 48, &tsz);
		if (tsz < (uint64_t)w)
			continue;
		uint64_t cnt = rdbe(t, w);
		if (cnt > (tsz - (uint64_t)w) / (uint64_t)w)
			continue;
		for (uint64_t k = 0; k < cnt; k++) {
			uint64_t o = rdbe(t + w + k * (uint64_t)w, w);
			for (size_t q = 0; q < nm; q++)
				if (ms[q].old_hdr == o) {
					wrbe(t + w + k * (uint64_t)w, w, ms[q].new_hdr);
					break;
				}
		}
	}
	free(ms);
	if (rc == FB_ENOMEM)
		return fb_seterr(c->err, FB_ENOMEM, "out of memory");
	return rc;
}

/* ---- files ---- */

int
fb_prune_buffer(const void *data, size_t size, const char *name, const struct fb_prune_opts *opts,
                unsigned char **out, size_t *outsize, struct fb_prune_report *rep, struct fb_error *err)
{
	const unsigned char *p = data;
	struct fb_prune_report dummy;
	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	if (!out || !outsize || !opts || (!data && size))
		return fb_seterr(err, FB_EINVAL, "fb_prune_buffer: NULL argument");
	*out = NULL;
	*outsize = 0;
	if (!name)
		name = "input";
	if (opts->ntargets == 0 || !opts->targets)
		return fb_seterr(err, FB_EINVAL, "prune: the arch list is empty");
	struct pctx c = {opts, rep, err, NULL, 0, 0, 0, false};
	struct grow g = {0};
	int rc;
	rep->in_size = size;
	if (size >= 4 && fb_rd32(p) == FB_CONTAINER_MAGIC) {
		snprintf(rep->type, sizeof(rep->type), "fatbin");
		bool ch;
		unsigned char *nb;
		size_t nsz;
		rc = prune_blob(&c, p, size, "", false, false, &nb, &nsz, NULL, &ch);
		if (!rc) {
			g.d = nb;
			g.n = nsz;
		}
	} else if (size >= 64 && memcmp(p, "\x7f" "ELF", 4) == 0 && fb_rd16(p + 0x12) != 190) {
		if (p[4] != 2 || p[5] != 1) {
			rc = fb_seterr(err, FB_EUNSUPPORTED, "%s: only 64-bit little-endian ELF files are supported", name);
		} else if (fb_rd16(p + 16) == 1) {
			snprintf(rep->type, sizeof(rep->type), "relocatable");
			bool ch;
			rc = prune_relocatable(&c, p, size, name, &g, &ch);
		} else {
			snprintf(rep->type, sizeof(rep->type), "linked");
			rep->in_place = true;
			c.linked = true;
			struct fb_scan sc;
			rc = fb_scan_buffer(p, size, name, &sc, err);
			if (!rc) {
				g.d = malloc(size ? size : 1);
				if (!g.d)
					rc = fb_seterr(err, FB_ENOMEM, "out of memory");
				else {
					memcpy(g.d, p, size);
					g.n = size;
				}
				for (size_t b = 0; !rc && b < sc.nblobs; b++) {
					const struct fb_blob *bl = &sc.blobs[b];
					unsigned char *nb;
					size_t nsz;
					bool ch;
					bool rel = strstr(bl->where, "__nv_relfatbin") != NULL;
					char where[300];
					snprintf(where, sizeof(where), "%s %s", name, bl->where);
					rc = prune_blob(&c, p + bl->offset, bl->size, where, true, rel, &nb, &nsz, NULL, &ch);
					if (!rc)
						memcpy(g.d + bl->offset, nb, nsz);
					free(nb);
				}
				fb_scan_free(&sc);
			}
		}
	} else if (size >= 8 && memcmp(p, "!<arch>\n", 8) == 0) {
		snprintf(rep->type, sizeof(rep->type), "archive");
		rc = prune_archive(&c, p, size, name, &g);
	} else if (size >= 8 && memcmp(p, "!<thin>\n", 8) == 0) {
		rc = fb_seterr(err, FB_EUNSUPPORTED, "%s: thin archives are not supported (their members live in other files)",
		               name);
	} else if (size >= 64 && memcmp(p, "\x7f" "ELF", 4) == 0) {
		rc = fb_seterr(err, FB_EUNSUPPORTED, "%s: a lone cubin holds one image: there is nothing to prune", name);
	} else {
		rc = fb_seterr(err, FB_EFORMAT, "%s: not a fatbin, ELF object/library or ar archive", name);
	}
	if (c.nnotes > NOTE_LINES) {
		char more[64];
		snprintf(more, sizeof(more), "... and %zu more\n", c.nnotes - NOTE_LINES);
		size_t l = strlen(more);
		char *n = realloc(c.notes, c.nlen + l + 1);
		if (n) {
			memcpy(n + c.nlen, more, l + 1);
			c.notes = n;
		}
	}
	rep->notes = c.notes;
	if (!rc && rep->missing && !opts->allow_missing)
		rc = fb_seterr(err, FB_ENOIMAGE,
		               "%s: %zu container%s would keep no image for a listed arch (their kernels will not run there); "
		               "--allow-missing prunes anyway",
		               name, rep->missing, rep->missing == 1 ? "" : "s");
	if (rc) {
		free(g.d);
		return rc;
	}
	if (!g.d)
		g.d = malloc(1);
	rep->out_size = g.n;
	*out = g.d;
	*outsize = g.n;
	return FB_OK;
}

int
fb_prune(const char *in, const char *outpath, const struct fb_prune_opts *opts, struct fb_prune_report *rep,
         struct fb_error *err)
{
	struct fb_prune_report dummy;
	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	if (!in || !outpath)
		return fb_seterr(err, FB_EINVAL, "fb_prune: NULL path");
	struct fb_mapped m;
	int rc = fb_map_file(in, &m, err);
	if (rc)
		return rc;
	unsigned char *o;
	size_t osz;
	rc = fb_prune_buffer(m.data, m.size, in, opts, &o, &osz, rep, err);
	fb_unmap_file(&m);
	if (rc) {
		if (rep == &dummy)
			fb_prune_report_free(rep);
		return rc;
	}
	struct stat st;
	int mode = stat(in, &st) == 0 ? (int)(st.st_mode & 07777) : 0644;
	rc = fb_write_file_atomic(outpath, o, osz, opts->mode ? opts->mode : mode, err);
	free(o);
	if (rep == &dummy)
		fb_prune_report_free(rep);
	return rc;
}

void
fb_prune_report_free(struct fb_prune_report *r)
{
	if (!r)
		return;
	free(r->notes);
	r->notes = NULL;
}
