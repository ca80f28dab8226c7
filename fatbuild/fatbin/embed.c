/* embed.c: wraps fatbins into a relocatable x86-64 ELF object (docs/fatbin.md §6), and
 * merges containers so the driver chooses among all images of a translation unit. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fatbuild.h"
#include "base/bytes.h"
#include "base/error.h"
#include "base/safefs.h"
#include "format.h"

/* The walk of fb_container_merge and fb_embed over one input (docs/fatbin.md §9 rule 7): zero
 * padding is stepped over 8 bytes at a time, and only each container header is checked. */
static int
next_container(const unsigned char *buf, size_t size, size_t *off, size_t *at, size_t *csize)
{
	return fb_fmt_container_next(buf, size, off, FB_PAD_WORDS, FB_FMT_CHECK_LAYOUT, at, csize);
}

/* Counts the containers in buf; 8 zero bytes between them are padding. -1 if malformed. */
static long
count_containers(const unsigned char *buf, size_t size, size_t *payload)
{
	long n = 0;
	size_t off = 0, at, c;
	int r;
	if (payload)
		*payload = 0;
	while ((r = next_container(buf, size, &off, &at, &c)) == FB_FMT_OK) {
		if (payload)
			*payload += c - FB_CONTAINER_HDR;
		n++;
	}
	return r != FB_FMT_END ? -1 : n;
}

int
fb_container_merge(const void *const *bufs, const size_t *sizes, size_t n, unsigned char **out, size_t *outsize,
                   struct fb_error *err)
{
	size_t total = FB_CONTAINER_HDR;
	if (!out || !outsize || (n && (!bufs || !sizes)))
		return fb_seterr(err, FB_EINVAL, "fb_container_merge: NULL argument");
	*out = NULL;
	*outsize = 0;
	for (size_t i = 0; i < n; i++) {
		size_t payload;
		if (count_containers(bufs[i], sizes[i], &payload) <= 0)
			return fb_seterr(err, FB_EFORMAT, "merge input %zu: not a fatbinary (bad magic, header or size)", i + 1);
		if (payload > SIZE_MAX - total)
			return fb_seterr(err, FB_ETOOBIG, "merge: inputs too large");
		total += payload;
	}
	unsigned char *o = calloc(1, total);
	if (!o)
		return fb_seterr(err, FB_ENOMEM, "merge: out of memory");
	fb_fmt_container_write(o, total - FB_CONTAINER_HDR);
	size_t w = FB_CONTAINER_HDR;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *b = bufs[i];
		size_t off = 0, at, c;
		while (next_container(b, sizes[i], &off, &at, &c) == FB_FMT_OK) {
			memcpy(o + w, b + at + FB_CONTAINER_HDR, c - FB_CONTAINER_HDR);
			w += c - FB_CONTAINER_HDR;
		}
	}
	*out = o;
	*outsize = total;
	return FB_OK;
}

/* ---- the ELF object -------------------------------------------------------------- */

struct strtab {
	char *buf;
	size_t len, cap;
};

static size_t
str_add(struct strtab *t, const char *s)
{
	size_t n = strlen(s) + 1;
	if (t->len + n > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		while (cap < t->len + n)
			cap *= 2;
		char *p = realloc(t->buf, cap);
		if (!p)
			return (size_t)-1;
		t->buf = p;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	return t->len - n;
}

static int
elf_fail(struct fb_error *err, const char *call)
{
	return fb_seterr(err, FB_EIO, "%s failed: %s", call, elf_errmsg(-1));
}

static Elf_Scn *
add_section(Elf *e, const char *name, struct strtab *shstr, Elf64_Word type, Elf64_Xword flags,
            Elf64_Xword align, void *data, size_t size, Elf_Type dtype, Elf64_Xword entsize)
{
	Elf_Scn *scn = elf_newscn(e);
	if (!scn)
		return NULL;
	GElf_Shdr sh;
	if (!gelf_getshdr(scn, &sh))
		return NULL;
	size_t nm = str_add(shstr, name);
	if (nm == (size_t)-1)
		return NULL;
	sh.sh_name = (Elf64_Word)nm;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	sh.sh_entsize = entsize;
	if (!gelf_update_shdr(scn, &sh))
		return NULL;
	Elf_Data *d = elf_newdata(scn);
	if (!d)
		return NULL;
	d->d_buf = data;
	d->d_size = size;
	d->d_type = dtype;
	d->d_align = align;
	d->d_version = EV_CURRENT;
	return scn;
}

static int
valid_symbol(const char *s)
{
	if (!s[0] || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '.' || *p == '$'))
			return 0;
	return strlen(s) < 200;
}

/* One object being embedded: the section contents (owned) and the sections made so far. */
struct embed {
	const char *symbol;
	bool segment;                 /* write .nvFatBinSegment and its relocations */
	unsigned char vis;            /* STV_HIDDEN or STV_DEFAULT */
	size_t total, ncont;          /* bytes in .nv_fatbin; containers in it */
	unsigned char *data;          /* .nv_fatbin */
	size_t *starts;               /* of each container in data */
	unsigned char *seg;           /* .nvFatBinSegment: 24 bytes per container */
	GElf_Rela *rela;
	Elf64_Sym *syms;              /* 0 null, 1 section .nv_fatbin (local), 2 NAME, 3 NAME_size */
	uint64_t *sizebuf;            /* .rodata: NAME_size */
	char *namebuf;                /* "NAME_size" */
	struct strtab shstr, str;
	Elf *e;
	Elf_Scn *s_fat, *s_ro, *s_seg, *s_rela, *s_sym, *s_str, *s_shs;
};

/* Checks the inputs and sizes .nv_fatbin: every input 8-aligned, and where each container starts. */
static int
embed_measure(struct embed *m, const void *const *fatbins, const size_t *sizes, size_t n, struct fb_error *err)
{
	for (size_t i = 0; i < n; i++) {
		long c = count_containers(fatbins[i], sizes[i], NULL);
		if (c <= 0 || fb_fmt_container_check(fatbins[i], sizes[i], FB_FMT_CHECK_LAYOUT, NULL) != FB_FMT_OK)
			return fb_seterr(err, FB_EFORMAT, "embed: input %zu is not a fatbinary (bad magic, header or size)", i + 1);
		m->ncont += (size_t)c;
		if (sizes[i] > SIZE_MAX / 2 - m->total)
			return fb_seterr(err, FB_ETOOBIG, "embed: inputs too large");
		m->total += (sizes[i] + 7) & ~(size_t)7;
	}
	return FB_OK;
}

/* Allocates the section contents and fills .nv_fatbin, the container starts and NAME_size. */
static int
embed_fill(struct embed *m, const void *const *fatbins, const size_t *sizes, size_t n, struct fb_error *err)
{
	m->data = calloc(1, m->total);
	m->starts = calloc(m->ncont, sizeof(*m->starts));
	m->seg = calloc(m->ncont, 24);
	m->rela = calloc(m->ncont, sizeof(*m->rela));
	m->syms = calloc(4, sizeof(*m->syms));
	m->sizebuf = malloc(sizeof(*m->sizebuf));
	m->namebuf = malloc(strlen(m->symbol) + 8);
	if (!m->data || !m->starts || !m->seg || !m->rela || !m->syms || !m->sizebuf || !m->namebuf)
		return fb_seterr(err, FB_ENOMEM, "embed: out of memory");
	size_t off = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *b = fatbins[i];
		memcpy(m->data + off, b, sizes[i]);
		size_t o = 0, at, c;
		while (next_container(b, sizes[i], &o, &at, &c) == FB_FMT_OK)
			m->starts[k++] = off + at;
		off += (sizes[i] + 7) & ~(size_t)7;
	}
	*m->sizebuf = m->total;
	return FB_OK;
}

/* The ELF header of a relocatable x86-64 object. */
static int
embed_ehdr(Elf *e, struct fb_error *err)
{
	GElf_Ehdr eh;
	if (!gelf_newehdr(e, ELFCLASS64) || !gelf_getehdr(e, &eh))
		return elf_fail(err, "gelf_newehdr");
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	if (!gelf_update_ehdr(e, &eh))
		return elf_fail(err, "gelf_update_ehdr");
	return FB_OK;
}

/* Sections: 1 .nv_fatbin, 2 .rodata, 3 .nvFatBinSegment, 4 .rela.nvFatBinSegment, 5 .symtab,
 * 6 .strtab, 7 .note.GNU-stack, 8 .shstrtab (3 and 4 only with the segment). */
static int
embed_sections(struct embed *m, struct fb_error *err)
{
	Elf *e = m->e;
	m->s_fat = add_section(e, ".nv_fatbin", &m->shstr, SHT_PROGBITS, SHF_ALLOC, 8, m->data, m->total, ELF_T_BYTE, 0);
	m->s_ro = m->s_fat ? add_section(e, ".rodata", &m->shstr, SHT_PROGBITS, SHF_ALLOC, 8, m->sizebuf, 8, ELF_T_BYTE, 0)
	                   : NULL;
	if (m->s_ro && m->segment) {
		for (size_t i = 0; i < m->ncont; i++) {
			fb_wr32(m->seg + 24 * i, FB_WRAPPER_MAGIC);
			fb_wr32(m->seg + 24 * i + 4, 1);
		}
		m->s_seg = add_section(e, ".nvFatBinSegment", &m->shstr, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 8, m->seg,
		                       24 * m->ncont, ELF_T_BYTE, 0);
		m->s_rela = m->s_seg ? add_section(e, ".rela.nvFatBinSegment", &m->shstr, SHT_RELA, SHF_INFO_LINK, 8, NULL, 0,
		                                   ELF_T_RELA, sizeof(Elf64_Rela))
		                     : NULL;
	}
	m->s_sym = (m->s_ro && (!m->segment || m->s_rela))
	                   ? add_section(e, ".symtab", &m->shstr, SHT_SYMTAB, 0, 8, m->syms, 4 * sizeof(*m->syms), ELF_T_SYM,
	                                 sizeof(Elf64_Sym))
	                   : NULL;
	m->s_str = m->s_sym ? add_section(e, ".strtab", &m->shstr, SHT_STRTAB, 0, 1, NULL, 0, ELF_T_BYTE, 0) : NULL;
	Elf_Scn *s_gnu = m->s_str ? add_section(e, ".note.GNU-stack", &m->shstr, SHT_PROGBITS, 0, 1, NULL, 0, ELF_T_BYTE, 0)
	                          : NULL;
	m->s_shs = s_gnu ? add_section(e, ".shstrtab", &m->shstr, SHT_STRTAB, 0, 1, NULL, 0, ELF_T_BYTE, 0) : NULL;
	if (!m->s_shs)
		return elf_fail(err, "elf_newscn");
	return FB_OK;
}

/* Symbols: 0 null, 1 section .nv_fatbin (local), 2 NAME, 3 NAME_size; and .strtab. */
static int
embed_symbols(struct embed *m, struct fb_error *err)
{
	Elf64_Sym *syms = m->syms;
	syms[1].st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
	syms[1].st_shndx = (Elf64_Half)elf_ndxscn(m->s_fat);
	size_t nm = str_add(&m->str, m->symbol);
	snprintf(m->namebuf, strlen(m->symbol) + 8, "%s_size", m->symbol);
	size_t nm2 = str_add(&m->str, m->namebuf);
	if (nm == (size_t)-1 || nm2 == (size_t)-1)
		return fb_seterr(err, FB_ENOMEM, "embed: out of memory");
	syms[2].st_name = (Elf64_Word)nm;
	syms[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
	syms[2].st_other = m->vis;
	syms[2].st_shndx = (Elf64_Half)elf_ndxscn(m->s_fat);
	syms[2].st_size = m->total;
	syms[3].st_name = (Elf64_Word)nm2;
	syms[3].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
	syms[3].st_other = m->vis;
	syms[3].st_shndx = (Elf64_Half)elf_ndxscn(m->s_ro);
	syms[3].st_size = 8;

	GElf_Shdr sh;
	gelf_getshdr(m->s_sym, &sh);
	sh.sh_link = (Elf64_Word)elf_ndxscn(m->s_str);
	sh.sh_info = 2; /* first global */
	gelf_update_shdr(m->s_sym, &sh);
	Elf_Data *d = elf_getdata(m->s_str, NULL);
	d->d_buf = m->str.buf;
	d->d_size = m->str.len;
	return FB_OK;
}

/* One R_X86_64_64 per wrapper, against the .nv_fatbin section symbol. The relocation data is
 * malloc'd here and freed by embed_update. */
static int
embed_relocations(struct embed *m, struct fb_error *err)
{
	Elf_Data *rd = elf_getdata(m->s_rela, NULL);
	rd->d_size = m->ncont * sizeof(Elf64_Rela);
	rd->d_buf = calloc(m->ncont, sizeof(Elf64_Rela));
	if (!rd->d_buf)
		return fb_seterr(err, FB_ENOMEM, "embed: out of memory");
	for (size_t i = 0; i < m->ncont; i++) {
		m->rela[i].r_offset = 24 * i + 8;
		m->rela[i].r_info = GELF_R_INFO(1, R_X86_64_64);
		m->rela[i].r_addend = (Elf64_Sxword)m->starts[i];
		if (!gelf_update_rela(rd, (int)i, &m->rela[i])) {
			free(rd->d_buf);
			rd->d_buf = NULL;
			return elf_fail(err, "gelf_update_rela");
		}
	}
	GElf_Shdr sh;
	gelf_getshdr(m->s_rela, &sh);
	sh.sh_link = (Elf64_Word)elf_ndxscn(m->s_sym);
	sh.sh_info = (Elf64_Word)elf_ndxscn(m->s_seg);
	gelf_update_shdr(m->s_rela, &sh);
	return FB_OK;
}

/* .shstrtab and e_shstrndx, then the object is written to its file. */
static int
embed_update(struct embed *m, struct fb_error *err)
{
	Elf_Data *d = elf_getdata(m->s_shs, NULL);
	d->d_buf = m->shstr.buf;
	d->d_size = m->shstr.len;
	GElf_Ehdr eh;
	gelf_getehdr(m->e, &eh);
	eh.e_shstrndx = (Elf64_Half)elf_ndxscn(m->s_shs);
	gelf_update_ehdr(m->e, &eh);
	off_t wrote = elf_update(m->e, ELF_C_WRITE);
	if (m->s_rela) {
		Elf_Data *rd = elf_getdata(m->s_rela, NULL);
		free(rd->d_buf);
		rd->d_buf = NULL;
	}
	if (wrote < 0)
		return elf_fail(err, "elf_update");
	return FB_OK;
}

/* Builds the whole object in the open file fd. */
static int
embed_object(struct embed *m, int fd, struct fb_error *err)
{
	m->e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!m->e)
		return elf_fail(err, "elf_begin");
	int rc = embed_ehdr(m->e, err);
	if (rc)
		return rc;
	if (str_add(&m->shstr, "") == (size_t)-1 || str_add(&m->str, "") == (size_t)-1)
		return fb_seterr(err, FB_ENOMEM, "embed: out of memory");
	rc = embed_sections(m, err);
	if (!rc)
		rc = embed_symbols(m, err);
	if (!rc && m->s_rela)
		rc = embed_relocations(m, err);
	if (!rc)
		rc = embed_update(m, err);
	return rc;
}

int
fb_embed(const void *const *fatbins, const size_t *sizes, size_t n, const char *out_path,
         const struct fb_embed_opts *opts, struct fb_error *err)
{
	struct embed m = {0};
	m.symbol = opts && opts->symbol ? opts->symbol : "fatbin";
	m.segment = !(opts && opts->no_segment);
	m.vis = opts && opts->hidden ? STV_HIDDEN : STV_DEFAULT;
	if (!out_path || (n && (!fatbins || !sizes)))
		return fb_seterr(err, FB_EINVAL, "embed: NULL argument");
	if (n == 0)
		return fb_seterr(err, FB_EINVAL, "embed: no fatbin given");
	if (!valid_symbol(m.symbol))
		return fb_seterr(err, FB_EINVAL, "embed: '%s' is not a valid symbol name (use [A-Za-z_][A-Za-z0-9_.$]*)",
		            m.symbol);
	int rc = embed_measure(&m, fatbins, sizes, n, err);
	if (rc)
		return rc;
	int fd = -1;
	char tmp[4096];
	tmp[0] = 0;
	rc = embed_fill(&m, fatbins, sizes, n, err);
	if (rc)
		goto out;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		rc = elf_fail(err, "elf_version");
		goto out;
	}
	rc = fb_tmp_open(out_path, 0666, tmp, sizeof(tmp), &fd, err);
	if (rc) {
		tmp[0] = 0;
		goto out;
	}
	rc = embed_object(&m, fd, err);
	if (rc)
		goto out;
	elf_end(m.e);
	m.e = NULL;
	if (close(fd) != 0) {
		fd = -1;
		rc = fb_seterr(err, FB_EIO, "cannot write %s: %s", out_path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, out_path) != 0) {
		rc = fb_seterr(err, FB_EIO, "cannot write %s: %s", out_path, strerror(errno));
		goto out;
	}
	tmp[0] = 0;
	rc = FB_OK;
out:
	if (m.e)
		elf_end(m.e);
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlink(tmp);
	free(m.data);
	free(m.starts);
	free(m.seg);
	free(m.rela);
	free(m.syms);
	free(m.sizebuf);
	free(m.namebuf);
	free(m.shstr.buf);
	free(m.str.buf);
	return rc;
}
