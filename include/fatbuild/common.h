/* fatbuild/common.h: statuses, errors and FB_API, which every part of the API uses.
 * Part of libfatbuild's public API (include/fatbuild.h includes every part); stable as
 * HACKING.md "Public API" says. */
#ifndef FATBUILD_COMMON_H
#define FATBUILD_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archprobe.h"

#if defined(FB_BUILDING)
#define FB_API __attribute__((visibility("default")))
#else
#define FB_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------------------ */

enum fb_status {
	FB_OK = 0,
	FB_EINVAL,     /* bad argument or option */
	FB_ENOMEM,
	FB_EIO,        /* a file could not be read or written */
	FB_EFORMAT,    /* malformed input: container, ELF, archive, PTX */
	FB_ETOOBIG,    /* a size past a cap (decompression bomb, huge input) */
	FB_EUNSUPPORTED, /* valid but not handled: obfuscated payload, unknown compression */
	FB_ECOMPILE,   /* NVRTC or a compiler reported an error */
	FB_ENOTOOL,    /* NVRTC, nvcc, ninja or a compiler not found */
	FB_ENOIMAGE,   /* no image fits the device */
	FB_EARCH,      /* an arch-list error from archprobe (detail in msg) */
	FB_ECANCELED,
	FB_EDRIVER,
	FB_EUNSAFE,    /* a build, cache or probe-cache directory others could write into (docs/security.md) */
	FB_NSTATUS
};

/* The same layout as struct ap_error (archprobe.h): an archprobe error is carried into a
 * fatbuild one whole. */
struct fb_error {
	int code;       /* an enum fb_status */
	char msg[1024]; /* one line (or a compiler log excerpt) a user can act on */
	int ap_code;    /* for FB_EARCH: the archprobe status behind it (AP_ETIMEOUT…), else 0 */
};

FB_API const char *fb_strerror(int code);
/* The CLI exit code (enum ap_exit) for a status code. */
FB_API int fb_exit_code(int code);
/* The CLI exit code for an error: an arch-list error keeps archprobe's code (a hung
 * driver during `native` is 6, no device is 1), everything else as fb_exit_code. */
FB_API int fb_error_exit_code(const struct fb_error *err);

#ifdef __cplusplus
}
#endif
#endif
