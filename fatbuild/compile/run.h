/* run.h: private to the files of fb_compile (compile.c the driver, prepare.c the options,
 * sources, keys and jobs, schedule.c the worker processes and their scheduling, child.c the
 * forked worker and its answer protocol): the state of one run. */
#ifndef FB_COMPILE_RUN_H
#define FB_COMPILE_RUN_H

#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "compile.h"
#include "common/error_priv.h"

#define NONE ((size_t)-1)

struct digest {
	char *path;
	unsigned char d[32];
	int names_file;             /* fb_key_names_file */
};

struct source {
	const char *path;
	char *text;
	size_t size;
	char dir[PATH_MAX];
	struct fb_strlist deps;     /* headers, in discovery order */
	unsigned char key[32];      /* source + headers */
	unsigned char content[32];  /* basename, source and headers by content only */
	char base[PATH_MAX];        /* paths below it enter the key relative to it (key.c) */
	int exact;                  /* the output may depend on paths: the key spells them exactly */
};

enum { J_PENDING, J_RUNNING, J_DONE };

struct job {
	size_t src;
	size_t sass, ptx;           /* indexes into the target list, NONE if not served */
	char arch[32];              /* what NVRTC is asked for: "sm_90a", "compute_120" */
	int lto;                    /* -dlto: LTO-IR (in e.cubin) instead of cubin/PTX */
	char key[65];
	char seed[17];              /* --frandom-seed: path-independent, from the content */
	int state;
	size_t unit;                /* the worker that runs it (NONE: not scheduled) */
	double secs;
	char pch_note[256];         /* the worker's PCH verdict, "" without PCH */
	int cached;                 /* 1: local cache, 2: remote cache */
	int result;                 /* nvrtcResult */
	struct fb_cache_entry e;
};

/* One worker process: the jobs it runs, in order, and what it has answered so far. */
struct unit {
	size_t *jobs;               /* into run.jobs */
	size_t n, done;
	size_t weight;
	int pch;
	int state;
	pid_t pid;
	int fd;
	unsigned char *rx;          /* bytes from the child not yet parsed */
	size_t rxn, rxcap;
	double t0, tlast;
};

#define ANSWER 48               /* the fixed part of one answer from a worker */

struct run {
	const struct fb_compile_opts *o;
	struct fb_nvrtc *nv;
	const char *const *srcpaths;
	struct source *src;
	size_t nsrc;
	struct job *jobs;
	size_t njobs, done;
	struct digest *dig;
	size_t ndig, capdig;
	char **common;              /* options shared by all jobs, after -arch and -I<srcdir> */
	size_t ncommon;
	char cache_dir[PATH_MAX];
	int use_cache;
	struct fb_remote *remote;
	char basedir[PATH_MAX];
	char nvrtc_key[128];        /* fb_key_nvrtc, or empty */
	/* Kept here rather than in locals so that a forked child, which leaves with _exit, still
	 * reaches every block through the run (memory checkers follow the fork). */
	size_t *order, *wjob, *ujobs, *uorder, *uw;
	struct pollfd *pfd;
	struct unit **pu;
	struct unit *units;         /* one worker process each */
	size_t nunits;
	int pch;                    /* units of one option set share an NVRTC PCH */
	char pch_dir[PATH_MAX];     /* private to this run (worker.c) */
	const char *pch_note;       /* why the PCH is off, for the caller; NULL when on or unasked */
	pid_t parent;
	struct fb_compile_result *res;
};

/* prepare.c: the NVRTC options every job shares; each source read, its headers found and
 * keyed; one job per (source, target slot), keyed and seeded. */
int fb_run_options(struct run *r, const char *home, struct fb_error *err);
int fb_run_load_sources(struct run *r, struct fb_error *err);
int fb_run_make_jobs(struct run *r, struct fb_error *err);

/* schedule.c: CLOCK_MONOTONIC seconds, for the jobs' times. */
double fb_run_now(void);
/* schedule.c: counts j done and tells the caller's progress callback. */
void fb_run_job_done(struct run *r, struct job *j);
/* Whether a and b share an option set (arch and include path), so one PCH serves both. */
int fb_run_same_options(const struct run *r, const struct job *a, const struct job *b);
/* Runs the pending jobs, at most maxjobs processes at a time; on the first failure kills the
 * rest. *failed: that job. */
int fb_run_jobs(struct run *r, int maxjobs, struct job **failed, struct fb_error *err);

/* The NVRTC options of one job, as child.c passes them: v has room for r->ncommon + 6. */
struct fb_job_opts {
	char arch[64], inc[PATH_MAX + 3], seed[40];
	const char **v;
	size_t n;
};
void fb_run_job_options(const struct run *r, const struct job *j, struct fb_job_opts *jo);

/* child.c: the forked worker for unit u, answering through fd; returns the exit code for _exit. */
int fb_run_child(struct run *r, struct unit *u, int fd);
/* The size of the complete answer at the start of p[0..n), or 0 while it is incomplete;
 * (size_t)-1 for garbage. */
size_t fb_answer_size(const unsigned char *p, size_t n);
/* Decodes one answer p[0..n) into j->e / j->result / j->pch_note. */
int fb_answer_decode(struct run *r, struct job *j, const unsigned char *p, size_t n, struct fb_error *err);

#endif
