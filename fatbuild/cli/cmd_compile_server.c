/* cmd_compile_server.c: `fatbuild __compile-server BUILD_DIR JOBS READY_FD`, the build's compile
 * server (docs/compile-server.md §1). A hidden command: fb_compile_server_start execs it for
 * `fatbuild build`, and nobody types it, so the command table keeps it out of --help and with
 * that out of the man pages and the completion, which are read from --help. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cli.h"
#include "plumbing.h"

/* A whole decimal int (READY_FD may be -1: no pipe to tell). */
static bool
int_word(const char *s, int *v)
{
	char *end;
	errno = 0;
	long n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < INT_MIN || n > INT_MAX)
		return false;
	*v = (int)n;
	return true;
}

int
cmd_compile_server(int argc, char **argv)
{
	int jobs, ready_fd;
	if (argc != 4 || !int_word(argv[2], &jobs) || !int_word(argv[3], &ready_fd)) {
		warn("%s: usage: fatbuild %s BUILD_DIR JOBS READY_FD (run by 'fatbuild build' itself; "
		     "docs/compile-server.md)",
		     argv[0], argv[0]);
		return AP_EXIT_USAGE;
	}
	struct fb_error err = {0};
	return fb_compile_server_main(argv[1], jobs, ready_fd, &err) ? fail_fb(&err) : AP_EXIT_OK;
}
