/* archprobe.h: GPU arch lists and CUDA device probing. The only public header of libarchprobe.
 *
 * Conventions: every fallible call returns 0 or an AP_E* code and fills the optional
 * caller-owned struct ap_error (may be NULL). Opaque objects come in _new/_free pairs and
 * _free accepts NULL. The library never prints, never exits and keeps no global state. */
#ifndef ARCHPROBE_H
#define ARCHPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(AP_BUILDING) || defined(FB_BUILDING)
#define AP_API __attribute__((visibility("default")))
#else
#define AP_API
#endif

/* ---- errors ------------------------------------------------------------------------ */

enum ap_status {
	AP_OK = 0,
	AP_EPARSE,       /* unparseable arch-list item */
	AP_EUNSUPPORTED, /* arch the toolkit lacks, bad suffix, conflicting targets */
	AP_ENOMEM,
	AP_EIO,          /* file or process I/O failed */
	AP_ENOTOOLKIT,   /* no CUDA toolkit / NVRTC found */
	AP_ENODEVICE,    /* driver works, no visible device */
	AP_ENODRIVER,    /* libcuda could not be loaded */
	AP_ESTUB,        /* libcuda is NVIDIA's stub library */
	AP_EDRIVER,      /* driver call failed, or not a CUDA driver */
	AP_ETIMEOUT,     /* probe child timed out */
	AP_ECRASH,       /* probe child died by a signal */
	AP_EINVAL,       /* bad argument from the caller */
	AP_NSTATUS
};

/* Exit codes shared by both CLIs (docs/archlist.md §7). */
enum ap_exit {
	AP_EXIT_OK = 0,
	AP_EXIT_FAIL = 1,     /* the job failed: build error, no image fits, no device for native */
	AP_EXIT_USAGE = 2,    /* usage or bad input: unparseable or unsupported arch */
	AP_EXIT_NODRIVER = 3,
	AP_EXIT_STUB = 4,
	AP_EXIT_DRIVER = 5,
	AP_EXIT_TIMEOUT = 6,  /* probe timed out or crashed */
	AP_EXIT_UNSAFE = 7    /* a build or cache directory another user could write into */
};

/* The same layout as struct fb_error (fatbuild.h): an archprobe error is carried into a
 * fatbuild one whole. */
struct ap_error {
	int code;       /* an enum ap_status */
	char msg[1024]; /* one line a user can act on, without a program prefix */
	int ap_code;    /* unused by archprobe (0): fatbuild's struct fb_error fills it */
};

/* Static text for a status code. */
AP_API const char *ap_strerror(int code);
/* The CLI exit code (enum ap_exit) for a status code. */
AP_API int ap_exit_code(int code);

/* ---- the arch model ------------------------------------------------------------------ */

enum ap_variant { AP_PLAIN = 0, AP_ARCH = 1 /* 'a' */, AP_FAMILY = 2 /* 'f' */ };
enum ap_kind { AP_SASS = 0 /* code=sm_X */, AP_PTX = 1 /* code=compute_X */ };

/* One target of a resolved list: (sm, variant, kind). */
struct ap_target {
	int sm;                 /* 10*major + minor: 75, 80, 90, 100, 121 */
	enum ap_variant variant;
	enum ap_kind kind;
	int origin;             /* 1-based position of the input item it came from; 0 = device/fallback */
};

/* Writes "sm_90a" / "compute_100f" into buf (at least 16 bytes); returns buf. */
AP_API char *ap_target_name(const struct ap_target *t, char *buf, size_t size);
/* Parses "sm_90a", "compute_86" (nvcc names) into t. Returns 0 or AP_EPARSE. */
AP_API int ap_target_parse(const char *name, struct ap_target *t);

/* ---- toolkits -------------------------------------------------------------------------- */

#define AP_MAX_SMS 32

/* What one CUDA release supports. */
struct ap_toolkit {
	int version;            /* 1000*major + 10*minor, as CUDA_VERSION: 13000 */
	int nsm, sm[AP_MAX_SMS]; /* real arches, ascending */
	int na, a[AP_MAX_SMS];   /* arches that accept the 'a' suffix */
	int nf, f[AP_MAX_SMS];   /* arches that accept the 'f' suffix */
	char source[256];       /* where this came from: "builtin table", "NVRTC /usr/local/cuda/lib64/libnvrtc.so.13" */
};

/* The built-in table of a release (11.8, 12.0 … 12.6, 12.8, 12.9, 13.0 … 13.5), version as 12040 (see ap_cuda_version_parse). */
AP_API int ap_toolkit_builtin(int version, struct ap_toolkit *out, struct ap_error *err);
/* Parses "X.Y" into 1000*X+10*Y; returns -1 when malformed. */
AP_API int ap_cuda_version_parse(const char *s);
/* The toolkit in use: CUDA_HOME, else the nvcc on PATH, else /usr/local/cuda. Writes the
 * directory into buf. Returns 0 or AP_ENOTOOLKIT. */
AP_API int ap_cuda_home(char *buf, size_t size, struct ap_error *err);
/* Detects the toolkit at cuda_home (NULL: ap_cuda_home): arches from NVRTC's
 * nvrtcGetSupportedArchs (dlopen), suffix rules from the built-in table of its version. */
AP_API int ap_toolkit_detect(const char *cuda_home, struct ap_toolkit *out, struct ap_error *err);

#define AP_PATH_MAX 1024
#define AP_MAX_NVRTC_CANDIDATES 64
/* The libnvrtc files to try for the toolkit at home, best first, into paths (at most max):
 * FATBUILD_NVRTC when set (a libnvrtc.so.* file, or a folder holding one in it, lib/ or
 * lib64/: only those); else home/{lib64,lib,targets/<triple>/lib}, then the pip wheel trees
 * under home (home = site-packages/nvidia: cu13/lib, cuda_nvrtc/lib, cu12/lib) and, for
 * home = nvidia/cuda_nvcc, the nvidia/cuda_nvrtc/lib beside it; each .so.13 before .so.12
 * before .so.11.2; home NULL or "": the bare sonames (the loader's
 * search path). Files that do not exist are listed too. Returns the count. The one list
 * that both archprobe's toolkit detection and fatbuild's compiler load NVRTC from. */
AP_API int ap_nvrtc_candidates(const char *home, char (*paths)[AP_PATH_MAX], int max);

/* ---- devices (probing) ------------------------------------------------------------------- */

enum ap_probe_status {
	AP_PROBE_OK = 0,
	AP_PROBE_NO_DEVICE,
	AP_PROBE_NO_DRIVER,
	AP_PROBE_STUB,
	AP_PROBE_DRIVER_ERROR,
	AP_PROBE_TIMEOUT,
	AP_PROBE_CRASHED
};

struct ap_device {
	int ordinal;
	char name[256];
	int major, minor;
	int multiprocessors;
	uint64_t total_memory;  /* bytes */
	char uuid[64];          /* "GPU-xxxxxxxx-…" or "MIG-…" (cuDeviceGetUuid_v2) */
	bool mig;               /* a MIG instance: the v2 UUID differs from the parent GPU's */
	char pci_bus_id[32];    /* "0000:01:00.0" */
	int integrated;
	int compute_mode;
	int error;              /* CUresult of a failed cuDeviceGet / compute-capability query, 0 if none;
	                         * AP_DEVICE_BAD_CC when the driver answered a compute capability no
	                         * GPU has (major outside 1..99 or minor outside 0..9; major/minor keep
	                         * what it said) */
};

/* ap_device.error: the driver reported an impossible compute capability. Not a CUresult. */
#define AP_DEVICE_BAD_CC (-1)

#define AP_MAX_DEVICES 64

struct ap_probe_result {
	enum ap_probe_status status;
	int cuda_error;          /* CUresult behind driver_error/stub/no_device, else 0 */
	char cuda_error_name[64];
	char reason[512];        /* one line: what happened and what to do */
	char library[1024];      /* path of the libcuda actually loaded */
	int driver_version;      /* cuDriverGetVersion: 13000; 0 if unknown */
	int ndevices;
	struct ap_device devices[AP_MAX_DEVICES];
	/* The environment the driver saw (passed through untouched, reported verbatim). */
	bool cuda_visible_devices_set;
	char cuda_visible_devices[256];
	char cuda_device_order[64];    /* "" when unset */
	double seconds;          /* wall time of the probe */
	char trace[2048];        /* loader steps, one per line (archprobe -v) */
};

/* The configuration read from the environment: private to the tools, opaque here. */
struct fb_config;

struct ap_probe_opts {
	const char *libcuda;     /* exact driver path; NULL: ARCHPROBE_LIBCUDA, libcuda.so.1, WSL path */
	double timeout;          /* seconds; <= 0: ARCHPROBE_TIMEOUT or 10 */
	bool no_subprocess;      /* query in this process (CLI fast path) */
	const char *helper;      /* program to run as the probe child; NULL: the archprobe next to this
	                          * executable, next to libarchprobe (../bin), else on PATH; "": none,
	                          * fork() (refused in a multi-threaded caller) */
	const char *cache;       /* opt-in result cache: a file, or "1" for $XDG_CACHE_HOME/archprobe/probe;
	                          * NULL: ARCHPROBE_CACHE (unset or empty: no cache). Only ok results are
	                          * stored; the key is the requested library, LD_LIBRARY_PATH,
	                          * CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, the boot id, and the
	                          * loaded libcuda's real path, mtime and size. */
	/* The configuration the environment gave (ARCHPROBE_*, CUDA_*, PATH, HOME, ...), read once
	 * by the tools and passed down; NULL: ap_probe reads it once at its start. Opaque:
	 * callers outside the tools leave it NULL. */
	const struct fb_config *config;
};

/* Probes the visible devices. Returns 0 when a result (any status) was produced. */
AP_API int ap_probe(const struct ap_probe_opts *opts, struct ap_probe_result *out, struct ap_error *err);
/* The hidden helper mode of a probe child ("PROG --probe-child=1 [--libcuda PATH]", result on
 * fd 3). Programs that can serve as opts->helper call this first in main: it returns -1 when
 * argv is not a probe-child invocation, else the exit status for main. */
AP_API int ap_probe_child_main(int argc, char **argv);
/* "ok", "no_device", "no_driver", "stub", "driver_error", "timeout", "crashed". */
AP_API const char *ap_probe_status_name(enum ap_probe_status s);
/* The CUresult name from archprobe's own table ("CUDA_ERROR_NO_DEVICE"), or NULL. */
AP_API const char *ap_cuda_error_name(int curesult);

/* ---- arch lists ------------------------------------------------------------------------ */

struct ap_archlist; /* opaque: a resolved, sorted, deduplicated list of targets + diagnostics */

struct ap_resolve_opts {
	const struct ap_toolkit *toolkit; /* validate against this; NULL: ap_toolkit_detect() */
	bool drop_unsupported;            /* unsupported arch: warn and drop instead of error */
	const char *fallback;             /* for auto: --fallback; NULL: ARCHPROBE_FALLBACK, else all-major */
	const struct ap_probe_opts *probe;/* how to probe for native/auto; NULL: defaults */
	const struct ap_probe_result *devices; /* already-probed devices; NULL: ARCHPROBE_ARCHS, else probe */
	bool no_probe;                    /* never probe: native is an error, auto uses the fallback */
	const struct fb_config *config;   /* as ap_probe_opts.config; NULL: read once at the start */
};

/* Parses and resolves an arch list (any mix of PyTorch, CMake and nvcc syntax, names,
 * native, auto, all, all-major). NULL or empty text means auto. On success *out owns the
 * list (free with ap_archlist_free); on error *out is NULL and err says which item. */
AP_API int ap_archlist_resolve(const char *text, const struct ap_resolve_opts *opts,
                               struct ap_archlist **out, struct ap_error *err);
AP_API void ap_archlist_free(struct ap_archlist *l);
AP_API size_t ap_archlist_count(const struct ap_archlist *l);
AP_API const struct ap_target *ap_archlist_get(const struct ap_archlist *l, size_t i);
/* Warnings and notices produced while resolving ("8.6 is older than…"), one line each. */
AP_API size_t ap_archlist_nwarnings(const struct ap_archlist *l);
AP_API const char *ap_archlist_warning(const struct ap_archlist *l, size_t i);
/* Where devices came from for native/auto: "input", "devices", "fallback", "override". */
AP_API const char *ap_archlist_source(const struct ap_archlist *l);
/* The toolkit the list was validated against (owned by the list). */
AP_API const struct ap_toolkit *ap_archlist_toolkit(const struct ap_archlist *l);

enum ap_format {
	AP_FMT_NVCC, AP_FMT_TORCH, AP_FMT_CMAKE, AP_FMT_CLANG, AP_FMT_NVRTC, AP_FMT_BAZEL, AP_FMT_JSON,
	AP_FMT_LIST /* "80;86" SASS arches, for meson/make loops */
};
/* "nvcc" → AP_FMT_NVCC …; returns -1 for an unknown name. */
AP_API int ap_format_parse(const char *name);
/* Renders the list; *out is a malloc'd NUL-terminated string (no trailing newline except
 * nvrtc/json, which are multi-line) that the caller frees. */
AP_API int ap_archlist_format(const struct ap_archlist *l, enum ap_format fmt, char **out,
                              struct ap_error *err);

/* --format clang for one clang release (clang_major 22, 14 …; 0: any). 0 writes the
 * spelling every clang since 7 reads alike: --offload-arch=sm_X per SASS arch, then
 * --no-cuda-include-ptx=all and --cuda-include-ptx=sm_Y per PTX arch. 22 and newer (the new
 * offload driver, PTX only when asked): --cuda-include-ptx=sm_Y; older (PTX for every arch by
 * default): --no-cuda-include-ptx=sm_Z for the SASS-only ones. For a release whose arches were
 * measured (14, 22) an arch it cannot compile is AP_EUNSUPPORTED. */
AP_API int ap_archlist_format_clang(const struct ap_archlist *l, int clang_major, char **out,
                                    struct ap_error *err);

#ifdef __cplusplus
}
#endif
#endif
