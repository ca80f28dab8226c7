/* proc.h: a child process with a pipe to its parent, and whole reads and writes on a descriptor
 * (proc.c). Private; symbols are hidden. */
#ifndef FB_PROC_H
#define FB_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* pipe() then fork(). In the child *pid is 0 and *fd the write end, in the parent *pid is the
 * child and *fd the read end; each has closed the other end. *parent: the forking process, for
 * the child's fb_child_init. FB_EIO (err filled) when no pipe or child was made. */
int fb_fork_piped(pid_t *parent, pid_t *pid, int *fd, struct fb_error *err);
/* In a forked child: SIGKILL when the parent dies; exits at once if it already has. */
void fb_child_init(pid_t parent);
/* Writes all of p[0..n) to fd, through EINTR; 0, or -1. */
int fb_write_all(int fd, const void *p, size_t n);
/* Reads exactly n bytes from fd, retrying on EINTR: 0, or -1 on an error or an early end. */
int fb_read_all(int fd, void *p, size_t n);
/* The threads of this process (/proc/self/task), or -1 when it cannot be read. */
int fb_thread_count(void);

#endif
