/* hostelf.c: finding fatbin containers in files: plain .fatbin, cubins, PTX, host ELF
 * objects, shared libraries and executables, and the members of ar archives.
 *
 * Host ELF (ELFCLASS64, little-endian): containers live in the sections .nv_fatbin
 * (whole-program code, and nvcc -dlink output) and __nv_relfatbin (nvcc -c -rdc); a linked
 * library concatenates one container per translation unit. The section table is read by
 * hand from an mmap, every offset bounds-checked, so a 540 MB library costs a few page
 * faults; nothing is decompressed.
 *
 * ar archives ("!<arch>\n"): 60-byte member headers {name[16], date[12], uid[6], gid[6],
 * mode[8], size[10] decimal, "`\n"}, data padded to an even offset; "/" and "/SYM64/" are
 * symbol tables, "//" holds long names referenced as "/<offset>". Thin archives are refused. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsect.h"
#include "shared.h"
#include "base/safefs.h"

#define EM_CUDA_ 190

/* Copies at most n bytes of untrusted text, stopping at NUL, with non-printable bytes as '?',
 * so that messages and `where` stay one printable line. */
static char *
clean(char *dst, size_t dsz, const char *src, size_t n)
{
	size_t i = 0;
	for (; i < n && i + 1 < dsz && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = 0;
	return dst;
}

int
fb_map_file(const char *path, struct fb_mapped *m, struct fb_error *err)
{
	memset(m, 0, sizeof(*m));
	int fd;
	struct stat st;
	int rc = fb_open_regular(path, 0, &fd, &st, err);
	if (rc)
		return rc;
	if (st.st_size == 0) {
		close(fd);
		return FB_OK;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return fb_seterr(err, FB_ETOOBIG, "%s is too large to map", path);
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return fb_seterr(err, FB_EIO, "cannot mmap %s: %s", path, strerror(e));
	m->data = p;
	m->size = (size_t)st.st_size;
	return FB_OK;
}

void
fb_unmap_file(struct fb_mapped *m)
{
	if (m && m->data)
		munmap((void *)m->data, m->size);
	if (m) {
		m->data = NULL;
		m->size = 0;
	}
}

void
fb_scan_free(struct fb_scan *s)
{
	if (!s)
		return;
	free(s->blobs);
	s->blobs = NULL;
	s->nblobs = 0;
}

struct scanner {
	struct fb_scan *s;
	size_t cap;
	struct fb_error *err;
};

static int
add_blob(struct scanner *sc, enum fb_blob_kind kind, size_t off, size_t size, const char *prefix, const char *sect)
{
	struct fb_scan *s = sc->s;
	if (s->nblobs == sc->cap) {
		size_t nc = sc->cap ? sc->cap * 2 : 8;
		struct fb_blob *nb = realloc(s->blobs, nc * sizeof(*nb));
		if (!nb)
			return fb_seterr(sc->err, FB_ENOMEM, "out of memory");
		s->blobs = nb;
		sc->cap = nc;
	}
	struct fb_blob *b = &s->blobs[s->nblobs++];
	b->kind = kind;
	b->offset = off;
	b->size = size;
	snprintf(b->where, sizeof(b->where), "%s%s%s", prefix, *prefix && *sect ? " " : "", sect);
	return FB_OK;
}

/* fb_elf_sections' callback of scan_host_elf: the host ELF's place in the buffer and its names. */
struct hostelf {
	struct scanner *sc;
	size_t off, size;
	const char *name, *prefix;
};

static int
take_section(const struct fb_elf_section *s, void *ctx)
{
	struct hostelf *h = ctx;
	if (strcmp(s->name, ".nv_fatbin") != 0 && strcmp(s->name, "__nv_relfatbin") != 0)
		return FB_OK;
	if (s->type == FB_SHT_NOBITS)
		return FB_OK;
	if (!s->inside)
		return fb_seterr(h->sc->err, FB_EFORMAT,
		                 "%s: section %s (offset 0x%llx, size 0x%llx) runs past the end of the file", h->name,
		                 s->name[0] == '.' ? ".nv_fatbin" : "__nv_relfatbin", (unsigned long long)s->offset,
		                 (unsigned long long)s->size);
	if (s->size == 0)
		return FB_OK;
	return add_blob(h->sc, FB_BLOB_FATBIN, h->off + (size_t)s->offset, (size_t)s->size, h->prefix, s->name);
}

/* Host ELF at base[off..off+size): adds .nv_fatbin and __nv_relfatbin sections. */
static int
scan_host_elf(struct scanner *sc, const unsigned char *base, size_t off, size_t size, const char *name,
              const char *prefix)
{
	struct hostelf h = {sc, off, size, name, prefix};
	return fb_elf_sections(base + off, size, name, take_section, &h, sc->err);
}

static bool
looks_like_ptx(const unsigned char *p, size_t n)
{
	size_t len = n;
	while (len && p[len - 1] == 0)
		len--;
	size_t k = len < 65536 ? len : 65536;
	if (!len || memchr(p, 0, k))
		return false;
	struct ap_target t;
	return fb_ptx_info(p, len, NULL, NULL, &t, NULL) == 0;
}

static int
parse_dec(const char *s, size_t n, uint64_t *v)
{
	uint64_t r = 0;
	size_t i = 0;
	while (i < n && s[i] == ' ')
		i++;
	size_t start = i;
	while (i < n && isdigit((unsigned char)s[i])) {
		if (r > (UINT64_MAX - 9) / 10)
			return -1;
		r = r * 10 + (uint64_t)(s[i++] - '0');
	}
	if (i == start)
		return -1;
	while (i < n && s[i] == ' ')
		i++;
	if (i != n)
		return -1;
	*v = r;
	return 0;
}

static int
scan_archive(struct scanner *sc, const unsigned char *p, size_t size, const char *name)
{
	size_t off = 8;
	const char *longnames = NULL;
	size_t longlen = 0;
	while (off < size) {
		if (size - off < 60)
			return fb_seterr(sc->err, FB_EFORMAT, "%s: archive member header at 0x%zx truncated", name, off);
		const char *h = (const char *)p + off;
		if (h[58] != '`' || h[59] != '\n')
			return fb_seterr(sc->err, FB_EFORMAT, "%s: archive member header at 0x%zx is corrupt (no terminator)", name,
			                 off);
		uint64_t msz;
		if (parse_dec(h + 48, 10, &msz) != 0)
		{
			char sf[16];
			return fb_seterr(sc->err, FB_EFORMAT, "%s: archive member at 0x%zx has a bad size field '%s'", name, off,
			                 clean(sf, sizeof(sf), h + 48, 10));
		}
		size_t data = off + 60;
		if (msz > size - data)
			return fb_seterr(sc->err, FB_EFORMAT, "%s: archive member at 0x%zx: size %llu runs past the end (%zu bytes left)",
			                 name, off, (unsigned long long)msz, size - data);
		char mname[128];
		if (h[0] == '/' && h[1] == '/' && h[2] == ' ') {
			longnames = (const char *)p + data;
			longlen = (size_t)msz;
			mname[0] = 0;
		} else if (h[0] == '/' && (h[1] == ' ' || memcmp(h, "/SYM64/", 7) == 0)) {
			mname[0] = 0; /* symbol table */
		} else if (h[0] == '/' && isdigit((unsigned char)h[1])) {
			uint64_t lo;
			size_t k = 1;
			while (k < 16 && isdigit((unsigned char)h[k]))
				k++;
			if (parse_dec(h + 1, k - 1, &lo) != 0 || !longnames || lo >= longlen)
				return fb_seterr(sc->err, FB_EFORMAT, "%s: archive member at 0x%zx names a long name that does not exist",
				                 name, off);
			size_t j = 0;
			while (lo + j < longlen && j + 1 < sizeof(mname) && longnames[lo + j] != '/' && longnames[lo + j] != '\n')
				j++;
			clean(mname, sizeof(mname), longnames + lo, j);
		} else {
			size_t j = 0;
			while (j < 16 && h[j] != '/' && h[j] != ' ')
				j++;
			clean(mname, sizeof(mname), h, j);
		}
		if (mname[0] && msz >= 4) {
			const unsigned char *m = p + data;
			char prefix[256];
			snprintf(prefix, sizeof(prefix), "%s(%s)", name, mname);
			int rc = FB_OK;
			if (memcmp(m, "\x7f" "ELF", 4) == 0) {
				if (msz >= 64 && fb_rd16(m + 0x12) == EM_CUDA_)
					rc = add_blob(sc, FB_BLOB_CUBIN, data, (size_t)msz, prefix, "");
				else
					rc = scan_host_elf(sc, p, data, (size_t)msz, prefix, prefix);
			} else if (fb_rd32(m) == FB_CONTAINER_MAGIC) {
				rc = add_blob(sc, FB_BLOB_FATBIN, data, (size_t)msz, prefix, "");
			}
			if (rc)
				return rc;
		}
		off = data + (size_t)msz;
		if (off & 1)
			off++;
	}
	return FB_OK;
}

int
fb_scan_buffer(const void *data, size_t size, const char *name, struct fb_scan *out, struct fb_error *err)
{
	const unsigned char *p = data;
	struct scanner sc = {out, 0, err};
	memset(out, 0, sizeof(*out));
	if (!name)
		name = "input";
	int rc;
	if (size >= 4 && fb_rd32(p) == FB_CONTAINER_MAGIC) {
		snprintf(out->type, sizeof(out->type), "fatbin");
		rc = add_blob(&sc, FB_BLOB_FATBIN, 0, size, "", "");
	} else if (size >= 4 && memcmp(p, "\x7f" "ELF", 4) == 0) {
		if (size >= 64 && fb_rd16(p + 0x12) == EM_CUDA_) {
			snprintf(out->type, sizeof(out->type), "cubin");
			rc = add_blob(&sc, FB_BLOB_CUBIN, 0, size, "", "");
		} else {
			snprintf(out->type, sizeof(out->type), "elf");
			rc = scan_host_elf(&sc, p, 0, size, name, "");
		}
	} else if (size >= 8 && memcmp(p, "!<arch>\n", 8) == 0) {
		snprintf(out->type, sizeof(out->type), "archive");
		rc = scan_archive(&sc, p, size, name);
	} else if (size >= 8 && memcmp(p, "!<thin>\n", 8) == 0) {
		rc = fb_seterr(err, FB_EUNSUPPORTED, "%s: thin archives are not supported (their members live in other files)", name);
	} else if (size > 0 && looks_like_ptx(p, size)) {
		snprintf(out->type, sizeof(out->type), "ptx");
		rc = add_blob(&sc, FB_BLOB_PTX, 0, size, "", "");
	} else {
		rc = fb_seterr(err, FB_EFORMAT, "%s: not a fatbin, cubin, PTX, ELF object/library or ar archive", name);
	}
	if (rc)
		fb_scan_free(out);
	return rc;
}

/* Prefixes err's message with where ("member.o: .nv_fatbin: "), as room allows. */
static void
prefix_where(struct fb_error *err, const char *where)
{
	if (!err || !where[0])
		return;
	size_t wl = strlen(where), cap = sizeof(err->msg);
	if (wl + 3 < cap) {
		memmove(err->msg + wl + 2, err->msg, cap - wl - 3);
		err->msg[cap - 1] = 0;
		memcpy(err->msg, where, wl);
		err->msg[wl] = ':';
		err->msg[wl + 1] = ' ';
	}
}

/* The one entry of a lone cubin or PTX blob, as fb_fatbin_parse would report it. */
static int
bare_entry(const unsigned char *base, const struct fb_blob *bl, struct fb_entry *out, struct fb_error *err)
{
	int rc;
	struct fb_entry e = {0};
	e.payload = base + bl->offset;
	e.stored_size = bl->size;
	e.payload_size = bl->size;
	e.header_size = 0;
	if (bl->kind == FB_BLOB_CUBIN) {
		struct fb_elfid id;
		rc = fb_elf_ident(e.payload, bl->size, &id, err);
		if (rc)
			return rc;
		e.disk_kind = FB_DISK_KIND_ELF;
		e.major = 1;
		e.minor = (uint16_t)id.abi;
		e.target.sm = id.sm;
		e.target.kind = AP_SASS;
		e.flags = FB_FLAG_64BIT;
		if (id.compat) {
			e.compat = id.compat;
			e.compat_len = id.compat_len;
			if (fb_elfid_arch_specific(&id)) {
				e.target.variant = AP_ARCH;
				e.flags |= FB_FLAG_ARCH_A;
			}
			if (id.sm >= 100)
				e.flags |= FB_FLAG_COMPAT;
		}
	} else {
		int ma = 0, mi = 0;
		size_t len = bl->size;
		while (len && e.payload[len - 1] == 0)
			len--;
		rc = fb_ptx_info(e.payload, len, &ma, &mi, &e.target, err);
		if (rc)
			return rc;
		e.disk_kind = FB_DISK_KIND_PTX;
		e.major = (uint16_t)ma;
		e.minor = (uint16_t)mi;
		e.flags = FB_FLAG_64BIT | (e.target.variant == AP_ARCH ? FB_FLAG_ARCH_A : 0) |
		          (e.target.variant == AP_FAMILY ? FB_FLAG_FAMILY_F : 0);
	}
	*out = e;
	return FB_OK;
}

/* arr (n used of *cap elements of elem bytes) with room for more (> 0): arr itself, or a
 * reallocation to twice the capacity plus more; NULL when out of memory. */
static void *
reserve(void *arr, size_t n, size_t more, size_t *cap, size_t elem)
{
	if (n + more <= *cap)
		return arr;
	size_t nc = (*cap + more) * 2;
	void *na = realloc(arr, nc * elem);
	if (na)
		*cap = nc;
	return na;
}

/* Appends one (the parse of blob b) to all, with offsets and indices made global. */
static int
append_parsed(struct fb_parsed *all, size_t *ccap, size_t *ecap, const struct fb_parsed *one, const struct fb_blob *bl,
              size_t b)
{
	size_t cbase = all->ncontainers, ebase = all->nentries;
	if (one->ncontainers) {
		struct fb_container *ncs = reserve(all->containers, all->ncontainers, one->ncontainers, ccap,
		                                   sizeof(*all->containers));
		if (!ncs)
			return -1;
		all->containers = ncs;
	}
	if (one->nentries) {
		struct fb_entry *nes = reserve(all->entries, all->nentries, one->nentries, ecap, sizeof(*all->entries));
		if (!nes)
			return -1;
		all->entries = nes;
	}
	for (size_t i = 0; i < one->ncontainers; i++) {
		struct fb_container c = one->containers[i];
		c.offset += bl->offset;
		c.first += ebase;
		c.blob = b;
		all->containers[all->ncontainers++] = c;
	}
	for (size_t i = 0; i < one->nentries; i++) {
		struct fb_entry e = one->entries[i];
		e.offset += bl->offset;
		e.container += cbase;
		all->entries[all->nentries++] = e;
	}
	return 0;
}

int
fb_scan_entries(const void *data, const struct fb_scan *s, struct fb_parsed *out, struct fb_error *err)
{
	const unsigned char *base = data;
	struct fb_parsed all = {0};
	size_t ccap = 0, ecap = 0;
	int rc = FB_OK;
	memset(out, 0, sizeof(*out));
	for (size_t b = 0; b < s->nblobs; b++) {
		const struct fb_blob *bl = &s->blobs[b];
		struct fb_parsed one = {0};
		if (bl->kind == FB_BLOB_FATBIN) {
			rc = fb_fatbin_parse(base + bl->offset, bl->size, 0, &one, err);
			if (rc) {
				prefix_where(err, bl->where);
				goto fail;
			}
		} else {
			struct fb_entry e;
			rc = bare_entry(base, bl, &e, err);
			if (rc)
				goto fail;
			one.entries = malloc(sizeof(e));
			one.containers = malloc(sizeof(*one.containers));
			if (!one.entries || !one.containers) {
				fb_parsed_free(&one);
				rc = fb_seterr(err, FB_ENOMEM, "out of memory");
				goto fail;
			}
			one.entries[0] = e;
			one.nentries = 1;
			one.containers[0] = (struct fb_container){0, bl->size, 0, 1, 0, true};
			one.ncontainers = 1;
		}
		if (append_parsed(&all, &ccap, &ecap, &one, bl, b)) {
			fb_parsed_free(&one);
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
			goto fail;
		}
		fb_parsed_free(&one);
	}
	*out = all;
	return FB_OK;
fail:
	fb_parsed_free(&all);
	return rc;
}
