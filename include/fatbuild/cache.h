/* fatbuild/cache.h: the compile cache: where it is, its stats, clearing and trimming (docs/caches.md).
 * Part of libfatbuild's public API (include/fatbuild.h includes every part); stable as
 * HACKING.md "Public API" says. */
#ifndef FATBUILD_CACHE_H
#define FATBUILD_CACHE_H

#include "fatbuild/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SECTION cache: the compile cache (fatbuild/cache/; docs/caches.md). */

/* The compile cache: FATBUILD_CACHE_DIR, else $XDG_CACHE_HOME/fatbuild, else ~/.cache/fatbuild. */
struct fb_cache_stats {
	char dir[4096];
	uint64_t entries;              /* kernels, objects and manifests */
	uint64_t bytes;                /* on disk (st_blocks), everything below included */
	uint64_t temporaries;          /* writes in progress, or left by killed ones */
	uint64_t host_pchs, host_pch_bytes; /* precompiled torch headers (hostpch/KEY/) */
	uint64_t refused;              /* shards that failed the directory checks: not read */
};
FB_API int fb_cache_dir(char *buf, size_t size, struct fb_error *err);
/* dir NULL: fb_cache_dir(). A missing directory is an empty cache. Nothing is followed: a
 * symlink inside the cache is neither counted nor read (docs/security.md). */
FB_API int fb_cache_stats(const char *dir, struct fb_cache_stats *out, struct fb_error *err);
/* Removes every entry, temporary and host PCH (of the caller's that it may remove: in a sticky
 * team cache only its own); *removed counts entries and PCHs. Only files of an entry's name
 * that are regular files in a checked shard are unlinked, never through a link. */
FB_API int fb_cache_clear(const char *dir, uint64_t *removed, struct fb_error *err);
/* The size limit when none is set (FATBUILD_CACHE_MAX_SIZE): ccache's 5 GB. */
#define FB_CACHE_DEFAULT_MAX_SIZE 5000000000ull
#define FB_TRIM_IF_OVER 1u   /* trim only when the stats file's size says the cache is over, and
                              * never wait for another trim (what a build runs at its end) */
struct fb_cache_trim_result {
	uint64_t max_size, before, after; /* bytes on disk (after the walk: before is measured) */
	uint64_t evicted, evicted_bytes, host_pchs; /* host_pchs: of evicted */
	uint64_t temporaries;          /* leftovers of killed writes (over an hour old) removed */
	uint64_t skipped;              /* in use: read since the walk, or a PCH a build holds */
	bool busy;                     /* FB_TRIM_IF_OVER: another process was trimming; nothing done */
};
/* Keeps the cache at most max_size bytes on disk (0: no limit, nothing done): when over, the
 * least recently used entries and host PCHs go until 90% of max_size is left. Safe beside
 * running builds (docs/caches.md "Size"). dir NULL: fb_cache_dir(). res may be NULL. */
FB_API int fb_cache_trim(const char *dir, uint64_t max_size, unsigned flags, struct fb_cache_trim_result *res,
                         struct fb_error *err);
/* What the cache served, summed over every fb_compile that used dir (kept in dir/stats). */
struct fb_cache_counters {
	uint64_t local_hits, remote_hits, misses;   /* misses: jobs NVRTC compiled */
	uint64_t remote_misses, remote_errors, remote_corrupt, local_corrupt, uploads;
	uint64_t bytes_down, bytes_up;              /* remote traffic */
	uint64_t evictions, evicted_bytes;          /* fb_cache_trim's */
};
/* dir NULL: fb_cache_dir(). No stats file yet: all zero. */
FB_API int fb_cache_counters_read(const char *dir, struct fb_cache_counters *out, struct fb_error *err);

/* END SECTION cache */

#ifdef __cplusplus
}
#endif
#endif
