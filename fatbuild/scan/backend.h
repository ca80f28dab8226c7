/* backend.h: which compiler a .cu file needs (--backend auto). */
#ifndef FB_SCAN_BACKEND_H
#define FB_SCAN_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the CUDA source at path needs nvcc: it (or a header it includes, found beside the
 * including file ("..."), in incdirs or in the toolkit at cuda_home (NULL or "": none))
 * includes a host header, launches with <<<...>>>, defines main or a host function; a toolkit
 * header counts only for a host header it includes where NVRTC reads it. Conditionals NVRTC
 * is known to skip are skipped. why (may be NULL) says which, with file:line, or why it is
 * device code only. An unreadable file is left to the compiler (false, why says so). */
bool fb_cu_needs_nvcc(const char *path, const char *const *incdirs, size_t nincdirs, const char *cuda_home,
                      char *why, size_t whysize);
/* The same for many sources of one build: headers found clean while scanning one source are
 * not read again for the next. _new returns NULL when out of memory; incdirs must outlive it. */
struct fb_backend_scan;
struct fb_backend_scan *fb_backend_scan_new(const char *const *incdirs, size_t nincdirs, const char *cuda_home);
bool fb_backend_scan_needs_nvcc(struct fb_backend_scan *sc, const char *path, char *why, size_t whysize);
void fb_backend_scan_free(struct fb_backend_scan *sc);
#endif
