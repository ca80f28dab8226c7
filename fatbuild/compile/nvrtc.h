/* nvrtc.h: NVRTC through dlopen (nvrtc.c): the loaded library, one compile and its outcome,
 * the PCH heap, and the rewriting of NVRTC's logs. Private to libfatbuild. */
#ifndef FB_COMPILE_NVRTC_H
#define FB_COMPILE_NVRTC_H

#include <stddef.h>

#include "fatbuild.h"

struct fb_nvrtc; /* the loaded library and its entry points */

/* Loads libnvrtc.so.13 (then .12) from cuda_home/lib64 (NULL: ap_cuda_home()), then the
 * plain sonames. FB_ENOTOOL with every path tried when none loads. */
int fb_nvrtc_open(const char *cuda_home, struct fb_nvrtc **out, struct fb_error *err);
void fb_nvrtc_close(struct fb_nvrtc *n);
const char *fb_nvrtc_path(const struct fb_nvrtc *n);
/* What identifies the NVRTC build for cache keys: "nvrtc 13000 <file> <size> <mtime>". */
const char *fb_nvrtc_ident(const struct fb_nvrtc *n);
/* 1000*major + 10*minor, as CUDA_VERSION. */
int fb_nvrtc_version(const struct fb_nvrtc *n);
/* The SASS arches NVRTC accepts (nvrtcGetSupportedArchs), ascending; returns the count. */
int fb_nvrtc_archs(const struct fb_nvrtc *n, int *archs, int max);

/* The outcome of one NVRTC compile. result is the nvrtcResult (0 = success). */
struct fb_nvrtc_out {
	int result;
	char *log;               /* NUL-terminated, possibly empty */
	unsigned char *ptx;      /* PTX text without the NUL; NULL when not asked for or failed */
	size_t ptx_size;
	unsigned char *cubin;
	size_t cubin_size;
	/* nvrtcGetPCHCreateStatus after the compile (-1: NVRTC has no PCH API): 0 made,
	 * 13 not attempted, 14 heap exhausted, 15 failed; the heap the PCH needs when 0 or 14. */
	int pch_status;
	size_t pch_heap_required;
};

/* The nvrtcResult NVRTC_ERROR_INVALID_OPTION: an option NVRTC does not take (a usage error). */
#define FB_NVRTC_INVALID_OPTION 5
/* want_cubin FB_NVRTC_LTOIR: fetch the LTO-IR (-dlto) into cubin/cubin_size instead. */
#define FB_NVRTC_LTOIR 2
/* Compiles src (named name in diagnostics) with options. Returns 0 when NVRTC ran (check
 * out->result), or an FB_E* code when it could not be driven at all. */
int fb_nvrtc_compile(const struct fb_nvrtc *n, const char *src, const char *name, const char *const *opts,
                     int nopts, int want_ptx, int want_cubin, struct fb_nvrtc_out *out, struct fb_error *err);
void fb_nvrtc_out_clear(struct fb_nvrtc_out *o);
/* Whether NVRTC has the automatic-PCH API (nvrtcGetPCHCreateStatus and friends). */
int fb_nvrtc_has_pch(const struct fb_nvrtc *n);
/* The PCH heap of this process: set (when set > 0, nvrtcSetPCHHeapSize), then *size (when
 * size is not NULL). FB_EUNSUPPORTED without the PCH API. */
int fb_nvrtc_pch_heap(const struct fb_nvrtc *n, size_t *size, size_t set);
/* "NVRTC_ERROR_COMPILATION" for an nvrtcResult. */
const char *fb_nvrtc_result_name(int result);

/* Rewrites an NVRTC log: "f.cu(12): error: msg" + source line + caret line becomes
 * "f.cu:12:5: error: msg [tag]" + the same two context lines. malloc'd; NULL on OOM. */
char *fb_nvrtc_log_rewrite(const char *log, const char *tag);
/* The first diagnostic line of a rewritten log (for one-line error messages), into buf. */
void fb_nvrtc_log_first(const char *rewritten, char *buf, size_t size);

#endif
