/* elfid.c: the identity of a CUDA ELF (cubin) from its header and section table, read by hand
 * with every offset bounds-checked: no libelf, so it is cheap enough for every entry of a library.
 *
 * Facts used (docs/fatbin.md §8): ELFCLASS64, little-endian, e_machine 190 (EM_CUDA);
 * EI_ABIVERSION 7 (CUDA <= 12.x): SM in e_flags bits 0-7, ABI 8 (13.0): bits 8-15;
 * .nv.compat is section type 0x70000086, records {u8 format, u8 attribute, ...} whose
 * attribute 9 = 1 marks arch-specific code.
 *
 * The caches (compile/compile.c, extension/edgecache.c) ask fb_image_check and
 * fb_elf_host_object whether an entry is what its key says before they use or keep it
 * (docs/remote-cache.md §5): an entry from a remote anyone may have written is a cubin, PTX
 * or object of some kind, and only its own bytes say which. */
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "elfid.h"

#define EM_CUDA_ 190
#define SHT_NV_COMPAT 0x70000086u
#define NVVM_MAGIC 0x7F4E43EDu

/* The machine fatbuild itself was built for: host objects of a build are linked into a
 * library this machine loads (docs/fatbin.md §6). */
#if defined(__x86_64__)
#define HOST_MACHINE 62 /* EM_X86_64 */
#elif defined(__aarch64__)
#define HOST_MACHINE 183 /* EM_AARCH64 */
#elif defined(__powerpc64__)
#define HOST_MACHINE 21 /* EM_PPC64 */
#else
#define HOST_MACHINE 0 /* another machine: its e_machine is not checked */
#endif

/* Attribute 9 = 1 in .nv.compat records. */
static bool
compat_arch_a(const unsigned char *c, size_t n)
{
	size_t i = 0;
	while (i + 2 <= n) {
		unsigned fmt = c[i], attr = c[i + 1];
		size_t len;
		if (fmt == 0)
			break;
		if (fmt == 2 || fmt == 1)
			len = 3; /* BVAL: u8 value; NVAL */
		else if (fmt == 3)
			len = 4;
		else if (fmt == 4 && i + 4 <= n)
			len = 4 + fb_rd16(c + i + 2);
		else
			break;
		if (attr == 9 && fmt == 2 && i + 2 < n)
			return c[i + 2] == 1;
		i += len;
	}
	return false;
}

static int
sm_from_flags(int abi, uint32_t f)
{
	return abi >= 8 ? (int)((f >> 8) & 0xff) : (int)(f & 0xff);
}

int
fb_elf_ident(const void *data, size_t size, struct fb_elfid *id, struct fb_error *err)
{
	const unsigned char *p = data;
	memset(id, 0, sizeof(*id));
	if (size < 64 || memcmp(p, "\x7f" "ELF", 4) != 0)
		return fb_seterr(err, FB_EFORMAT, "not an ELF file (%zu bytes)", size);
	if (p[4] != 2)
		return fb_seterr(err, FB_EFORMAT, "cubin is not ELFCLASS64 (32-bit device code is not supported)");
	if (p[5] != 1)
		return fb_seterr(err, FB_EFORMAT, "cubin is not little-endian");
	if (fb_rd16(p + 0x12) != EM_CUDA_)
		return fb_seterr(err, FB_EFORMAT, "ELF e_machine %u is not EM_CUDA (190)", fb_rd16(p + 0x12));
	id->abi = p[8];
	id->type = fb_rd16(p + 0x10);
	id->e_flags = fb_rd32(p + 0x30);
	id->sm = sm_from_flags(id->abi, id->e_flags);
	if (id->sm < 10)
		return fb_seterr(err, FB_EFORMAT, "cubin e_flags 0x%08x (ABI %d) give no SM number", id->e_flags, id->abi);
	uint64_t shoff = fb_rd64(p + 0x28);
	unsigned shentsize = fb_rd16(p + 0x3a), shnum = fb_rd16(p + 0x3c);
	if (shnum == 0 || shoff == 0)
		return FB_OK;
	if (shentsize != 64)
		return fb_seterr(err, FB_EFORMAT, "ELF section header size %u is not 64", shentsize);
	if (shoff > size || (uint64_t)shnum * 64 > size - shoff)
		return fb_seterr(err, FB_EFORMAT, "ELF section table (offset 0x%llx, %u entries) runs past the end (%zu bytes)",
		                 (unsigned long long)shoff, shnum, size);
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = p + shoff + (uint64_t)i * 64;
		if (fb_rd32(sh + 4) != SHT_NV_COMPAT)
			continue;
		uint64_t off = fb_rd64(sh + 0x18), sz = fb_rd64(sh + 0x20);
		if (off > size || sz > size - off)
			return fb_seterr(err, FB_EFORMAT, "ELF section %u (.nv.compat) runs past the end", i);
		id->compat = p + off;
		id->compat_len = (size_t)sz;
		id->arch_a = compat_arch_a(id->compat, id->compat_len);
		break;
	}
	return FB_OK;
}

bool
fb_elfid_arch_specific(const struct fb_elfid *id)
{
	const unsigned char *c = id->compat;
	for (size_t i = 0; c && i + 3 <= id->compat_len && c[i] != 0; i += c[i] == 3 ? 4 : 3) {
		if (c[i] == 2 && c[i + 1] == 9)
			return c[i + 2] == 1;
		if (c[i] != 2 && c[i] != 3)
			break;
	}
	return false;
}

/* The bytes an ELF image really occupies (headers, sections, program headers). */
size_t
fb_elf_extent(const unsigned char *p, size_t n)
{
	if (n < 64 || memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2)
		return n;
	uint64_t end = 64;
	uint64_t shoff = fb_rd64(p + 0x28), phoff = fb_rd64(p + 0x20);
	unsigned shnum = fb_rd16(p + 0x3c), phnum = fb_rd16(p + 0x38);
	unsigned shent = fb_rd16(p + 0x3a), phent = fb_rd16(p + 0x36);
	if (shoff && shoff <= n && (uint64_t)shnum * shent <= n - shoff) {
		if (shoff + (uint64_t)shnum * shent > end)
			end = shoff + (uint64_t)shnum * shent;
		for (unsigned i = 0; i < shnum && shent >= 64; i++) {
			const unsigned char *sh = p + shoff + (uint64_t)i * shent;
			if (fb_rd32(sh + 4) == 8) /* SHT_NOBITS */
				continue;
			uint64_t o = fb_rd64(sh + 0x18), s = fb_rd64(sh + 0x20);
			if (o <= n && s <= n - o && o + s > end)
				end = o + s;
		}
	} else {
		return n;
	}
	if (phoff && phoff <= n && (uint64_t)phnum * phent <= n - phoff && phoff + (uint64_t)phnum * phent > end)
		end = phoff + (uint64_t)phnum * phent;
	return end < n ? (size_t)end : n;
}

static int
check_cubin(const struct ap_target *t, const char *tn, const void *data, size_t size, struct fb_error *err)
{
	struct fb_elfid id;
	int rc = fb_elf_ident(data, size, &id, err);
	if (rc)
		return rc;
	if (id.sm != t->sm)
		return fb_seterr(err, FB_EFORMAT, "cubin is for sm_%d, not the requested %s", id.sm, tn);
	if (id.arch_a != (t->variant == AP_ARCH))
		return fb_seterr(err, FB_EFORMAT, "cubin is for sm_%d%s, not the requested %s", id.sm, id.arch_a ? "a" : "",
		                 tn);
	return 0;
}

static int
check_ptx(const struct ap_target *t, const char *tn, const void *data, size_t size, struct fb_error *err)
{
	const char *s = data;
	size_t len = size;
	while (len && s[len - 1] == 0)
		len--;
	if (!len || memchr(s, 0, len))
		return fb_seterr(err, FB_EFORMAT, "PTX for %s %s", tn, len ? "contains a NUL byte" : "is empty");
	struct ap_target got;
	int rc = fb_ptx_info(s, len, NULL, NULL, &got, err);
	if (rc)
		return rc;
	if (got.sm != t->sm || got.variant != t->variant) {
		char gn[32];
		got.kind = AP_SASS; /* the .target directive names an sm_ */
		ap_target_name(&got, gn, sizeof(gn));
		return fb_seterr(err, FB_EFORMAT, "PTX .target is %s, not the requested %s", gn, tn);
	}
	return 0;
}

int
fb_image_check(enum fb_entry_kind kind, const struct ap_target *t, const void *data, size_t size,
               struct fb_error *err)
{
	char tn[32];
	ap_target_name(t, tn, sizeof(tn));
	if (kind == FB_KIND_ELF)
		return check_cubin(t, tn, data, size, err);
	if (kind == FB_KIND_PTX)
		return check_ptx(t, tn, data, size, err);
	if (size < 8 || fb_rd32(data) != NVVM_MAGIC)
		return fb_seterr(err, FB_EFORMAT, "LTO-IR for %s is not an NVVM container (magic ed 43 4e 7f)", tn);
	return 0;
}

int
fb_elf_host_object(const void *data, size_t size, struct fb_error *err)
{
	const unsigned char *p = data;
	if (size < 64 || memcmp(p, "\x7f" "ELF", 4) != 0)
		return fb_seterr(err, FB_EFORMAT, "not an ELF object (%zu bytes)", size);
	int cls = sizeof(void *) == 8 ? 2 : 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	int data_enc = 2;
#else
	int data_enc = 1;
#endif
	if (p[4] != cls || p[5] != data_enc)
		return fb_seterr(err, FB_EFORMAT, "ELF class %d, data %d: not this machine's (%d, %d)", p[4], p[5], cls,
		                 data_enc);
	unsigned type = data_enc == 1 ? fb_rd16(p + 0x10) : (unsigned)(p[0x10] << 8 | p[0x11]);
	unsigned machine = data_enc == 1 ? fb_rd16(p + 0x12) : (unsigned)(p[0x12] << 8 | p[0x13]);
	if (type != 1)
		return fb_seterr(err, FB_EFORMAT, "ELF e_type %u is not ET_REL (a relocatable object)", type);
	if (HOST_MACHINE && machine != HOST_MACHINE)
		return fb_seterr(err, FB_EFORMAT, "ELF e_machine %u is not this machine's (%d)", machine, HOST_MACHINE);
	return 0;
}
