/* nvrtc_worker.c: fatbuild-nvrtc-worker, the program a remote executor runs for one NVRTC job
 * (docs/remote-cache.md §9 "Remote NVRTC jobs"). It travels in the job's input root beside the
 * NVRTC library it loads, so that any Linux x86-64 worker runs the job without a CUDA install:
 * it links nothing but libc (NVRTC is dlopen'ed by nvrtc.c from the root's own copy) and reads
 * and writes only paths relative to the root.
 *
 *   fatbuild-nvrtc-worker TOOLKIT SOURCE NAME MODE OUTDIR [OPTION...]
 *
 * loads TOOLKIT/lib64/libnvrtc.so.N, compiles the text of SOURCE, named NAME in diagnostics
 * (the name the client's local compile gives it), with the options, and writes OUTDIR/result
 * (the nvrtcResult, decimal), OUTDIR/log and, as MODE asks (ptx, cubin, ptx+cubin, ltoir),
 * OUTDIR/ptx and OUTDIR/cubin (the LTO-IR for ltoir). Exit 0 once NVRTC ran, whatever it said
 * of the source; 3, with the reason on stderr, when it could not be run at all: the client
 * then takes it for the executor's failure and compiles the job itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc.h"
#include "base/safefs.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
/* In a sanitizer build of the project (scripts/test.sh's asan pass) the worker runs at the
 * executor sanitized too, inside a sandbox that may have no /proc, where LeakSanitizer's
 * end-of-run scan stops the program with an error of its own: there, a leak check of the
 * worker says nothing of the job, so it is off. */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif
#endif

static int
put(const char *dir, const char *name, const void *data, size_t size)
{
	char path[4096];
	struct fb_error e = {0};
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (fb_write_file_atomic(path, data, size, 0644, &e) == 0)
		return 0;
	fprintf(stderr, "fatbuild-nvrtc-worker: %s\n", e.msg);
	return -1;
}

int
main(int argc, char **argv)
{
	if (argc < 6) {
		fputs("usage: fatbuild-nvrtc-worker TOOLKIT SOURCE NAME MODE OUTDIR [OPTION...]\n", stderr);
		return 2;
	}
	const char *mode = argv[4], *outdir = argv[5];
	int want_ptx = strstr(mode, "ptx") != NULL;
	int want_cubin = strcmp(mode, "ltoir") == 0 ? FB_NVRTC_LTOIR : strstr(mode, "cubin") != NULL;
	struct fb_error e = {0};
	struct fb_nvrtc *nv = NULL;
	char *text = NULL;
	size_t size = 0;
	if (fb_read_file(argv[2], &text, &size, &e) || fb_dir_make_output(outdir, &e) || fb_nvrtc_open(argv[1], &nv, &e)) {
		fprintf(stderr, "fatbuild-nvrtc-worker: %s\n", e.msg);
		free(text);
		return 3;
	}
	struct fb_nvrtc_out out = {0};
	int rc = fb_nvrtc_compile(nv, text, argv[3], (const char *const *)argv + 6, argc - 6, want_ptx, want_cubin, &out, &e);
	if (rc) {
		fprintf(stderr, "fatbuild-nvrtc-worker: %s\n", e.msg);
	} else {
		char res[32];
		int k = snprintf(res, sizeof(res), "%d\n", out.result);
		const char *log = out.log ? out.log : "";
		rc = put(outdir, "log", log, strlen(log)) || put(outdir, "result", res, (size_t)k);
		if (!rc && out.ptx_size)
			rc = put(outdir, "ptx", out.ptx, out.ptx_size);
		if (!rc && out.cubin_size)
			rc = put(outdir, "cubin", out.cubin, out.cubin_size);
	}
	fb_nvrtc_out_clear(&out);
	fb_nvrtc_close(nv);
	free(text);
	return rc ? 3 : 0;
}
