/* python.c: the site-packages of an interpreter (docs/check-environment.md §1): one short
 * `PY -I -c` prints sysconfig's purelib and platlib, the two directories pip installs into,
 * with stdin from /dev/null; its output is read from a pipe, at most 8 KiB. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "base/error.h"
#include "base/words.h"
#include "plumbing.h"

extern char **environ;

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
	char *argv[] = {(char *)python, "-I", "-c", (char *)query_py, NULL};
	int src = posix_spawnp(pid, python, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (src != 0) {
		close(fds[0]);
		return fb_seterr(err, FB_ENOTOOL, "check --python: cannot run %s: %s", python, strerror(src));
	}
	*fd = fds[0];
	return FB_OK;
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
	size_t len = 0;
	for (;;) {
		ssize_t k = read(fd, out + len, sizeof(out) - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || (len += (size_t)k) == sizeof(out) - 1)
			break;
	}
	close(fd);
	out[len] = 0;
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
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
