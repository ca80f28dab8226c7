/* python.c: the site-packages of an interpreter (docs/check-environment.md §1): one short
 * `PY -I -c` prints sysconfig's purelib and platlib, the two directories pip installs into,
 * with stdin from /dev/null; its output is read from a pipe, at most 8 KiB. PY is whatever the
 * user named, so the wait is bounded: it runs in a process group of its own, which is killed
 * when PY has not answered and exited within WAIT_S, or when PY exited but something it started
 * still holds the pipe open GRACE_MS later (the read would otherwise wait for that process). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "base/error.h"
#include "base/words.h"
#include "plumbing.h"

extern char **environ;

#define WAIT_S 60      /* sysconfig answers in well under a second, a cold start in a few */
#define GRACE_MS 2000  /* after PY exited, for its output to reach its end */

static const char query_py[] = "import sysconfig\n"
                               "p = sysconfig.get_paths()\n"
                               "print('fbsite ' + p['purelib'])\n"
                               "print('fbsite ' + p['platlib'])\n";

/* PY -I -c QUERY with stdout into a pipe (*fd); stderr stays the caller's. Isolated mode (-I,
 * Python 3.4 and later): no PYTHON* variables, no user site, no current directory on sys.path,
 * so that nothing in the caller's directory or environment runs instead of sysconfig. */
static int
spawn(const char *path, const char *python, pid_t *pid, int *fd, struct fb_error *err)
{
	int fds[2];
	if (pipe(fds) != 0)
		return fb_seterr(err, FB_EIO, "check --python: pipe: %s", strerror(errno));
	/* Found and executable before the spawn: where exec's failure only shows as the child's
	 * exit 127 (valgrind's spawn, a vfork-less libc) the message is the same. */
	char found[4096];
	const char *pos = path;
	if (strchr(python, '/') ? access(python, X_OK) != 0 : !fb_path_next(&pos, python, found, sizeof(found))) {
		int e = strchr(python, '/') ? errno : ENOENT;
		close(fds[0]);
		close(fds[1]);
		return fb_seterr(err, FB_ENOTOOL, "check --python: cannot run %s: %s", python, strerror(e));
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_t at; /* its own process group: what it starts is killed with it */
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	char *argv[] = {(char *)python, "-I", "-c", (char *)query_py, NULL};
	int src = posix_spawnp(pid, python, &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (src != 0) {
		close(fds[0]);
		return fb_seterr(err, FB_ENOTOOL, "check --python: cannot run %s: %s", python, strerror(src));
	}
	*fd = fds[0];
	return FB_OK;
}

/* Whether pid has exited, leaving it unreaped: while it is a zombie its pid, which is also its
 * group's id, cannot be taken by another process, so killing the group cannot hit a stranger. */
static bool
exited(pid_t pid)
{
	siginfo_t si = {0};
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* PY's output from fd into out (at most size - 1 bytes, NUL-terminated) until its end, or until
 * the bound (the top of this file); then its process group is killed (nothing it started
 * outlives the query) and PY reaped into *st. 0, or FB_ENOTOOL with why. fd is closed. */
static int
collect(pid_t pid, int fd, const char *python, char *out, size_t size, int *st, struct fb_error *err)
{
	long long deadline = fb_chk_now_ms() + WAIT_S * 1000LL, gone = 0;
	size_t len = 0;
	bool end = false;
	while (!end) {
		if (!gone && exited(pid))
			gone = fb_chk_now_ms();
		long long left = (gone && gone + GRACE_MS < deadline ? gone + GRACE_MS : deadline) - fb_chk_now_ms();
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, gone || left < 100 ? (int)left : 100); /* a slice: to see PY exit */
		if (pr <= 0)
			continue;
		ssize_t k = read(fd, out + len, size - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		end = k <= 0 || (len += (size_t)k) == size - 1;
	}
	close(fd);
	out[len] = 0;
	for (; end && !gone && fb_chk_now_ms() < deadline; usleep(10000)) /* its output ended: now its exit */
		gone = exited(pid) ? fb_chk_now_ms() : 0;
	kill(-pid, SIGKILL);
	while (waitpid(pid, st, 0) < 0 && errno == EINTR)
		;
	if (end && gone)
		return 0;
	if (!gone)
		return fb_seterr(err, FB_ENOTOOL, "check --python: %s did not answer within %d s: stopped, its process group killed",
		                 python, WAIT_S);
	return fb_seterr(err, FB_ENOTOOL,
	                 "check --python: %s exited, but a process it started still holds its output open: stopped, "
	                 "its process group killed",
	                 python);
}

int
fb_python_site_dirs(const char *path, const char *python, char *dirs[2], size_t *n, struct fb_error *err)
{
	*n = 0;
	dirs[0] = dirs[1] = NULL;
	pid_t pid = 0;
	int fd = -1;
	int rc = spawn(path, python, &pid, &fd, err);
	if (rc)
		return rc;
	char out[8192];
	int st = 0;
	if ((rc = collect(pid, fd, python, out, sizeof(out), &st, err)))
		return rc;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return fb_seterr(err, FB_ENOTOOL, "check --python: %s did not answer (exit %d): is it a Python 3 interpreter?",
		                 python, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line && *n < 2; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "fbsite /", 8) != 0)
			continue;
		if (*n == 1 && strcmp(dirs[0], line + 7) == 0)
			continue;
		if (!(dirs[(*n)++] = strdup(line + 7))) {
			free(dirs[0]);
			dirs[0] = dirs[1] = NULL;
			*n = 0;
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
	}
	if (*n == 0)
		return fb_seterr(err, FB_ENOTOOL, "check --python: %s printed no site-packages directory", python);
	return FB_OK;
}
