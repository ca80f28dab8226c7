/* config.h: the configuration both libraries and both CLIs read from the environment, read in
 * one place (config.c, the only getenv; tests/layout_check.sh fails on an environment read
 * anywhere else) into one struct that is passed down. Private; symbols are hidden; the public
 * headers name struct fb_config only as an opaque type, for the `config` member of their
 * options (NULL there: the library reads it once at its entry).
 *
 * A string is the environment's pointer, or NULL when the variable is unset. Nothing sets a
 * variable in the toolkit's own process: what its children are to see goes into the
 * environment they are started with (fb_config_child_env: fb_build gives ninja's edges the
 * build's compile server and remote cache that way).
 * A switch is 1, 0, or -1 when unset or anything else (fb_config_switch). A number stays the
 * text its one reader parses and reports, as it did before it was gathered here (MAX_JOBS
 * through fb_jobs_default, ARCHPROBE_TIMEOUT in probe.c, the CLIs' sizes and timeouts).
 *
 * The variables, by who reads them (docs/caches.md names the switches):
 *
 *   archprobe     ARCHPROBE_ARCHS ARCHPROBE_CACHE ARCHPROBE_FALLBACK ARCHPROBE_LIBCUDA
 *                 ARCHPROBE_TIMEOUT CUDA_HOME CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER
 *                 FATBUILD_NVRTC LD_LIBRARY_PATH PATH HOME XDG_CACHE_HOME
 *   cache         FATBUILD_CACHE_DIR FATBUILD_CACHE_SHARED HOME XDG_CACHE_HOME
 *   compile       MAX_JOBS FATBUILD_COMPILE_SOCKET FATBUILD_COMPILE_SERVER
 *   extension     FATBUILD_BUILD_DIR FATBUILD_CACHE_BASEDIR FATBUILD_EDGE_CACHE FATBUILD_HOST_PCH
 *                 FATBUILD_LAUNCHER FATBUILD_NINJA FATBUILD_PROGRAM FATBUILD_RUNTIME
 *                 FATBUILD_INCLUDE CC CXX TORCH_CUDA_ARCH_LIST PYTHONPATH PYTHONHOME
 *                 PYTHONUSERBASE PATH HOME XDG_CACHE_HOME FATBUILD_REMOTE_EXECUTOR (fb_build's
 *                 default executor for its NVRTC edges); the edge cache's key and roots also
 *                 take CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH SOURCE_DATE_EPOCH
 *                 GCC_EXEC_PREFIX COMPILER_PATH NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS; a compile
 *                 it sends to an executor takes LANG LC_ALL LC_CTYPE LC_MESSAGES along
 *   check         PATH (the interpreter's search)
 *   the CLIs      FATBUILD_REMOTE_CACHE FATBUILD_REMOTE_CACHE_HEADER FATBUILD_REMOTE_CACHE_MODE
 *                 FATBUILD_REMOTE_CACHE_STATE FATBUILD_REMOTE_CACHE_TIMEOUT
 *                 FATBUILD_CACHE_MAX_SIZE FATBUILD_COMPILE_VERBOSE FATBUILD_EDGE_LOG TMPDIR
 *                 FATBUILD_LAUNCH_LOG (the launcher's log, `fatbuild nvcc`)
 *                 FATBUILD_REMOTE_EXECUTOR, and some of the above (`fatbuild env` shows them,
 *                 `archprobe` its own)
 *
 * The runtime (fatbuild/runtime/) is a library of its own, linked into users' extensions, and
 * reads its FBRT_* variables itself. */
#ifndef FB_CONFIG_H
#define FB_CONFIG_H

#include <stddef.h>

struct fb_config {
	/* archprobe */
	const char *archprobe_archs, *archprobe_cache, *archprobe_fallback, *archprobe_libcuda;
	const char *archprobe_timeout;                   /* text; probe.c parses it */
	const char *cuda_home, *cuda_visible_devices, *cuda_device_order, *nvrtc; /* nvrtc: FATBUILD_NVRTC */
	const char *ld_library_path, *path, *home, *xdg_cache_home;
	/* cache */
	const char *cache_dir;                           /* FATBUILD_CACHE_DIR */
	int cache_shared;                                /* FATBUILD_CACHE_SHARED */
	/* compile */
	const char *max_jobs;                            /* text; fb_jobs_default parses it */
	const char *compile_socket;                      /* FATBUILD_COMPILE_SOCKET */
	int compile_server;                              /* FATBUILD_COMPILE_SERVER */
	/* extension */
	const char *build_dir, *cache_basedir;           /* FATBUILD_BUILD_DIR, FATBUILD_CACHE_BASEDIR */
	int edge_cache, host_pch;                        /* FATBUILD_EDGE_CACHE, FATBUILD_HOST_PCH */
	const char *launcher, *ninja, *program;          /* FATBUILD_LAUNCHER, FATBUILD_NINJA, FATBUILD_PROGRAM */
	const char *runtime, *include;                   /* FATBUILD_RUNTIME, FATBUILD_INCLUDE */
	const char *cc, *cxx, *torch_cuda_arch_list;
	const char *pythonpath, *pythonhome, *pythonuserbase;
	/* the edge cache's key and roots */
	const char *cpath, *c_include_path, *cplus_include_path, *source_date_epoch;
	const char *gcc_exec_prefix, *compiler_path, *nvcc_prepend_flags, *nvcc_append_flags;
	/* the CLIs */
	const char *remote_cache, *remote_cache_header, *remote_cache_mode; /* FATBUILD_REMOTE_CACHE* */
	const char *remote_cache_state, *remote_cache_timeout;             /* the timeout as text */
	const char *cache_max_size;                      /* FATBUILD_CACHE_MAX_SIZE, text */
	const char *compile_verbose, *edge_log, *tmpdir; /* FATBUILD_COMPILE_VERBOSE, FATBUILD_EDGE_LOG */
	const char *remote_executor;                     /* FATBUILD_REMOTE_EXECUTOR */
	const char *launch_log;                          /* FATBUILD_LAUNCH_LOG */
	/* the locale a remote edge's compile gets, so its messages read as a local one's */
	const char *lang, *lc_all, *lc_ctype, *lc_messages;
};

/* Reads every variable above from the environment into *c: the one read of the environment.
 * A CLI calls it once at its start (and again after it sets a variable a later step reads);
 * a library entry given no configuration calls it once there (fb_config_or_read). */
void fb_config_read(struct fb_config *c);

/* c when it is not NULL, else *local filled by fb_config_read: how a library entry whose
 * caller passed no configuration reads it once and passes it down. */
const struct fb_config *fb_config_or_read(const struct fb_config *c, struct fb_config *local);

/* The environment a child process is started with (execve, posix_spawn): this process's,
 * less every variable set names ("NAME=VALUE" replaces NAME, "NAME" alone leaves it out),
 * then set's "NAME=VALUE" entries. The entries point into set and the environment: set stays
 * until the child is started. One free(); NULL when out of memory. */
char **fb_config_child_env(const char *const *set, size_t n);

/* An on/off switch's text read one way for all of them: 1 when it is 1, yes, true or on; 0
 * when 0, no, false or off (any case); -1 when NULL or anything else, where the caller's
 * default holds. FATBUILD_EDGE_CACHE=no and FATBUILD_HOST_PCH=off mean the same as =0. */
int fb_config_switch(const char *v);

#endif
