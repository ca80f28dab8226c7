/* cubin.c: CUDA ELF (cubin) inspection.
 *
 * Facts used (docs/fatbin.md §8, CUDA 13.0):
 *   ELFCLASS64, little-endian, e_machine 190 (EM_CUDA), EI_OSABI 0x41.
 *   EI_ABIVERSION 7 (CUDA <= 12.x): SM in e_flags bits 0-7. ABI 8 (13.0): SM in bits 8-15.
 *   e_type ET_EXEC (whole program) or ET_REL (-rdc).
 *   'a' is not in e_flags: .nv.compat (type 0x70000086) holds records {u8 fmt, u8 attr, ...};
 *   attribute 0x09 = 1 marks arch-specific code. 'f' is not recorded in the cubin at all.
 *   Kernels: STT_FUNC symbols with st_other 0x10 (STO_CUDA_ENTRY).
 *   .nv.info (0x70000000): records u8 fmt, u8 attr; fmt 1 NVAL u16 0, 2 BVAL u8+pad, 3 HVAL u16,
 *   4 SVAL u16 size + bytes. attr 0x2f REGCOUNT {u32 sym, u32 regs}.
 *   .nv.shared.<k> (NOBITS): static shared memory; on sm >= 90 the size is user bytes + 1024.
 *
 * The header and section-table walk used on every entry is fb_elf_ident (elfid.c);
 * fb_cubin_read uses libelf for the symbol-level view. */
#include <dlfcn.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "elfid.h"
#include "shared.h"

#define SHT_NV_INFO 0x70000000u
#define STO_CUDA_ENTRY 0x10
#define NVI_REGCOUNT 0x2f

static void
kernels_free(struct fb_kernel *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i].name);
	free(k);
}

void
fb_cubin_free(struct fb_cubin *c)
{
	if (!c)
		return;
	kernels_free(c->kernels, c->nkernels);
	c->kernels = NULL;
	c->nkernels = 0;
}

/* Walks .nv.info for REGCOUNT records and stores them by symbol index. */
static int
parse_nv_info(const unsigned char *d, size_t n, int *regs, size_t nsyms, struct fb_error *err)
{
	size_t i = 0;
	while (i + 4 <= n) {
		unsigned fmt = d[i], attr = d[i + 1];
		size_t len;
		switch (fmt) {
		case 1: case 2: case 3: len = 4; break;
		case 4: len = 4 + (size_t)fb_rd16(d + i + 2); break;
		default:
			return fb_seterr(err, FB_EFORMAT, ".nv.info: unknown record format %u at offset 0x%zx", fmt, i);
		}
		if (len > n - i)
			return fb_seterr(err, FB_EFORMAT, ".nv.info: record at 0x%zx runs past the section end", i);
		if (fmt == 4 && attr == NVI_REGCOUNT && len >= 12) {
			uint32_t sym = fb_rd32(d + i + 4), r = fb_rd32(d + i + 8);
			if (sym < nsyms && r < 100000)
				regs[sym] = (int)r;
		}
		i += len;
		i = (i + 3) & ~(size_t)3;
	}
	return FB_OK;
}

/* The section-name table index and the symbol table (*symscn NULL when there is none). */
static int
find_symtab(Elf *e, size_t *shstrndx, Elf_Scn **symscn, GElf_Shdr *symsh, struct fb_error *err)
{
	if (elf_getshdrstrndx(e, shstrndx) != 0)
		return fb_seterr(err, FB_EFORMAT, "elf_getshdrstrndx failed: %s", elf_errmsg(-1));
	size_t shnum = 0;
	if (elf_getshdrnum(e, &shnum) != 0 || (shnum > 0 && *shstrndx >= shnum))
		/* section names unreadable: kernels would lose their registers and shared memory */
		return fb_seterr(err, FB_EFORMAT, "ELF section-name table index %zu is not one of the %zu sections", *shstrndx,
		                 shnum);
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return fb_seterr(err, FB_EFORMAT, "gelf_getshdr failed: %s", elf_errmsg(-1));
		if (sh.sh_type == SHT_SYMTAB) {
			*symscn = scn;
			*symsh = sh;
		}
	}
	return FB_OK;
}

/* regs[i]: the register count .nv.info gives symbol i (left -1 where none). */
static int
read_registers(Elf *e, size_t shstrndx, int *regs, size_t nsyms, struct fb_error *err)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NV_INFO)
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm || strcmp(nm, ".nv.info") != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return fb_seterr(err, FB_EFORMAT, "cannot read .nv.info: %s", elf_errmsg(-1));
		int rc = parse_nv_info(d->d_buf, d->d_size, regs, nsyms, err);
		if (rc)
			return rc;
	}
	return FB_OK;
}

/* The kernels (entry functions) of the symbol table sd, appended to *ks (*nk of them). */
static int
collect_kernels(Elf *e, Elf_Data *sd, const GElf_Shdr *symsh, const int *regs, size_t nsyms, struct fb_kernel **ks,
                size_t *nk, struct fb_error *err)
{
	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym s;
		if (!gelf_getsym(sd, (int)i, &s))
			continue;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC || !(s.st_other & STO_CUDA_ENTRY))
			continue;
		const char *nm = elf_strptr(e, symsh->sh_link, s.st_name);
		if (!nm)
			return fb_seterr(err, FB_EFORMAT, "kernel symbol %zu has a bad name offset", i);
		struct fb_kernel *nks = realloc(*ks, (*nk + 1) * sizeof(**ks));
		if (!nks)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		*ks = nks;
		struct fb_kernel *k = &nks[*nk];
		memset(k, 0, sizeof(*k));
		k->name = malloc(strlen(nm) + 1);
		if (!k->name)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		strcpy(k->name, nm);
		(*nk)++;
		k->registers = regs[i];
		k->code_size = s.st_size;
	}
	return FB_OK;
}

/* Static shared memory of each kernel: the size of .nv.shared.<kernel>. */
static int
read_shared(Elf *e, size_t shstrndx, int sm, struct fb_kernel *ks, size_t nk, struct fb_error *err)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm || strncmp(nm, ".nv.shared.", 11) != 0)
			continue;
		for (size_t k = 0; k < nk; k++) {
			if (strcmp(nm + 11, ks[k].name) != 0)
				continue;
			if (sh.sh_size > (uint64_t)INT32_MAX)
				return fb_seterr(err, FB_EFORMAT,
				                 "kernel %zu: .nv.shared section size 0x%llx is not a shared-memory size", k,
				                 (unsigned long long)sh.sh_size);
			ks[k].shared_stored = (int64_t)sh.sh_size;
			ks[k].shared_user = (int64_t)sh.sh_size;
			if (sm >= 90 && sh.sh_size >= 1024) {
				ks[k].shared_user -= 1024;
				ks[k].shared_derived = true;
			}
		}
	}
	return FB_OK;
}

/* The kernels of the ELF e, with their registers and shared memory. */
static int
read_kernels(Elf *e, int sm, struct fb_kernel **ks, size_t *nk, struct fb_error *err)
{
	size_t shstrndx;
	Elf_Scn *symscn = NULL;
	GElf_Shdr symsh = {0};
	int rc = find_symtab(e, &shstrndx, &symscn, &symsh, err);
	if (rc || !symscn)
		return rc; /* no symbols, no kernels */
	Elf_Data *sd = elf_getdata(symscn, NULL);
	if (!sd || !sd->d_buf || symsh.sh_entsize == 0)
		return fb_seterr(err, FB_EFORMAT, "cannot read the symbol table: %s", elf_errmsg(-1));
	size_t nsyms = sd->d_size / sizeof(Elf64_Sym);
	int *regs = malloc((nsyms ? nsyms : 1) * sizeof(int));
	if (!regs)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (size_t i = 0; i < nsyms; i++)
		regs[i] = -1;
	rc = read_registers(e, shstrndx, regs, nsyms, err);
	if (!rc)
		rc = collect_kernels(e, sd, &symsh, regs, nsyms, ks, nk, err);
	if (!rc)
		rc = read_shared(e, shstrndx, sm, *ks, *nk, err);
	free(regs);
	return rc;
}

int
fb_cubin_read(const void *data, size_t size, struct fb_cubin *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	struct fb_elfid id;
	int rc = fb_elf_ident(data, size, &id, err);
	if (rc)
		return rc;
	out->abi_version = id.abi;
	out->sm = id.sm;
	out->e_flags = id.e_flags;
	out->relocatable = id.type == 1;
	out->compat = id.compat;
	out->compat_len = id.compat_len;
	out->arch_a = id.arch_a;
	if (id.type != 1 && id.type != 2)
		return fb_seterr(err, FB_EFORMAT, "cubin e_type %d is neither ET_REL nor ET_EXEC", id.type);

	elf_version(EV_CURRENT);
	/* libelf wants a writable image; work on a private copy. */
	char *copy = malloc(size);
	if (!copy)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memcpy(copy, data, size);
	Elf *e = elf_memory(copy, size);
	struct fb_kernel *ks = NULL;
	size_t nk = 0;
	if (!e)
		rc = fb_seterr(err, FB_EFORMAT, "elf_memory failed: %s", elf_errmsg(-1));
	else
		rc = read_kernels(e, id.sm, &ks, &nk, err);
	if (e)
		elf_end(e);
	free(copy);
	if (rc) {
		kernels_free(ks, nk);
		return rc;
	}
	out->kernels = ks;
	out->nkernels = nk;
	return FB_OK;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

char *
fb_demangle(const char *name, char *buf, size_t size)
{
	if (!size)
		return buf;
	snprintf(buf, size, "%s", name);
	if (strncmp(name, "_Z", 2) != 0)
		return buf;
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return buf;
	demangle_fn fn;
	void *sym = dlsym(h, "__cxa_demangle");
	memcpy(&fn, &sym, sizeof(fn));
	if (fn) {
		int status = 0;
		char *d = fn(name, NULL, NULL, &status);
		if (d && status == 0)
			snprintf(buf, size, "%s", d);
		free(d);
	}
	dlclose(h);
	return buf;
}
