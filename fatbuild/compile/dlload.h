/* dlload.h: what the loaders of NVRTC (nvrtc.c) and nvJitLink (jitlink.c) share (dlload.c). */
#ifndef FB_COMPILE_DLLOAD_H
#define FB_COMPILE_DLLOAD_H

#include <stddef.h>

/* home = cuda_home when given and not empty, else the toolkit archprobe finds, else "". */
void fb_dl_home(const char *cuda_home, char *home, size_t size);
/* Appends ", path" (or "path" first) to the list of tried places in tried[0..size), *used
 * long; a path that does not fit is left out. */
void fb_dl_tried(char *tried, size_t size, size_t *used, const char *path);

#endif
