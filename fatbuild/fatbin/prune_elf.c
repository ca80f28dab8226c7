/* prune_elf.c: pruning relocatable host objects and ar archives (docs/prune.md). An object's
 * .nv_fatbin and __nv_relfatbin are rewritten to their new size with libelf, which lays the
 * file out again; symbols defined in those sections and relocation addends against them follow
 * their container. An archive's members are pruned one by one (objects as above, bare fatbins
 * compacted), member sizes and the symbol table's member offsets updated. */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pruning.h"

/* ---- relocatable ELF (libelf) ---- */

int
fb_prune_grow_put(struct grow *g, const void *p, size_t n)
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

/* The relocations of section rs (header rh; symbols d, nsym of them) that point into or are
 * applied inside section idx follow the offset map m. */
static int
fix_relocs(struct pctx *c, Elf_Scn *rs, const GElf_Shdr *rh, Elf_Data *d, size_t nsym, size_t idx,
           const struct omap *m, const char *name)
{
	Elf_Data *rd = elf_getdata(rs, NULL);
	if (!rd || !rh->sh_entsize)
		return FB_OK;
	bool dirty = false;
	size_t nrel = rh->sh_size / rh->sh_entsize;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela ra;
		GElf_Rel rl;
		GElf_Sym sym;
		size_t si;
		if (rh->sh_type == SHT_RELA) {
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
		if (rh->sh_info == idx) { /* a relocation applied inside the pruned section */
			uint64_t no = fb_prune_omap_map(m, ra.r_offset);
			changed |= no != ra.r_offset;
			ra.r_offset = no;
		}
		si = GELF_R_SYM(ra.r_info);
		if (rh->sh_type == SHT_RELA && si < nsym && gelf_getsym(d, (int)si, &sym) && sym.st_shndx == idx) {
			uint64_t at = sym.st_value + (uint64_t)ra.r_addend;
			uint64_t nu = fb_prune_omap_map(m, at) - fb_prune_omap_map(m, sym.st_value);
			int64_t na;
			memcpy(&na, &nu, sizeof(na));
			changed |= na != ra.r_addend;
			ra.r_addend = na;
		}
		if (!changed)
			continue;
		if (rh->sh_type == SHT_RELA) {
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
	return FB_OK;
}

/* The symbols of section idx (in d, nsym of them) move and shrink with the offset map m. */
static int
fix_symbols(struct pctx *c, Elf_Data *d, size_t nsym, size_t idx, const struct omap *m, const char *name)
{
	bool dirty = false;
	for (size_t i = 0; i < nsym; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx != idx)
			continue;
		uint64_t nv = fb_prune_omap_map(m, sym.st_value);
		uint64_t end = sym.st_value + sym.st_size;
		uint64_t ne = end >= m->old_total ? m->new_total : fb_prune_omap_map(m, end);
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
	return FB_OK;
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
			int rc = fix_relocs(c, rs, &rh, d, nsym, idx, m, name);
			if (rc)
				return rc;
		}
		int rc = fix_symbols(c, d, nsym, idx, m, name);
		if (rc)
			return rc;
	}
	return FB_OK;
}

/* A relocatable host ELF in memory: rewritten with libelf into out. */
/* A memfd holding a copy of data, for libelf to rewrite in place. */
static int
scratch_copy(struct pctx *c, const unsigned char *data, size_t size, const char *name, int *fdp)
{
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
	*fdp = fd;
	return FB_OK;
}

/* Pruned buffers the rewritten sections point into, until elf_end. */
struct bufs {
	unsigned char **b;
	size_t n;
};

/* Prunes the device-code section s (named sn): its data becomes the pruned blob (kept in bufs)
 * and the relocations into it follow. *changed when it did change. */
static int
prune_section(struct pctx *c, Elf *e, Elf_Scn *s, GElf_Shdr *sh, const char *sn, const char *name, struct bufs *bufs,
              bool *changed)
{
	Elf_Data *d = elf_getdata(s, NULL);
	if (!d || !d->d_buf || d->d_size != sh->sh_size || elf_getdata(s, d))
		return elf_err(c, name, "reading a device-code section");
	char where[300];
	snprintf(where, sizeof(where), "%s %s", name, sn);
	unsigned char *nb;
	size_t nsz;
	struct omap m;
	bool ch;
	int rc = fb_prune_blob(c, d->d_buf, d->d_size, where, false, false, &nb, &nsz, &m, &ch);
	if (rc)
		return rc;
	if (!ch) {
		free(nb);
		fb_prune_omap_free(&m);
		return FB_OK;
	}
	unsigned char **nbs = realloc(bufs->b, (bufs->n + 1) * sizeof(*bufs->b));
	if (!nbs) {
		free(nb);
		fb_prune_omap_free(&m);
		return fb_seterr(c->err, FB_ENOMEM, "out of memory");
	}
	bufs->b = nbs;
	bufs->b[bufs->n++] = nb;
	rc = fix_refs(c, e, elf_ndxscn(s), &m, name);
	fb_prune_omap_free(&m);
	if (rc)
		return rc;
	d->d_buf = nb;
	d->d_size = nsz;
	elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
	sh->sh_size = nsz;
	gelf_update_shdr(s, sh);
	*changed = true;
	return FB_OK;
}

/* Writes the rewritten object (size bytes before) to fd and appends it to out. */
static int
write_back(struct pctx *c, Elf *e, int fd, size_t size, const char *name, struct grow *out)
{
	/* lay out first: a corrupt alignment or offset must not make libelf write gigabytes */
	off_t lay = elf_update(e, ELF_C_NULL);
	if (lay < 0)
		return elf_err(c, name, "laying out the rewritten object");
	if ((uint64_t)lay > (uint64_t)size + (1u << 20))
		return fb_seterr(c->err, FB_EFORMAT, "%s: rewriting would grow the object from %zu to %lld bytes (corrupt alignment?)",
		                 name, size, (long long)lay);
	off_t nsize = elf_update(e, ELF_C_WRITE);
	if (nsize < 0)
		return elf_err(c, name, "rewriting");
	size_t base = out->n;
	if (fb_prune_grow_put(out, NULL, (size_t)nsize))
		return fb_seterr(c->err, FB_ENOMEM, "out of memory");
	if (pread(fd, out->d + base, (size_t)nsize, 0) != nsize)
		return fb_seterr(c->err, FB_EIO, "%s: reading the rewritten object back: %s", name, strerror(errno));
	return FB_OK;
}

int
fb_prune_relocatable(struct pctx *c, const unsigned char *data, size_t size, const char *name, struct grow *out,
                  bool *changed)
{
	*changed = false;
	int fd = -1;
	int rc = scratch_copy(c, data, size, name, &fd);
	if (rc)
		return rc;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
	struct bufs bufs = {NULL, 0};
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
		rc = prune_section(c, e, s, &sh, sn, name, &bufs, changed);
		if (rc)
			goto out;
	}
	if (!*changed)
		rc = fb_prune_grow_put(out, data, size) ? fb_seterr(c->err, FB_ENOMEM, "out of memory") : FB_OK;
	else
		rc = write_back(c, e, fd, size, name, out);
out:
	if (e)
		elf_end(e);
	close(fd);
	for (size_t i = 0; i < bufs.n; i++)
		free(bufs.b[i]);
	free(bufs.b);
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

/* An archive member: its header's old and new offsets, and the width of its symbol table (4 for
 * "/", 8 for "/SYM64/", 0 when it is no symbol table). */
struct memb {
	size_t old_hdr, new_hdr, symtab_at;
	int symw;
};

/* The member's contents m[0..msz) appended to out: a relocatable host object or a fatbin pruned,
 * anything else as it is. */
static int
prune_member(struct pctx *c, const unsigned char *m, uint64_t msz, const char *mname, const struct memb *mb,
             struct grow *out)
{
	int rc = FB_OK;
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
				rc = fb_prune_relocatable(c, m, (size_t)msz, mname, out, &ch);
				handled = true;
			}
		}
	} else if (!mb->symw && msz >= 16 && fb_rd32(m) == FB_CONTAINER_MAGIC) {
		unsigned char *nb;
		size_t nsz;
		bool ch;
		rc = fb_prune_blob(c, m, (size_t)msz, mname, false, false, &nb, &nsz, NULL, &ch);
		if (!rc && fb_prune_grow_put(out, nb, nsz))
			rc = FB_ENOMEM;
		free(nb);
		handled = true;
	}
	if (!rc && !handled && fb_prune_grow_put(out, m, (size_t)msz))
		rc = FB_ENOMEM;
	return rc;
}

/* Symbol tables: the member offsets they hold now point at the members' new headers. */
static void
fix_symtabs(struct grow *out, const struct memb *ms, size_t nm)
{
	for (size_t i = 0; i < nm; i++) {
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
}

int
fb_prune_archive(struct pctx *c, const unsigned char *data, size_t size, const char *name, struct grow *out)
{
	struct memb *ms = NULL;
	size_t nm = 0, cap = 0;
	int rc = fb_prune_grow_put(out, data, 8) ? FB_ENOMEM : FB_OK;
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
		char mname[160];
		size_t j = 0;
		while (j < 16 && h[j] != '/' && h[j] != ' ')
			j++;
		snprintf(mname, sizeof(mname), "%s(%.*s)", name, (int)j, h);
		if (h[0] == '/' && h[1] >= '0' && h[1] <= '9')
			snprintf(mname, sizeof(mname), "%s(member at 0x%zx)", name, off);
		size_t hdr_at = out->n;
		if (fb_prune_grow_put(out, h, 60)) {
			rc = FB_ENOMEM;
			break;
		}
		size_t start = out->n;
		mb->symtab_at = mb->symw ? start : 0;
		rc = prune_member(c, data + off + 60, msz, mname, mb, out);
		if (rc)
			break;
		size_t nsz = out->n - start;
		char f[11];
		snprintf(f, sizeof(f), "%-10zu", nsz);
		memcpy(out->d + hdr_at + 48, f, 10);
		if (nsz & 1 && fb_prune_grow_put(out, "\n", 1)) {
			rc = FB_ENOMEM;
			break;
		}
		off += 60 + (size_t)msz;
		if (off & 1)
			off++;
	}
	if (!rc)
		fix_symtabs(out, ms, nm);
	free(ms);
	if (rc == FB_ENOMEM)
		return fb_seterr(c->err, FB_ENOMEM, "out of memory");
	return rc;
}
