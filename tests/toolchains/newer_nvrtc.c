/* newer_nvrtc.c: a libnvrtc.so.13 that forwards to a real one (NEWER_NVRTC_REAL) but reports
 * the version NEWER_NVRTC_VERSION ("14.1"), standing in for a CUDA release newer than every
 * built-in table. Built by tests/toolchains.sh with cc -shared; not part of the library. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef void *prog_t;
static void *real;

static void *
sym(const char *name)
{
	if (!real) {
		const char *p = getenv("NEWER_NVRTC_REAL");
		real = p ? dlopen(p, RTLD_NOW | RTLD_LOCAL) : NULL;
		if (!real)
			abort();
	}
	return dlsym(real, name);
}

#define FWD(name, params, args) \
	int name params; \
	int name params { return ((int(*) params)sym(#name)) args; }

int nvrtcVersion(int *major, int *minor);
int
nvrtcVersion(int *major, int *minor)
{
	const char *v = getenv("NEWER_NVRTC_VERSION");
	if (!v || sscanf(v, "%d.%d", major, minor) != 2)
		return ((int (*)(int *, int *))sym("nvrtcVersion"))(major, minor);
	return 0;
}

FWD(nvrtcGetNumSupportedArchs, (int *n), (n))
FWD(nvrtcGetSupportedArchs, (int *a), (a))
FWD(nvrtcCreateProgram, (prog_t *p, const char *s, const char *n, int k, const char *const *h, const char *const *i),
    (p, s, n, k, h, i))
FWD(nvrtcCompileProgram, (prog_t p, int n, const char *const *o), (p, n, o))
FWD(nvrtcDestroyProgram, (prog_t *p), (p))
FWD(nvrtcGetProgramLogSize, (prog_t p, size_t *n), (p, n))
FWD(nvrtcGetProgramLog, (prog_t p, char *s), (p, s))
FWD(nvrtcGetPTXSize, (prog_t p, size_t *n), (p, n))
FWD(nvrtcGetPTX, (prog_t p, char *s), (p, s))
FWD(nvrtcGetCUBINSize, (prog_t p, size_t *n), (p, n))
FWD(nvrtcGetCUBIN, (prog_t p, char *s), (p, s))
