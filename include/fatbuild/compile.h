/* fatbuild/compile.h: NVRTC compilation into images for every target of an arch list.
 * Part of libfatbuild's public API (include/fatbuild.h includes every part); stable as
 * HACKING.md "Public API" says. */
#ifndef FATBUILD_COMPILE_H
#define FATBUILD_COMPILE_H

#include "fatbuild/cache.h"
#include "fatbuild/fatbin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SECTION compile: NVRTC compilation (fatbuild/compile/). */

/* Compiles CUDA sources with NVRTC (dlopen'ed from the toolkit in use) for every target of a
 * resolved arch list, in parallel (one process per NVRTC job: NVRTC serialises compiles that
 * share a process), and never twice: results live in a content-addressed cache whose key
 * covers the source, the path and content of every header it reads, every option, the NVRTC
 * version and the target (paths below a base count relative to it: docs/remote-cache.md §3).
 * A PTX target whose SASS sibling (same sm and variant) is also in the
 * list rides on that job: NVRTC returns both, and the PTX is the same as a compute_X compile.
 * The jobs are fork()ed children of the caller that only call NVRTC and _exit; do not call
 * fb_compile while another thread of the process is inside NVRTC. Jobs that share an option set
 * may share one child that runs them in turn with NVRTC's precompiled headers (no_pch below).
 * Every job is seeded (--frandom-seed) from its content, so the images do not depend on the
 * directory, the user or the process (the seed holds no path). */

struct fb_compile_progress {
	size_t done, total;            /* jobs finished (this one included) / all jobs */
	const char *source;            /* as given */
	const char *target;            /* "sm_90", "compute_120" */
	double seconds;                /* NVRTC wall time; 0 for a cache hit */
	bool cached;
	/* With precompiled headers: "PCH made (40 MiB)", "PCH used", "PCH refused: why"; NULL
	 * when the job ran without (a cache hit, PCH off, a worker with one job). */
	const char *pch;
	bool remote;                   /* the hit came from the remote cache (then cached too) */
	/* With remote execution (remote_exec below): where the job ran and why, "remote",
	 * "remote (the executor's cache)", "local: why"; NULL without remote execution or for a
	 * cache hit. */
	const char *where;
};

struct fb_compile_opts {
	const struct ap_target *targets; /* required: the resolved list (ap_archlist_get) */
	size_t ntargets;
	const char *const *include_dirs; /* -I, searched after the source's own directory */
	size_t ninclude_dirs;
	const char *const *defines;    /* "NAME" or "NAME=VALUE" */
	size_t ndefines;
	const char *std;               /* "c++17" (default), "c++20" */
	bool fast_math;                /* --use_fast_math */
	bool device_debug;             /* -G */
	bool lineinfo;                 /* -lineinfo */
	int maxrregcount;              /* 0: unset */
	const char *const *nvrtc_opts; /* passed through verbatim (-Xnvrtc) */
	size_t nnvrtc_opts;
	int jobs;                      /* parallel NVRTC processes; <= 0: fb_compile_default_jobs() */
	const char *cuda_home;         /* NULL: ap_cuda_home() */
	const char *cache_dir;         /* NULL or "": fb_cache_dir() */
	bool no_cache;                 /* neither read nor write the cache */
	/* Called in the caller's thread as each job finishes (cache hits first). */
	void (*progress)(void *ctx, const struct fb_compile_progress *p);
	void *progress_ctx;
	/* Stopping: NULL, or a flag the caller's signal handler sets (nonzero: stop; a CLI stores
	 * the signal number). Read before each job starts and whenever a signal interrupts the wait;
	 * once set, the running jobs are killed and reaped, nothing is cached, and fb_compile
	 * returns FB_ECANCELED. The library keeps no signal state of its own: installing handlers
	 * (and forwarding the signal to the jobs, which run in the caller's process group) is the
	 * caller's part. */
	const volatile sig_atomic_t *cancel;
	/* Relocatable device code (fb_dlink links it): rdc gives relocatable cubins (-rdc=true,
	 * extern __device__ across files, dynamic parallelism); lto gives LTO-IR (-dlto) for every
	 * target. With either, a PTX target is compiled to LTO-IR (kind FB_KIND_LTO) of its arch,
	 * which fb_dlink turns into one linked PTX. */
	bool rdc;
	bool lto;
	/* Precompiled headers: the jobs of one option set (arch, include path) run in one worker
	 * process with NVRTC's automatic PCH, so the headers are parsed once per worker. On by
	 * default; outputs and cache keys are the same without. The PCH files go to a fresh
	 * mode-0700 directory under the cache dir (or under pch_parent when there is no cache),
	 * removed after the run. */
	bool no_pch;
	const char *pch_parent;        /* NULL: the cache dir; no cache and NULL: no PCH */
	struct fb_remote_opts remote;    /* the shared cache and the executor (fatbuild/cache.h); zero: none */
	/* Paths below this directory enter the cache key relative to it (default: each source's
	 * own directory), so that checkouts in different places share entries. */
	const char *cache_basedir;
	/* The configuration the environment gave (MAX_JOBS, FATBUILD_CACHE_*, the build's compile
	 * server, ...: archprobe.h's struct fb_config), read once by the tools and passed down;
	 * NULL: fb_compile reads it once at its start. Callers outside the tools leave it NULL. */
	const struct fb_config *config;
};

struct fb_compile_image {
	size_t source;                 /* index into the sources given */
	struct ap_target target;
	enum fb_entry_kind kind;       /* FB_KIND_ELF (cubin) or FB_KIND_PTX (text, no NUL) */
	unsigned char *data;
	size_t size;
	bool cached;
};

struct fb_compile_result {
	struct fb_compile_image *images; /* source by source, each in the list's target order */
	size_t nimages;
	char **deps;                   /* every file read: the sources, then the headers found */
	size_t ndeps;
	/* Compiler output in "file:line:col: error: msg [sm_90]" form: on failure the log of the
	 * first failing job; on success the warnings (each distinct log once). NULL if none. */
	char *log;
	size_t njobs, ncached, ncompiled;
	int nvrtc_version;             /* 13000 */
	char failed_target[32];        /* on failure: "sm_90" */
	/* Cache entries that failed their checksum or size check: removed, recompiled and (when
	 * the build succeeds) rewritten. cache_note has one line per entry ("corrupt cache entry
	 * for k.cu (sm_80) removed and recompiled: cache entry PATH: size or checksum mismatch
	 * (N bytes)"), NULL when ncorrupt is 0. */
	size_t ncorrupt;
	char *cache_note;
	/* PCH: jobs that made one, used one, had it refused (compiled plainly); pch_off says why
	 * the PCH was not tried at all ("" when it was, or when no_pch asked for that);
	 * pch_unsupported: because this NVRTC has no automatic-PCH API (older than 12.8), which is
	 * expected rather than a problem. */
	size_t pch_made, pch_used, pch_refused;
	char pch_off[512];
	bool pch_unsupported;
	size_t nremote;                /* of ncached: hits served by the remote cache */
	/* Why the build's compile server (FATBUILD_COMPILE_SOCKET) was not used, or failed and the
	 * jobs were compiled here; "" when it was not asked for or served without trouble. */
	char server_note[512];
	/* Remote execution: jobs the executor ran (of ncompiled), and what made the run give it up
	 * and compile the rest here (one line: "Execute: UNAVAILABLE: ..."), "" when it was not asked
	 * for or served without trouble. */
	size_t nexecuted;
	char exec_note[768];
};

/* Compiles. Returns 0, or FB_ECOMPILE (err->msg: the first diagnostic; (*out)->log: the
 * whole log), FB_ENOTOOL (no NVRTC; err->msg says where it looked), FB_EIO, FB_EINVAL...
 * *out is set on success and on FB_ECOMPILE; free it with fb_compile_result_free. */
FB_API int fb_compile(const char *const *sources, size_t nsources, const struct fb_compile_opts *opts,
                      struct fb_compile_result **out, struct fb_error *err);
FB_API void fb_compile_result_free(struct fb_compile_result *r);
/* Packs every image of a result into a fatbinary container (fb_fatbin_*), in result order.
 * compress applies to PTX only unless compress_elf (nvcc's default is zstd PTX, raw cubins);
 * with opts->device_debug / lineinfo the entries carry the -G flag, identifier and options nvcc
 * writes. */
FB_API int fb_compile_pack(const struct fb_compile_result *r, const struct fb_compile_opts *opts,
                           enum fb_compress compress, bool compress_elf, unsigned char **out, size_t *size,
                           struct fb_error *err);
/* Parallel jobs when none is asked for: MAX_JOBS when it is all digits (as PyTorch reads it;
 * 0 = no limit, and at most FB_JOBS_MAX), else the CPUs this process may run on, capped by its
 * cgroups' CPU quota, read from /proc and /sys/fs/cgroup. */
FB_API int fb_compile_default_jobs(void);
/* The jobs to run for a count asked for: asked (at most FB_JOBS_MAX) when > 0, else
 * fb_compile_default_jobs(). fb_compile and fb_build size everything with it. */
FB_API int fb_compile_jobs(int asked);
/* Whether std names a standard fb_compile takes (fb_compile_opts.std): c++03, c++11, c++14,
 * c++17 or c++20, the values NVRTC takes as -std=. NULL and "" are not names (as
 * fb_compile_opts.std they mean c++17). */
FB_API bool fb_compile_std_ok(const char *std);

/* ---- parallelism ---- */

/* The most jobs fatbuild runs at once, whatever -j or MAX_JOBS ask for (docs/compile-server.md
 * §3): the build's compile server holds two descriptors per job (a worker, an edge's
 * connection) and polls them all, and poll(2) refuses more descriptors than the open-file limit,
 * whose usual soft value is 1024. Larger counts are capped with a note, as make and ninja take
 * any -j. */
#define FB_JOBS_MAX 256

/* ---- device link (dlink.c, jitlink.c) ---- */

/* Links relocatable device code for one target with nvJitLink (dlopen'ed from the toolkit in
 * use): the images of the inputs (fatbins or cubins as fb_compile with rdc/lto packs them) for
 * that target, plus the device runtime with devrt. SASS target: one executable cubin; PTX
 * target (LTO-IR inputs): one linked PTX. FB_ENOIMAGE when an input has no image for the
 * target, FB_EINVAL when its cubin is not relocatable, FB_ECOMPILE for a link error (err->msg:
 * the first error line; out->log: the whole log), FB_ENOTOOL without nvJitLink. The link runs
 * in a forked child process that only calls nvJitLink (as fb_compile's jobs do). */
struct fb_dlink_opts {
	const struct ap_target *target; /* sm_90, sm_90a, compute_86 */
	bool lto;                      /* LTO-IR inputs, nvJitLink -lto */
	bool devrt;                    /* add <cuda_home>/lib64/libcudadevrt.a (SASS targets only) */
	bool device_debug, lineinfo;   /* -g, -lineinfo */
	const char *cuda_home;         /* NULL: ap_cuda_home() */
	const char *const *extra;      /* nvJitLink options passed through verbatim */
	size_t nextra;
};
struct fb_dlink_result {
	enum fb_entry_kind kind;       /* FB_KIND_ELF or FB_KIND_PTX */
	unsigned char *image;
	size_t size;
	size_t ninputs;                /* images linked, the device runtime not counted */
	char *log;                     /* nvJitLink's error and info log, or NULL */
	int jitlink_version;           /* 13000 */
	char jitlink_path[1024];
};
FB_API int fb_dlink(const void *const *inputs, const size_t *sizes, const char *const *names, size_t n,
                    const struct fb_dlink_opts *opts, struct fb_dlink_result *out, struct fb_error *err);
FB_API void fb_dlink_result_clear(struct fb_dlink_result *r);
/* The nvJitLink fb_dlink would use: FB_ENOTOOL (err->msg names the paths tried) when none loads. */
struct fb_jitlink_info {
	int version;                   /* 1000*major + 10*minor; 0 when it has no nvJitLinkVersion */
	char path[1024];
};
FB_API int fb_jitlink_info(const char *cuda_home, struct fb_jitlink_info *out, struct fb_error *err);
/* The linked image as a one-entry fatbin (target's arch and variant). */
FB_API int fb_dlink_pack(const struct fb_dlink_result *r, const struct ap_target *target, enum fb_compress compress,
                         unsigned char **out, size_t *size, struct fb_error *err);

/* The NVRTC the compiler would use. */
struct fb_nvrtc_info {
	int version;                   /* 1000*major + 10*minor */
	char path[1024];               /* the library loaded */
	int narchs, archs[64];         /* nvrtcGetSupportedArchs, ascending */
};
/* FB_ENOTOOL (err->msg names every path tried) when no NVRTC loads. */
FB_API int fb_nvrtc_info(const char *cuda_home, struct fb_nvrtc_info *out, struct fb_error *err);

/* END SECTION compile */

#ifdef __cplusplus
}
#endif
#endif
