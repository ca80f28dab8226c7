/* module.c: contexts, module/library loading, kernels, launches and memory of the libcuda test
 * double. cuModuleLoadData/cuLibraryLoadData parse the fatbin (docs/fatbin.md §1-§3) and
 * pick an image for the device of the current context by the selection model of docs/fatbin.md §7,
 * independently written from fatbuild's (this is the oracle the runtime is tested against):
 *   candidates: SASS of the same major with minor <= the device's (8.7 and 8.8 only their own;
 *   sm >= 100 a lower minor only with the compat blob; 'a' only the same SM; 'f' the family),
 *   PTX compute_X with X <= the device (same rules for 'a'/'f'); the highest arch wins, SASS on
 *   a tie. None fits: CUDA_ERROR_NO_BINARY_FOR_GPU (209).
 * Only the first container of a buffer is read, as the driver does. A relocatable cubin (ET_REL)
 * that calls an undefined symbol (relocatable code that was never device-linked) is refused
 * with CUDA_ERROR_INVALID_IMAGE (200), PTX calling an .extern .func other than the JIT's built-ins
 * with CUDA_ERROR_INVALID_PTX (218); LTO-IR entries never fit.
 *
 * Environment, besides fakecuda.h's:
 *   FAKECUDA_CONTEXT=<ordinal>   a context on that visible device is current on every thread
 *                                (as if the application made one); unset: none is current
 *   FAKECUDA_LAZY=1              lazy loading: a load that no image fits succeeds, and the 209
 *                                surfaces at cuModuleGetFunction (CUDA_MODULE_LOADING=LAZY)
 * Test hooks (exported): fakecuda_module_image() is the image the last load chose ("sm_86",
 * "compute_86", "" after a failure); fakecuda_last_launch() describes the last launch
 * ("saxpy 4x1x1 256x1x1 shmem=0 image=sm_86"). Memory is host malloc; launches are recorded,
 * and with FAKECUDA_EMULATE=1 a kernel named "saxpy" (float a, float *x, float *y, int n) (and
 * examples/rdc's apply_scale and cdp_parent, see cuLaunchKernel) is
 * computed on the host, so that harnesses like tests/gpu/extension.sh can be dry-run. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"
#include "fatbin/format.h" /* the container layout and walk (not the selection) */

struct fake_ctx {
	int magic;
	CUdevice dev;
};

struct fake_module {
	int magic;
	int dev_sm;
	char image[32];
	unsigned char *payload; /* decompressed image */
	size_t size;
	int kind;               /* 1 PTX, 2 ELF */
	char **names;           /* kernels found */
	unsigned nnames;
	struct fake_func *funcs;
	int nofit;              /* lazy: no image fits, reported at the first lookup */
};

struct fake_func {
	int magic;
	struct fake_module *mod;
	char *name;
};

#define CTX_MAGIC 0x43545821
#define MOD_MAGIC 0x4d4f4421
#define FUNC_MAGIC 0x46554e21

static struct fake_ctx contexts[FAKE_MAX_DEV];
static _Thread_local struct fake_ctx *current;
static _Thread_local int current_set;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char last_image[64];
static char last_launch[512];

FAKE_EXPORT const char *fakecuda_module_image(void);
FAKE_EXPORT const char *fakecuda_last_launch(void);
FAKE_EXPORT CUresult cuCtxGetCurrent(void **ctx);
FAKE_EXPORT CUresult cuCtxSetCurrent(void *ctx);
FAKE_EXPORT CUresult cuCtxGetDevice(CUdevice *dev);
FAKE_EXPORT CUresult cuCtxSynchronize(void);
FAKE_EXPORT CUresult cuModuleLoadData(void **mod, const void *image);
FAKE_EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, void *opts, void **vals);
FAKE_EXPORT CUresult cuModuleUnload(void *mod);
FAKE_EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name);
FAKE_EXPORT CUresult cuModuleGetFunctionCount(unsigned *count, void *mod);
FAKE_EXPORT CUresult cuModuleEnumerateFunctions(void **fns, unsigned n, void *mod);
FAKE_EXPORT CUresult cuFuncGetName(const char **name, void *fn);
FAKE_EXPORT CUresult cuLibraryLoadData(void **lib, const void *code, void *jo, void *jv, unsigned nj, void *lo,
                                       void *lv, unsigned nl);
FAKE_EXPORT CUresult cuLibraryGetKernel(void **k, void *lib, const char *name);
FAKE_EXPORT CUresult cuLibraryUnload(void *lib);
FAKE_EXPORT CUresult cuKernelGetFunction(void **fn, void *kernel);
FAKE_EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shmem, void *stream, void **params, void **extra);
FAKE_EXPORT CUresult cuMemAlloc_v2(uint64_t *p, size_t n);
FAKE_EXPORT CUresult cuMemFree_v2(uint64_t p);
FAKE_EXPORT CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n);
FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n);

const char *
fakecuda_module_image(void)
{
	return last_image;
}

const char *
fakecuda_last_launch(void)
{
	return last_launch;
}

/* ---- contexts ---- */

static struct fake_ctx *
cur(void)
{
	if (!current_set) {
		const char *c = getenv("FAKECUDA_CONTEXT");
		current_set = 1;
		if (c && *c) {
			int d = atoi(c);
			if (d >= 0 && d < FAKE_MAX_DEV && fake_check(d) == 0) {
				contexts[d].magic = CTX_MAGIC;
				contexts[d].dev = d;
				current = &contexts[d];
			}
		}
	}
	return current;
}

CUresult
cuCtxGetCurrent(void **ctx)
{
	fake_log("cuCtxGetCurrent");
	if (!fake_state()->inited)
		return 3;
	if (!ctx)
		return 1;
	int rc = fake_fail("cuCtxGetCurrent", -1, -1);
	if (rc)
		return rc;
	*ctx = cur();
	return 0;
}

CUresult
cuCtxSetCurrent(void *ctx)
{
	fake_log("cuCtxSetCurrent");
	struct fake_ctx *c = ctx;
	if (c && c->magic != CTX_MAGIC)
		return 201;
	cur();
	current = c;
	return 0;
}

CUresult
cuCtxGetDevice(CUdevice *dev)
{
	fake_log("cuCtxGetDevice");
	if (!fake_state()->inited)
		return 3;
	struct fake_ctx *c = cur();
	if (!c)
		return 201; /* CUDA_ERROR_INVALID_CONTEXT */
	*dev = c->dev;
	return 0;
}

CUresult
cuCtxSynchronize(void)
{
	return cur() ? 0 : 201;
}

/* ---- fatbin parsing and selection ---- */

struct img {
	int kind, sm, compat;
	char var; /* 0 'a' 'f' */
	const unsigned char *e;
};

static int
fits(const struct img *m, int dev)
{
	if (m->sm > dev)
		return 0;
	if (m->var == 'a')
		return m->sm == dev;
	if (m->var == 'f')
		return m->sm / 10 == dev / 10;
	if (m->kind == 1)
		return 1;
	if (m->sm == dev)
		return 1;
	if (m->sm / 10 != dev / 10 || m->sm == 87 || m->sm == 88 || dev == 87 || dev == 88)
		return 0;
	return m->sm < 100 || m->compat;
}

static int
decompress(const unsigned char *e, unsigned char **out, size_t *outsize)
{
	struct fb_fmt_entry h;
	fb_fmt_entry_read(e, &h);
	uint32_t hsz = h.header_size;
	uint64_t psz = h.payload_size, flags = h.flags;
	uint32_t csz = h.compressed_size;
	uint64_t usz = h.uncompressed_size;
	const unsigned char *p = e + hsz;
	if (!(flags & 0xA000)) {
		*out = malloc(psz + 1);
		if (!*out)
			return 2;
		memcpy(*out, p, psz);
		(*out)[psz] = 0;
		*outsize = psz;
		return 0;
	}
	if (flags & 0x10000 || usz > (1u << 30))
		return 200;
	*out = calloc(1, usz + 1);
	if (!*out)
		return 2;
	*outsize = usz;
	if (flags & 0x8000) {
		void *z = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
		size_t (*dec)(void *, size_t, const void *, size_t) = NULL;
		if (z)
			*(void **)&dec = dlsym(z, "ZSTD_decompress");
		if (!dec || dec(*out, usz, p, csz) != usz)
			return 200;
		return 0;
	}
	void *l = dlopen("liblz4.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*dec)(const char *, char *, int, int) = NULL;
	if (l)
		*(void **)&dec = dlsym(l, "LZ4_decompress_safe");
	if (!dec || dec((const char *)p, (char *)*out, (int)csz, (int)usz) != (int)usz)
		return 200;
	return 0;
}

static int
add_name(struct fake_module *m, const char *s, size_t n)
{
	for (unsigned i = 0; i < m->nnames; i++)
		if (strlen(m->names[i]) == n && memcmp(m->names[i], s, n) == 0)
			return 0;
	char **v = realloc(m->names, (m->nnames + 1) * sizeof(*v));
	if (!v)
		return -1;
	m->names = v;
	m->names[m->nnames] = strndup(s, n);
	return m->names[m->nnames++] ? 0 : -1;
}

/* Kernel names: PTX ".entry NAME(" or, in a cubin, the STO_CUDA_ENTRY (0x10) function symbols. */
static void
find_kernels(struct fake_module *m)
{
	if (m->kind == 1) {
		const char *t = (const char *)m->payload;
		while ((t = strstr(t, ".entry ")) != NULL) {
			t += 7;
			while (*t == ' ')
				t++;
			size_t n = strcspn(t, " (\n");
			add_name(m, t, n);
		}
		return;
	}
	const unsigned char *b = m->payload;
	if (m->size < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2)
		return;
	uint64_t shoff = fb_rd64(b + 0x28);
	unsigned shentsize = b[0x3a] | b[0x3b] << 8, shnum = b[0x3c] | b[0x3d] << 8;
	if (shoff + (uint64_t)shnum * shentsize > m->size || shentsize < 64)
		return;
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = b + shoff + (size_t)i * shentsize;
		if (fb_rd32(sh + 4) != 2) /* SHT_SYMTAB */
			continue;
		uint64_t off = fb_rd64(sh + 0x18), size = fb_rd64(sh + 0x20);
		unsigned link = fb_rd32(sh + 0x28);
		if (link >= shnum || off + size > m->size)
			return;
		const unsigned char *str = b + shoff + (size_t)link * shentsize;
		uint64_t soff = fb_rd64(str + 0x18), ssize = fb_rd64(str + 0x20);
		if (soff + ssize > m->size)
			return;
		for (uint64_t k = 0; k + 24 <= size; k += 24) {
			const unsigned char *s = b + off + k;
			uint32_t name = fb_rd32(s);
			if ((s[4] & 0xf) == 2 && (s[5] & 0x10) && name < ssize) {
				const char *nm = (const char *)b + soff + name;
				add_name(m, nm, strnlen(nm, (size_t)(ssize - name)));
			}
		}
	}
}

/* A relocatable cubin (ET_REL, -rdc without the device link) with an undefined global symbol:
 * its first such name into buf (1), or 0. The driver cannot load code whose calls go nowhere
 * (modelled as CUDA_ERROR_INVALID_IMAGE). */
static int
unresolved(const struct fake_module *m, char *buf, size_t size)
{
	const unsigned char *b = m->payload;
	if (m->kind != 2 || m->size < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2 || (b[16] | b[17] << 8) != 1)
		return 0;
	uint64_t shoff = fb_rd64(b + 0x28);
	unsigned shentsize = b[0x3a] | b[0x3b] << 8, shnum = b[0x3c] | b[0x3d] << 8;
	if (shoff + (uint64_t)shnum * shentsize > m->size || shentsize < 64)
		return 0;
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = b + shoff + (size_t)i * shentsize;
		if (fb_rd32(sh + 4) != 2) /* SHT_SYMTAB */
			continue;
		uint64_t off = fb_rd64(sh + 0x18), ssz = fb_rd64(sh + 0x20);
		unsigned link = fb_rd32(sh + 0x28);
		if (link >= shnum || off + ssz > m->size)
			return 0;
		const unsigned char *str = b + shoff + (size_t)link * shentsize;
		uint64_t soff = fb_rd64(str + 0x18), strsz = fb_rd64(str + 0x20);
		if (soff + strsz > m->size)
			return 0;
		for (uint64_t k = 24; k + 24 <= ssz; k += 24) {
			const unsigned char *sy = b + off + k;
			uint32_t name = fb_rd32(sy);
			unsigned shndx = sy[6] | sy[7] << 8;
			if ((sy[4] >> 4) == 1 && shndx == 0 && name && name < strsz) { /* STB_GLOBAL, SHN_UNDEF */
				const char *nm = (const char *)b + soff + name;
				snprintf(buf, size, "%.*s", (int)strnlen(nm, (size_t)(strsz - name)), nm);
				return 1;
			}
		}
	}
	return 0;
}

/* PTX that declares an .extern .func the JIT cannot supply (anything but the built-ins vprintf,
 * malloc, free, __assertfail): relocatable PTX never device-linked, or dynamic-parallelism PTX
 * without the device runtime. Its name into buf (1), or 0. */
static int
ptx_extern(const struct fake_module *m, char *buf, size_t size)
{
	static const char *const builtin[] = {"vprintf", "malloc", "free", "__assertfail"};
	const char *t = (const char *)m->payload;
	while ((t = strstr(t, ".extern .func")) != NULL) {
		const char *e = strchr(t, '\n');
		size_t len = e ? (size_t)(e - t) : strlen(t);
		const char *name = t + len; /* the last word before '(' or the line end */
		const char *paren = memchr(t + 13, '(', len - 13);
		if (paren && memchr(paren, ')', len - (size_t)(paren - t))) {
			const char *close = memchr(paren, ')', len - (size_t)(paren - t));
			name = close + 1;
		} else {
			name = t + 13;
		}
		while (*name == ' ' || *name == '\t')
			name++;
		size_t n = strcspn(name, " \t(\n;");
		int known = 0;
		for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
			known |= strlen(builtin[i]) == n && strncmp(name, builtin[i], n) == 0;
		if (!known && n) {
			snprintf(buf, size, "%.*s", (int)n, name);
			return 1;
		}
		t += len;
	}
	return 0;
}

/* Picks the image of the container at p for device dev (10*major+minor) into *best: 1 when one
 * fits, 0 when none does, -1 for a malformed entry. listing gets every image's name. */
static int
pick(const unsigned char *p, int dev, struct img *best, char *listing, size_t lsize)
{
	size_t cend = FB_CONTAINER_HDR + (size_t)fb_rd64(p + 8);
	int have = 0;
	struct fb_fmt_entry h;
	enum fb_fmt_status st;
	for (size_t off = FB_CONTAINER_HDR; (st = fb_fmt_entry_next(p, off, cend, 0, &h)) != FB_FMT_SHORT;) {
		if (st != FB_FMT_OK)
			return -1;
		struct img m = {h.kind, (int)h.arch, (h.flags & FB_FLAG_COMPAT) != 0,
		                (h.flags & FB_FLAG_ARCH_A) ? 'a' : (h.flags & FB_FLAG_FAMILY_F) ? 'f' : 0, p + off};
		size_t l = strlen(listing);
		snprintf(listing + l, lsize - l, " %s_%d%s", m.kind == 1 ? "compute" : "sm", m.sm,
		         m.var == 'a' ? "a" : m.var == 'f' ? "f" : "");
		if ((m.kind == 1 || m.kind == 2) && fits(&m, dev) &&
		    (!have || m.sm > best->sm || (m.sm == best->sm && m.kind == 2 && best->kind != 2))) {
			*best = m;
			have = 1;
		}
		off += h.header_size + (size_t)h.payload_size;
	}
	return have;
}

/* Loads the chosen image best (NULL: none fits) for device dev as a module into *out, as the
 * driver would; last_image says which. */
static CUresult
load_chosen(void **out, const struct img *chosen, const char *api, int dev, const char *listing)
{
	int rc;
	int have = chosen != NULL;
	struct img best = have ? *chosen : (struct img){0};
	pthread_mutex_lock(&lock);
	if (!have) {
		last_image[0] = 0;
		pthread_mutex_unlock(&lock);
		fake_log("%s: device %d.%d: no image fits (has%s) -> 209", api, dev / 10, dev % 10, listing);
		return 209;
	}
	struct fake_module *m = calloc(1, sizeof(*m));
	if (!m) {
		pthread_mutex_unlock(&lock);
		return 2;
	}
	m->magic = MOD_MAGIC;
	m->dev_sm = dev;
	m->kind = best.kind;
	snprintf(m->image, sizeof(m->image), "%s_%d%s", best.kind == 1 ? "compute" : "sm", best.sm,
	         best.var == 'a' ? "a" : best.var == 'f' ? "f" : "");
	rc = decompress(best.e, &m->payload, &m->size);
	if (rc) {
		free(m->payload);
		free(m);
		pthread_mutex_unlock(&lock);
		return rc;
	}
	char undef[128];
	if (m->kind == 1 && ptx_extern(m, undef, sizeof(undef))) {
		last_image[0] = 0;
		pthread_mutex_unlock(&lock);
		fake_log("%s: device %d.%d: PTX %s calls .extern %s, which the JIT cannot resolve -> 218", api, dev / 10,
		         dev % 10, m->image, undef);
		free(m->payload);
		free(m);
		return 218; /* CUDA_ERROR_INVALID_PTX */
	}
	if (unresolved(m, undef, sizeof(undef))) {
		last_image[0] = 0;
		pthread_mutex_unlock(&lock);
		fake_log("%s: device %d.%d: image %s is relocatable and calls %s, which nothing defines (not device-linked) -> 200",
		         api, dev / 10, dev % 10, m->image, undef);
		free(m->payload);
		free(m);
		return 200;
	}
	find_kernels(m);
	snprintf(last_image, sizeof(last_image), "%s", m->image);
	pthread_mutex_unlock(&lock);
	fake_log("%s: device %d.%d: image %s (has%s)", api, dev / 10, dev % 10, m->image, listing);
	*out = m;
	return 0;
}

static CUresult
load(void **out, const void *image, const char *api)
{
	if (!fake_state()->inited)
		return 3;
	if (!out || !image)
		return 1;
	struct fake_ctx *c = cur();
	if (!c)
		return 201;
	int rc = fake_fail(api, c->dev, -1);
	if (rc)
		return rc;
	struct fake_device *d = fake_device(c->dev);
	int dev = 10 * d->major + d->minor;
	const unsigned char *p = image;
	if (fb_rd32(p) == FB_WRAPPER_MAGIC) /* the nvcc wrapper: follow its pointer */
		p = *(const unsigned char *const *)(p + 8);
	if (fb_rd32(p) != FB_CONTAINER_MAGIC) {
		fake_log("%s: not a fatbin", api);
		return 200;
	}
	struct img best = {0};
	char listing[256] = "";
	int have = pick(p, dev, &best, listing, sizeof(listing));
	if (have < 0)
		return 200;
	const char *lazy = getenv("FAKECUDA_LAZY");
	if (!have && lazy && strcmp(lazy, "1") == 0) {
		struct fake_module *lm = calloc(1, sizeof(*lm));
		if (!lm)
			return 2;
		lm->magic = MOD_MAGIC;
		lm->nofit = 1;
		fake_log("%s: device %d.%d: lazy, no image fits (has%s)", api, dev / 10, dev % 10, listing);
		*out = lm;
		return 0;
	}
	return load_chosen(out, have ? &best : NULL, api, dev, listing);
}

CUresult
cuModuleLoadData(void **mod, const void *image)
{
	return load(mod, image, "cuModuleLoadData");
}

CUresult
cuModuleLoadDataEx(void **mod, const void *image, unsigned n, void *opts, void **vals)
{
	(void)n;
	(void)opts;
	(void)vals;
	return load(mod, image, "cuModuleLoadDataEx");
}

CUresult
cuLibraryLoadData(void **lib, const void *code, void *jo, void *jv, unsigned nj, void *lo, void *lv, unsigned nl)
{
	(void)jo;
	(void)jv;
	(void)nj;
	(void)lo;
	(void)lv;
	(void)nl;
	return load(lib, code, "cuLibraryLoadData");
}

static void
unload(struct fake_module *m)
{
	for (unsigned i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->funcs);
	free(m->payload);
	m->magic = 0;
	free(m);
}

CUresult
cuModuleUnload(void *mod)
{
	struct fake_module *m = mod;
	if (!m || m->magic != MOD_MAGIC)
		return 400;
	unload(m);
	return 0;
}

CUresult
cuLibraryUnload(void *lib)
{
	return cuModuleUnload(lib);
}

static CUresult
get(void **fn, void *mod, const char *name, const char *api)
{
	struct fake_module *m = mod;
	if (!fn || !name)
		return 1;
	if (!m || m->magic != MOD_MAGIC)
		return 400; /* CUDA_ERROR_INVALID_HANDLE */
	if (m->nofit) {
		fake_log("%s(%s): lazy load: no image fits -> 209", api, name);
		return 209;
	}
	pthread_mutex_lock(&lock);
	if (!m->funcs && m->nnames) {
		m->funcs = calloc(m->nnames, sizeof(*m->funcs));
		for (unsigned i = 0; m->funcs && i < m->nnames; i++)
			m->funcs[i] = (struct fake_func){FUNC_MAGIC, m, m->names[i]};
	}
	pthread_mutex_unlock(&lock);
	for (unsigned i = 0; m->funcs && i < m->nnames; i++) {
		if (strcmp(m->names[i], name) == 0) {
			*fn = &m->funcs[i];
			fake_log("%s(%s): found in %s", api, name, m->image);
			return 0;
		}
	}
	fake_log("%s(%s): not found -> 500", api, name);
	return 500; /* CUDA_ERROR_NOT_FOUND */
}

CUresult
cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	return get(fn, mod, name, "cuModuleGetFunction");
}

CUresult
cuLibraryGetKernel(void **k, void *lib, const char *name)
{
	return get(k, lib, name, "cuLibraryGetKernel");
}

/* Kernels and functions share one handle type here; a real driver maps per context. */
CUresult
cuKernelGetFunction(void **fn, void *kernel)
{
	struct fake_func *f = kernel;
	if (!fn || !f || f->magic != FUNC_MAGIC)
		return 400;
	if (!cur())
		return 201;
	fake_log("cuKernelGetFunction(%s)", f->name);
	*fn = f;
	return 0;
}

CUresult
cuModuleGetFunctionCount(unsigned *count, void *mod)
{
	struct fake_module *m = mod;
	if (!count || !m || m->magic != MOD_MAGIC)
		return 1;
	*count = m->nnames;
	return 0;
}

CUresult
cuModuleEnumerateFunctions(void **fns, unsigned n, void *mod)
{
	struct fake_module *m = mod;
	void *dummy;
	if (!fns || !m || m->magic != MOD_MAGIC || n < m->nnames)
		return 1;
	for (unsigned i = 0; i < m->nnames; i++)
		get(&dummy, mod, m->names[i], "cuModuleEnumerateFunctions");
	for (unsigned i = 0; i < m->nnames; i++)
		fns[i] = &m->funcs[i];
	return 0;
}

CUresult
cuFuncGetName(const char **name, void *fn)
{
	struct fake_func *f = fn;
	if (!name || !f || f->magic != FUNC_MAGIC)
		return 400;
	*name = f->name;
	return 0;
}

CUresult
cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
               void *stream, void **params, void **extra)
{
	struct fake_func *f = fn;
	(void)stream;
	(void)extra;
	if (!cur())
		return 201;
	if (!f || f->magic != FUNC_MAGIC)
		return 400;
	if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024)
		return 1;
	int rc = fake_fail("cuLaunchKernel", -1, -1);
	if (rc)
		return rc;
	/* params is not NULL-terminated: only the kernel's signature gives the count. */
	const char *emu = getenv("FAKECUDA_EMULATE");
	if (emu && strcmp(emu, "1") == 0 && strcmp(f->name, "saxpy") == 0 && params) {
		float a = *(float *)params[0];
		float *x = (float *)(uintptr_t) * (uint64_t *)params[1], *y = (float *)(uintptr_t) * (uint64_t *)params[2];
		int n = *(int *)params[3];
		for (uint64_t i = 0; i < (uint64_t)gx * bx && (int64_t)i < n; i++)
			y[i] = a * x[i] + y[i];
	}
	/* The rdc example (examples/rdc): apply_scale(float *x, int n), x = 2x + 1 (scale.cu's device
	 * function), and cdp_parent(int *out, int per_block, int mul), whose blocks each launch
	 * cdp_child on the device: computed only when the loaded image holds cdp_child too. */
	if (emu && strcmp(emu, "1") == 0 && strcmp(f->name, "apply_scale") == 0 && params) {
		float *x = (float *)(uintptr_t) * (uint64_t *)params[0];
		int n = *(int *)params[1];
		for (uint64_t i = 0; i < (uint64_t)gx * bx && (int64_t)i < n; i++)
			x[i] = 2.0f * x[i] + 1.0f;
	}
	if (emu && strcmp(emu, "1") == 0 && strcmp(f->name, "cdp_parent") == 0 && params) {
		int child = 0;
		for (unsigned i = 0; i < f->mod->nnames; i++)
			child |= strcmp(f->mod->names[i], "cdp_child") == 0;
		int *out = (int *)(uintptr_t) * (uint64_t *)params[0];
		int per = *(int *)params[1], mul = *(int *)params[2];
		for (int64_t i = 0; child && i < (int64_t)gx * per; i++)
			out[i] = mul * (int)i;
	}
	char launch[sizeof(last_launch)];
	snprintf(launch, sizeof(launch), "%s %ux%ux%u %ux%ux%u shmem=%u image=%s", f->name, gx, gy, gz, bx, by, bz, shmem,
	         f->mod->image);
	pthread_mutex_lock(&lock);
	memcpy(last_launch, launch, sizeof(launch));
	pthread_mutex_unlock(&lock);
	fake_log("cuLaunchKernel: %s", launch); /* not last_launch: another thread may be writing it */
	return 0;
}

CUresult
cuMemAlloc_v2(uint64_t *p, size_t n)
{
	if (!cur())
		return 201;
	void *m = malloc(n ? n : 1);
	if (!m)
		return 2;
	*p = (uint64_t)(uintptr_t)m;
	return 0;
}

CUresult
cuMemFree_v2(uint64_t p)
{
	free((void *)(uintptr_t)p);
	return 0;
}

CUresult
cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n)
{
	memcpy((void *)(uintptr_t)dst, src, n);
	return 0;
}

CUresult
cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n)
{
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return 0;
}
