/* input.h: a file of an Action's input root, the one description the protocol layer (action.c)
 * and its callers (rexec.h) share. Private to libfatbuild; other parts see it through rexec.h. */
#ifndef FB_REXEC_INPUT_H
#define FB_REXEC_INPUT_H

#include <stddef.h>

/* A file of the input root: its path relative to the root ("k/axpy.cu": no leading '/', no
 * empty, "." or ".." part; docs/remote-cache.md §9), its bytes (the caller's; read when the
 * Action is made, when hex is "", and when they are uploaded, only where the executor's CAS
 * lacks them) and whether it is executable. hex: its SHA-256 when the caller knows it ("" to
 * have it computed), trusted as given. Keep inputs below a directory of their own: a worker's
 * sandbox mounts its /bin, /lib, /usr over the root's (§9). */
struct fb_exec_input {
	const char *path;
	const unsigned char *data;
	size_t size;
	int executable;
	char hex[65];
};

#endif
