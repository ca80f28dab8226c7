/* cmd_build.c: `fatbuild build` (also `fatbuild [--arch-list L] -o OUT.so SOURCES...`). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild build [--arch-list LIST] -o OUT.so [options] SOURCES...\n"
	        "       fatbuild [--arch-list LIST] -o OUT.so SOURCES...     (the same)\n"
	        "\n"
	        "Builds a loadable extension: kernels (.cu) are compiled with NVRTC for every target of\n"
	        "the arch list, packed into one fatbin per source and embedded; host sources (.c with $CC,\n"
	        ".cc .cpp .cxx .C with $CXX; defaults cc and c++) are compiled with -fPIC; everything is\n"
	        "linked with libfatbuild_runtime into OUT. Host code reaches its kernels through\n"
	        "<fatbuild_runtime.h>: fbrt_function(\"saxpy\") and fbrt_launch().\n"
	        "The build runs ninja on a generated build.ninja in the build dir, so a rebuild redoes only\n"
	        "what changed: one kernel target, one host object, the link. OUT is replaced atomically:\n"
	        "a failed build leaves the previous one in place.\n"
	        "\n"
	        "Options:\n"
	        "  --arch-list LIST   targets, e.g. \"8.0 8.6+PTX\", \"native\", \"all-major\" (default:\n"
	        "                     $TORCH_CUDA_ARCH_LIST, else auto: the visible GPUs)\n"
	        "  -o FILE            the shared library (or program with --executable) to write\n"
	        "  --name NAME        build name (default: from OUT, libx.so -> x)\n"
	        "  --build-dir DIR    where build.ninja and objects go (default: $FATBUILD_BUILD_DIR/NAME,\n"
	        "                     else $TMPDIR/fatbuild-UID/NAME)\n"
	        "  -I DIR, -D X[=V]   include dirs and defines, for kernels and host code\n"
	        "  --cflags S, --cxxflags S, --ldflags S   extra words for C, C++ (and nvcc), the link\n"
	        "  --backend B        nvrtc (default) or nvcc: .cu files with host code and <<<...>>>\n"
	        "                     launches, compiled by nvcc with the gencode flags, linked with cudart\n"
	        "  -j N               parallel jobs (ninja -j); NVRTC jobs also stay within the CPUs\n"
	        "                     (MAX_JOBS), so a large -j for a launcher that farms out host\n"
	        "                     compiles does not start that many NVRTC processes here\n"
	        "  --launcher CMD     put CMD before the host compiler and nvcc (ccache, sccache,\n"
	        "                     distcc), as CMake's <LANG>_COMPILER_LAUNCHER; default\n"
	        "                     $FATBUILD_LAUNCHER\n"
	        "  --remote-cache URL, --remote-cache-mode read|readwrite\n"
	        "                     the shared compile cache for the NVRTC edges (sets\n"
	        "                     FATBUILD_REMOTE_CACHE / _MODE for them; see 'fatbuild compile -h')\n"
	        "  -v                 show every command\n"
	        "  --emit-ninja       write build.ninja and stop\n"
	        "  --executable       link a program instead of a shared library\n"
	        "\n"
	        "Environment: CC, CXX, CUDA_HOME, FATBUILD_BUILD_DIR, FATBUILD_NINJA, FATBUILD_RUNTIME,\n"
	        "FATBUILD_INCLUDE. 'fatbuild env' shows what will be used.\n"
	        "\n"
	        "Example:\n"
	        "  fatbuild --arch-list \"8.0 8.6+PTX\" -o libx.so kernels.cu host.cpp\n");
}

/* Takes the value of option `name` when argv[*i] is it; a missing value sets *bad (usage shown). */
static int
opt(int argc, char **argv, int *i, const char *name, const char **v, int *bad)
{
	if (strcmp(argv[*i], name) != 0)
		return 0;
	if (*i + 1 >= argc) {
		warn("build: %s needs a value", name);
		usage(stderr);
		*bad = 1;
		return 0;
	}
	*v = argv[++*i];
	return 1;
}

/* The running program's absolute path, for the edges to call back. */
static void
self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n <= 0)
		buf[0] = 0;
	else
		buf[n] = 0;
}

int
cmd_build(int argc, char **argv)
{
	struct fb_build_opts o = {0};
	const char **src = xcalloc((size_t)argc, sizeof(*src));
	const char **inc = xcalloc((size_t)argc, sizeof(*inc));
	const char **def = xcalloc((size_t)argc, sizeof(*def));
	int rc = AP_EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = NULL;
		int bad = 0;
#define OPT(name) opt(argc, argv, &i, name, &v, &bad)
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			rc = AP_EXIT_OK;
			goto out;
		} else if (OPT("--arch-list") || OPT("--arch")) {
			o.arch_list = v;
		} else if (strncmp(a, "--arch-list=", 12) == 0) {
			o.arch_list = a + 12;
		} else if (OPT("-o") || OPT("--output")) {
			o.output = v;
		} else if (OPT("--name")) {
			o.name = v;
		} else if (OPT("--build-dir")) {
			o.build_dir = v;
		} else if (OPT("-I")) {
			inc[o.ninclude_dirs++] = v;
		} else if (strncmp(a, "-I", 2) == 0 && a[2]) {
			inc[o.ninclude_dirs++] = a + 2;
		} else if (OPT("-D")) {
			def[o.ndefines++] = v;
		} else if (strncmp(a, "-D", 2) == 0 && a[2]) {
			def[o.ndefines++] = a + 2;
		} else if (OPT("--cflags")) {
			o.cflags = v;
		} else if (OPT("--cxxflags")) {
			o.cxxflags = v;
		} else if (OPT("--ldflags")) {
			o.ldflags = v;
		} else if (OPT("--launcher")) {
			o.launcher = v;
		} else if (OPT("--remote-cache")) {
			setenv("FATBUILD_REMOTE_CACHE", v, 1); /* the NVRTC edges run fatbuild compile */
		} else if (OPT("--remote-cache-mode")) {
			if (strcmp(v, "read") != 0 && strcmp(v, "readwrite") != 0) {
				warn("build: invalid --remote-cache-mode '%s' (read or readwrite)", v);
				usage(stderr);
				goto out;
			}
			setenv("FATBUILD_REMOTE_CACHE_MODE", v, 1);
		} else if (OPT("--backend")) {
			if (strcmp(v, "nvrtc") == 0) {
				o.backend = FB_BACKEND_NVRTC;
			} else if (strcmp(v, "nvcc") == 0) {
				o.backend = FB_BACKEND_NVCC;
			} else {
				warn("build: unknown backend '%s' (nvrtc or nvcc)", v);
				usage(stderr);
				goto out;
			}
		} else if (OPT("-j")) {
			char *end;
			long j = strtol(v, &end, 10);
			if (*end || j < 0 || j > 4096) {
				warn("build: -j needs a number, not '%s'", v);
				usage(stderr);
				goto out;
			}
			o.jobs = (int)j;
		} else if (strncmp(a, "-j", 2) == 0 && a[2]) {
			o.jobs = atoi(a + 2);
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			o.verbose = true;
		} else if (strcmp(a, "--emit-ninja") == 0) {
			o.emit_ninja_only = true;
		} else if (strcmp(a, "--executable") == 0) {
			o.executable = true;
		} else if (bad) {
			goto out;
		} else if (a[0] == '-' && a[1]) {
			warn("build: unknown option '%s'", a);
			usage(stderr);
			goto out;
		} else {
			src[o.nsources++] = a;
		}
#undef OPT
	}
	if (!o.output || o.nsources == 0) {
		warn("build: %s", !o.output ? "-o OUTPUT is required" : "no source files given");
		usage(stderr);
		goto out;
	}
	o.sources = src;
	o.include_dirs = inc;
	o.defines = def;
	char self[4096];
	self_path(self, sizeof(self));
	if (self[0])
		o.fatbuild = self; /* the edges call back into this very program */
	struct fb_build_result res;
	struct fb_error err = {0};
	int brc = fb_build(&o, &res, &err);
	warn_lines(res.warnings);
	if (brc != 0) {
		rc = fail_fb(&err);
		goto out;
	}
	if (o.emit_ninja_only)
		printf("%s\n", res.ninja_file);
	rc = AP_EXIT_OK;
out:
	free(src);
	free(inc);
	free(def);
	return rc;
}
