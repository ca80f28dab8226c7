/* proc.c: a child process with a pipe to its parent (the NVRTC workers of compile/, the
 * nvJitLink link of devlink/): the fork, the child's dying with its parent, and whole reads
 * and writes on the pipe. */
#define _GNU_SOURCE /* prctl */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "error.h"
#include "proc.h"

int
fb_fork_piped(pid_t *parent, pid_t *pid, int *fd, struct fb_error *err)
{
	int p[2];
	if (pipe(p) != 0)
		return fb_seterr(err, FB_BASE_EIO, "pipe failed: %s", strerror(errno));
	*parent = getpid();
	*pid = fork(); /* the child leaves with _exit: no stdio buffer is flushed twice */
	if (*pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return fb_seterr(err, FB_BASE_EIO, "fork failed: %s", strerror(e));
	}
	close(p[*pid == 0 ? 0 : 1]);
	*fd = p[*pid == 0 ? 1 : 0];
	return 0;
}

void
fb_child_init(pid_t parent)
{
	/* die with the process that started it, even when it is killed outright */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(4);
}

/* Moves all n bytes between p and fd (write when out), through EINTR; 0, or -1. */
static int
move_all(int fd, unsigned char *p, size_t n, bool out)
{
	while (n) {
		ssize_t k = out ? write(fd, p, n) : read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int
fb_read_all(int fd, void *p, size_t n)
{
	return move_all(fd, p, n, false);
}

int
fb_write_all(int fd, const void *p, size_t n)
{
	return move_all(fd, (unsigned char *)(uintptr_t)p, n, true); /* written from, never to */
}

int
fb_thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}
