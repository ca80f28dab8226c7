/* fatbuild.h: gencode flags, NVRTC compilation, fatbinaries, ELF embedding and extension
 * builds. The only public header of libfatbuild; it builds on archprobe.h.
 *
 * Conventions as in archprobe.h: 0 or an FB_E* code, detail in an optional caller-owned
 * struct fb_error, opaque objects in _new/_free pairs (free accepts NULL), no globals,
 * no printing, no exit. */
#ifndef FATBUILD_H
#define FATBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archprobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FB_BUILDING)
#define FB_API __attribute__((visibility("default")))
#else
#define FB_API
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
	FB_NSTATUS
};

struct fb_error {
	int code;       /* an enum fb_status */
	char msg[1024]; /* one line (or a compiler log excerpt) a user can act on */
};

FB_API const char *fb_strerror(int code);
/* The CLI exit code (enum ap_exit) for a status code. */
FB_API int fb_exit_code(int code);

/* ---- fatbinary containers (fatbin.c; spec/fatbin.md) ---------------------------------- */

enum fb_entry_kind { FB_KIND_PTX = 1, FB_KIND_ELF = 2, FB_KIND_LTO = 4 };
enum fb_compress { FB_COMPRESS_NONE = 0, FB_COMPRESS_ZSTD, FB_COMPRESS_LZ4 };

/* SECTION fatbin: owned by the fatbin module; keep fb_fatbin_new/add/write/free stable. */

struct fb_fatbin; /* a container being written */

FB_API struct fb_fatbin *fb_fatbin_new(void);
FB_API void fb_fatbin_free(struct fb_fatbin *fb);
/* Adds one image. target says its arch and variant (kind PTX or SASS must match kind);
 * ident and options may be NULL. The data is copied. */
FB_API int fb_fatbin_add(struct fb_fatbin *fb, enum fb_entry_kind kind, const struct ap_target *target,
                         const void *data, size_t size, const char *ident, const char *options,
                         struct fb_error *err);
/* Serialises the container into a malloc'd buffer. */
FB_API int fb_fatbin_write(const struct fb_fatbin *fb, enum fb_compress compress, unsigned char **out,
                           size_t *outsize, struct fb_error *err);

/* END SECTION fatbin */

/* SECTION compile: owned by the NVRTC module. */
/* END SECTION compile */

/* SECTION build: owned by the extension-build module (embed, ninja, build, load). */
/* END SECTION build */

/* ---- files ----------------------------------------------------------------------------- */

/* Writes data to path atomically (path.tmp.PID, fsync-free rename); nothing is left on failure. */
FB_API int fb_write_file_atomic(const char *path, const void *data, size_t size, int mode,
                                struct fb_error *err);

#ifdef __cplusplus
}
#endif
#endif
