/* gen.h: what generating a build takes, resolved once by the driver (build.c) before anything
 * is written: the options and the configuration, the job counts and the remote executor
 * (fb_gen_start), the tools found (tools.c), the build dir and output, the arches, each
 * source's language, torch's answer. The steps read it and never change it: the ninja graph
 * (graph.c and its parts, which keep what they write in struct graph, graph_edge.h) and ninja's
 * run (ninja_run.c). Here too the helpers every step of the build uses (PATHMAX, bfmt) and what
 * gen.c answers from the inputs alone. Private; symbols are hidden. */
#ifndef FB_BUILD_GEN_H
#define FB_BUILD_GEN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fatbuild.h"

#define PATHMAX 4096

/* snprintf that reports truncation (-1) instead of warning about it. */
static inline int
bfmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline int
bfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

/* What a source is compiled as: a kernel by NVRTC, C, C++, a .cu by nvcc. */
enum lang { L_KERNEL, L_C, L_CXX, L_NVCC };

/* The programs a build runs (tools.c finds them): fatbuild, its runtime library and the
 * runtime header's directory, ninja, the host compilers, CUDA_HOME. */
struct tools {
	char fatbuild[PATHMAX];
	char runtime[PATHMAX];
	char include[PATHMAX];
	char ninja[PATHMAX];
	char cc[PATHMAX], cxx[PATHMAX];
	bool cc_set;           /* $CC was set (--torch: nvcc's host compiler, as with torch) */
	char cuda_home[PATHMAX];
};

struct fb_config;
struct fb_torch;

struct gen {
	const struct fb_build_opts *o;
	const struct fb_config *cfg; /* the configuration, read once: o->config, else at fb_build's start */
	const char *launcher;  /* --launcher, else FATBUILD_LAUNCHER; NULL or "": none */
	int jobs;              /* fb_compile_jobs(o->jobs): ninja's -j */
	int jobs_default;      /* fb_compile_default_jobs(): MAX_JOBS, else the CPUs (quota too) */
	int cpus;              /* the CPUs this process may use (affinity mask, cgroup quota) */
	bool max_jobs_capped;  /* MAX_JOBS asked for more than FB_JOBS_MAX: the edges get that */
	/* Remote execution (docs/remote-cache.md §9): the executor the NVRTC edges send their jobs
	 * to (o->remote.exec, else FATBUILD_REMOTE_EXECUTOR; NULL: none); rexec_off: none because
	 * the caller said "" while the environment, which the edges inherit, names one. ninja_jobs:
	 * ninja's -j, the remote edges in flight (o->remote.jobs, else 4 x jobs) while remote, else
	 * jobs; the edges that stay here then run in the local pool of jobs. */
	const char *rexec;
	bool rexec_off;
	int ninja_jobs;
	struct tools t;
	char dir[PATHMAX];     /* build dir */
	char out[PATHMAX];     /* absolute output */
	char name[256];        /* the extension's name */
	struct ap_archlist *archs;
	bool project_archs;    /* the nvcc flags name the arches (fb_flags_name_archs) */
	bool reloc;            /* rdc or lto: device link before the embed */
	enum lang *langs;      /* per source: --backend auto decided in fb_build */
	bool any_cu;           /* a .cu source (NVRTC or nvcc) */
	bool any_cxx, any_nvcc; /* a C++ source; a .cu for nvcc */
	struct fb_torch *torch; /* --torch: what torch said; else NULL */
};

/* o and what the steps take from the configuration, read once: the launcher, the job counts,
 * the CPUs, the remote executor; whether the device code is relocatable. */
void fb_gen_start(struct gen *g, const struct fb_build_opts *o, const struct fb_config *cfg);
/* Frees what g holds (the arches, the languages, torch's answer). */
void fb_gen_free(struct gen *g);
/* BUILD_DIR/out/BASENAME: what the link edge writes. */
void fb_gen_staged_path(const struct gen *g, char *buf, size_t size);
/* BUILD_DIR/.fatbuild.failed: made when an edge fails (output.c), so that PCH work stops. */
void fb_gen_failed_path(const struct gen *g, char *buf, size_t size);
/* Whether compile edges go through `fatbuild edge`. */
bool fb_gen_edge_cache_on(const struct gen *g);
/* Whether torch's CUDA headers and libraries are used. */
bool fb_gen_torch_cuda(const struct gen *g);
/* torch's install dir into out; "" without --torch. */
void fb_gen_torch_dir(const struct gen *g, char *out, size_t size);

#endif
