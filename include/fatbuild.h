/* fatbuild.h: gencode flags, NVRTC compilation, fatbinaries, ELF embedding and extension
 * builds. The only public header of libfatbuild; it builds on archprobe.h.
 *
 * Conventions as in archprobe.h: 0 or an FB_E* code, detail in an optional caller-owned
 * struct fb_error, opaque objects in _new/_free pairs (free accepts NULL), no globals,
 * no printing, no exit. */
#ifndef FATBUILD_H
#define FATBUILD_H

#include <signal.h>
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

/* ---- fatbinary containers (fatbin.c; docs/fatbin.md) ---------------------------------- */

enum fb_entry_kind { FB_KIND_PTX = 1, FB_KIND_ELF = 2, FB_KIND_LTO = 4 };
enum fb_compress { FB_COMPRESS_NONE = 0, FB_COMPRESS_ZSTD, FB_COMPRESS_LZ4 };

/* SECTION fatbin: fatbinary containers (fatbuild/fatbin/).
 *
 * Format: docs/fatbin.md, summarised at the top of fatbuild/fatbin/format.h (private: magic
 * numbers, header layouts, the container walk). enum fb_entry_kind is the API's kind; on disk
 * LTO-IR is kind 8 (FB_DISK_KIND_LTO). */

/* fb_entry.disk_kind: on-disk entry kinds (u16 at entry+0x00). */
#define FB_DISK_KIND_PTX 1u
#define FB_DISK_KIND_ELF 2u
#define FB_DISK_KIND_OLDCUBIN 4u
#define FB_DISK_KIND_LTO 8u

/* fb_entry.flags: entry flags (u64 at entry+0x28). */
#define FB_FLAG_64BIT      UINT64_C(0x1)
#define FB_FLAG_DEBUG      UINT64_C(0x2)
#define FB_FLAG_CUDA       UINT64_C(0x4)
#define FB_FLAG_OPENCL     UINT64_C(0x8)
#define FB_FLAG_LINUX      UINT64_C(0x10)
#define FB_FLAG_MAC        UINT64_C(0x20)
#define FB_FLAG_WINDOWS    UINT64_C(0x40)
#define FB_FLAG_COMPRESS_OLD UINT64_C(0x1000)
#define FB_FLAG_LZ4        UINT64_C(0x2000)
#define FB_FLAG_ZSTD       UINT64_C(0x8000)
#define FB_FLAG_OBFUSCATED UINT64_C(0x10000)
#define FB_FLAG_ARCH_A     UINT64_C(0x100000)  /* sm_90a, compute_100a */
#define FB_FLAG_FAMILY_F   UINT64_C(0x200000)  /* sm_100f, compute_120f */
#define FB_FLAG_COMPAT     UINT64_C(0x1000000) /* ELF entry carries the .nv.compat blob (sm >= 100) */
#define FB_FLAGS_KNOWN     UINT64_C(0x131b07f)

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

/* Writer options for fb_fatbin_set_options (default 0: compress every entry when asked). */
#define FB_WRITE_DEBUG        0x1u /* flag 0x2 on every entry (fatbinary -g) */
#define FB_WRITE_COMPRESS_TEXT 0x2u /* compress only PTX, LTO and debug images (fatbinary's default) */
FB_API void fb_fatbin_set_options(struct fb_fatbin *fb, unsigned options);
/* zstd level (default 5, which matches nvcc/fatbinary); 1..22. */
FB_API int fb_fatbin_set_zstd_level(struct fb_fatbin *fb, int level, struct fb_error *err);
/* Reads "X.Y" from a PTX ".version" and the target from ".target sm_90a" (kind AP_PTX). */
FB_API int fb_ptx_info(const void *ptx, size_t size, int *major, int *minor, struct ap_target *target,
                       struct fb_error *err);
/* Parses "sm_90a", "compute_86" (ap_target_parse) or "lto_90" (as PTX) into t; 0 or FB_EINVAL. */
FB_API int fb_target_parse(const char *name, struct ap_target *t);

/* ---- reading containers (fatbin_read.c) ---- */

/* One entry of a parsed container. Pointers point into the caller's buffer. */
struct fb_entry {
	size_t container;         /* 0-based index of its container in the parsed buffer */
	size_t index;             /* 0-based index of the entry in its container */
	size_t offset;            /* of the entry header from the start of the parsed buffer */
	unsigned disk_kind;       /* FB_DISK_KIND_*; unknown kinds are kept and reported */
	struct ap_target target;  /* sm from +0x1c, variant from the flags, kind SASS for ELF else PTX */
	uint32_t header_size;
	uint16_t major, minor;    /* ELF: 1 and the ELF ABI version; PTX: ISA version */
	uint64_t flags, okey;
	uint64_t payload_size;    /* stored, padded to 8 */
	uint32_t compressed_size; /* 0 when not compressed */
	uint64_t uncompressed_size; /* 0 when not compressed */
	enum fb_compress compress;/* from the flags */
	bool obfuscated;          /* FB_FLAG_OBFUSCATED: never decoded */
	const unsigned char *payload; /* stored bytes: compressed_size of them if compressed */
	size_t stored_size;       /* compressed_size, or payload_size */
	const char *ident;        /* identifier (not NUL-terminated in the buffer), or NULL */
	size_t ident_len;
	const char *options;      /* PTX/LTO option string (not NUL-terminated), or NULL */
	size_t options_len;
	const unsigned char *compat; /* ELF sm>=100 compat blob, or NULL */
	size_t compat_len;
};

struct fb_container {
	size_t offset, size;      /* in the parsed buffer; size = 16 + fatSize */
	size_t first, count;      /* its entries in the entry array */
	size_t blob;              /* fb_scan_entries: index of the fb_blob it came from */
	bool bare;                /* fb_scan_entries: a lone cubin or PTX file, not a container */
};

/* The parsed view of a buffer holding one or more concatenated containers. */
struct fb_parsed {
	struct fb_container *containers;
	size_t ncontainers;
	struct fb_entry *entries;
	size_t nentries;
};

/* Parses every container in data[0..size) (zero padding between containers is skipped;
 * FB_PARSE_FIRST stops after the first, as the driver and nvJitLink do). Every size and
 * offset is checked; errors say which container and entry ("container 2: entry 3: header
 * size 0x44 is not a multiple of 8"). Nothing is decompressed. Free with fb_parsed_free. */
#define FB_PARSE_FIRST 0x1u
FB_API int fb_fatbin_parse(const void *data, size_t size, unsigned flags, struct fb_parsed *out,
                           struct fb_error *err);
FB_API void fb_parsed_free(struct fb_parsed *p);

/* Default cap on an entry's uncompressed size (FB_ETOOBIG above it). */
#define FB_DEFAULT_DECOMPRESS_CAP (UINT64_C(1) << 30)
/* The entry's image, decompressed (zstd, LZ4 block or LZ4 frame) into a malloc'd buffer of
 * exactly the uncompressed size. Uncompressed entries: the stored bytes, except that an ELF
 * is cut to its real extent (the container's zero padding dropped); PTX keeps its NULs.
 * cap 0 means FB_DEFAULT_DECOMPRESS_CAP; above it FB_ETOOBIG, before allocating anything.
 * Unknown kinds and obfuscated payloads: FB_EUNSUPPORTED. Corrupt streams, and streams whose
 * size differs from the header's: FB_EFORMAT. */
FB_API int fb_entry_image(const struct fb_entry *e, uint64_t cap, unsigned char **out, size_t *outsize,
                          struct fb_error *err);
/* "ptx", "elf", "lto", "oldcubin" or "kind7". buf at least 16 bytes. */
FB_API const char *fb_disk_kind_name(unsigned disk_kind, char *buf, size_t size);

/* ---- CUBIN inspection (cubin.c, libelf) ---- */

struct fb_kernel {
	char *name;               /* symbol name as stored (mangled) */
	int registers;            /* from .nv.info REGCOUNT, or -1 */
	int64_t shared_stored;    /* .nv.shared.<k> size, or 0 */
	int64_t shared_user;      /* static shared bytes the code asked for: stored - 1024 on sm >= 90 */
	bool shared_derived;      /* shared_user was derived by subtracting the 1024 reserve */
	uint64_t code_size;       /* st_size */
};

struct fb_cubin {
	int abi_version;          /* EI_ABIVERSION: 7 (CUDA <= 12) or 8 (13.0) */
	int sm;                   /* from e_flags, decoded by ABI version */
	bool arch_a;              /* .nv.compat attribute 9 = 1 */
	bool relocatable;         /* ET_REL (-rdc) rather than ET_EXEC */
	uint32_t e_flags;
	size_t nkernels;
	struct fb_kernel *kernels;
	const unsigned char *compat; /* .nv.compat in the caller's buffer, or NULL */
	size_t compat_len;
};

/* Reads a CUDA ELF (EM_CUDA, ELFCLASS64). Kernels are the STO_CUDA_ENTRY symbols, with
 * registers and static shared memory. The buffer must outlive the result (compat points
 * into it). Free with fb_cubin_free. */
FB_API int fb_cubin_read(const void *data, size_t size, struct fb_cubin *out, struct fb_error *err);
FB_API void fb_cubin_free(struct fb_cubin *c);
/* Demangles an Itanium name with __cxa_demangle from an already-loaded or dlopen'ed
 * libstdc++; copies the name unchanged when that is not possible. Returns buf. */
FB_API char *fb_demangle(const char *name, char *buf, size_t size);

/* ---- finding containers in files (hostelf.c) ---- */

enum fb_blob_kind { FB_BLOB_FATBIN, FB_BLOB_CUBIN, FB_BLOB_PTX };

/* One place inside a file that holds device code. */
struct fb_blob {
	enum fb_blob_kind kind;
	size_t offset, size;      /* in the scanned buffer */
	char where[256];          /* "" for a plain file, ".nv_fatbin", "libx.a(k.o) __nv_relfatbin" */
};

struct fb_scan {
	struct fb_blob *blobs;
	size_t nblobs;
	char type[16];            /* "fatbin", "cubin", "ptx", "elf", "archive" */
};

/* Finds every fatbin container (in .nv_fatbin and __nv_relfatbin sections of ELF host
 * files and of the members of ar archives), or the buffer itself when it is a fatbin, a
 * cubin or PTX. Sections are located only; nothing is decompressed. name is used in
 * messages. Free with fb_scan_free. */
FB_API int fb_scan_buffer(const void *data, size_t size, const char *name, struct fb_scan *out,
                          struct fb_error *err);
FB_API void fb_scan_free(struct fb_scan *s);
/* Parses every blob of a scan of data into one list: the containers of each fatbin blob
 * (offsets relative to data), and a bare one-entry container for a lone cubin (sm from
 * e_flags, 'a' from .nv.compat) or PTX file (arch from .target). Free with fb_parsed_free. */
FB_API int fb_scan_entries(const void *data, const struct fb_scan *s, struct fb_parsed *out,
                           struct fb_error *err);

/* A read-only mmap of a whole file. Regular files only: a FIFO, a device or a directory is
 * refused ("PATH: not a regular file (a FIFO)", FB_EIO) without being read or waited on. */
struct fb_mapped {
	const unsigned char *data;
	size_t size;
};
FB_API int fb_map_file(const char *path, struct fb_mapped *m, struct fb_error *err);
FB_API void fb_unmap_file(struct fb_mapped *m);

/* ---- the image-selection model (select.c, docs/fatbin.md §7) ---- */

/* One candidate image for selection. */
struct fb_image {
	struct ap_target target;  /* sm, variant, kind AP_SASS (ELF) or AP_PTX */
	bool compat;              /* ELF sm >= 100 with the compat blob (FB_FLAG_COMPAT) */
};

enum fb_how { FB_HOW_NONE = 0, FB_HOW_SASS, FB_HOW_PTX_JIT };

/* Which image the driver would use on `device`, and how.
 *
 * device->sm is the compute capability (10*major+minor). device->variant says what the
 * consumer allows: AP_ARCH for a real GPU (it runs its own 'a' code) or nvJitLink
 * -arch=sm_90a; AP_PLAIN models nvJitLink -arch=sm_90, which refuses 'a' images below
 * sm_100. device->kind is ignored.
 *
 * Candidates (observed with nvJitLink/nvlink 13.0, docs/fatbin.md §7):
 * - SASS sm_X (plain): same major and minor(X) <= minor(device); sm_87 and sm_88 only run on
 *   themselves and accept nothing else; for X >= 100 a lower minor needs the compat blob.
 * - SASS sm_Xa: only device sm == X (below sm_100 also device->variant AP_ARCH).
 * - SASS sm_Xf: same major and minor(X) <= minor(device).
 * - PTX compute_X: X <= device sm (any major; JIT). compute_Xa: device sm == X and
 *   variant AP_ARCH. compute_Xf: same major, minor(X) <= minor(device).
 * Among the candidates the highest arch number wins; on a tie SASS wins, then the first.
 * Returns the index into images, or -1 (FB_HOW_NONE) when nothing fits. */
FB_API long fb_select(const struct fb_image *images, size_t n, const struct ap_target *device,
                      enum fb_how *how);

/* Why one image does not fit a device under the rules above (FB_FITS when it does): the first
 * rule it breaks, in this order. */
enum fb_misfit {
	FB_FITS = 0,
	FB_MISFIT_NEWER,    /* the image's arch is above the device's (sm_90 or compute_90 on 8.9) */
	FB_MISFIT_MAJOR,    /* SASS, or an 'f' image, of another major (sm_80 on 9.0) */
	FB_MISFIT_ISOLATED, /* sm_87 / sm_88 SASS, or an 8.7 / 8.8 device, with another minor */
	FB_MISFIT_ARCH,     /* an 'a' image on another arch (sm_90a on 10.0) */
	FB_MISFIT_PLAIN,    /* an 'a' image a plain consumer refuses (sm_90a for -arch=sm_90) */
	FB_MISFIT_COMPAT,   /* SASS sm_X, X >= 100, without the compat blob on a higher minor */
};
FB_API int fb_select_misfit(const struct fb_image *image, const struct ap_target *device);

/* END SECTION fatbin */

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
	/* The shared cache (docs/remote-cache.md): looked up after the local cache misses, hits
	 * verified and copied into the local cache. NULL: none. A failing server means local
	 * compiles and one line in cache_note, never an error. */
	const char *remote_cache;      /* "http://host:port/prefix" */
	const char *remote_header;     /* one request header ("Authorization: Bearer T") or NULL */
	bool remote_read_only;         /* never upload */
	long remote_timeout_ms;        /* per request; <= 0: 10 s */
	/* A file the processes of one build share (fatbuild build names one in the build dir's
	 * tmp/ for its edges, FATBUILD_REMOTE_CACHE_STATE): the first to find the remote failing
	 * writes it and reports; while it exists the remote is off and nothing more is said
	 * (docs/remote-cache.md §5). NULL: this run alone. */
	const char *remote_state;
	const char *remote_tmpdir;     /* where remote blobs are staged while they download; NULL: /tmp */
	/* Paths below this directory enter the cache key relative to it (default: each source's
	 * own directory), so that checkouts in different places share entries. */
	const char *cache_basedir;
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

/* The build's compile server (docs/compile-server.md): one process per `fatbuild build`, which
 * keeps NVRTC workers with warm precompiled headers (at most jobs, and at most jobs compiles at
 * once) for the build's `fatbuild compile` edges. fb_compile_server_start forks and execs
 * program with the words "build --compile-server BUILD_DIR JOBS READY_FD", on which the CLI
 * calls fb_compile_server_main; the server dies with the caller (PR_SET_PDEATHSIG) and listens
 * on BUILD_DIR/tmp/compile.sock (filled into sock), which the caller exports to the edges as
 * FATBUILD_COMPILE_SOCKET. 0 once the server listens, or FB_E* (then there is none: the edges
 * compile as without). fb_compile_server_stop ends it, waits for it and removes what it
 * left in build_dir (pid <= 0: nothing). */
FB_API int fb_compile_server_start(const char *program, const char *build_dir, int jobs, pid_t *pid, char *sock,
                                   size_t size, struct fb_error *err);
FB_API void fb_compile_server_stop(pid_t pid, const char *build_dir);
/* The server itself: serves until SIGTERM, SIGINT or SIGHUP, then removes its socket and PCH
 * files. ready_fd (>= 0) gets one byte once it listens and is closed. */
FB_API int fb_compile_server_main(const char *build_dir, int jobs, int ready_fd, struct fb_error *err);

/* ---- parallelism ---- */

/* The most jobs fatbuild runs at once, whatever -j or MAX_JOBS ask for (docs/compile-server.md
 * §3): the build's compile server holds two descriptors per job (a worker, an edge's
 * connection) and polls them all, and poll(2) refuses more descriptors than the open-file limit,
 * whose usual soft value is 1024. Larger counts are capped with a note, as make and ninja take
 * any -j. */
#define FB_JOBS_MAX 256

/* Writes a Makefile-style depfile "target: dep dep ..." atomically. */
FB_API int fb_depfile_write(const char *path, const char *target, const char *const *deps, size_t ndeps,
                            struct fb_error *err);

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
/* Whether an NVRTC log says a host header (<cstdio>, <vector>, <torch/extension.h>, ...) cannot
 * be opened: NVRTC compiles device code only. The header's name goes to header. */
FB_API bool fb_nvrtc_missing_host_header(const char *log, char *header, size_t size);
/* A remote cache URL as messages show it: a user:password@ and any ?query or #fragment become
 * *** (either may hold a credential). Cut to fit size. */
FB_API void fb_remote_url_redact(const char *url, char *out, size_t size);

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

/* END SECTION compile */

/* SECTION build: extension builds (fatbuild/extension/: embed, ninja, build, load). */

/* ---- host-object embedding (embed.c; docs/fatbin.md §6) ---- */

/* Merges every container found in the n buffers (each may hold several back to back) into
 * ONE container holding all their entries, so that the driver selects among all images.
 * *out is malloc'd; the caller frees it. */
FB_API int fb_container_merge(const void *const *bufs, const size_t *sizes, size_t n, unsigned char **out,
                              size_t *outsize, struct fb_error *err);

struct fb_embed_opts {
	const char *symbol; /* global STT_OBJECT at the start of .nv_fatbin; NULL: "fatbin" */
	bool hidden;        /* STV_HIDDEN: one copy per shared object (what extension builds use) */
	bool no_segment;    /* omit the .nvFatBinSegment wrappers (cuobjdump/cudart registration) */
};

/* Writes a relocatable x86-64 ELF object (atomically) whose .nv_fatbin (SHF_ALLOC, align 8)
 * holds the n fatbins back to back (each 8-aligned). It defines `symbol` (the first container,
 * st_size = all bytes) and `symbol`_size (a const uint64_t in .rodata with the byte count), one
 * 24-byte {0x466243B1, 1, &container, 0} wrapper per container in .nvFatBinSegment (W, with its
 * R_X86_64_64 relocations), and an empty .note.GNU-stack. Every input must start with a container. */
FB_API int fb_embed(const void *const *fatbins, const size_t *sizes, size_t n, const char *out_path,
                    const struct fb_embed_opts *opts, struct fb_error *err);

/* ---- extension builds (build.c) ---- */

/* AUTO: each .cu by its content (fb_build_result.notes says which and why): host headers, <<<,
 * main or host functions go to nvcc, device code only to NVRTC. */
enum fb_backend { FB_BACKEND_NVRTC = 0, FB_BACKEND_NVCC = 1, FB_BACKEND_AUTO = 2 };

struct fb_build_opts {
	const char *const *sources; size_t nsources; /* .cu kernels, .c/.cc/.cpp/.cxx/.C host code */
	const char *output;      /* the .so (or program with executable) */
	const char *arch_list;   /* NULL: TORCH_CUDA_ARCH_LIST, else "auto" */
	const char *name;        /* NULL: from output's file name ("libx.so" → "x") */
	const char *build_dir;   /* NULL: $FATBUILD_BUILD_DIR/NAME, else $XDG_CACHE_HOME/fatbuild/build/NAME,
	                          * else ~/.cache/fatbuild/build/NAME (checked: docs/security.md) */
	const char *const *include_dirs; size_t ninclude_dirs;
	const char *const *defines; size_t ndefines;  /* "X" or "X=1" */
	const char *cflags, *cxxflags, *ldflags;       /* extra words, split on blanks */
	enum fb_backend backend;
	int jobs;                /* ninja -j; 0: fb_compile_default_jobs() (MAX_JOBS, else CPUs and quota) */
	bool verbose;            /* ninja -v (commands are echoed to the child's stdout) */
	bool emit_ninja_only;    /* write build.ninja and stop */
	bool executable;         /* link a program instead of a shared library */
	const char *fatbuild;    /* the fatbuild program the edges run; NULL: FATBUILD_PROGRAM, else "fatbuild" on PATH */
	const char *runtime_lib; /* libfatbuild_runtime.a; NULL: FATBUILD_RUNTIME, else beside fatbuild */
	const char *include_dir; /* dir of fatbuild_runtime.h; NULL: FATBUILD_INCLUDE, else beside fatbuild */
	const char *ninja;       /* NULL: FATBUILD_NINJA, else "ninja" on PATH */
	const char *log;         /* ninja's output goes to this file (truncated), and a failure's msg
	                          * quotes its first error; NULL: to our stdout/stderr (the CLI) */
	const struct ap_toolkit *toolkit; /* NULL: ap_toolkit_detect */
	/* Stopping: NULL, or a flag the caller's signal handler sets (nonzero: stop; a CLI stores
	 * the signal number). Read before ninja starts, while waiting for another build of the same
	 * build dir, and whenever a signal interrupts the wait for ninja; once set, ninja gets
	 * SIGTERM (or that signal), is waited for, the half-linked output is removed and fb_build
	 * returns FB_ECANCELED. ninja runs with PR_SET_PDEATHSIG = SIGTERM, so it stops with its
	 * edges even when the caller is SIGKILLed, and it holds a lock of its own in the build dir
	 * for as long as it runs, so a rebuild waits for an earlier build's ninja to be gone. */
	const volatile sig_atomic_t *cancel;
	/* Relocatable device code: kernels compiled -rdc=true (extern __device__ across .cu files,
	 * dynamic parallelism), then one device link (nvrtc: fatbuild dlink with nvJitLink per
	 * target; nvcc: nvcc -dlink) with the device runtime. lto: LTO-IR and a link-time-optimised
	 * device link (implies rdc). */
	bool rdc;
	bool lto;
	/* Flags by compiler: cxxflags reach nvcc through -Xcompiler (except -I -D -U -std= -g), but
	 * not with torch, whose builder gives C++ flags to C++ compiles alone. When nvcc_flags or
	 * cuda_flags name the arches (-gencode, -arch: any word holding "arch", as torch tells
	 * them), nvcc builds those and not the arch list's. */
	const char *nvcc_flags;  /* extra words for nvcc only */
	const char *cuda_flags;  /* extra words both kernel compilers take: NVRTC (as -Xnvrtc) and nvcc */
	/* PyTorch extensions: torch's include dirs, defines, C++ standard and ABI, PyTorch's nvcc
	 * flags, its libraries and their rpath, as torch.utils.cpp_extension adds them. */
	bool torch;
	const char *python;      /* whose torch; NULL: python3, else python, on PATH */
	bool python_module;      /* output a directory: OUT/NAME<EXT_SUFFIX> (else OUT/NAME.so) */
	int torch_cuda;          /* link c10_cuda, torch_cuda, cudart: 0 when there are .cu sources, 1 yes, -1 no */
	/* Words put before the host compiler and nvcc on their edges ("ccache", "sccache",
	 * "distcc"), as CMake's <LANG>_COMPILER_LAUNCHER; NULL: FATBUILD_LAUNCHER, else none. */
	const char *launcher;
	/* Called once the build dir is made and checked, before ninja runs, when a kernel goes to
	 * NVRTC (not with emit_ninja_only): the CLI starts the build's compile server there. */
	void (*on_build_dir)(void *ctx, const char *build_dir);
	void *on_build_dir_ctx;
	/* nvcc edges run one nvcc with --threads (host pass and targets in parallel) unless set or
	 * nvcc_flags/cuda_flags hold -t/--threads. */
	bool no_nvcc_threads;
	/* Host and nvcc edges run through `fatbuild edge` (fb_edge_run: the compile and remote
	 * cache) unless set, or a launcher is given. */
	bool no_edge_cache;
	/* --torch: host C++ edges use a precompiled header of torch's headers, made once per torch,
	 * compiler and flags in the user's cache (hostpch.c), unless set. */
	bool no_host_pch;
	/* The optimisation words of host compiles (C, C++, nvcc's host pass: nvcc's -O is the host
	 * compiler's; device code is optimised by ptxas either way). NULL: "-O2"; "": none, as
	 * torch.utils.cpp_extension.load compiles, which fatbuild.load follows. A compile whose
	 * own flags hold an -O gets none of these. */
	const char *host_opt;
	/* --torch without torch's compile and link words: cxxflags, nvcc_flags and ldflags hold
	 * them (fatbuild.load and BuildExtension give the ones torch's own builder would use). */
	bool torch_no_flags;
};

struct fb_build_result {
	char build_dir[4096];
	char ninja_file[4096];
	bool ninja_changed;      /* build.ninja was (re)written */
	bool up_to_date;         /* ninja reported no work */
	size_t ntargets;         /* resolved arch-list targets */
	char targets[512];       /* "sm_80 sm_86 compute_86" */
	char warnings[1024];     /* the arch list's warnings and notices, one per line */
	char notes[1024];        /* which backend each .cu got and why, torch's version; one per line */
	char output[4096];       /* the file built (opts.output, or the name chosen in a directory) */
};

/* Generates build.ninja and runs ninja (posix_spawn, no shell; its output goes to opts->log,
 * else to our stdout/stderr). The output is linked to a temporary name and renamed, so a failed build
 * leaves the previous one. result may be NULL. */
FB_API int fb_build(const struct fb_build_opts *opts, struct fb_build_result *result, struct fb_error *err);
/* One host or nvcc compile of a build, cached (extension/edgecache.c; docs/caches.md "Host and
 * nvcc edges"): the key is ccache's direct mode, the command (the bases spelled @Bn), the
 * identity (path, size, mtime) of each tool and the content of every file its depfile names;
 * the object is kept in the compile cache and, with remote_cache, the team's remote cache. A
 * hit writes the object and the depfile without running anything; a miss runs argv and stores
 * what it made. Cache trouble never fails the edge: it compiles, and note says why. */
struct fb_edge_opts {
	const char *const *argv;   /* the command (NULL-terminated), run as it is on a miss */
	const char *output;        /* the object it writes */
	const char *depfile;       /* the gcc-style depfile it writes */
	/* Directories spelled @B0, @B1 ... in the key and the manifest (the build dir,
	 * FATBUILD_CACHE_BASEDIR, torch's dir, the host PCH's dir: each one argv maps with
	 * -ffile-prefix-map), so that the same compile under other paths shares its entries. */
	const char *const *bases; size_t nbases;
	const char *const *tools; size_t ntools; /* programs whose identity enters the key */
	/* More depfiles whose files enter the key (a precompiled header's: gcc's own depfile then
	 * names none of the headers inside it). */
	const char *const *more_deps; size_t nmore_deps;
	const char *cache_dir;     /* NULL or "": fb_cache_dir() */
	const char *remote_cache;  /* NULL: none */
	const char *remote_header;
	bool remote_read_only;
	long remote_timeout_ms;
	const char *remote_state;  /* as fb_compile_opts.remote_state */
	const char *remote_tmpdir; /* as fb_compile_opts.remote_tmpdir */
	const volatile sig_atomic_t *cancel; /* as fb_build_opts.cancel: the command is signalled */
};
enum fb_edge_hit { FB_EDGE_RAN = 0, FB_EDGE_LOCAL = 1, FB_EDGE_REMOTE = 2 };
struct fb_edge_result {
	int hit;                   /* enum fb_edge_hit */
	int status;                /* the command's exit status (128+signal when killed); 0 on a hit */
	char note[512];            /* cache trouble, or "" */
};
/* 0 when the edge was served or run (its status in r->status), else an error of our own
 * (the command could not start: FB_EIO). */
FB_API int fb_edge_run(const struct fb_edge_opts *o, struct fb_edge_result *r, struct fb_error *err);

/* A build source's kind by its extension: .cu CUDA, .c C, .cc .cpp .cxx .C C++; NONE otherwise
 * (also for a dot in a directory name only). */
enum fb_source_kind { FB_SOURCE_NONE, FB_SOURCE_CUDA, FB_SOURCE_C, FB_SOURCE_CXX };
FB_API enum fb_source_kind fb_source_kind(const char *path);
/* Where a build finds the runtime library it links: runtime_lib (NULL: $FATBUILD_RUNTIME), else
 * DIR/../lib/libfatbuild_runtime.a beside the fatbuild program in dir (else the build tree's).
 * Writes the absolute path into out and returns 0, or writes the path tried and returns
 * FB_ENOTOOL. fb_build and `fatbuild env` both ask here. */
FB_API int fb_build_runtime_lib(const char *dir, const char *runtime_lib, char *out, size_t size);
/* The same for the directory of fatbuild_runtime.h: include_dir (NULL: $FATBUILD_INCLUDE), else
 * DIR/../include (else the build tree's). */
FB_API int fb_build_runtime_include(const char *dir, const char *include_dir, char *out, size_t size);
/* The default build dir for name (NULL: "NAME"): $FATBUILD_BUILD_DIR/NAME, else
 * $XDG_CACHE_HOME/fatbuild/build/NAME, else ~/.cache/fatbuild/build/NAME. 0 or FB_EINVAL. */
FB_API int fb_build_dir_default(const char *name, char *buf, size_t size, struct fb_error *err);
/* fb_build (a no-op when up to date), then dlopen(RTLD_NOW | RTLD_LOCAL). */
FB_API int fb_load(const struct fb_build_opts *opts, void **handle, struct fb_error *err);

/* END SECTION build */

/* SECTION prune: fatbin/prune.c, fatbin/size.c; docs/prune.md. */

/* What to keep. targets is a resolved arch list (ap_archlist_get): for each SASS target
 * sm_X the image a real X GPU would load (fb_select with variant AP_ARCH: its SASS, or the
 * PTX it would JIT), for each PTX target compute_X the PTX a compute_X JIT starts from (the
 * highest PTX arch <= X). Obfuscated entries and unknown kinds are always kept. */
struct fb_prune_opts {
	const struct ap_target *targets;
	size_t ntargets;
	bool allow_missing;     /* prune even when a container keeps no image for a listed GPU */
	bool prune_lto;         /* also drop LTO-IR whose arch is not listed (kept otherwise) */
	bool prune_relocatable; /* linked files: also prune __nv_relfatbin and ET_REL-cubin containers */
	int mode;               /* output file mode; 0: the input's */
};

struct fb_prune_report {
	char type[16];          /* "fatbin", "relocatable", "archive", "linked" */
	bool in_place;          /* linked: containers rewritten inside their sections, file size kept */
	size_t ncontainers, nentries;
	size_t kept_entries, removed_entries;
	uint64_t kept_bytes, removed_bytes; /* entry headers + stored payloads */
	size_t kept_other;      /* obfuscated or unknown entries, kept as they are */
	size_t kept_lto;        /* LTO-IR entries kept */
	size_t kept_relocatable;/* linked files: containers left whole (relocatable code) */
	size_t missing;         /* containers with no image for some listed GPU */
	size_t missing_ptx;     /* (container, compute_X) pairs with no PTX to keep */
	uint64_t in_size, out_size;
	char *notes;            /* findings, one per line (first 20, then a count), or NULL */
};

/* Prunes a .fatbin, a relocatable object (.o), an ar archive (.a), a shared library or an
 * executable held in data. *out (malloc'd) is the new file. A container that would keep no
 * image for a listed GPU is FB_ENOIMAGE unless opts->allow_missing (rep is filled either
 * way). rep may be NULL; free it with fb_prune_report_free. */
FB_API int fb_prune_buffer(const void *data, size_t size, const char *name, const struct fb_prune_opts *opts,
                           unsigned char **out, size_t *outsize, struct fb_prune_report *rep, struct fb_error *err);
/* The same from file to file, written atomically (out may be in: the file is replaced). */
FB_API int fb_prune(const char *in, const char *out, const struct fb_prune_opts *opts, struct fb_prune_report *rep,
                    struct fb_error *err);
FB_API void fb_prune_report_free(struct fb_prune_report *r);

/* Bytes per kind and arch (entry header + stored payload, and uncompressed). */
struct fb_size_row {
	unsigned disk_kind;     /* FB_DISK_KIND_* */
	struct ap_target target;
	bool obfuscated;
	uint64_t entries, stored, uncompressed;
	uint64_t kept_entries, kept_stored, kept_uncompressed; /* with targets: what a prune keeps */
};

struct fb_size_container {
	char where[256];        /* as fb_blob.where */
	size_t offset, size;    /* in the file */
	size_t entries, kept_entries;
	uint64_t stored, kept_stored;
};

struct fb_size_opts {
	const struct ap_target *targets; /* NULL: no prune estimate */
	size_t ntargets;
	bool prune_lto, prune_relocatable; /* as fb_prune_opts */
	int zstd_level;         /* > 0: zstd-compress the file (and the pruned file) at this level */
};

struct fb_size_report {
	char type[16];          /* fb_scan.type */
	uint64_t file_size;
	size_t ncontainers, nentries;
	uint64_t stored, uncompressed;
	struct fb_size_row *rows; size_t nrows;           /* sorted by kind, arch */
	struct fb_size_container *containers;            /* ncontainers of them */
	bool pruned;            /* targets were given: the kept_* fields and the below are set */
	struct fb_prune_report prune;
	uint64_t kept_stored, kept_uncompressed;
	size_t kept_entries;
	uint64_t pruned_file_size;
	uint64_t zstd_before, zstd_after; /* compressed file sizes when zstd_level > 0 */
};

/* Sizes of the device code in a file; with targets, what fb_prune_buffer would keep (missing
 * images are allowed and counted in prune.missing). Free with fb_size_report_free. */
FB_API int fb_size(const void *data, size_t size, const char *name, const struct fb_size_opts *opts,
                   struct fb_size_report *out, struct fb_error *err);
FB_API void fb_size_report_free(struct fb_size_report *r);
/* Size of data compressed with zstd at level (streamed, nothing kept). */
FB_API int fb_zstd_size(const void *data, size_t size, int level, uint64_t *out, struct fb_error *err);

/* END SECTION prune */
/* SECTION check: will these libraries run on these GPUs, before run time (fatbuild/check/;
 * docs/check-environment.md). */

/* How one file's device code fares on one device (docs/check-environment.md §2). */
enum fb_check_verdict {
	FB_CHECK_SASS = 1, /* runs: every module with an image for the device has SASS for it */
	FB_CHECK_JIT,      /* runs once the driver JIT-compiles PTX for some module */
	FB_CHECK_NONE,     /* cannot run: no module has an image for the device */
	FB_CHECK_OTHER,    /* device code found, loaded at run time by other means (§3) */
	FB_CHECK_LINK,     /* a device-link input (ar archive, relocatable object): runs once linked */
	FB_CHECK_NOKERNEL, /* its modules define no kernel: nothing to launch, nothing to fail */
};

/* One file on one device. */
struct fb_check_arch {
	int verdict;             /* enum fb_check_verdict */
	size_t sass, jit, none, link; /* its modules (containers) by how they load on the device */
	size_t empty;            /* modules of a library without an image that define no kernel: a
	                          * library loads a module when it launches one of its kernels */
	long entry;              /* a file of one module that runs: the index of the chosen image, else -1 */
	struct ap_target chosen; /* that image's target */
	long first_none;         /* the first module without an image, else -1 */
	char why_images[256];    /* FB_CHECK_NONE: the images of the modules; else those of module
	                          * first_none; "" when every module has an image */
	char why[384];           /* why those images do not fit (docs/check-environment.md §2) */
	int other;               /* the §3 code: enum fb_how of the best image found there; for a
	                          * library of relocatable code and LTO-IR only, among those */
};

/* One file that holds device code, or could not be read. */
struct fb_check_file {
	char *path;              /* relative to its input (an archive's member path), or the input itself */
	size_t input;            /* index into fb_check_report.inputs */
	size_t group;            /* index into fb_check_report.groups */
	uint64_t size;
	char type[16];           /* fb_scan.type ("elf", "archive", "fatbin", "cubin", "ptx") */
	size_t modules, entries; /* the containers the CUDA runtime loads (.nv_fatbin, __nv_relfatbin,
	                          * the file itself) and their entries */
	char images[256];        /* the distinct SASS and PTX images of the modules, sorted */
	size_t other_containers, other_cubins, other_ptx, other_lto; /* §3 */
	char other_sections[160];
	char other_images[256];
	int nvrtc_min, nvrtc_max; /* NVRTC built-in headers (§3): the lowest and highest SM, else 0 */
	size_t nvrtc;            /* how many SMs */
	char error[1024];        /* not read, or malformed: the message (nothing else is set) */
	struct fb_check_arch *arch; /* one per device, in the order of fb_check_opts.devices */
};

/* A distribution (a wheel's or an installed package's metadata) or, without one, a folder or
 * archive: the files of the report are grouped by these. */
struct fb_check_group {
	char *name;              /* METADATA / PKG-INFO Name, else the folder or archive */
	char *version;           /* Version, or "" */
	char *where;             /* the dist-info directory or archive, relative to its input */
	bool dist;               /* named by package metadata, or by an archive's file name */
	bool archive;            /* a zip or tar archive */
	size_t input;
	size_t files, with_code; /* regular files read, and those with device code */
};

struct fb_check_report {
	char **inputs;           /* the paths read: fb_check_opts.paths, then the interpreter's */
	size_t ninputs;
	struct fb_check_group *groups; /* distributions by name, then folders and archives */
	size_t ngroups;
	struct fb_check_file *files;   /* with device code or an error, by group, then path */
	size_t nfiles;
	size_t read, without_code, elf_without_code; /* regular files (and archive members) read */
	size_t links, special, nested, hardlinks; /* symbolic links not followed; FIFOs, sockets and
	                          * devices never opened; archives inside archives not opened; further
	                          * names of a file already read */
	uint64_t bytes;          /* of the files read */
};

struct fb_check_progress {
	size_t done, total;      /* files (an archive counts once) */
	uint64_t bytes_done, bytes_total;
	const char *current;     /* the file just finished, relative to its input */
};

struct fb_check_opts {
	const struct ap_target *devices; /* variant AP_ARCH: a real GPU (see fb_select) */
	size_t ndevices;
	const char *const *paths; /* files, directories, zip or tar archives (wheels, sdists) */
	size_t npaths;
	const char *python;      /* also the purelib and platlib of this interpreter; NULL: none */
	int jobs;                /* files read at once; <= 0: the CPUs this process may use (cgroup quota too) */
	const char *tmpdir;      /* where archive members are inflated to be read (NULL: /tmp) */
	uint64_t max_member;     /* cap on an archive member's size (0: 4 GiB) */
	const char *libarchive;  /* libarchive to dlopen (NULL: libarchive.so.13) */
	/* Called after each file, from the worker threads, one at a time. */
	void (*progress)(const struct fb_check_progress *p, void *ctx);
	void *progress_ctx;
};

/* Reads every path (a directory is walked with openat, never following a symbolic link nor
 * opening anything but regular files; zip and tar archives are read in place through
 * libarchive, dlopen'ed), finds the device code of each file by its content, and says for each
 * device how the CUDA loader would take it (fb_select). Files are read by threads, each mapped
 * and never held whole in memory. A file that cannot be read (an archive without libarchive
 * too) is a report entry with its error; a path that does not exist or is not a regular file
 * or directory fails the call (FB_EIO), as does an interpreter that does not answer
 * (FB_ENOTOOL). Free with fb_check_report_free (also after a failure). */
FB_API int fb_check(const struct fb_check_opts *opts, struct fb_check_report *out, struct fb_error *err);
FB_API void fb_check_report_free(struct fb_check_report *r);
/* The purelib and platlib directories of a Python interpreter (one when they are the same):
 * malloc'd strings in dirs[0..*n). */
FB_API int fb_python_site_dirs(const char *python, char *dirs[2], size_t *n, struct fb_error *err);

/* END SECTION check */

#ifdef __cplusplus
}
#endif
#endif
