/* dlload.h: what the loaders of NVRTC (compile/nvrtc.c) and nvJitLink (devlink/jitlink.c)
 * share (dlload.c). Private; symbols are hidden. */
#ifndef FB_DLLOAD_H
#define FB_DLLOAD_H

#include <stddef.h>

#include "error.h"

/* home = given when not empty, else what find (archprobe's ap_cuda_home, which base cannot
 * call itself) finds, else "". */
void fb_dl_home(const char *given, int (*find)(char *, size_t, struct ap_error *), char *home, size_t size);
/* Appends ", path" (or "path" first) to the list of tried places in tried[0..size), *used
 * long; a path that does not fit is left out. */
void fb_dl_tried(char *tried, size_t size, size_t *used, const char *path);

/* One entry point to resolve: its name and where its address goes. */
struct fb_dl_sym {
	const char *name;
	void **slot;
};
/* Resolves syms[0..n) in dl (loaded from path); 0 with "PATH lacks NAME" in why when one is
 * absent, else 1. */
int fb_dl_bind(void *dl, const char *path, const struct fb_dl_sym *syms, size_t n, char *why, size_t whysize);

#endif
