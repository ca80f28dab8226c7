/* fake_nvrtc.c: a libnvrtc.so.13 that forwards to the real one (FAKE_NVRTC_REAL) but misbehaves
 * for sources that ask for it, so that faults in the middle of a batch can be tested:
 *   a source containing FAKE_NVRTC_ABORT_sm_90 aborts (SIGABRT) when compiled for sm_90;
 *   FAKE_NVRTC_FAIL_sm_90 makes nvrtcCompileProgram return NVRTC_ERROR_INTERNAL_ERROR (11).
 * Built by tests/hardening/faults.sh with cc -shared; not part of the library. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *prog_t;
static void *real;
static char trigger[64];

static void *
sym(const char *name)
{
	if (!real) {
		const char *p = getenv("FAKE_NVRTC_REAL");
		real = p ? dlopen(p, RTLD_NOW | RTLD_LOCAL) : NULL;
		if (!real)
			abort();
	}
	return dlsym(real, name);
}

#define FWD(name, params, args) \
	int name params; \
	int name params { return ((int(*) params)sym(#name)) args; }

FWD(nvrtcVersion, (int *a, int *b), (a, b))
FWD(nvrtcGetNumSupportedArchs, (int *n), (n))
FWD(nvrtcGetSupportedArchs, (int *a), (a))
FWD(nvrtcDestroyProgram, (prog_t *p), (p))
FWD(nvrtcGetProgramLogSize, (prog_t p, size_t *n), (p, n))
FWD(nvrtcGetProgramLog, (prog_t p, char *s), (p, s))
FWD(nvrtcGetPTXSize, (prog_t p, size_t *n), (p, n))
FWD(nvrtcGetPTX, (prog_t p, char *s), (p, s))
FWD(nvrtcGetCUBINSize, (prog_t p, size_t *n), (p, n))
FWD(nvrtcGetCUBIN, (prog_t p, char *s), (p, s))

int nvrtcCreateProgram(prog_t *p, const char *src, const char *name, int n, const char *const *h,
                       const char *const *hn);
int
nvrtcCreateProgram(prog_t *p, const char *src, const char *name, int n, const char *const *h, const char *const *hn)
{
	const char *t = strstr(src, "FAKE_NVRTC_");
	if (t)
		snprintf(trigger, sizeof(trigger), "%.40s", t + 11);
	return ((int (*)(prog_t *, const char *, const char *, int, const char *const *, const char *const *))sym(
		"nvrtcCreateProgram"))(p, src, name, n, h, hn);
}

int nvrtcCompileProgram(prog_t p, int n, const char *const *opts);
int
nvrtcCompileProgram(prog_t p, int n, const char *const *opts)
{
	for (int i = 0; trigger[0] && i < n; i++) {
		if (strstr(opts[i], "sm_90") && strncmp(trigger, "ABORT_sm_90", 11) == 0)
			abort();
		if (strstr(opts[i], "sm_90") && strncmp(trigger, "FAIL_sm_90", 10) == 0)
			return 11;
	}
	return ((int (*)(prog_t, int, const char *const *))sym("nvrtcCompileProgram"))(p, n, opts);
}
