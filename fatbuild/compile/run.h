/* run.h: the process side of fb_compile, one part below the driver (compile.c, prepare.c) and
 * above the cache and the NVRTC loader: the state of one run (filled by prepare.c), its
 * scheduling onto worker processes (schedule.c), the forked worker and its answer protocol
 * (child.c), the workers' PCH directories and policy (worker.c), and the build's compile server
 * (server.c) with its client (client.c). Private to libfatbuild and the tests. */
#ifndef FB_COMPILE_RUN_H
#define FB_COMPILE_RUN_H

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "nvrtc.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "rexec/rexec.h"

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
	struct fb_strlist extra;    /* with remote execution: the root's other paths (fb_deps_scan_root) */
	char computed[PATH_MAX];    /* with remote execution: the first file with "#include MACRO" */
	unsigned char key[32];      /* source + headers */
	unsigned char content[32];  /* basename, source and headers by content only */
	char base[PATH_MAX];        /* paths below it enter the key relative to it (key.c) */
	int exact;                  /* the output may depend on paths: the key spells them exactly */
};

enum { J_PENDING, J_RUNNING, J_DONE, J_HELD /* kept out of a remote round */ };

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
	int pch;                    /* that verdict as FB_PCH_* flags: what is counted */
	int cached;                 /* 1: local cache, 2: remote cache */
	int result;                 /* nvrtcResult */
	struct fb_cache_entry e;
	char where[200];            /* with remote execution: "remote", "local: why" (offload.c) */
};

/* One worker process (or, in a remote round, one thread of this process: offload.c): the jobs
 * it runs, in order, and what it has answered so far. */
struct unit {
	size_t *jobs;               /* into run.jobs */
	size_t n, done;
	size_t weight;
	int pch;
	int state;
	pid_t pid;
	pthread_t thread;           /* threaded: a remote round's unit */
	int threaded;
	int fd;                     /* the read end of the worker's pipe */
	int wfd;                    /* a thread's write end, which the thread closes */
	int exit;                   /* a thread's exit code */
	unsigned char *rx;          /* bytes from the child not yet parsed */
	size_t rxn, rxcap;
	double t0, tlast;
};

#define ANSWER 56               /* the fixed part of one answer from a worker */
/* An answer's PCH verdict (the flags at byte 48), which the run counts; the note says it in
 * words for people. A heap retried larger may be refused and used in one job. */
enum { FB_PCH_MADE = 1, FB_PCH_USED = 2, FB_PCH_REFUSED = 4 };

struct run {
	const struct fb_compile_opts *o;
	const struct fb_config *cfg; /* read once: o->config, else at fb_compile's start */
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
	char cache_dir[PATH_MAX];   /* the local store (fb_cache_local_dir), when use_cache */
	int use_cache;
	struct fb_cache *cache;     /* the run's tiers (cache.h); NULL without a cache */
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
	/* Remote execution (offload.c): remote is set while the round of remote jobs runs (the
	 * children then run a job at the executor instead of NVRTC); remote_off once the executor
	 * failed (no more jobs go there; exec_why says what happened); the input root's shared
	 * files (the worker and the NVRTC libraries, mapped) and the client's working directory. */
	int remote, remote_off;
	atomic_int stop;            /* set to end a remote round's threads (their calls cancelled) */
	struct fb_exec *hold;       /* keeps gRPC up across the round's threads; closed last, waiting */
	char exec_why[512];
	int exec_quiet;             /* exec_why was said by another process of the build */
	struct fb_exec_input tc[3];
	void *tc_map[3];
	size_t tc_mapsize[3];
	char cwd[PATH_MAX];
	char home[PATH_MAX];        /* the toolkit's: its include/ tree goes whole to a job that needs it */
	struct fb_exec_input *tk;   /* that tree's files (names and bytes owned), when a job does */
	size_t ntk;
};

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
/* Decodes one answer p[0..n) into j->e / j->result / j->pch_note / j->pch. */
int fb_answer_decode(struct run *r, struct job *j, const unsigned char *p, size_t n, struct fb_error *err);

/* child.c: one answer (the format above fb_run_child) to fd, pch its FB_PCH_* flags; 0 or -1
 * when fd could not be written. */
int fb_answer_write(int fd, int rc, int result, int pch, const char *log, const char *note, const unsigned char *ptx,
                    size_t nptx, const unsigned char *cubin, size_t ncubin);

/* ---- offload.c: NVRTC jobs at a remote executor (docs/remote-cache.md §9) ---- */

/* An answer's nvrtcResult when the executor failed a job (its log says what happened): the job
 * is compiled here. */
#define FB_RESULT_FARM (-77)
/* Whether e holds what job j makes, for its targets (fatbin/elfid.c): 0; FB_ENOIMAGE when it
 * lacks an image; another code, err saying what is wrong. */
int fb_job_check(const struct run *r, const struct job *j, const struct fb_cache_entry *e, struct fb_error *err);
/* The remote round, around fb_run_jobs (the caller runs it when begin says so): begin holds the
 * jobs that stay here and, when a job can go to r->o->remote.exec and the executor has not
 * failed in this build, sends the shared files and sets r->remote: 1, the round is to run; 0,
 * none (r->exec_why says why when the executor failed). end, after the round (rc its result;
 * 0 when none ran), closes the executor's handle, gives the jobs it left back to the local
 * round (each one's where saying why) and says the executor's failure once per build (the
 * run's exec_note); rc. What the executor fails stays pending for the local workers, and the
 * first failure stops the round (r->exec_why). */
int fb_offload_begin(struct run *r);
int fb_offload_end(struct run *r, int rc);
/* A remote round's unit runs on a thread of this process, never in a forked child, so no gRPC
 * state crosses a fork (docs/remote-cache.md §9): start makes its pipe (u->fd, read here) and
 * thread; join, after EOF on u->fd, waits for the thread and gives its exit code; stop (on a
 * failure or the stop signal) sets r->stop, which cancels the thread's call under way, reads
 * what it still writes until EOF, and joins it. */
int fb_offload_start(struct run *r, struct unit *u, struct fb_error *err);
int fb_offload_join(struct unit *u);
void fb_offload_stop(struct run *r, struct unit *u);
/* After an answer of a remote round was decoded: the job's where, or (FB_RESULT_FARM) the job
 * back to pending and the round stopped. 1 when it fell back. */
int fb_offload_answered(struct run *r, struct job *j);
void fb_offload_free(struct run *r);

/* ---- worker.c: the NVRTC worker's PCH directory, options, heap policy and verdicts; child.c:
 * one job's compile and answer ---- */

/* 0 when dir is a directory (not a link) of ours with no access for group or others; else
 * -1 and why says what is wrong. */
int fb_pch_dir_check(const char *dir, char *why, size_t size);
/* Makes parent (mkdir -p) and a fresh parent/pch.XXXXXX in it, mode 0700, checked. */
int fb_pch_dir_new(const char *parent, char *out, size_t size, struct fb_error *err);
/* A worker's own directory run_dir/wN (0700, checked): NVRTC names its PCH files after the
 * source, and another process's PCH is of no use (its heap lies elsewhere). 0, or -1 with
 * why. */
int fb_pch_worker_dir(const char *run_dir, size_t worker, char *out, size_t size, char *why, size_t whysize);
/* Removes the PCH files, the worker directories and the directory. */
void fb_pch_dir_remove(const char *dir);
/* opts[0..1] = "--pch", "--pch-dir=DIR" (text in buf); -1 when DIR does not fit. */
int fb_pch_options(const char *dir, char *buf, size_t size, const char *opts[2]);
/* Removes NVRTC's PCH messages from a log in place; *used when one said a PCH was used.
 * Returns the new length. */
size_t fb_pch_log_strip(char *log, int *used);

/* A worker's PCH policy across its jobs. */
struct fb_pch_state {
	size_t heap;        /* to set before the next compile (0: leave) */
	int retried;        /* the heap was enlarged once already */
	int off;            /* PCH given up for the rest of the worker's jobs */
	int made;
};
/* After a compile: status/required from nvrtcGetPCHCreateStatus/HeapSizeRequired, used from
 * the log, heap the current heap size. Fills note ("PCH made (12 MiB)", "PCH used", "PCH
 * refused: ..."), updates s (a larger heap once when exhausted; off after a second failure);
 * returns the verdict as FB_PCH_* flags. */
int fb_pch_verdict(struct fb_pch_state *s, int status, size_t required, int used, size_t heap, char *note,
                   size_t size);

/* One job for a worker: text (named name in diagnostics) compiled with opts[0..nopts), which
 * has room for two more (the PCH options); want_ptx / want_cubin as fb_nvrtc_compile takes them. */
struct fb_worker_job {
	const char *text, *name;
	const char **opts;
	size_t nopts;
	int want_ptx, want_cubin;
};
/* Compiles wj in this process (with the PCH in wdir when pch and s allow it; a failure with the
 * PCH is retried without) and writes its answer (child.c's format) to fd. first_note, when not
 * empty, is why the PCH is off ("PCH refused: ..."). *rc: fb_nvrtc_compile's code. 0, or -1
 * when fd could not be written. */
int fb_worker_compile(const struct fb_nvrtc *nv, const struct fb_worker_job *wj, struct fb_pch_state *s, int pch,
                      const char *wdir, const char *first_note, int fd, int *rc);

/* ---- server.c, client.c: the build's compile server (docs/compile-server.md) ----
 *
 * `fatbuild build` starts one server per build (server.c); the `fatbuild compile` edges ninja
 * runs send it their cache-missed jobs (client.c) over a Unix socket in the build dir, so the
 * jobs of one NVRTC option set reach one long-lived worker with a warm PCH. All integers are
 * u64 little-endian, strings a u64 length (counting a final NUL) and their bytes with the NUL.
 *
 *   request  := "FBCSRV02" njobs job*
 *   job      := u64 size, then size bytes: flags home nvrtc cwd name text nopts opt*
 *               flags: bit 0 want PTX, bits 1-2 want_cubin (0, 1 cubin, 2 LTO-IR), bit 3 PCH
 *   response := (u64 job index, answer)*, one per job in the order they finish; an answer is
 *               child.c's (56 bytes: status, nvrtcResult, sizes of log, PCH note, PTX, cubin,
 *               the PCH verdict's flags; then those bytes)
 */

#define FB_SERVER_MAGIC "FBCSRV02"
#define FB_SERVER_MAX_JOB ((uint64_t)1 << 30) /* one job's bytes: more is garbage */
#define FB_SERVER_SOCKET "compile.sock"   /* in BUILD_DIR/tmp */
#define FB_SERVER_IDLE_SETS 8            /* idle workers kept beyond the compiles at once */

/* One job as parsed from the wire; the pointers point into the job's bytes. */
struct fb_server_job {
	uint64_t flags;
	const char *home, *nvrtc, *cwd, *name, *text;
	const char **opts;          /* nopts, and room for two more (the PCH options) */
	size_t nopts;
};
/* Parses job bytes p[0..n); on success opts is malloc'd (free it). 0, or -1 for garbage (nothing held). */
int fb_server_job_parse(const unsigned char *p, size_t n, struct fb_server_job *j);

/* client.c: runs r's pending jobs at the server whose socket is sock, when sock passes the
 * checks (a socket of ours, mode 0600 or stricter, in a directory of ours with no access for
 * group or others). A job answered well is done as a local one would be; any other stays
 * pending for the local workers. note: why the server was not used or failed ("" when it
 * was used without trouble). */
void fb_server_run(struct run *r, const char *home, const char *sock, char *note, size_t size);

#endif
