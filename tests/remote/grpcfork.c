/* grpcfork.c: an LD_PRELOAD shim for remote_exec_stall.sh that writes, to $GRPCFORK_FILE, a
 * line for each grpc_init ("init PID THREADS") and each fork ("fork PARENT CHILD THREADS", from
 * the parent once fork returned), THREADS being the calling process's thread count. The test
 * then shows that no process which started gRPC was itself forked by fatbuild (gRPC's state
 * does not survive a fork: docs/remote-cache.md §9), and how many threads each fork left behind. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void
note(const char *line)
{
	const char *path = getenv("GRPCFORK_FILE");
	if (!path || !*path)
		return;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ssize_t k = write(fd, line, strlen(line));
	(void)k;
	close(fd);
}

void grpc_init(void);
pid_t fork(void);

void
grpc_init(void)
{
	void (*real)(void);
	void *p = dlsym(RTLD_NEXT, "grpc_init");
	memcpy(&real, &p, sizeof(p));
	char line[64];
	snprintf(line, sizeof(line), "init %d %d\n", (int)getpid(), threads());
	note(line);
	real();
}

pid_t
fork(void)
{
	pid_t (*real)(void);
	void *p = dlsym(RTLD_NEXT, "fork");
	memcpy(&real, &p, sizeof(p));
	int n = threads();
	pid_t parent = getpid(), pid = real();
	if (pid > 0) {
		char line[80];
		snprintf(line, sizeof(line), "fork %d %d %d\n", (int)parent, (int)pid, n);
		note(line);
	}
	return pid;
}
