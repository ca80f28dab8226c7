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
#include "common/bytes.h"
#include "common/error_priv.h"
#include "common/safefs.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define WRAPPER_MAGIC 0x466243B1u
#define CONTAINER_HDR 16u

static void
wr32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
wr64(unsigned char *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32(p + 4, (uint32_t)(v >> 32));
}

/* Validates the container at p (at most left bytes); returns its total size or 0. */
static size_t
container_size(const unsigned char *p, size_t left)
{
	if (left < CONTAINER_HDR || fb_rd32(p) != FATBIN_MAGIC)
		return 0;
	uint32_t hsz = fb_rd16(p + 6);
	uint64_t fat = fb_rd64(p + 8);
	if (hsz != CONTAINER_HDR || fat % 8 != 0 || fat > left - CONTAINER_HDR)
		return 0;
	return CONTAINER_HDR + (size_t)fat;
}

/* The walk of fb_container_merge and fb_embed over one input: steps over zero padding 8 bytes
 * at a time from *off, then validates the container header there (container_size; entries are
 * not looked at). Returns 1 with the container's start in *at, its total size in *csize and
 * *off past it; 0 at the end of buf; -1 if malformed. */
static int
next_container(const unsigned char *buf, size_t size, size_t *off, size_t *at, size_t *csize)
{
	while (*off < size && buf[*off] == 0)
		*off += 8;
	if (*off >= size)
		return 0;
	size_t c = container_size(buf + *off, size - *off);
	if (!c)
		return -1;
	*at = *off;
	*csize = c;
	*off += c;
	return 1;
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
	while ((r = next_container(buf, size, &off, &at, &c)) > 0) {
		if (payload)
			*payload += c - CONTAINER_HDR;
		n++;
	}
	return r < 0 ? -1 : n;
}

int
fb_container_merge(const void *const *bufs, const size_t *sizes, size_t n, unsigned char **out, size_t *outsize,
                   struct fb_error *err)
{
	size_t total = CONTAINER_HDR;
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
	wr32(o, FATBIN_MAGIC);
	o[4] = 1;
	o[6] = CONTAINER_HDR;
	wr64(o + 8, total - CONTAINER_HDR);
	size_t w = CONTAINER_HDR;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *b = bufs[i];
		size_t off = 0, at, c;
		while (next_container(b, sizes[i], &off, &at, &c) > 0) {
			memcpy(o + w, b + at + CONTAINER_HDR, c - CONTAINER_HDR);
			w += c - CONTAINER_HDR;
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

int
fb_embed(const void *const *fatbins, const size_t *sizes, size_t n, const char *out_path,
         const struct fb_embed_opts *opts, struct fb_error *err)
{
	const char *symbol = opts && opts->symbol ? opts->symbol : "fatbin";
	if (!out_path || (n && (!fatbins || !sizes)))
		return fb_seterr(err, FB_EINVAL, "embed: NULL argument");
	if (n == 0)
		return fb_seterr(err, FB_EINVAL, "embed: no fatbin given");
	if (!valid_symbol(symbol))
		return fb_seterr(err, FB_EINVAL, "embed: '%s' is not a valid symbol name (use [A-Za-z_][A-Za-z0-9_.$]*)",
		            symbol);

	/* Lay out the data: every input 8-aligned, and where each container starts. */
	size_t total = 0, ncont = 0;
	for (size_t i = 0; i < n; i++) {
		long c = count_containers(fatbins[i], sizes[i], NULL);
		if (c <= 0 || container_size(fatbins[i], sizes[i]) == 0)
			return fb_seterr(err, FB_EFORMAT, "embed: input %zu is not a fatbinary (bad magic, header or size)", i + 1);
		ncont += (size_t)c;
		if (sizes[i] > SIZE_MAX / 2 - total)
			return fb_seterr(err, FB_ETOOBIG, "embed: inputs too large");
		total += (sizes[i] + 7) & ~(size_t)7;
	}
	int rc = FB_ENOMEM;
	unsigned char *data = calloc(1, total);
	size_t *starts = calloc(ncont, sizeof(*starts));
	unsigned char *seg = calloc(ncont, 24);
	GElf_Rela *rela = calloc(ncont, sizeof(*rela));
	Elf64_Sym *syms = calloc(4, sizeof(*syms));
	uint64_t *sizebuf = malloc(sizeof(*sizebuf));
	char *namebuf = malloc(strlen(symbol) + 8);
	struct strtab shstr = {0}, str = {0};
	Elf *e = NULL;
	int fd = -1;
	char tmp[4096];
	tmp[0] = 0;
	if (!data || !starts || !seg || !rela || !syms || !sizebuf || !namebuf) {
		fb_seterr(err, rc, "embed: out of memory");
		goto out;
	}
	size_t off = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *b = fatbins[i];
		memcpy(data + off, b, sizes[i]);
		size_t o = 0, at, c;
		while (next_container(b, sizes[i], &o, &at, &c) > 0)
			starts[k++] = off + at;
		off += (sizes[i] + 7) & ~(size_t)7;
	}
	*sizebuf = total;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		rc = elf_fail(err, "elf_version");
		goto out;
	}
	rc = fb_tmp_open(out_path, 0666, tmp, sizeof(tmp), &fd, err);
	if (rc) {
		tmp[0] = 0;
		goto out;
	}
	rc = FB_EIO;
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e) {
		rc = elf_fail(err, "elf_begin");
		goto out;
	}
	GElf_Ehdr eh;
	if (!gelf_newehdr(e, ELFCLASS64) || !gelf_getehdr(e, &eh)) {
		rc = elf_fail(err, "gelf_newehdr");
		goto out;
	}
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	if (!gelf_update_ehdr(e, &eh)) {
		rc = elf_fail(err, "gelf_update_ehdr");
		goto out;
	}
	if (str_add(&shstr, "") == (size_t)-1 || str_add(&str, "") == (size_t)-1) {
		rc = fb_seterr(err, FB_ENOMEM, "embed: out of memory");
		goto out;
	}

	/* Sections: 1 .nv_fatbin, 2 .rodata, 3 .nvFatBinSegment, 4 .rela.nvFatBinSegment, 5 .symtab,
	 * 6 .strtab, 7 .note.GNU-stack, 8 .shstrtab. */
	Elf_Scn *s_fat = add_section(e, ".nv_fatbin", &shstr, SHT_PROGBITS, SHF_ALLOC, 8, data, total, ELF_T_BYTE, 0);
	Elf_Scn *s_ro = s_fat ? add_section(e, ".rodata", &shstr, SHT_PROGBITS, SHF_ALLOC, 8, sizebuf, 8, ELF_T_BYTE, 0)
	                      : NULL;
	bool segment = !(opts && opts->no_segment);
	Elf_Scn *s_seg = NULL, *s_rela = NULL;
	if (s_ro && segment) {
		for (size_t i = 0; i < ncont; i++) {
			wr32(seg + 24 * i, WRAPPER_MAGIC);
			wr32(seg + 24 * i + 4, 1);
		}
		s_seg = add_section(e, ".nvFatBinSegment", &shstr, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 8, seg, 24 * ncont,
		                    ELF_T_BYTE, 0);
		s_rela = s_seg ? add_section(e, ".rela.nvFatBinSegment", &shstr, SHT_RELA, SHF_INFO_LINK, 8, NULL, 0,
		                             ELF_T_RELA, sizeof(Elf64_Rela))
		               : NULL;
	}
	Elf_Scn *s_sym = (s_ro && (!segment || s_rela))
	                         ? add_section(e, ".symtab", &shstr, SHT_SYMTAB, 0, 8, syms, 4 * sizeof(*syms), ELF_T_SYM,
	                                       sizeof(Elf64_Sym))
	                         : NULL;
	Elf_Scn *s_str = s_sym ? add_section(e, ".strtab", &shstr, SHT_STRTAB, 0, 1, NULL, 0, ELF_T_BYTE, 0) : NULL;
	Elf_Scn *s_gnu = s_str ? add_section(e, ".note.GNU-stack", &shstr, SHT_PROGBITS, 0, 1, NULL, 0, ELF_T_BYTE, 0)
	                       : NULL;
	Elf_Scn *s_shs = s_gnu ? add_section(e, ".shstrtab", &shstr, SHT_STRTAB, 0, 1, NULL, 0, ELF_T_BYTE, 0) : NULL;
	if (!s_shs) {
		rc = elf_fail(err, "elf_newscn");
		goto out;
	}

	/* Symbols: 0 null, 1 section .nv_fatbin (local), 2 NAME, 3 NAME_size. */
	unsigned char vis = opts && opts->hidden ? STV_HIDDEN : STV_DEFAULT;
	syms[1].st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
	syms[1].st_shndx = (Elf64_Half)elf_ndxscn(s_fat);
	size_t nm = str_add(&str, symbol);
	snprintf(namebuf, strlen(symbol) + 8, "%s_size", symbol);
	size_t nm2 = str_add(&str, namebuf);
	if (nm == (size_t)-1 || nm2 == (size_t)-1) {
		rc = fb_seterr(err, FB_ENOMEM, "embed: out of memory");
		goto out;
	}
	syms[2].st_name = (Elf64_Word)nm;
	syms[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
	syms[2].st_other = vis;
	syms[2].st_shndx = (Elf64_Half)elf_ndxscn(s_fat);
	syms[2].st_size = total;
	syms[3].st_name = (Elf64_Word)nm2;
	syms[3].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
	syms[3].st_other = vis;
	syms[3].st_shndx = (Elf64_Half)elf_ndxscn(s_ro);
	syms[3].st_size = 8;

	GElf_Shdr sh;
	gelf_getshdr(s_sym, &sh);
	sh.sh_link = (Elf64_Word)elf_ndxscn(s_str);
	sh.sh_info = 2; /* first global */
	gelf_update_shdr(s_sym, &sh);
	Elf_Data *d = elf_getdata(s_str, NULL);
	d->d_buf = str.buf;
	d->d_size = str.len;
	if (s_rela) {
		Elf_Data *rd = elf_getdata(s_rela, NULL);
		rd->d_size = ncont * sizeof(Elf64_Rela);
		rd->d_buf = calloc(ncont, sizeof(Elf64_Rela));
		if (!rd->d_buf) {
			rc = fb_seterr(err, FB_ENOMEM, "embed: out of memory");
			goto out;
		}
		for (size_t i = 0; i < ncont; i++) {
			rela[i].r_offset = 24 * i + 8;
			rela[i].r_info = GELF_R_INFO(1, R_X86_64_64);
			rela[i].r_addend = (Elf64_Sxword)starts[i];
			if (!gelf_update_rela(rd, (int)i, &rela[i])) {
				free(rd->d_buf);
				rd->d_buf = NULL;
				rc = elf_fail(err, "gelf_update_rela");
				goto out;
			}
		}
		gelf_getshdr(s_rela, &sh);
		sh.sh_link = (Elf64_Word)elf_ndxscn(s_sym);
		sh.sh_info = (Elf64_Word)elf_ndxscn(s_seg);
		gelf_update_shdr(s_rela, &sh);
	}
	d = elf_getdata(s_shs, NULL);
	d->d_buf = shstr.buf;
	d->d_size = shstr.len;
	gelf_getehdr(e, &eh);
	eh.e_shstrndx = (Elf64_Half)elf_ndxscn(s_shs);
	gelf_update_ehdr(e, &eh);
	off_t wrote = elf_update(e, ELF_C_WRITE);
	if (s_rela) {
		Elf_Data *rd = elf_getdata(s_rela, NULL);
		free(rd->d_buf);
		rd->d_buf = NULL;
	}
	if (wrote < 0) {
		rc = elf_fail(err, "elf_update");
		goto out;
	}
	elf_end(e);
	e = NULL;
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
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlink(tmp);
	free(data);
	free(starts);
	free(seg);
	free(rela);
	free(syms);
	free(sizebuf);
	free(namebuf);
	free(shstr.buf);
	free(str.buf);
	return rc;
}
