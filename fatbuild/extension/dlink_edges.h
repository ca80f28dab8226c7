/* dlink_edges.h: private to build.c: the device-link commands of relocatable-device-code builds. */
#ifndef FB_BUILD_DLINK_EDGES_H
#define FB_BUILD_DLINK_EDGES_H

#include <stdbool.h>
#include <stddef.h>

#include "fatbuild.h"

/* What a device-link edge links. */
struct fb_dlink_edge {
	const char *const *inputs; /* the per-target fatbins (nvrtc) or the nvcc -rdc objects */
	size_t ninputs;
	const char *output;
	bool lto;                  /* nvJitLink -lto / nvcc -dlto */
	bool devrt;                /* the device runtime (dynamic parallelism) */
};

/* `fatbuild dlink --target TARGET [--lto] [--devrt] -o OUT INPUTS...`: one target's link with
 * nvJitLink. *cmd is malloc'd (shell words, quoted). */
int fb_dlink_nvrtc_cmd(const char *fatbuild, const char *target, const struct fb_dlink_edge *e, char **cmd,
                       struct fb_error *err);
/* `nvcc -dlink GENCODE [-dlto] -Xcompiler -fPIC -ccbin CXX OBJECTS -L<home>/lib64 -lcudadevrt -o OUT`:
 * the link object nvcc's host link needs. gencode is the blank-separated flag list. */
int fb_dlink_nvcc_cmd(const char *cuda_home, const char *gencode, const char *cxx, const struct fb_dlink_edge *e,
                      char **cmd, struct fb_error *err);

/* The compile-side gencode list of an nvcc --lto build: every code=sm_X becomes code=lto_X
 * (LTO-IR; nvcc refuses -dlto beside -gencode), code=compute_X stays PTX. *out is malloc'd. */
int fb_dlink_nvcc_lto_gencode(const char *gencode, char **out, struct fb_error *err);
/* 0 when cuda_home has what nvcc -dlink -dlto loads (nvvm/lib64/libnvvm.so), else FB_ENOTOOL
 * with a message naming it and the nvrtc backend as the way out. */
int fb_dlink_nvcc_lto_check(const char *cuda_home, struct fb_error *err);

#endif
