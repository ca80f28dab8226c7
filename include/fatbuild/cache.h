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
	/* The compiler launcher's steps by kind (`fatbuild nvcc`, docs/launcher.md): hits served
	 * by either tier, misses run; already counted in the totals above. host: host compiles
	 * through the launcher, none yet. */
	uint64_t cicc_hits, cicc_misses, ptxas_hits, ptxas_misses, host_hits, host_misses;
};
/* dir NULL: fb_cache_dir(). No stats file yet: all zero. */
FB_API int fb_cache_counters_read(const char *dir, struct fb_cache_counters *out, struct fb_error *err);

/* The remote side of a run (docs/remote-cache.md): a shared cache and a REAPI executor, one
 * struct for fb_compile (fb_compile_opts.remote) and fb_build (fb_build_opts.remote), and the
 * tools' `fatbuild edge`. The tools resolve it once, their flags over the environment, and
 * pass it down. Zero: no remote. */
struct fb_remote_opts {
	/* The shared cache, "http://host:port/prefix" or grpc(s)://HOST:PORT[/INSTANCE]: looked
	 * up after the local cache misses, hits verified and copied into the local cache; a failing
	 * server means local compiles and one line in a note, never an error. NULL or "": none
	 * (fb_build: NULL leaves its edges the environment's FATBUILD_REMOTE_CACHE*). */
	const char *cache;
	const char *header;            /* one request header ("Authorization: Bearer T") or NULL */
	bool read_only;                /* never upload */
	long timeout_ms;               /* per request; <= 0: 10 s */
	/* A file the processes of one build share (fb_build names one in the build dir's tmp/ for
	 * its edges): the first to find the remote failing writes it and reports; while it exists
	 * the remote is off and nothing more is said (docs/remote-cache.md §5). NULL: this run
	 * alone. */
	const char *state;
	const char *tmpdir;            /* where remote blobs are staged while they download; NULL: /tmp */
	/* Remote execution (docs/remote-cache.md §9): the compiles both caches miss run at this
	 * executor, grpc://HOST:PORT[/INSTANCE] (or grpcs://). NULL or "": none (fb_build: NULL is
	 * the configuration's FATBUILD_REMOTE_EXECUTOR, "" none). Any failure of the executor means
	 * local compiles and one line in a note, never an error; a compile error from it is one as
	 * a local compile's. */
	const char *exec;
	const char *const *exec_props; /* "KEY=VALUE" platform properties, besides OSFamily and ISA */
	size_t nexec_props;
	/* fb_compile: jobs at the executor at once (<= 0: 4 x fb_compile_default_jobs()); fb_build:
	 * NVRTC edges in flight while remote (<= 0: 4 x jobs). */
	int jobs;
	long exec_timeout_ms;          /* each job, queued and run; <= 0: 600 s */
	/* fb_compile: the path of fatbuild-nvrtc-worker, which each NVRTC job's Action carries with
	 * the NVRTC library and the job's source and headers (a job whose output may depend on its
	 * paths, -G, -lineinfo, __FILE__, stays here); NULL: no remote execution of NVRTC jobs. */
	const char *worker;
};

/* END SECTION cache */

#ifdef __cplusplus
}
#endif
#endif
