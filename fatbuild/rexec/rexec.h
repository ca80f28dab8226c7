/* rexec.h: REMOTE EXECUTION as the other parts see it (compile/, extension/): the one header of
 * rexec/ they include (docs/remote-cache.md §9). One command at a REAPI executor in plain words
 * (exec.c, over the protocol layer action.c on the cache's gRPC channel): its input root
 * (input.h), the files many commands share sent once, the run with its outputs fetched and
 * verified, the executor's failure and the jobs' tally as the processes of one build share
 * them, what the executor says of itself; the input root of an NVRTC job (jobroot.c); and a
 * host or nvcc compile as such a command (edge_action.c). Private to libfatbuild. */
#ifndef FB_REXEC_REXEC_H
#define FB_REXEC_REXEC_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "input.h"
#include "base/strbuf.h"

/* ---- exec.c: one command run at a REAPI executor ---- */

struct fb_exec;
struct fb_exec_opts {
	const char *url;               /* grpc(s)://HOST:PORT[/INSTANCE] */
	const char *header;            /* one request header ("Authorization: Bearer T"), or NULL */
	long timeout_ms;               /* each Execute, queue and run together; <= 0: 600 s */
	const char *const *props;      /* platform properties "K=V", besides OSFamily=linux, ISA=x86-64 */
	size_t nprops;
	/* Several commands at once, each on a thread of its own with its own fb_exec
	 * (compile/offload.c): stop, once set, cancels the call under way within 100 ms and fails
	 * every later one; shared: close does not wait for gRPC's threads to end, since the others
	 * use it (the caller keeps one fb_exec opened without shared and closes it last). */
	const atomic_int *stop;
	int shared;
};
/* The command: argv[0] a path relative to the input root; env all it sees; outputs the files
 * it writes, relative paths. */
struct fb_exec_cmd {
	const char *const *argv;
	int argc;
	const char *const *env;        /* "NAME=VALUE" */
	int nenv;
	const char *const *outputs;
	int noutputs;
	const struct fb_exec_input *inputs;
	int ninputs;
};
#define FB_EXEC_MAX_OUTPUTS 8
/* What the command did: exit_code, its stderr, and each output's bytes (data[i] NULL when it did
 * not write outputs[i]), every one verified against its digest; cached: the executor's action
 * cache answered. Cleared with fb_exec_out_clear. */
struct fb_exec_out {
	int exit_code;
	int cached;
	unsigned char *data[FB_EXEC_MAX_OUTPUTS];
	size_t size[FB_EXEC_MAX_OUTPUTS];
	char *err;
};
/* FB_EINVAL (not a grpc URL, a bad property), FB_ENOTOOL (no gRPC in this build), FB_ENOMEM. No
 * connection until the first call. */
int fb_exec_open(const struct fb_exec_opts *o, struct fb_exec **out, struct fb_error *err);
void fb_exec_close(struct fb_exec *x);
/* fb_exec_close without waiting for gRPC's threads to end: for a caller that forks nothing next
 * (a stopped or failed round: the wait could last a call's whole deadline to a stalled server). */
void fb_exec_close_nowait(struct fb_exec *x);
/* Before the caller forks: gRPC's threads stop until the next call (as fb_cache_idle). */
void fb_exec_idle(struct fb_exec *x);
/* Puts the files the executor's CAS lacks there (files many commands share, sent once). 0 or
 * FB_EIO (err: what the executor said). */
int fb_exec_upload(struct fb_exec *x, const struct fb_exec_input *in, int n, struct fb_error *err);
/* Runs c: 0 once it ran (out filled, whatever its exit code); FB_EIO when the executor failed it
 * (unreachable, refused, QUEUED past the timeout, a failed run, a missing or damaged output;
 * err says what happened), FB_EINVAL for a bad command, FB_ENOMEM. */
int fb_exec_run(struct fb_exec *x, const struct fb_exec_cmd *c, struct fb_exec_out *out, struct fb_error *err);
void fb_exec_out_clear(struct fb_exec_out *o);
/* The executor's failure as the processes of one build share it (`fatbuild build` runs each
 * compile edge as a process of its own): the file STATE-exec beside the remote cache's state file
 * STATE (fb_remote_opts.state; NULL: none). seen: 1 when another process of the build
 * found the executor failing (why: what it said). claim: leaves why there; 1 when this process
 * was first (or there is no build) and so says it, 0 when another one did. */
int fb_exec_state_seen(const char *state, char *why, size_t size);
int fb_exec_state_claim(const char *state, const char *why);
/* Where the jobs of one build ran, counted by its processes in STATE-exec-tally (appended, one
 * line per process, by fb_exec_tally_add of plumbing.h: `fatbuild compile` and `fatbuild edge`
 * add): kind 0 for a compile edge's NVRTC jobs, 1 for a host or nvcc edge; ran at the executor,
 * served by a cache, of total. take: the sums (t[0] NVRTC, t[1] edges) and the file removed; 1
 * when there was a tally. Nothing without a state file. `fatbuild build -v` says the sums. */
struct fb_exec_tally {
	size_t ran, cached, total;
};
int fb_exec_tally_take(const char *state, struct fb_exec_tally t[2]);
/* What GetCapabilities says of execution, into buf ("execution on, SHA256, priorities 1..9"), or
 * FB_EIO / FB_EFORMAT with err. */
int fb_exec_capabilities(struct fb_exec *x, char *buf, size_t size, struct fb_error *err);

/* ---- jobroot.c: the input root of a remote NVRTC job (docs/remote-cache.md §9 "Remote NVRTC
 * jobs"): the worker program and the toolkit's files at fixed paths, the client's files below
 * _fb/r (absolute paths) and _fb/c (relative ones, under the working directory). ---- */

#define FB_JOBROOT_WORKER "_fb/nvrtc-worker"
#define FB_JOBROOT_TOOLKIT "_fb/t"

/* p (absolute, or relative to cwd) as a path of the root, "." and ".." parts resolved, into out:
 * 0, or -1 when it does not fit. Safe on several threads at once. */
int fb_jobroot_path(const char *cwd, const char *p, char *out, size_t size);
/* The worker's log with the root's paths spelled as the client (working directory cwd) spells
 * them, in place. */
void fb_jobroot_log_unmap(const char *cwd, char *log);
/* The regular file path mapped read-only into *in as the root's name (exec: executable; hex: its
 * SHA-256 when known, else NULL or "" to have it computed); *map and *mapsize for munmap. 0, or
 * -1 with why (an empty or unreadable file). */
int fb_jobroot_map(const char *path, const char *name, int exec, const char *hex, struct fb_exec_input *in, void **map,
                   size_t *mapsize, char *why, size_t wsize);
/* Every regular file below dir (symbolic links to files followed, to directories once on a path) appended to
 * (*v)[0..*n) (room *cap; realloc'd), at its root path, read and hashed: path and data malloc'd,
 * the caller's to free. A file that cannot be read is left out. 0, or -1 with why. */
int fb_jobroot_tree(const char *dir, struct fb_exec_input **v, size_t *n, size_t *cap, char *why, size_t wsize);
/* The lock under which one build's processes send the shared files, one at a time: a descriptor
 * to close when sent; -1 when there is no build (state NULL), no lock, or cancel was set while
 * waiting (then each sends what the CAS lacks, as alone). */
int fb_jobroot_lock(const char *state, const volatile sig_atomic_t *cancel);

/* ---- edge_action.c: a host or nvcc compile edge as a command (docs/remote-cache.md §9 "Host
 * and nvcc edges"): the compile's words with every path that is not the worker's toolchain
 * rewritten below the input root, its inputs (the source and the headers it reads), its
 * outputs. The run and its fallback are the extension builder's (extension/edge_remote.c). ---- */

/* Where the paths outside the toolchain lie in the input root: "/home/u/x/a.cu" is
 * "_fb/r/home/u/x/a.cu" (a directory of its own: a sandbox mounts its /usr, /bin, /lib over the
 * root's). */
#define FB_EDGE_ROOT "_fb/r"

struct fb_edge_action {
	char **argv;                  /* the compile, its paths rewritten; NULL-terminated */
	size_t argc;
	const char *outputs[3];       /* the object, the depfile, nvcc's keep dir's marker */
	int noutputs;
	struct fb_exec_input *in;     /* the files the compile reads (path and data malloc'd) */
	size_t nin;
	const char *env[6];           /* PATH; SOURCE_DATE_EPOCH and the locale's when set */
	int nenv;
	char envbuf[6][4200];
};

/* What the Action is made of. words: the compile alone (argv[0] the compiler: a name looked up
 * on the worker's PATH, or a path of the worker's toolchain); output, depfile: the files it
 * writes (absolute, or relative to the working directory); files: every file it reads, absolute
 * (a depfile's list); toolchain: directories the worker has too (the CUDA home), besides /usr's
 * system ones. */
struct fb_edge_action_in {
	const char *const *words;
	const char *output, *depfile;
	const char *const *files;
	size_t nfiles;
	const char *const *toolchain;
	size_t ntoolchain;
	const char *const *env;       /* "NAME=VALUE" to pass on (SOURCE_DATE_EPOCH, the locale) */
	size_t nenv;
};

/* The Action of a: 0; 1 when the compile cannot go as one (why says why: a relative path, a -g
 * object naming the worker's directory, a file that cannot be read); FB_ENOMEM. *out is freed
 * with fb_edge_action_free (NULL is fine). */
int fb_edge_action_new(const struct fb_edge_action_in *a, struct fb_edge_action **out, char *why, size_t wsize,
                       struct fb_error *err);
void fb_edge_action_free(struct fb_edge_action *x);
/* The shell words of s as fb_shell_quote writes them (plain words, '...' and \x) into *out: 0;
 * 1 when s holds other shell syntax; FB_ENOMEM. */
int fb_edge_unquote(const char *s, struct fb_strlist *out, struct fb_error *err);
/* The remote compile's messages with FB_EDGE_ROOT/ at the start of a path spelled / again, in
 * place: they then name the files as a local compile does. */
void fb_edge_log_back(char *log);
/* Whether path lies in the worker's toolchain (dirs, and /usr's system directories). */
int fb_edge_toolchain(const char *path, const char *const *dirs, size_t ndirs);

#endif
