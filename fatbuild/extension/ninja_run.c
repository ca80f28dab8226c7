/* ninja_run.c: runs ninja on a generated build dir: one build per dir at a time (the build lock, and
 * the run lock ninja holds), stop requests forwarded, its output shown through output.c, the
 * first failure's output in the error, and beside it the background maker of a torch PCH the
 * build wants (hostpch.c). */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fatbuild.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "builddir.h"
#include "gen.h"
#include "ninja_run.h"
#include "output.h"

static bool
log_stamp(const char *dir, struct stat *st)
{
	char p[PATHMAX + 16];
	bfmt(p, sizeof(p), "%s/.ninja_log", dir);
	return stat(p, st) == 0;
}

static bool
cancelled(const struct fb_build_opts *o)
{
	return o->cancel && *o->cancel;
}

/* Takes an exclusive lock on fd, waiting while another process holds it: flock(2) for the
 * build lock (held by the fatbuild process of a build), a POSIX record lock for the run lock
 * (held by ninja: record locks belong to one process, survive exec and are not inherited, so
 * the edges ninja starts, or a compiler server one of them leaves, never hold it). A record
 * lock is only probed: released at once, ninja takes it for itself. Polls, so that a stop
 * request is seen whether or not a signal interrupts the wait. */
static int
lock_wait(const struct gen *g, int fd, const char *path, bool record, struct fb_error *err)
{
	for (;;) {
		int r;
		if (record) {
			struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
			r = fcntl(fd, F_SETLK, &fl);
			if (r == 0) {
				fl.l_type = F_UNLCK;
				fcntl(fd, F_SETLK, &fl);
			}
		} else {
			r = flock(fd, LOCK_EX | LOCK_NB);
		}
		if (r == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EAGAIN && errno != EACCES && errno != EINTR)
			return fb_seterr(err, FB_EIO, "cannot lock %s: %s", path, strerror(errno));
		if (cancelled(g->o))
			return fb_seterr(err, FB_ECANCELED, "build stopped while waiting for %s", path);
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* "NAME=VALUE" (value NULL: "NAME", the variable left out) into set. */
static void
env_put(struct fb_strlist *set, const char *name, const char *value)
{
	struct fb_buf b = {0};
	fb_buf_printf(&b, value ? "%s=%s" : "%s", name, value ? value : "");
	if (b.oom || !b.s)
		set->oom = true;
	else
		fb_strlist_add(set, b.s);
	free(b.s);
}

/* What ninja and every command it runs get besides this process's environment, into set: the
 * status output.c reads; TMPDIR=BUILD_DIR/tmp, so that the compilers' temporaries stay in the
 * private build dir; the build's state file of a failed remote (docs/remote-cache.md §5); the
 * caller's remote cache (o->remote.cache not NULL; else the environment's is left as it is);
 * the build's own compile server (sock; NULL: none, not even one the environment names) and,
 * with -v, that the NVRTC and host edges say where each job ran; MAX_JOBS capped as fb_build
 * caps it, so that no edge says it again. */
static void
ninja_env(const struct gen *g, const char *sock, struct fb_strlist *set)
{
	const struct fb_remote_opts *r = &g->o->remote;
	char path[PATHMAX + 32], ms[48];
	env_put(set, "NINJA_STATUS", "[%f/%t] ");
	bfmt(path, sizeof(path), "%s/tmp", g->dir);
	env_put(set, "TMPDIR", path);
	bfmt(path, sizeof(path), "%s/" FB_REMOTE_STATE, g->dir);
	env_put(set, FB_REMOTE_STATE_ENV, path);
	if (r->cache) {
		bfmt(ms, sizeof(ms), "%ld.%03ld", r->timeout_ms / 1000, r->timeout_ms % 1000);
		env_put(set, "FATBUILD_REMOTE_CACHE", r->cache);
		env_put(set, "FATBUILD_REMOTE_CACHE_MODE", r->read_only ? "read" : "readwrite");
		env_put(set, "FATBUILD_REMOTE_CACHE_HEADER", r->header);
		env_put(set, "FATBUILD_REMOTE_CACHE_TIMEOUT", r->timeout_ms > 0 ? ms : NULL);
	}
	env_put(set, "FATBUILD_COMPILE_SOCKET", sock);
	env_put(set, "FATBUILD_COMPILE_VERBOSE", g->o->verbose && (sock || g->rexec) ? "1" : NULL);
	if (g->max_jobs_capped) {
		bfmt(ms, sizeof(ms), "%d", FB_JOBS_MAX);
		env_put(set, "MAX_JOBS", ms);
	}
}

/* fork + exec rather than posix_spawn: the child sets PR_SET_PDEATHSIG (SIGTERM: ninja then
 * stops its edges as on a Ctrl-C) and takes the run lock before it becomes ninja, with envp
 * (ninja_env). */
static int
spawn_ninja(const struct gen *g, const char **argv, char **envp, int lock, const char *runpath, int outfd, pid_t *pid)
{
	pid_t parent = getpid();
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return errno;
	*pid = fork();
	if (*pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (*pid == 0) {
		int e = 0;
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(128 + SIGTERM); /* the caller is already gone */
		/* The caller's handlers do not apply to ninja (exec resets them); its blocked mask would. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Closing any descriptor of a file drops this process's record locks on it: close the
		 * build lock's first (exec would), then take the run lock on a descriptor exec keeps. */
		close(lock);
		int run = open(runpath, O_RDWR | O_NOFOLLOW);
		if (run >= 0) {
			struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
			fcntl(run, F_SETLK, &fl);
		}
		/* stdout: output.c; stderr (ninja's own errors): ours, or the log's */
		if (dup2(outfd, 1) < 0)
			e = errno;
		if (!e && g->o->log && g->o->log[0]) {
			int fd = open(g->o->log, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 || dup2(fd, 2) < 0)
				e = errno;
		}
		if (!e) {
			execve(g->t.ninja, (char *const *)argv, envp);
			e = errno;
		}
		ssize_t w = write(p[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(p[1]);
	int e = 0;
	ssize_t r;
	while ((r = read(p[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (r == (ssize_t)sizeof(e) && e) {
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		return e;
	}
	return 0;
}

/* The link writes BUILD_DIR/out/NAME.tmp.fb and renames it; a link stopped in between leaves it. */
static void
remove_link_temp(const struct gen *g)
{
	char staged[PATHMAX + 16], tmp[PATHMAX + 32];
	fb_gen_staged_path(g, staged, sizeof(staged));
	bfmt(tmp, sizeof(tmp), "%s.tmp.fb", staged);
	unlink(tmp);
}

/* One ninja per build dir at a time: a second build of the same dir waits here (two ninjas
 * would write the same objects, .ninja_log and OUT.tmp at once). The kernel drops the lock when
 * the holder dies; ninja's own lock (the run lock) covers the time it outlives us. Fills *lock
 * (the build lock's descriptor, open on success) and runpath. */
static int
take_locks(const struct gen *g, int *lock, char *runpath, size_t size, struct fb_error *err)
{
	char lockpath[PATHMAX + 16];
	bfmt(lockpath, sizeof(lockpath), "%s/.fatbuild.lock", g->dir);
	bfmt(runpath, size, "%s/.fatbuild.running", g->dir);
	*lock = open(lockpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (*lock < 0)
		return fb_seterr(err, FB_EIO, "cannot create the build lock %s: %s", lockpath, strerror(errno));
	int rc = lock_wait(g, *lock, lockpath, false, err);
	int run = -1;
	if (!rc && (run = open(runpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		rc = fb_seterr(err, FB_EIO, "cannot create %s: %s", runpath, strerror(errno));
	if (!rc)
		rc = lock_wait(g, run, runpath, true, err); /* an earlier build's ninja still stopping */
	if (run >= 0)
		close(run);
	if (!rc && cancelled(g->o))
		rc = fb_seterr(err, FB_ECANCELED, "build stopped before ninja started");
	if (rc)
		close(*lock);
	return rc;
}

/* Waits for ninja, forwarding a stop request once; fills *status. */
static int
wait_ninja(const struct gen *g, pid_t pid, int *status, struct fb_error *err)
{
	bool forwarded = false;
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR)
			return fb_seterr(err, FB_EIO, "waitpid(ninja): %s", strerror(errno));
		if (cancelled(g->o) && !forwarded) {
			/* ninja stops its edges, waits for them and deletes what they had begun */
			kill(pid, *g->o->cancel > 0 && *g->o->cancel < 65 ? *g->o->cancel : SIGTERM);
			forwarded = true;
		}
	}
	return 0;
}

/* The output of the first failed command in the log, as far as tail (size) holds: the lines
 * between "FAILED: outputs" and the command output.c puts after them. */
static void
log_tail(const char *log, char *tail, size_t size)
{
	tail[0] = 0;
	int fd;
	if (fb_open_regular(log, 0, &fd, NULL, NULL) != 0)
		return;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	char line[1024];
	size_t n = 0;
	int on = 0; /* 1: the failed command's output */
	while (fgets(line, sizeof(line), f)) {
		if (!on && strncmp(line, "FAILED: ", 8) == 0)
			on = 1;
		else if (on && (strncmp(line, "command: ", 9) == 0 || strncmp(line, "ninja: build stopped", 20) == 0))
			break;
		else if (on) {
			line[strcspn(line, "\n")] = 0;
			int w = snprintf(tail + n, size - n, "%s%s", n ? " | " : "", line);
			if (w < 0 || (size_t)w >= size - n)
				break;
			n += (size_t)w;
		}
	}
	fclose(f);
}

/* What ninja's exit status says, as an error. */
static int
ninja_failed(const struct gen *g, int status, struct fb_error *err)
{
	if (WIFSIGNALED(status))
		return fb_seterr(err, FB_ECOMPILE, "ninja was killed by signal %d (build dir %s)", WTERMSIG(status), g->dir);
	if (!(g->o->log && g->o->log[0]))
		return fb_seterr(err, FB_ECOMPILE,
		                 "build failed (ninja exited with status %d; the messages above say why; build dir %s)",
		                 WEXITSTATUS(status), g->dir);
	char tail[640];
	log_tail(g->o->log, tail, sizeof(tail));
	return fb_seterr(err, FB_ECOMPILE, "build failed (log %s): %s", g->o->log, tail[0] ? tail : "see the log");
}

/* The background maker of each PCH the build wants and has not (pch_bg: the first build
 * that wants it, whose compiles go without): its pch.sh bg, run as a program with an argv (its
 * #! line; no shell command line), in a process group of its own (to stop it whole), at the
 * lowest priority, so that it takes only the cores the build leaves idle (the host compiles'
 * end, a long nvcc edge's last target) and the next build reads the PCH. Where it cannot run
 * (a build dir on a noexec mount), the next compile that misses makes the PCH.
 * Not a session of its own: the scheduler's autogroups would then share the CPU between it and
 * the whole build, whatever its priority (a muladd build took 11.5 s instead of 6.3).
 * Only where a CPU stays idle the whole build (more CPUs than the build's jobs or sources): a
 * maker beside a compile on the other CPU of a busy machine, even at the lowest priority, made
 * that compile 3 to 8 % slower (shared caches and memory; on 2 CPUs, torch_cub's ops.cpp 19.1 s
 * against 18.1 s, muladd.cpp 5.8 against 5.5; docs/pytorch.md), and the next build that wants
 * the PCH makes it. ninja's -j and the CPUs are g's (read once at the build's start).
 * Returns their process ids (0 for one that did not start), NULL for none. */
static pid_t *
start_bg(const struct gen *g, const struct fb_strlist *pch_bg)
{
	if (!pch_bg->n)
		return NULL;
	int busy = g->jobs < (int)g->o->nsources ? g->jobs : (int)g->o->nsources;
	if (g->cpus <= busy)
		return NULL;
	pid_t *pids = calloc(pch_bg->n, sizeof(*pids));
	for (size_t i = 0; pids && i < pch_bg->n; i++) {
		pid_t p = fork();
		if (p == 0) {
			setpgid(0, 0);
			setpriority(PRIO_PROCESS, 0, 19);
			int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				dup2(null, 2);
			}
			char *const argv[] = {pch_bg->v[i], "bg", NULL};
			execv(pch_bg->v[i], argv);
			_exit(127);
		}
		pids[i] = p > 0 ? p : 0;
	}
	return pids;
}

/* Stops the background makers still at work once ninja is done (their process groups, their
 * compilers with them): the build does not wait for their PCH; pch.sh and the compiler driver
 * remove a PCH half made, and the next build that wants it makes it. The build returns once
 * each group is gone, not only its pch.sh: a compiler stopped at the lowest priority on a busy
 * machine can outlive the script by a moment, its temporaries with it (up to 5 s). */
static void
stop_bg(const struct fb_strlist *pch_bg, pid_t *pids)
{
	for (size_t i = 0; pids && i < pch_bg->n; i++) {
		if (pids[i] <= 0)
			continue;
		kill(-pids[i], SIGTERM);
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
		for (int t = 0; t < 500 && kill(-pids[i], 0) == 0; t++)
			nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	free(pids);
}

/* Each build asks the remote cache and the executor again: a failure is remembered for one
 * build only. Fills state (size bytes) with the remote cache's state file, and takes the tally
 * an earlier build left there (one that was stopped) into tally. */
static void
reset_remote(const struct gen *g, char *state, size_t size, struct fb_exec_tally tally[2])
{
	bfmt(state, size, "%s/" FB_REMOTE_STATE, g->dir);
	unlink(state);
	bfmt(state, size, "%s/" FB_REMOTE_STATE "-exec", g->dir); /* the executor's (§9) */
	unlink(state);
	bfmt(state, size, "%s/" FB_REMOTE_STATE "-tools-exec", g->dir); /* a worker without the compiler (§9) */
	unlink(state);
	bfmt(state, size, "%s/" FB_REMOTE_STATE, g->dir);
	fb_exec_tally_take(state, tally);
}

/* Under the lock: the build's compile server (o->on_build_dir, when a kernel goes to NVRTC),
 * then the environment ninja runs with (ninja_env; set holds its entries until ninja started).
 * NULL when out of memory. */
static char **
start_env(const struct gen *g, struct fb_strlist *set)
{
	bool nvrtc = false;
	for (size_t i = 0; i < g->o->nsources; i++)
		nvrtc |= g->langs[i] == L_KERNEL;
	const char *sock = nvrtc && g->o->on_build_dir ? g->o->on_build_dir(g->o->on_build_dir_ctx, g->dir) : NULL;
	ninja_env(g, sock, set);
	return set->oom ? NULL : fb_config_child_env((const char *const *)set->v, set->n);
}

int
fb_build_run_ninja(const struct gen *g, const struct fb_strlist *pch_bg, const struct fb_strlist *shown,
                   struct ninja_result *res, struct fb_error *err)
{
	char jobs[32];
	const char *argv[8];
	int a = 0;
	argv[a++] = g->t.ninja;
	argv[a++] = "-C";
	argv[a++] = g->dir;
	/* Always -j: ninja's own default reads neither MAX_JOBS nor the cgroup's CPU quota. While
	 * remote, the remote edges in flight; the local pool keeps the rest to the local jobs. */
	bfmt(jobs, sizeof(jobs), "-j%d", g->ninja_jobs);
	argv[a++] = jobs;
	if (g->o->verbose)
		argv[a++] = "-v";
	argv[a] = NULL;
	int lock;
	char runpath[PATHMAX + 24], state[PATHMAX + 32];
	int rc = take_locks(g, &lock, runpath, sizeof(runpath), err);
	if (rc)
		return rc;
	reset_remote(g, state, sizeof(state), res->tally);
	struct fb_strlist set = {0};
	char **envp = start_env(g, &set);
	if (!envp) {
		fb_strlist_free(&set);
		close(lock);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	struct stat before, after;
	bool had = log_stamp(g->dir, &before);
	pid_t pid = -1;
	int out[2] = {-1, -1}, to = 1;
	if (g->o->log && g->o->log[0]) {
		to = open(g->o->log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (to < 0)
			rc = errno;
	}
	char failed[PATHMAX + 32];
	fb_gen_failed_path(g, failed, sizeof(failed));
	unlink(failed);
	if (!rc && pipe2(out, O_CLOEXEC) != 0)
		rc = errno;
	pid_t *bg = rc ? NULL : start_bg(g, pch_bg);
	if (!rc)
		rc = spawn_ninja(g, argv, envp, lock, runpath, out[1], &pid);
	free(envp);
	fb_strlist_free(&set);
	if (out[1] >= 0)
		close(out[1]);
	if (rc != 0) {
		if (out[0] >= 0)
			close(out[0]);
		stop_bg(pch_bg, bg);
		if (to > 1)
			close(to);
		close(lock);
		return fb_seterr(err, FB_ENOTOOL, "cannot run %s: %s", g->t.ninja, strerror(rc));
	}
	fb_build_show_output(shown, failed, g->o->cancel, out[0], to, pid);
	if (to > 1)
		close(to);
	int status;
	rc = wait_ninja(g, pid, &status, err);
	stop_bg(pch_bg, bg);
	res->tallied = g->rexec && fb_exec_tally_take(state, res->tally);
	if (rc) {
		close(lock);
		return rc;
	}
	if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0 || cancelled(g->o))
		remove_link_temp(g); /* a link stopped between writing and renaming */
	close(lock);
	if (cancelled(g->o))
		return fb_seterr(err, FB_ECANCELED, "build stopped (build dir %s)", g->dir);
	if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
		return ninja_failed(g, status, err);
	bool has = log_stamp(g->dir, &after);
	res->no_work = had && has && before.st_size == after.st_size && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
	           before.st_mtim.tv_nsec == after.st_mtim.tv_nsec;
	return 0;
}
