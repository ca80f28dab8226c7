/* key.h: how paths and the NVRTC build enter the compile key (key.c, docs/remote-cache.md §3).
 * Private to libfatbuild. */
#ifndef FB_CACHE_KEY_H
#define FB_CACHE_KEY_H

#include <signal.h>
#include <stddef.h>

struct fb_config;

/* The spelling of path in the key: "@/rest" when path lies under base (a directory, textual
 * prefix at a '/' boundary), else path itself. Into out; 0, or -1 when it does not fit. */
int fb_key_path(const char *base, const char *path, char *out, size_t size);
/* 1 when text spells __FILE__, __builtin_FILE or assert (which expands __FILE__ where it is
 * used) as a whole word: the output may then depend on the path. */
int fb_key_names_file(const char *text, size_t size);

/* What identifies the NVRTC build in the key: "nvrtc 13000 sha256 <digest of the library>",
 * the digest remembered per user in $XDG_CACHE_HOME/fatbuild-digests/ (else
 * ~/.cache/fatbuild-digests/) per (file, device, inode, size, mtime, ctime); without a usable
 * directory it is computed every time. ident is fb_nvrtc_ident's. 0, or -1 (then the caller
 * keys by ident); -1 also, with nothing remembered, when cancel (may be NULL) is set while the
 * library is hashed. cfg: the configuration (XDG_CACHE_HOME, HOME); NULL: read here. */
int fb_key_nvrtc(const struct fb_config *cfg, const char *ident, const volatile sig_atomic_t *cancel, char *out,
                 size_t size);

/* The SHA-256 (hex) of a program or library file, remembered as fb_key_nvrtc remembers NVRTC's
 * (per file, device, inode, size, mtime, ctime), so a tool in a key is hashed once. 0, or -1
 * when it cannot be read (or cancel was set). cfg: as fb_key_nvrtc's. */
int fb_key_file_digest(const struct fb_config *cfg, const char *file, const volatile sig_atomic_t *cancel,
                       char digest[65]);

#endif
