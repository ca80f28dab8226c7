/* plumbing.h: what libfatbuild gives its own tools and nothing else: the build's compile
 * server, the `fatbuild edge` step ninja runs, depfiles, and helpers of the CLI's messages.
 * Private: not installed, not exported from the shared library, may change with any release
 * (HACKING.md "Public API"). Included by fatbuild/cli/ and by the files that define these. */
#ifndef FB_PLUMBING_H
#define FB_PLUMBING_H

#include <sys/types.h>

#include "fatbuild.h"

/* The build's compile server (docs/compile-server.md): one process per `fatbuild build`, which
 * keeps NVRTC workers with warm precompiled headers (at most jobs, and at most jobs compiles at
 * once) for the build's `fatbuild compile` edges. fb_compile_server_start forks and execs
 * program with the words "__compile-server BUILD_DIR JOBS READY_FD" (the CLI's hidden command,
 * which calls fb_compile_server_main); the server dies with the caller (PR_SET_PDEATHSIG) and
 * listens on BUILD_DIR/tmp/compile.sock (filled into sock), which the caller exports to the
 * edges as FATBUILD_COMPILE_SOCKET. 0 once the server listens, or FB_E* (then there is none: the edges
 * compile as without). fb_compile_server_stop ends it, waits for it and removes what it
 * left in build_dir (pid <= 0: nothing). */
int fb_compile_server_start(const char *program, const char *build_dir, int jobs, pid_t *pid, char *sock,
                                   size_t size, struct fb_error *err);
void fb_compile_server_stop(pid_t pid, const char *build_dir);
/* The server itself: serves until SIGTERM, SIGINT or SIGHUP, then removes its socket and PCH
 * files. ready_fd (>= 0) gets one byte once it listens and is closed. */
int fb_compile_server_main(const char *build_dir, int jobs, int ready_fd, struct fb_error *err);

/* Writes a Makefile-style depfile "target: dep dep ..." atomically. */
int fb_depfile_write(const char *path, const char *target, const char *const *deps, size_t ndeps,
                            struct fb_error *err);

/* Whether an NVRTC log says a host header (<cstdio>, <vector>, <torch/extension.h>, ...) cannot
 * be opened: NVRTC compiles device code only. The header's name goes to header. */
bool fb_nvrtc_missing_host_header(const char *log, char *header, size_t size);

/* `fatbuild env`: what the remote executor at url (grpc://, docs/remote-cache.md §9) says of
 * itself (GetCapabilities: "execution, properties OSFamily,ISA"), within timeout_ms, into buf.
 * 0, or FB_EIO (unreachable, refused: err says how), FB_EINVAL, FB_ENOTOOL (no gRPC). */
int fb_exec_probe(const char *url, const char *header, long timeout_ms, char *buf, size_t size, struct fb_error *err);

/* `fatbuild compile` and `fatbuild edge` count where their jobs ran for the build's summary
 * (rexec/exec.c; fb_exec_tally_take in rexec/rexec.h reads the sums). */
void fb_exec_tally_add(const char *state, int kind, size_t ran, size_t cached, size_t total);

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
	/* Directories whose files the depfile ninja reads leaves out (they still enter the key):
	 * torch's headers, for which the build gives the edge torch's own files as inputs instead
	 * (docs/pytorch.md "Builds with nothing to do"). */
	const char *const *quiet; size_t nquiet;
	/* Words of the command left out of the key: settings that cannot change the object (gcc's
	 * collector heap, which follows the machine's memory: docs/pytorch.md "gcc's collector"). */
	const char *const *unkeyed; size_t nunkeyed;
	const char *cache_dir;     /* NULL or "": fb_cache_dir() */
	struct fb_remote_opts remote; /* the remote cache and executor (fatbuild/cache.h); zero: none */
	const volatile sig_atomic_t *cancel; /* as fb_build_opts.cancel: the command is signalled */
	/* The configuration (PATH, the variables that enter the key, the cache's): `fatbuild edge`
	 * reads it once at its start; NULL: fb_edge_run reads it once. */
	const struct fb_config *config;
	/* Remote execution (docs/remote-cache.md §9 "Host and nvcc edges"): on a miss of both
	 * caches the compile runs at remote.exec (NULL or "": here). remote_cmd: the compile alone
	 * as shell words, when argv is a shell line around it (nvcc's keep dir). */
	const char *remote_cmd;
};
enum fb_edge_hit { FB_EDGE_RAN = 0, FB_EDGE_LOCAL = 1, FB_EDGE_REMOTE = 2, FB_EDGE_EXEC = 3, FB_EDGE_EXEC_CACHED = 4 };
struct fb_edge_result {
	int hit;                   /* enum fb_edge_hit: EXEC, ran at the executor; EXEC_CACHED, its cache */
	int status;                /* the command's exit status (128+signal when killed); 0 on a hit */
	char note[512];            /* cache trouble, or "" */
	/* With remote execution: where the compile ran and why ("remote", "local: ..."); the
	 * executor's failure to say once per build (else ""); the remote compile's stderr to show
	 * as the compiler's own (malloc'd, the caller frees it; NULL when none). */
	char where[256];
	char exec_note[512];
	char *log;
};
/* 0 when the edge was served or run (its status in r->status), else an error of our own
 * (the command could not start: FB_EIO). */
int fb_edge_run(const struct fb_edge_opts *o, struct fb_edge_result *r, struct fb_error *err);

/* Size of data compressed with zstd at level (streamed, nothing kept). */
int fb_zstd_size(const void *data, size_t size, int level, uint64_t *out, struct fb_error *err);

/* The purelib and platlib directories of a Python interpreter (a path, or a name searched on
 * path, PATH's value; one when they are the same): malloc'd strings in dirs[0..*n). */
int fb_python_site_dirs(const char *path, const char *python, char *dirs[2], size_t *n, struct fb_error *err);

/* The launcher's nvcc (fatbuild/launch/; docs/launcher.md): one `nvcc ... -c X.cu` run as
 * nvcc's own --dryrun steps, each cicc and ptxas through the compile cache, the device steps
 * side by side. res->split: the compile is done (its files written) and res->out / res->err
 * hold what nvcc would have printed on stdout and stderr; false: nothing was kept of the
 * split and the caller runs nvcc as it is, res->why saying why (words it does not take, a
 * step that failed). Cache trouble never fails it (res->note). 0, or FB_ENOMEM. */
struct fb_launch_opts {
	const char *nvcc;              /* the nvcc to run, a path */
	char *const *words;            /* its arguments, NULL-terminated */
	bool no_cache;                 /* run every step (no cache at all) */
	const char *cache_dir;         /* NULL or "": fb_cache_dir() */
	struct fb_remote_opts remote;  /* the remote cache (fatbuild/cache.h), as fb_edge_opts'; zero: none */
	const struct fb_config *config; /* TMPDIR, the cache's and the tools' digests; NULL: read here */
	/* As fb_build_opts.cancel: once it holds a stopping signal, no step starts, a step running
	 * is sent it, and the run ends unsplit with its temporaries removed. NULL: never. */
	const volatile sig_atomic_t *cancel;
};
struct fb_launch_result {
	bool split;
	char why[256];
	char *out, *err;               /* NUL-terminated */
	size_t out_size, err_size;
	char *steps;                   /* "cicc compute_80 hit, ptxas sm_80 miss, ..." */
	unsigned hits, misses;
	int jobs;                      /* the steps it ran at once, at most */
	char note[256];                /* cache trouble, for the log */
};
int fb_launch_nvcc(const struct fb_launch_opts *o, struct fb_launch_result *res, struct fb_error *err);
/* Whether fb_launch_nvcc would split nvcc's words (its arguments, NULL-terminated) rather than
 * hand them back at once: the caller readies for a run with temporaries (a stopping signal's
 * supervisor) only then. */
bool fb_launch_splits(char *const *words);
void fb_launch_result_clear(struct fb_launch_result *r);

#endif
