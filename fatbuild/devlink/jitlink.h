/* jitlink.h: private to the device-link modules (jitlink.c, dlink.c). nvJitLink loaded with
 * dlopen from the toolkit in use, one link at a time. */
#ifndef FB_JITLINK_H
#define FB_JITLINK_H

#include <stddef.h>

#include "fatbuild.h"

struct fb_jitlink; /* the loaded library and its entry points */

/* nvJitLink input kinds (nvJitLinkInputType). */
enum { FB_JL_CUBIN = 1, FB_JL_PTX = 2, FB_JL_LTOIR = 3, FB_JL_FATBIN = 4, FB_JL_LIBRARY = 6 };

/* Loads libnvJitLink.so.13 (then .12) from cuda_home/{lib64,lib,targets/<triple>/lib} (NULL:
 * ap_cuda_home()); only when no toolkit is found, the bare sonames. FB_ENOTOOL names every path
 * tried. */
int fb_jitlink_open(const char *cuda_home, struct fb_jitlink **out, struct fb_error *err);
void fb_jitlink_close(struct fb_jitlink *j);
const char *fb_jitlink_path(const struct fb_jitlink *j);
/* 1000*major + 10*minor (nvJitLinkVersion), 0 when the library has no version call. */
int fb_jitlink_version(const struct fb_jitlink *j);

/* One link: inputs added in memory (data) or by path (path, data NULL). */
struct fb_jl_input {
	int kind;                /* FB_JL_* */
	const void *data;
	size_t size;
	const char *name;        /* for messages; with data NULL, the file to add */
};

/* The outcome of one link. result is the nvJitLinkResult (0 = success). */
struct fb_jl_out {
	int result;
	char *log;               /* error log, then info log; NUL-terminated, possibly empty */
	unsigned char *image;    /* the linked cubin (or PTX text without NUL with want_ptx) */
	size_t size;
};

/* Creates a link with options, adds the inputs, completes it and fetches the linked cubin (or
 * the linked PTX when want_ptx), in a forked child. Returns 0 when nvJitLink ran (check
 * out->result), an FB_E* code when it could not be driven or its process died. */
int fb_jitlink_link(const struct fb_jitlink *j, const char *const *opts, size_t nopts,
                    const struct fb_jl_input *in, size_t nin, int want_ptx, struct fb_jl_out *out,
                    struct fb_error *err);
void fb_jl_out_clear(struct fb_jl_out *o);
/* "NVJITLINK_ERROR_INVALID_INPUT" for an nvJitLinkResult. */
const char *fb_jitlink_result_name(int result);

#endif
