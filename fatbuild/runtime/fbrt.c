/* fbrt.c: libfatbuild_runtime, linked statically (hidden) into every extension. It finds the
 * fatbin that `fatbuild embed --hidden --symbol fbrt_fatbin` put into this shared object, and
 * loads each of its containers (one per kernel source) as one module, once, in the current
 * context. Process-wide state is the point of a runtime: it lives in one struct guarded by
 * pthread_once. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h" /* fb_select: the selection model, compiled into this library from select.c */
#include "fatbuild_runtime.h"
#include "fatbin/format.h" /* header-only: the container walk */

/* Set by the embed object; weak so that a library without kernels (nvcc backend) still links. */
extern const unsigned char fbrt_fatbin[] __attribute__((weak));
extern const uint64_t fbrt_fatbin_size __attribute__((weak));

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUlibrary;
typedef void *CUfunction;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
	CUDA_ERROR_NOT_FOUND = 500,
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
};

#define FBRT_MAX_MODULES 64

struct driver {
	void *lib;
	CUresult (*Init)(unsigned);
	CUresult (*CtxGetCurrent)(CUcontext *);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxGetDevice)(CUdevice *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*ModuleGetFunctionCount)(unsigned *, CUmodule);
	CUresult (*ModuleEnumerateFunctions)(CUfunction *, unsigned, CUmodule);
	CUresult (*FuncGetName)(const char **, CUfunction);
	CUresult (*LibraryLoadData)(CUlibrary *, const void *, void *, void *, unsigned, void *, void *, unsigned);
	CUresult (*LibraryGetKernel)(void **, CUlibrary, const char *);
	CUresult (*KernelGetFunction)(CUfunction *, void *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                         void *, void **, void **);
	CUresult (*MemAlloc)(uint64_t *, size_t);
	CUresult (*MemFree)(uint64_t);
	CUresult (*MemcpyHtoD)(uint64_t, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, uint64_t, size_t);
	CUresult (*CtxSynchronize)(void);
	CUresult (*GetErrorName)(CUresult, const char **);
};

static struct {
	pthread_once_t once;
	struct driver d;
	int use_library;
	size_t nmod;
	void *mod[FBRT_MAX_MODULES]; /* CUmodule or CUlibrary */
	struct fbrt_error init_err;
} rt = {PTHREAD_ONCE_INIT, {0}, 0, 0, {0}, {0, 0, {0}}};

static int
seterr(struct fbrt_error *err, int code, int cuda, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
seterr(struct fbrt_error *err, int code, int cuda, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		err->cuda_error = cuda;
		int n = snprintf(err->msg, sizeof(err->msg), "fbrt: ");
		vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return code;
}

static const char *
cu_name(CUresult rc)
{
	static const struct {
		int rc;
		const char *name;
	} names[] = {
		{1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"}, {3, "CUDA_ERROR_NOT_INITIALIZED"},
		{34, "CUDA_ERROR_STUB_LIBRARY"}, {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
		{200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"},
		{209, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {218, "CUDA_ERROR_INVALID_PTX"},
		{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}, {400, "CUDA_ERROR_INVALID_HANDLE"},
		{500, "CUDA_ERROR_NOT_FOUND"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}, {999, "CUDA_ERROR_UNKNOWN"},
	};
	const char *s = NULL;
	if (rt.d.GetErrorName && rt.d.GetErrorName(rc, &s) == 0 && s)
		return s;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].rc == rc)
			return names[i].name;
	return "CUDA error";
}

/* ---- the embedded images (the walk steps of fatbin/format.h; docs/fatbin.md §1-§3) ---- */

struct image {
	int kind;      /* 1 PTX, 2 ELF, other */
	int sm;
	char variant;  /* 0, 'a', 'f' */
	struct fb_image model;
};

/* Calls fn for every container (index, pointer, size); returns the count. Anything but a
 * container magic is stepped over 8 bytes at a time (the padding fb_embed puts between its
 * inputs); the walk stops at a container that runs past the end. */
static size_t
containers(void (*fn)(size_t, const unsigned char *, size_t, void *), void *ctx)
{
	if (!fbrt_fatbin || !&fbrt_fatbin_size)
		return 0;
	const unsigned char *p = fbrt_fatbin;
	size_t size = (size_t)fbrt_fatbin_size, off = 0, n = 0, at, csize;
	while (fb_fmt_container_next(p, size, &off, FB_PAD_SCAN, 0, &at, &csize) == FB_FMT_OK) {
		if (fn)
			fn(n, p + at, csize, ctx);
		n++;
	}
	return n;
}

/* The PTX and ELF images of the container c (size bytes), at most max; the walk stops at an
 * entry that does not fit. */
static size_t
images_of(const unsigned char *c, size_t size, struct image *out, size_t max)
{
	size_t off = FB_CONTAINER_HDR, n = 0;
	struct fb_fmt_entry h;
	while (n < max && fb_fmt_entry_next(c, off, size, 0, &h) == FB_FMT_OK) {
		out[n].kind = h.kind;
		out[n].sm = (int)h.arch;
		out[n].variant = (h.flags & FB_FLAG_ARCH_A) ? 'a' : (h.flags & FB_FLAG_FAMILY_F) ? 'f' : 0;
		out[n].model.target.sm = out[n].sm;
		out[n].model.target.variant = out[n].variant == 'a' ? AP_ARCH : out[n].variant == 'f' ? AP_FAMILY : AP_PLAIN;
		out[n].model.target.kind = out[n].kind == FB_DISK_KIND_ELF ? AP_SASS : AP_PTX;
		out[n].model.target.origin = 0;
		out[n].model.compat = (h.flags & FB_FLAG_COMPAT) != 0;
		if (out[n].kind == FB_DISK_KIND_PTX || out[n].kind == FB_DISK_KIND_ELF)
			n++;
		off += h.header_size + (size_t)h.payload_size;
	}
	return n;
}

struct listing {
	char *buf;
	size_t size, len;
};

static void
append(struct listing *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
append(struct listing *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->buf && l->len < l->size ? l->buf + l->len : NULL, l->len < l->size ? l->size - l->len : 0,
	                  fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
}

static void
list_container(size_t idx, const unsigned char *c, size_t size, void *ctx)
{
	struct image im[64];
	size_t n = images_of(c, size, im, 64);
	if (idx)
		append(ctx, " |");
	for (size_t i = 0; i < n; i++) {
		const char *k = im[i].kind == 1 ? "compute" : im[i].kind == 2 ? "sm" : "lto";
		append(ctx, "%s%s_%d%s", (idx || i) ? " " : "", k, im[i].sm,
		       im[i].variant == 'a' ? "a" : im[i].variant == 'f' ? "f" : "");
	}
}

int
fbrt_images(char *buf, size_t size)
{
	struct listing l = {buf, size, 0};
	if (buf && size)
		buf[0] = 0;
	if (containers(list_container, &l) == 0)
		append(&l, "(none)");
	return (int)l.len;
}

struct fitcheck {
	int sm, any;
	char chosen[64]; /* what the model picks, for the message */
};

static void
check_container(size_t idx, const unsigned char *c, size_t size, void *ctx)
{
	struct fitcheck *f = ctx;
	struct image im[64];
	struct fb_image model[64];
	size_t n = images_of(c, size, im, 64);
	for (size_t i = 0; i < n; i++)
		model[i] = im[i].model;
	struct ap_target dev = {f->sm, AP_PLAIN, AP_SASS, 0};
	enum fb_how how;
	long pick = fb_select(model, n, &dev, &how);
	if (pick >= 0 && !f->any) {
		f->any = 1;
		snprintf(f->chosen, sizeof(f->chosen), "%s_%d%s in kernel source %zu",
		         im[pick].kind == 2 ? "sm" : "compute", im[pick].sm,
		         im[pick].variant == 'a' ? "a" : im[pick].variant == 'f' ? "f" : "", idx + 1);
	}
}

/* ---- loading ---------------------------------------------------------------------- */

static void *
sym(const char *name)
{
	return dlsym(rt.d.lib, name);
}

static int
load_driver(struct fbrt_error *err)
{
	const char *path = getenv("FBRT_LIBCUDA");
	if (!path || !path[0])
		path = "libcuda.so.1";
	rt.d.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!rt.d.lib) {
		const char *why = dlerror();
		return seterr(err, FBRT_ENODRIVER, 0,
		              "no CUDA driver: cannot load %s (%s); install the NVIDIA driver or set FBRT_LIBCUDA", path,
		              why ? why : "unknown error");
	}
#define GET(field, name) *(void **)(&rt.d.field) = sym(name)
	GET(Init, "cuInit");
	GET(CtxGetCurrent, "cuCtxGetCurrent");
	GET(CtxSetCurrent, "cuCtxSetCurrent");
	GET(CtxGetDevice, "cuCtxGetDevice");
	GET(DeviceGet, "cuDeviceGet");
	GET(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	GET(DeviceGetAttribute, "cuDeviceGetAttribute");
	GET(DeviceGetName, "cuDeviceGetName");
	GET(ModuleLoadData, "cuModuleLoadData");
	GET(ModuleGetFunction, "cuModuleGetFunction");
	GET(ModuleGetFunctionCount, "cuModuleGetFunctionCount");
	GET(ModuleEnumerateFunctions, "cuModuleEnumerateFunctions");
	GET(FuncGetName, "cuFuncGetName");
	GET(LibraryLoadData, "cuLibraryLoadData");
	GET(LibraryGetKernel, "cuLibraryGetKernel");
	GET(KernelGetFunction, "cuKernelGetFunction");
	GET(LaunchKernel, "cuLaunchKernel");
	GET(MemAlloc, "cuMemAlloc_v2");
	GET(MemFree, "cuMemFree_v2");
	GET(MemcpyHtoD, "cuMemcpyHtoD_v2");
	GET(MemcpyDtoH, "cuMemcpyDtoH_v2");
	GET(CtxSynchronize, "cuCtxSynchronize");
	GET(GetErrorName, "cuGetErrorName");
#undef GET
	const char *missing = !rt.d.Init ? "cuInit" : !rt.d.CtxGetCurrent ? "cuCtxGetCurrent"
	                      : !rt.d.CtxGetDevice ? "cuCtxGetDevice" : !rt.d.ModuleLoadData ? "cuModuleLoadData"
	                      : !rt.d.ModuleGetFunction ? "cuModuleGetFunction" : !rt.d.LaunchKernel ? "cuLaunchKernel"
	                      : NULL;
	if (missing)
		return seterr(err, FBRT_ENODRIVER, 0, "%s is not a usable CUDA driver: it lacks %s", path, missing);
	const char *loader = getenv("FBRT_LOADER");
	rt.use_library = loader && strcmp(loader, "library") == 0 && rt.d.LibraryLoadData && rt.d.LibraryGetKernel &&
	                 rt.d.KernelGetFunction;
	return FBRT_OK;
}

static int
device_cc(CUdevice dev, int *sm, char *name, size_t namesize)
{
	int major = 0, minor = 0;
	if (rt.d.DeviceGetAttribute(&major, ATTR_CC_MAJOR, dev) || rt.d.DeviceGetAttribute(&minor, ATTR_CC_MINOR, dev))
		return -1;
	*sm = 10 * major + minor;
	name[0] = 0;
	if (rt.d.DeviceGetName && rt.d.DeviceGetName(name, (int)namesize, dev) != 0)
		name[0] = 0;
	return 0;
}

static int
no_image(CUresult rc, CUdevice dev, size_t idx, struct fbrt_error *err)
{
	int sm = 0;
	char name[256], images[512];
	fbrt_images(images, sizeof(images));
	if (!rt.d.DeviceGetAttribute || device_cc(dev, &sm, name, sizeof(name)) != 0)
		return seterr(err, FBRT_ENOIMAGE, rc, "no kernel image fits the device (%s); this library carries %s",
		              cu_name(rc), images);
	struct fitcheck f = {sm, 0, ""};
	containers(check_container, &f);
	return seterr(err, FBRT_ENOIMAGE, rc,
	              "no kernel image for device %d (%s%scompute capability %d.%d): this library carries %s; %s%s (%s, "
	              "kernel source %zu); rebuild with --arch-list including %d.%d, or add +PTX to an older arch",
	              dev, name, name[0] ? ", " : "", sm / 10, sm % 10, images,
	              f.any ? "the selection model picks " : "none fits by the selection model",
	              f.any ? f.chosen : "", cu_name(rc), idx + 1, sm / 10, sm % 10);
}

/* With lazy loading (CUDA_MODULE_LOADING=LAZY, the default since 12.2) a missing image can
 * surface at cuModuleGetFunction or at the launch instead of at the load. */
static int
is_image_error(CUresult rc)
{
	return rc == CUDA_ERROR_NO_BINARY_FOR_GPU || rc == CUDA_ERROR_INVALID_PTX || rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
}

static int
no_image_current(CUresult rc, size_t idx, struct fbrt_error *err)
{
	CUdevice dev = 0;
	if (rt.d.CtxGetDevice(&dev) != 0)
		dev = 0;
	return no_image(rc, dev, idx, err);
}

struct loadctx {
	CUdevice dev;
	struct fbrt_error *err;
	int rc;
};

static void
load_container(size_t idx, const unsigned char *c, size_t size, void *vctx)
{
	struct loadctx *l = vctx;
	(void)size;
	if (l->rc || idx >= FBRT_MAX_MODULES)
		return;
	CUresult rc;
	void *m = NULL;
	if (rt.use_library)
		rc = rt.d.LibraryLoadData(&m, c, NULL, NULL, 0, NULL, NULL, 0);
	else
		rc = rt.d.ModuleLoadData(&m, c);
	if (is_image_error(rc)) {
		l->rc = no_image(rc, l->dev, idx, l->err);
		return;
	}
	if (rc) {
		l->rc = seterr(l->err, FBRT_EDRIVER, rc, "%s of the embedded fatbin (kernel source %zu) failed: %s (%d)",
		               rt.use_library ? "cuLibraryLoadData" : "cuModuleLoadData", idx + 1, cu_name(rc), rc);
		return;
	}
	rt.mod[rt.nmod++] = m;
}

static void
init_once(void)
{
	struct fbrt_error *err = &rt.init_err;
	if (load_driver(err))
		return;
	CUresult rc = rt.d.Init(0);
	if (rc) {
		seterr(err, rc == 100 ? FBRT_ENOCONTEXT : FBRT_ENODRIVER, rc, "cuInit failed: %s (%d)%s", cu_name(rc), rc,
		       rc == 100 ? ": no CUDA device is visible (check CUDA_VISIBLE_DEVICES)"
		       : rc == 34 ? ": the loaded libcuda is NVIDIA's stub library, not a driver"
		                  : "");
		return;
	}
	CUcontext ctx = NULL;
	rc = rt.d.CtxGetCurrent(&ctx);
	if (rc == 0 && !ctx) {
		/* Nobody made a context on this thread: do what cudart does, use device 0's primary one. */
		CUdevice dev = 0;
		CUresult r2 = rt.d.DeviceGet ? rt.d.DeviceGet(&dev, 0) : 999;
		if (!r2)
			r2 = rt.d.DevicePrimaryCtxRetain ? rt.d.DevicePrimaryCtxRetain(&ctx, dev) : 999;
		if (!r2)
			r2 = rt.d.CtxSetCurrent ? rt.d.CtxSetCurrent(ctx) : 999;
		if (r2) {
			seterr(err, FBRT_ENOCONTEXT, r2,
			       "no CUDA context is current on this thread and device 0's primary context could not be "
			       "retained: %s (%d); create or push a context before the first kernel call",
			       cu_name(r2), r2);
			return;
		}
	} else if (rc) {
		seterr(err, FBRT_ENOCONTEXT, rc, "cuCtxGetCurrent failed: %s (%d)", cu_name(rc), rc);
		return;
	}
	CUdevice dev = 0;
	rc = rt.d.CtxGetDevice(&dev);
	if (rc) {
		seterr(err, FBRT_ENOCONTEXT, rc, "no usable CUDA context: cuCtxGetDevice failed: %s (%d)", cu_name(rc), rc);
		return;
	}
	if (containers(NULL, NULL) == 0) {
		seterr(err, FBRT_ENOFATBIN, 0,
		       "this library embeds no fatbin (build it with fatbuild, whose embed step defines fbrt_fatbin)");
		return;
	}
	struct loadctx l = {dev, err, 0};
	containers(load_container, &l);
	if (!l.rc)
		err->code = FBRT_OK;
}

int
fbrt_init(struct fbrt_error *err)
{
	pthread_once(&rt.once, init_once);
	if (rt.init_err.code) {
		if (err)
			*err = rt.init_err;
		return rt.init_err.code;
	}
	return FBRT_OK;
}

/* "saxpy, scale" from the first modules, for the not-found message. */
static void
kernel_names(char *buf, size_t size)
{
	struct listing l = {buf, size, 0};
	buf[0] = 0;
	if (rt.use_library || !rt.d.ModuleGetFunctionCount || !rt.d.ModuleEnumerateFunctions || !rt.d.FuncGetName) {
		append(&l, "(the driver cannot enumerate them)");
		return;
	}
	int first = 1;
	for (size_t m = 0; m < rt.nmod; m++) {
		unsigned n = 0;
		if (rt.d.ModuleGetFunctionCount(&n, rt.mod[m]) || n == 0)
			continue;
		CUfunction *fs = calloc(n, sizeof(*fs));
		if (fs && rt.d.ModuleEnumerateFunctions(fs, n, rt.mod[m]) == 0) {
			for (unsigned i = 0; i < n; i++) {
				const char *s = NULL;
				if (rt.d.FuncGetName(&s, fs[i]) == 0 && s) {
					append(&l, "%s%s", first ? "" : ", ", s);
					first = 0;
				}
			}
		}
		free(fs);
	}
	if (first)
		append(&l, "(none)");
}

void *
fbrt_function(const char *name, struct fbrt_error *err)
{
	if (!name) {
		seterr(err, FBRT_EINVAL, 0, "fbrt_function: NULL name");
		return NULL;
	}
	if (fbrt_init(err))
		return NULL;
	for (size_t m = 0; m < rt.nmod; m++) {
		void *f = NULL;
		CUresult rc = rt.use_library ? rt.d.LibraryGetKernel(&f, rt.mod[m], name)
		                             : rt.d.ModuleGetFunction(&f, rt.mod[m], name);
		if (rc == 0 && f && rt.use_library) {
			/* A CUkernel is context-independent; launch the function of the current context. */
			void *k = f;
			rc = rt.d.KernelGetFunction(&f, k);
			if (rc) {
				seterr(err, FBRT_EDRIVER, rc, "cuKernelGetFunction(\"%s\") failed: %s (%d)", name, cu_name(rc), rc);
				return NULL;
			}
		}
		if (rc == 0 && f)
			return f;
		if (is_image_error(rc)) {
			no_image_current(rc, m, err);
			return NULL;
		}
		if (rc && rc != CUDA_ERROR_NOT_FOUND) {
			seterr(err, FBRT_EDRIVER, rc, "%s(\"%s\") failed: %s (%d)",
			       rt.use_library ? "cuLibraryGetKernel" : "cuModuleGetFunction", name, cu_name(rc), rc);
			return NULL;
		}
	}
	char names[512];
	kernel_names(names, sizeof(names));
	seterr(err, FBRT_ENOTFOUND, CUDA_ERROR_NOT_FOUND,
	       "no kernel named '%s' in this library (it has: %s); C++ kernels are mangled unless declared extern \"C\"",
	       name, names);
	return NULL;
}

int
fbrt_launch(void *fn, struct fbrt_dim3 grid, struct fbrt_dim3 block, unsigned shared_bytes, void *stream, void **args,
            struct fbrt_error *err)
{
	if (!fn)
		return seterr(err, FBRT_EINVAL, 0, "fbrt_launch: NULL kernel");
	if (fbrt_init(err))
		return err ? err->code : FBRT_EDRIVER;
	CUresult rc = rt.d.LaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream, args,
	                                NULL);
	if (is_image_error(rc))
		return no_image_current(rc, 0, err);
	if (rc)
		return seterr(err, FBRT_EDRIVER, rc, "cuLaunchKernel (grid %ux%ux%u, block %ux%ux%u) failed: %s (%d)", grid.x,
		              grid.y, grid.z, block.x, block.y, block.z, cu_name(rc), rc);
	return FBRT_OK;
}

int
fbrt_launch_name(const char *name, struct fbrt_dim3 grid, struct fbrt_dim3 block, unsigned shared_bytes, void *stream,
                 void **args, struct fbrt_error *err)
{
	void *f = fbrt_function(name, err);
	if (!f)
		return err ? err->code : FBRT_ENOTFOUND;
	return fbrt_launch(f, grid, block, shared_bytes, stream, args, err);
}

static int
mem_call(CUresult rc, const char *what, struct fbrt_error *err)
{
	if (rc)
		return seterr(err, FBRT_EDRIVER, rc, "%s failed: %s (%d)", what, cu_name(rc), rc);
	return FBRT_OK;
}

#define NEED(fn, label) \
	do { \
		if (fbrt_init(err)) \
			return err ? err->code : FBRT_EDRIVER; \
		if (!rt.d.fn) \
			return seterr(err, FBRT_ENODRIVER, 0, "the driver lacks %s", label); \
	} while (0)

int
fbrt_malloc(uint64_t *dptr, size_t bytes, struct fbrt_error *err)
{
	NEED(MemAlloc, "cuMemAlloc_v2");
	return mem_call(rt.d.MemAlloc(dptr, bytes), "cuMemAlloc", err);
}

int
fbrt_free(uint64_t dptr, struct fbrt_error *err)
{
	NEED(MemFree, "cuMemFree_v2");
	return mem_call(rt.d.MemFree(dptr), "cuMemFree", err);
}

int
fbrt_memcpy_htod(uint64_t dst, const void *src, size_t bytes, struct fbrt_error *err)
{
	NEED(MemcpyHtoD, "cuMemcpyHtoD_v2");
	return mem_call(rt.d.MemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD", err);
}

int
fbrt_memcpy_dtoh(void *dst, uint64_t src, size_t bytes, struct fbrt_error *err)
{
	NEED(MemcpyDtoH, "cuMemcpyDtoH_v2");
	return mem_call(rt.d.MemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH", err);
}

int
fbrt_synchronize(struct fbrt_error *err)
{
	NEED(CtxSynchronize, "cuCtxSynchronize");
	return mem_call(rt.d.CtxSynchronize(), "cuCtxSynchronize", err);
}
