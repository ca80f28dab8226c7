/* probe_spawn.c: running the probe child: finding the archprobe helper, spawning it (or forking
 * a single-threaded caller), reading its reply within the timeout and reaping it; and the
 * child's side, ap_probe_child_main. The child is the archprobe binary in its hidden helper mode
 * (posix_spawn, safe from threaded hosts); it replies on fd 3 (probe_proto.c). Without a helper,
 * a single-threaded caller forks instead; a threaded one gets an error. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "base/config.h"
#include "base/error.h"
#include "base/proc.h"

extern char **environ;

#define CHILD_FLAG "--probe-child=1"
#define CHILD_PREFIX "--probe-child"
#define RESULT_FD 3

double
ap_probe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
ap_probe_child_main(int argc, char **argv)
{
	struct ap_probe_detail detail = {AP_DETAIL_NONE, ""};
	struct ap_probe_result *r;
	const char *libcuda = NULL;

	if (argc < 2 || strncmp(argv[1], CHILD_PREFIX, strlen(CHILD_PREFIX)) != 0)
		return -1;
	if (strcmp(argv[1], CHILD_FLAG) != 0 || fcntl(RESULT_FD, F_GETFD) < 0)
		return AP_EXIT_USAGE; /* another protocol version, or not started by ap_probe */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--libcuda") && i + 1 < argc)
			libcuda = argv[++i];
		else
			return AP_EXIT_USAGE;
	}
	/* Die with the parent, even a SIGKILLed one. If it is gone already, the pipe's read end
	 * is closed and the write end polls POLLERR. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd pf = {.fd = RESULT_FD, .events = 0};
	if (poll(&pf, 1, 0) > 0 && (pf.revents & POLLERR))
		return AP_EXIT_FAIL;
	if (!(r = calloc(1, sizeof(*r))))
		return AP_EXIT_FAIL;
	ap_cuda_query(libcuda, r, &detail, RESULT_FD);
	ap_probe_serialize(RESULT_FD, r, &detail);
	free(r);
	return AP_EXIT_OK;
}

/* ---- finding the helper ------------------------------------------------------------------ */

static bool
executable(const char *path)
{
	return access(path, X_OK) == 0;
}

static bool
beside(const char *file, const char *rel, char *buf, size_t size)
{
	const char *slash = strrchr(file, '/');
	int n;

	if (!slash)
		return false;
	n = snprintf(buf, size, "%.*s/%s", (int)(slash - file), file, rel);
	return n > 0 && (size_t)n < size && executable(buf);
}

/* The archprobe binary to run as the child: next to this executable (archprobe itself, or
 * fatbuild in the same bin/), next to libarchprobe (../bin), else on PATH. */
static bool
find_helper(const char *path, char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	Dl_info info;
	void *self;
	int (*fn)(int, char **) = ap_probe_child_main; /* any function of libarchprobe */

	memcpy(&self, &fn, sizeof(self));
	if (n > 0) {
		exe[n] = 0;
		if (beside(exe, "archprobe", buf, size))
			return true;
	}
	if (dladdr(self, &info) && info.dli_fname && strchr(info.dli_fname, '/') &&
	    (beside(info.dli_fname, "../bin/archprobe", buf, size) || beside(info.dli_fname, "archprobe", buf, size)))
		return true;
	while (path && *path) {
		size_t len = strcspn(path, ":");
		int m = snprintf(buf, size, "%.*s/archprobe", (int)len, path);
		if (len > 0 && m > 0 && (size_t)m < size && executable(buf))
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

/* ---- running the child ------------------------------------------------------------------- */

static int
spawn_helper(const char *helper, const char *libcuda, int wfd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	char *argv[5];
	int rc, argc = 0;

	argv[argc++] = (char *)helper;
	argv[argc++] = (char *)CHILD_FLAG;
	if (libcuda) {
		argv[argc++] = (char *)"--libcuda";
		argv[argc++] = (char *)libcuda;
	}
	argv[argc] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, wfd, RESULT_FD);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGCHLD);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(pid, helper, &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

static const char *
signal_name(int sig, char *buf, size_t size)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGABRT: return "SIGABRT";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	case SIGTRAP: return "SIGTRAP";
	default: snprintf(buf, size, "signal %d", sig); return buf;
	}
}

/* Reads the child's reply until EOF or the deadline: a malloc'd NUL-terminated buffer, or NULL
 * when out of memory. */
static char *
read_reply(int rfd, double deadline)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	bool eof = false;

	while (buf && !eof) {
		double left = deadline - ap_probe_now();
		struct pollfd p = {.fd = rfd, .events = POLLIN};
		int pr;
		if (left <= 0)
			break;
		pr = poll(&p, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		if (len + 1024 >= cap && cap < AP_PROBE_MAX_REPLY) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(rfd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eof = true;
		else
			len += (size_t)n;
	}
	if (buf)
		buf[len] = 0;
	return buf;
}

/* Reaps the child, killing it at the deadline (*killed); returns whether it was reaped. */
static bool
reap(pid_t pid, double deadline, int *wstatus, bool *killed)
{
	/* The child closes the pipe when it exits; give it until the deadline to be reaped. */
	for (;;) {
		pid_t w = waitpid(pid, wstatus, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			return w == pid;
		if (ap_probe_now() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
				;
			*killed = true;
			return true;
		}
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
}

/* Reads the child's reply until EOF or the deadline, reaps it (killing it at the deadline) and
 * turns the outcome into r and d. */
static void
collect(pid_t pid, int rfd, double timeout, const char *what, struct ap_probe_result *r, struct ap_probe_detail *d)
{
	double deadline = ap_probe_now() + timeout;
	char *buf = read_reply(rfd, deadline), sig[32];
	bool killed = false, complete, reaped;
	int wstatus = 0;

	reaped = reap(pid, deadline, &wstatus, &killed);
	complete = buf && ap_probe_parse_reply(buf, r, d);
	free(buf);
	if (complete) {
		if (killed)
			ap_probe_trace(r, "%s: killed after its reply (it did not exit within the timeout)", what);
		return;
	}
	r->ndevices = 0;
	r->cuda_error = 0;
	r->cuda_error_name[0] = 0;
	if (killed) {
		r->status = AP_PROBE_TIMEOUT;
		ap_probe_detail_set(d, AP_DETAIL_CHILD, "%g", timeout);
	} else if (reaped && WIFSIGNALED(wstatus)) {
		r->status = AP_PROBE_CRASHED;
		ap_probe_detail_set(d, AP_DETAIL_CHILD, "died by %s", signal_name(WTERMSIG(wstatus), sig, sizeof(sig)));
	} else if (reaped && WIFEXITED(wstatus)) {
		r->status = AP_PROBE_CRASHED;
		ap_probe_detail_set(d, AP_DETAIL_CHILD, "%s exited with status %d without a result%s", what,
		                    WEXITSTATUS(wstatus), WEXITSTATUS(wstatus) == AP_EXIT_USAGE
		                    ? " (not an archprobe of this version?)"
		                    : WEXITSTATUS(wstatus) == 127 ? " (it could not be executed)" : "");
	} else {
		r->status = AP_PROBE_CRASHED;
		ap_probe_detail_set(d, AP_DETAIL_CHILD, "%s ended without a result", what);
	}
}

/* The helper to run into helper: opts->helper, else a found archprobe; "" for fork(). */
static int
choose_helper(const struct ap_probe_opts *opts, const char *path, char *helper, size_t size, struct ap_probe_result *r,
              struct ap_error *err)
{
	if (opts && opts->helper && *opts->helper) {
		snprintf(helper, size, "%s", opts->helper);
		if (access(helper, X_OK) != 0) {
			ap_seterr(err, AP_EIO, "cannot run the probe helper %s: %s", helper, strerror(errno));
			return AP_EIO;
		}
	} else if (opts && opts->helper) {
		helper[0] = 0; /* "": fork */
	} else if (!find_helper(path, helper, size)) {
		helper[0] = 0;
		ap_probe_trace(r, "no archprobe helper next to this program, next to libarchprobe or on PATH");
	}
	return AP_OK;
}

/* The reply pipe, both ends close-on-exec, the write end never RESULT_FD itself. */
static int
open_pipe(int fds[2], struct ap_error *err)
{
	if (pipe2(fds, O_CLOEXEC) < 0) {
		ap_seterr(err, AP_EIO, "cannot create a pipe for the probe child: %s", strerror(errno));
		return AP_EIO;
	}
	if (fds[1] == RESULT_FD) { /* dup2 onto itself would keep O_CLOEXEC */
		int w = fcntl(fds[1], F_DUPFD_CLOEXEC, RESULT_FD + 1);
		close(fds[1]);
		fds[1] = w;
		if (w < 0) {
			close(fds[0]);
			ap_seterr(err, AP_EIO, "cannot set up the probe child's pipe: %s", strerror(errno));
			return AP_EIO;
		}
	}
	return AP_OK;
}

/* Forks a child of this (single-threaded) process that queries the driver and writes its reply
 * to fds[1]; what: its name for messages. Closes both ends on failure. */
static int
fork_child(const char *libcuda, const int fds[2], pid_t *pid, struct ap_probe_result *r, char *what, size_t size,
           struct ap_error *err)
{
	int threads = fb_thread_count();
	if (threads != 1) {
		close(fds[0]);
		close(fds[1]);
		ap_seterr(err, AP_EIO,
		       "no archprobe helper found (next to this program, next to libarchprobe, on PATH) and "
		       "this process has %d threads, so it cannot fork safely: install archprobe on PATH, "
		       "set ap_probe_opts.helper, or use no_subprocess", threads);
		return AP_EIO;
	}
	ap_probe_trace(r, "probe child: fork() of this single-threaded process");
	snprintf(what, size, "forked probe child");
	pid_t parent = getpid();
	*pid = fork();
	if (*pid < 0) {
		close(fds[0]);
		close(fds[1]);
		ap_seterr(err, AP_EIO, "fork failed: %s", strerror(errno));
		return AP_EIO;
	}
	if (*pid == 0) {
		/* dies with the parent; a stopping signal ends it as by default */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		struct ap_probe_result *c = calloc(1, sizeof(*c));
		struct ap_probe_detail cd = {AP_DETAIL_NONE, ""};
		close(fds[0]);
		if (c) {
			ap_cuda_query(libcuda, c, &cd, fds[1]);
			ap_probe_serialize(fds[1], c, &cd);
		}
		_exit(c ? 0 : 1);
	}
	return AP_OK;
}

int
ap_probe_run_child(const struct ap_probe_opts *opts, const struct fb_config *cfg, const char *libcuda, double timeout,
                   struct ap_probe_result *r, struct ap_probe_detail *d, struct ap_error *err)
{
	char helper[PATH_MAX], what[PATH_MAX + 32];
	int fds[2], rc;
	pid_t pid;

	if ((rc = choose_helper(opts, cfg->path, helper, sizeof(helper), r, err)) || (rc = open_pipe(fds, err)))
		return rc;
	if (*helper) {
		ap_probe_trace(r, "probe child: %s %s%s%s", helper, CHILD_FLAG, libcuda ? " --libcuda " : "",
		               libcuda ? libcuda : "");
		snprintf(what, sizeof(what), "probe helper %s", helper);
		if ((rc = spawn_helper(helper, libcuda, fds[1], &pid)) != 0) {
			close(fds[0]);
			close(fds[1]);
			ap_seterr(err, AP_EIO, "cannot run the probe helper %s: %s", helper, strerror(rc));
			return AP_EIO;
		}
	} else if ((rc = fork_child(libcuda, fds, &pid, r, what, sizeof(what), err))) {
		return rc;
	}
	close(fds[1]);
	collect(pid, fds[0], timeout, what, r, d);
	close(fds[0]);
	return 0;
}
