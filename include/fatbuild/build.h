/* fatbuild/build.h: embedding, device links and extension builds (fatbuild build, fatbuild.load).
 * Part of libfatbuild's public API (include/fatbuild.h includes every part); stable as
 * HACKING.md "Public API" says. */
#ifndef FATBUILD_BUILD_H
#define FATBUILD_BUILD_H

#include "fatbuild/compile.h"

#ifdef __cplusplus
extern "C" {
#endif

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
	 * NVRTC (not with emit_ninja_only): the CLI starts the build's compile server there and
	 * returns its socket, which the NVRTC edges are given (FATBUILD_COMPILE_SOCKET in the
	 * environment ninja runs with; docs/compile-server.md), or NULL when none started. */
	const char *(*on_build_dir)(void *ctx, const char *build_dir);
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
	/* The configuration the environment gave (TORCH_CUDA_ARCH_LIST, FATBUILD_*, CC, CXX, PATH,
	 * ...: archprobe.h's struct fb_config), read once by the tools and passed down; NULL:
	 * fb_build reads it once at its start. Callers outside the tools leave it NULL. */
	const struct fb_config *config;
	/* The remote cache and executor (fatbuild/cache.h) of the build's edges: the edges
	 * get the executor, its properties and timeout on their command lines (remote.jobs sizes
	 * ninja's -j while remote), the cache through the environment ninja runs with
	 * (FATBUILD_REMOTE_CACHE, _MODE, _HEADER, _TIMEOUT; docs/remote-cache.md §5). Zero: the
	 * configuration's FATBUILD_REMOTE_EXECUTOR and the environment's remote cache. */
	struct fb_remote_opts remote;
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

#ifdef __cplusplus
}
#endif
#endif
