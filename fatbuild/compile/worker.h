/* worker.h: private to compile.c, child.c, server.c and jitlink.c: the NVRTC worker's PCH
 * directory, options, heap policy and verdicts (worker.c), and one job's compile and answer
 * (child.c). */
#ifndef FB_COMPILE_WORKER_H
#define FB_COMPILE_WORKER_H

#include <stddef.h>
#include <sys/types.h>

#include "compile.h"

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
/* In a forked worker: SIGKILL when the parent dies; exits at once if it already has. */
void fb_worker_child_init(pid_t parent);
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
 * refused: ..."), updates s (a larger heap once when exhausted; off after a second failure). */
void fb_pch_verdict(struct fb_pch_state *s, int status, size_t required, int used, size_t heap, char *note,
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

#endif
