/* forkcount.c: an LD_PRELOAD shim for remote_cache.sh that counts NVRTC compiles exactly: a
 * line per nvrtcCompileProgram call in $FORKCOUNT_FILE, without relying on fatbuild's own
 * report. fatbuild dlopens NVRTC and looks its functions up with dlsym, so the shim wraps
 * dlsym and hands out a counting nvrtcCompileProgram (also in forked workers, which run
 * several compiles each with precompiled headers). With $FORKCOUNT_GATE set, the first compile
 * creates $FORKCOUNT_GATE.started and waits (at most 60 s) while $FORKCOUNT_GATE exists, so that
 * a test can act at a known point in the middle of a build (remote_reapi.sh stops its server). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*compile_fn)(void *prog, int n, const char *const *opts);
typedef void *(*dlsym_fn)(void *, const char *);

static compile_fn real_compile;

static int
counting_compile(void *prog, int n, const char *const *opts)
{
	const char *path = getenv("FORKCOUNT_FILE");
	if (path && *path) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			ssize_t k = write(fd, "nvrtc\n", 6);
			(void)k;
			close(fd);
		}
	}
	const char *gate = getenv("FORKCOUNT_GATE");
	if (gate && *gate && access(gate, F_OK) == 0) {
		char started[4096];
		size_t k = strlen(gate);
		if (k + 9 < sizeof(started)) {
			memcpy(started, gate, k);
			memcpy(started + k, ".started", 9);
			int fd = open(started, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
			for (int i = 0; i < 600 && access(gate, F_OK) == 0; i++)
				usleep(100000);
		}
	}
	return real_compile(prog, n, opts);
}

void *dlsym(void *handle, const char *name);

void *
dlsym(void *handle, const char *name)
{
	static dlsym_fn real;
	if (!real) {
		void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!p)
			p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		memcpy(&real, &p, sizeof(p));
	}
	void *sym = real(handle, name);
	if (sym && name && strcmp(name, "nvrtcCompileProgram") == 0) {
		memcpy(&real_compile, &sym, sizeof(sym));
		compile_fn f = counting_compile;
		memcpy(&sym, &f, sizeof(sym));
	}
	return sym;
}
