/* fatbuild_runtime.h: the runtime linked (statically, hidden) into every extension that
 * `fatbuild build` makes. On first use it dlopens the CUDA driver, takes the current context
 * (or retains device 0's primary context, as cudart does), and loads the fatbin embedded in
 * this shared object with cuModuleLoadData (FBRT_LOADER=library: cuLibraryLoadData), once
 * and thread-safely. No CUDA header is needed: handles are void * and device pointers uint64_t.
 *
 *   #include <fatbuild_runtime.h>
 *   extern "C" int saxpy(float a, uint64_t x, uint64_t y, int n) {
 *       struct fbrt_error e;
 *       void *args[] = {&a, &x, &y, &n};
 *       return fbrt_launch_name("saxpy", fbrt_dim((n + 255) / 256), fbrt_dim(256), 0, NULL, args, &e);
 *   }
 *
 * Errors are values: 0 or an FBRT_E* code, with a one-line message in the optional
 * struct fbrt_error (what happened, the device's compute capability and the images this
 * library carries when none fits). The driver is libcuda.so.1, or $FBRT_LIBCUDA. */
#ifndef FATBUILD_RUNTIME_H
#define FATBUILD_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fbrt_status {
	FBRT_OK = 0,
	FBRT_ENODRIVER,  /* libcuda could not be loaded, or lacks an entry point */
	FBRT_ENOCONTEXT, /* no current context and device 0's primary context could not be had */
	FBRT_ENOIMAGE,   /* no image of the embedded fatbin fits the device */
	FBRT_ENOTFOUND,  /* no kernel of that name */
	FBRT_ENOFATBIN,  /* nothing embedded (the library was not built by fatbuild) */
	FBRT_EDRIVER,    /* another driver error (its CUresult name is in the message) */
	FBRT_EINVAL
};

struct fbrt_error {
	int code;       /* an enum fbrt_status */
	int cuda_error; /* the CUresult behind it, 0 if none */
	char msg[768];
};

struct fbrt_dim3 {
	unsigned x, y, z;
};

static inline struct fbrt_dim3
fbrt_dim(unsigned x)
{
	struct fbrt_dim3 d = {x, 1, 1};
	return d;
}

/* Loads the driver and the embedded fatbin (first call only; later calls return the first
 * result). Every other call does this implicitly. */
int fbrt_init(struct fbrt_error *err);
/* The kernel (a CUfunction) of that name, or NULL with err filled. */
void *fbrt_function(const char *name, struct fbrt_error *err);
/* cuLaunchKernel(fn, grid, block, shared_bytes, stream, args). */
int fbrt_launch(void *fn, struct fbrt_dim3 grid, struct fbrt_dim3 block, unsigned shared_bytes, void *stream,
                void **args, struct fbrt_error *err);
/* fbrt_function + fbrt_launch. */
int fbrt_launch_name(const char *name, struct fbrt_dim3 grid, struct fbrt_dim3 block, unsigned shared_bytes,
                     void *stream, void **args, struct fbrt_error *err);
/* Small memory helpers (cuMemAlloc, cuMemFree, cuMemcpyHtoD/DtoH, cuCtxSynchronize). */
int fbrt_malloc(uint64_t *dptr, size_t bytes, struct fbrt_error *err);
int fbrt_free(uint64_t dptr, struct fbrt_error *err);
int fbrt_memcpy_htod(uint64_t dst, const void *src, size_t bytes, struct fbrt_error *err);
int fbrt_memcpy_dtoh(void *dst, uint64_t src, size_t bytes, struct fbrt_error *err);
int fbrt_synchronize(struct fbrt_error *err);
/* The images embedded in this library, e.g. "sm_80 sm_86 compute_86" (containers separated
 * by " | "). Returns the length written, as snprintf. */
int fbrt_images(char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
