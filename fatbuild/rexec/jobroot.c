/* jobroot.c: the input root of a remote NVRTC job (docs/remote-cache.md §9 "Remote NVRTC jobs"),
 * as far as it is no compile's own business: where a file of the client lies in the root, the
 * worker's log spelled back, the shared files (the worker, NVRTC, the toolkit's headers) mapped
 * or read and hashed, and the lock under which the processes of one build send them. The root:
 *
 *   _fb/nvrtc-worker                 fatbuild-nvrtc-worker (compile/nvrtc_worker.c), libc only
 *   _fb/t/lib64/libnvrtc.so.N        the NVRTC the client loaded, and its builtins library
 *   _fb/r/ABSOLUTE/PATH              the source and headers the client names by absolute path
 *   _fb/c/CWD/RELATIVE/PATH          those it names relative to its working directory CWD
 *
 * (under _fb/, since a sandbox mounts its own /usr, /bin and /lib over the root's). Which files
 * a job needs, and what its answer means, is the compile's (compile/offload.c). */
#define _GNU_SOURCE /* strtok_r */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rexec.h"
#include "base/safefs.h"
#include "cache/cache.h"

int
fb_jobroot_path(const char *cwd, const char *p, char *out, size_t size)
{
	char full[2 * PATH_MAX + 2];
	int abs = p[0] == '/';
	snprintf(full, sizeof(full), "%s/%s", abs ? "" : cwd, p);
	size_t n = (size_t)snprintf(out, size, "_fb/%c", abs ? 'r' : 'c'), base = n;
	char *save = NULL; /* the round's threads call this at once: strtok_r */
	for (char *part = strtok_r(full, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0) {
			while (n > base && out[n - 1] != '/')
				n--;
			if (n > base)
				n--;
			out[n] = 0;
			continue;
		}
		if (n + strlen(part) + 2 > size)
			return -1;
		n += (size_t)snprintf(out + n, size - n, "/%s", part);
	}
	return 0;
}

/* Replaces every "from" in *s by "to" (to no longer than from), in place. */
static void
replace_all(char *s, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to);
	char *w = s;
	for (const char *p = s; *p;) {
		if (strncmp(p, from, nf) == 0) {
			memmove(w, to, nt);
			w += nt;
			p += nf;
		} else
			*w++ = *p++;
	}
	*w = 0;
}

void
fb_jobroot_log_unmap(const char *cwd, char *log)
{
	char c[PATH_MAX + 16];
	snprintf(c, sizeof(c), "_fb/c%s/", strcmp(cwd, "/") ? cwd : "");
	replace_all(log, c, "");
	replace_all(log, "_fb/r/", "/");
}

int
fb_jobroot_map(const char *path, const char *name, int exec, const char *hex, struct fb_exec_input *in, void **map,
               size_t *mapsize, char *why, size_t wsize)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		snprintf(why, wsize, "cannot read %.400s", path);
		return -1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(why, wsize, "cannot map %.400s", path);
		return -1;
	}
	*map = m;
	*mapsize = (size_t)st.st_size;
	*in = (struct fb_exec_input){name, m, (size_t)st.st_size, exec, ""};
	if (hex && strlen(hex) == 64)
		memcpy(in->hex, hex, 65);
	else
		fb_sha256_buf_hex(m, (size_t)st.st_size, in->hex);
	return 0;
}

/* The file p as input *in at root path rp, read and hashed; -1 when it cannot be read. */
static int
tree_file(const char *p, const char *rp, struct fb_exec_input *in)
{
	char *text = NULL;
	size_t size = 0;
	*in = (struct fb_exec_input){0};
	if (fb_read_file(p, &text, &size, NULL) != 0 || !(in->path = strdup(rp))) {
		free(text);
		return -1;
	}
	in->data = (const unsigned char *)text;
	in->size = size;
	fb_sha256_buf_hex(text, size, in->hex);
	return 0;
}

/* fb_jobroot_tree's walk: links > 0 when dir was reached through a symbolic link to a directory.
 * A toolkit found through a prefix of links (/usr/local/include/cccl -> the toolkit's, when the
 * nvcc on PATH is /usr/local/bin/nvcc) is sent at the paths NVRTC opens it by; a second link on
 * a path is not followed, so a link back up ends the walk there. */
static int
tree_walk(const char *dir, int links, struct fb_exec_input **v, size_t *n, size_t *cap, char *why, size_t wsize)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(why, wsize, "cannot read the toolkit's headers in %.400s", dir);
		return -1;
	}
	int rc = 0;
	for (struct dirent *de; !rc && (de = readdir(d));) {
		char p[PATH_MAX], rp[2 * PATH_MAX + 16];
		struct stat ls, st;
		if (de->d_name[0] == '.' || snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p) ||
		    lstat(p, &ls) != 0 || stat(p, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (S_ISDIR(ls.st_mode) || !links)
				rc = tree_walk(p, links + !S_ISDIR(ls.st_mode), v, n, cap, why, wsize);
			continue;
		}
		if (!S_ISREG(st.st_mode) || fb_jobroot_path("/", p, rp, sizeof(rp)))
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 1024;
			struct fb_exec_input *nv = realloc(*v, nc * sizeof(*nv));
			if (!nv)
				break;
			*v = nv;
			*cap = nc;
		}
		if (tree_file(p, rp, &(*v)[*n]) == 0)
			(*n)++;
	}
	closedir(d);
	return rc;
}

int
fb_jobroot_tree(const char *dir, struct fb_exec_input **v, size_t *n, size_t *cap, char *why, size_t wsize)
{
	return tree_walk(dir, 0, v, n, cap, why, wsize);
}

/* In a build (a state file, in the build dir's private tmp/), its NVRTC edges send the shared
 * files one at a time: the first sends them, the others then find them in the CAS
 * (FindMissingBlobs) rather than all sending the same 140 MB at once (then with the toolkit's
 * headers), which timed out at BuildGrid with 14 edges starting together (docs/remote-cache.md
 * §9, "in a build"). The lock is flock(2) on that directory, which needs no file of its own and
 * is dropped with the process. */
int
fb_jobroot_lock(const char *state, const volatile sig_atomic_t *cancel)
{
	char dir[PATH_MAX];
	if (!state || snprintf(dir, sizeof(dir), "%s", state) >= (int)sizeof(dir))
		return -1;
	char *sl = strrchr(dir, '/');
	if (!sl || sl == dir)
		return -1;
	*sl = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR || (cancel && *cancel)) {
			close(fd);
			return -1;
		}
	}
	return fd;
}
