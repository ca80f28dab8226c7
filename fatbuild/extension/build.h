/* build.h: what the parts of fb_build share: the tools found, the generator's state, and the
 * steps the driver (build.c) calls: find the tools (tools.c), write the ninja graph (graph.c),
 * run ninja (ninja_run.c). Private; symbols are hidden. */
#ifndef FB_BUILD_H
#define FB_BUILD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "fatbuild.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "rexec/rexec.h"
#include "ninja.h"
#include "torch.h"

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

enum lang { L_KERNEL, L_C, L_CXX, L_NVCC };

/* The fatbuild program, its runtime library and the runtime header's directory. */
struct tools {
	char fatbuild[PATHMAX];
	char runtime[PATHMAX];
	char include[PATHMAX];
	char ninja[PATHMAX];
	char cc[PATHMAX], cxx[PATHMAX];
	bool cc_set;           /* $CC was set (--torch: nvcc's host compiler, as with torch) */
	char cuda_home[PATHMAX];
};

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
	struct fb_exec_tally tally[2]; /* after ninja, while remote: where the jobs ran (rexec/rexec.h) */
	bool tallied;
	struct tools t;
	struct fb_ninja *nj;
	char dir[PATHMAX];     /* build dir */
	char out[PATHMAX];     /* absolute output */
	struct ap_archlist *archs;
	struct fb_strlist objects; /* link inputs */
	struct fb_strlist fatbins; /* per-kernel-source merged fatbins */
	bool any_cxx, any_nvcc, any_cu;
	bool reloc;            /* rdc or lto: device link before the embed */
	struct fb_strlist *tparts; /* reloc, nvrtc: per target, every kernel's obj/K.TARGET.fatbin */
	size_t ntparts;
	struct fb_strlist nvcc_objs; /* reloc, nvcc: the -rdc=true objects */
	enum lang *langs;      /* per source: --backend auto decided in fb_build */
	struct fb_torch *torch; /* --torch: what torch said; else NULL */
	struct fb_strlist pchs;      /* host PCHs this graph makes (their .gch) */
	struct fb_strlist pchs_used; /* host PCHs the C++ edges read, one per edge */
	struct fb_strlist pch_bg;    /* pch.sh of the PCHs the background maker makes (ninja_run.c) */
	int *pch_holds;              /* host PCH dirs held while ninja runs (hostpch.c), closed at the end */
	size_t npch_holds;
	/* Per compile edge, its command as ninja runs it and as it is shown (the compiler's own
	 * words, without the cache and PCH wrapping): shown[2i] and shown[2i+1]. */
	struct fb_strlist shown;
	bool project_archs;    /* the nvcc flags name the arches (fb_flags_name_archs) */
	int gcc_heap;          /* the C++ compiles get gcc's collector heap: 1 yes, -1 no, 0 not yet decided (graph_host.c) */
	char name[256];
};

/* Finds fatbuild, its runtime library and header, ninja, $CC and $CXX (and CUDA_HOME with nvcc)
 * into t. */
int fb_build_find_tools(const struct fb_config *cfg, const struct fb_build_opts *o, bool need_nvcc, struct tools *t,
                        struct fb_error *err);
/* Checks that $CC or $CXX (var) names a program (on path, PATH's value). */
int fb_build_check_compiler(const char *path, const char *var, const char *value, struct fb_error *err);
/* Adds every rule, pool and edge of the build to g->nj. */
int fb_build_generate(struct gen *g, struct fb_error *err);
/* BUILD_DIR/out/BASENAME: what the link edge writes. */
void fb_build_staged_path(const struct gen *g, char *buf, size_t size);
/* BUILD_DIR/.fatbuild.failed: made when an edge fails (ninja_run.c), so that PCH work stops. */
void fb_build_failed_path(const struct gen *g, char *buf, size_t size);
/* Copies ninja's output from in (closed at its end) to out as output.c shows it, forwarding a
 * stop request to ninja; returns whether an edge failed. */
int fb_build_show_output(struct gen *g, int in, int out, pid_t ninja);
/* Runs ninja in g->dir under the build lock; *no_work says whether it found nothing to do. */
int fb_build_run_ninja(struct gen *g, bool *no_work, struct fb_error *err);

#endif
