/* cmd_build.c: `fatbuild build` (also `fatbuild [--arch-list L] -o OUT.so SOURCES...`). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "base/config.h"
#include "base/cpus.h"
#include "plumbing.h"

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
	        "\n");
	/* Three strings: ISO C bounds one literal to 4095 bytes. */
	fprintf(f,
	        "Options:\n"
	        "  --arch-list LIST   targets, e.g. \"8.0 8.6+PTX\", \"native\", \"all-major\" (default:\n"
	        "                     $TORCH_CUDA_ARCH_LIST, else auto: the visible GPUs)\n"
	        "  -o FILE            the shared library (or program with --executable) to write\n"
	        "  --name NAME        build name (default: from OUT, libx.so -> x)\n"
	        "  --build-dir DIR    where build.ninja and objects go (default: $FATBUILD_BUILD_DIR/NAME,\n"
	        "                     else $XDG_CACHE_HOME/fatbuild/build/NAME, else\n"
	        "                     ~/.cache/fatbuild/build/NAME); it must be yours and writable by\n"
	        "                     nobody else (else exit %d, see docs/security.md)\n"
	        "  -I DIR, -D X[=V]   include dirs and defines, for kernels and host code\n"
	        "  --cflags S, --cxxflags S, --ldflags S   extra words for C, C++, the link; on nvcc's\n"
	        "                     command line C++ flags go through -Xcompiler (-I -D -U -std= -g as they are)\n"
	        "  --nvcc-flags S     extra words for nvcc only\n"
	        "  --host-opt S       the optimisation of host compiles (C, C++ and nvcc's host pass;\n"
	        "                     device code is optimised either way): default -O2, 'none' for\n"
	        "                     none, as torch.utils.cpp_extension.load (and fatbuild.load)\n"
	        "  --cuda-flags S     extra words both kernel compilers take (NVRTC and nvcc: -lineinfo,\n"
	        "                     --use_fast_math, -maxrregcount=N, -G)\n"
	        "  --backend B        auto (default): each .cu by its content, host headers, <<<...>>>,\n"
	        "                     main or host functions to nvcc, device code only to NVRTC (-v says\n"
	        "                     which and why); nvrtc; nvcc: compiled by nvcc with the gencode flags,\n"
	        "                     linked with cudart\n",
	        AP_EXIT_UNSAFE);
	fprintf(f,
	        "  --torch            a PyTorch extension: torch's include dirs, defines, C++ standard, nvcc\n"
	        "                     flags and libraries, from the torch of --python (asked once, cached\n"
	        "                     in the build dir), as torch.utils.cpp_extension.load adds them (C++\n"
	        "                     flags stay off nvcc's line; nvcc flags naming arches replace the arch\n"
	        "                     list); import torch before loading it (torch.ops.load_library(OUT))\n"
	        "  --no-torch-flags   --torch without torch's compile and link words: the flags given\n"
	        "                     hold them (fatbuild.load and BuildExtension pass torch's own)\n"
	        "  --python PY        the interpreter whose torch is used (default: python3 on PATH)\n"
	        "  --python-module    with -o DIR: DIR/NAME<EXT_SUFFIX>, importable as NAME (else DIR/NAME.so)\n"
	        "  --with-cuda, --no-cuda   link torch's CUDA libraries (default: when there are .cu files)\n"
	        "  -j N               parallel jobs (ninja -j; default: MAX_JOBS when it is a number, else the\n"
	        "                     CPUs, capped by the cgroup CPU quota); NVRTC jobs also stay within\n"
	        "                     that CPU count, so a large -j for a launcher that farms out host\n"
	        "                     compiles does not start that many NVRTC processes here; at most %d,\n"
	        "                     the compile server's bound: a larger N or MAX_JOBS is capped\n"
	        "  --launcher CMD     put CMD before the host compiler and nvcc (ccache, sccache,\n"
	        "                     distcc), as CMake's <LANG>_COMPILER_LAUNCHER; default\n"
	        "                     $FATBUILD_LAUNCHER\n"
	        "  --remote-cache URL, --remote-cache-mode read|readwrite\n"
	        "                     the shared compile cache for the NVRTC, host and nvcc edges (given\n"
	        "                     them as FATBUILD_REMOTE_CACHE / _MODE; see 'fatbuild compile -h')\n"
	        "  -v                 show every command, and where each NVRTC job ran: remote, local\n"
	        "                     (and why) or cached\n",
	        FB_JOBS_MAX);
	fprintf(f,
	        "  --remote-exec URL  run the NVRTC jobs the caches miss at a REAPI executor, grpc://HOST:PORT\n"
	        "                     [/INSTANCE] or grpcs:// (BuildGrid, Buildbarn, BuildBuddy, EngFlow;\n"
	        "                     default FATBUILD_REMOTE_EXECUTOR): each job carries the worker\n"
	        "                     program, NVRTC and its headers, so workers need no CUDA; a failing\n"
	        "                     executor means local compiles and one warning for the build\n"
	        "  --remote-exec-property K=V\n"
	        "                     a platform property the executor's workers must offer (repeatable;\n"
	        "                     OSFamily=linux and ISA=x86-64 are always sent)\n"
	        "  --remote-jobs N    NVRTC edges in flight while remote (default 4 x -j; at most %d); the\n"
	        "                     host compiles, merges, embed and link stay within -j here\n"
	        "  --remote-exec-timeout S\n"
	        "                     seconds a job may wait in the executor's queue and run there (default\n"
	        "                     600); then it is compiled here\n",
	        FB_JOBS_MAX);
	fprintf(f,
	        "  --emit-ninja       write build.ninja and stop\n"
	        "  --executable       link a program instead of a shared library\n"
	        "  --rdc              relocatable device code: extern __device__ across .cu files and\n"
	        "                     dynamic parallelism; compiled -rdc=true, device-linked once (nvrtc:\n"
	        "                     'fatbuild dlink' per target with nvJitLink; nvcc: nvcc -dlink) with\n"
	        "                     the device runtime libcudadevrt\n"
	        "  --lto              device link-time optimisation: LTO-IR and an LTO device link (implies --rdc)\n"
	        "  --no-compile-server  compile each NVRTC edge in its own processes (by default one\n"
	        "                     server per build keeps warm PCH workers for them; also\n"
	        "                     FATBUILD_COMPILE_SERVER=0)\n"
	        "  --no-nvcc-threads  run each nvcc edge's targets one after another (by default nvcc\n"
	        "                     --threads runs the host pass and every target in parallel, sized\n"
	        "                     to the job slots the other nvcc edges leave free)\n"
	        "  --no-host-pch      --torch: compile C++ sources without the precompiled header of\n"
	        "                     torch's headers (by default made once per torch, compiler and\n"
	        "                     flags in the user's cache and shared by every build)\n"
	        "  --no-edge-cache    run every host and nvcc compile (by default 'fatbuild edge' takes\n"
	        "                     their objects from the compile cache and the remote cache when\n"
	        "                     the command, compilers and every file read are unchanged; also\n"
	        "                     FATBUILD_EDGE_CACHE=0; off with --launcher)\n"
	        "\n"
	        "Environment: CC, CXX (commands, split into words: CC=\"ccache gcc\"), CUDA_HOME,\n"
	        "FATBUILD_BUILD_DIR, FATBUILD_NINJA, FATBUILD_RUNTIME, FATBUILD_INCLUDE, MAX_JOBS,\n"
	        "FATBUILD_LAUNCHER, FATBUILD_REMOTE_CACHE, FATBUILD_REMOTE_EXECUTOR, FATBUILD_CACHE_BASEDIR (the checkout's root:\n"
	        "other checkouts share cached compiles), FATBUILD_CACHE_MAX_SIZE (the cache's size limit,\n"
	        "applied as the build ends: default 5G, 0 none; 'fatbuild cache --help').\n"
	        "'fatbuild env' shows what will be used.\n"
	        "\n"
	        "SIGINT, SIGTERM or SIGHUP stop everything the build started (ninja, compilers, NVRTC\n"
	        "jobs); nothing is written and the exit status is 128+signal (%d, %d, %d).\n"
	        "\n"
	        "Examples:\n"
	        "  fatbuild --arch-list \"8.0 8.6+PTX\" -o libx.so kernels.cu host.cpp\n"
	        "  fatbuild build --torch --python-module --name muladd -o . muladd.cpp muladd.cu\n"
	        "\n"
	        "Exit codes: %d built, %d a compile or link failed, %d usage or bad arch list, %d a build dir\n"
	        "or cache another user could write into, 128+signal when stopped; every code: 'fatbuild --help'.\n",
	        128 + SIGINT, 128 + SIGTERM, 128 + SIGHUP, AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_UNSAFE);
}

enum { OPT_NAME = CLI_OPT_OWN, OPT_BUILD_DIR, OPT_CFLAGS, OPT_CXXFLAGS, OPT_LDFLAGS, OPT_NVCC_FLAGS,
       OPT_CUDA_FLAGS, OPT_TORCH, OPT_PYTHON, OPT_PYTHON_MODULE, OPT_WITH_CUDA, OPT_NO_CUDA, OPT_LAUNCHER,
       OPT_BACKEND, OPT_EMIT_NINJA, OPT_EXECUTABLE, OPT_NO_SERVER, OPT_NO_NVCC_THREADS, OPT_NO_HOST_PCH,
       OPT_NO_EDGE_CACHE, OPT_HOST_OPT, OPT_NO_TORCH_FLAGS };

/* The shared options (cli.h), then build's own. */
static const struct option longopts[] = {
	CLI_SHARED_LONGOPTS,
	{"arch", required_argument, NULL, CLI_OPT_ARCH},
	{"output", required_argument, NULL, 'o'},
	{"verbose", no_argument, NULL, 'v'},
	{"name", required_argument, NULL, OPT_NAME},
	{"build-dir", required_argument, NULL, OPT_BUILD_DIR},
	{"cflags", required_argument, NULL, OPT_CFLAGS},
	{"cxxflags", required_argument, NULL, OPT_CXXFLAGS},
	{"host-opt", required_argument, NULL, OPT_HOST_OPT},
	{"ldflags", required_argument, NULL, OPT_LDFLAGS},
	{"nvcc-flags", required_argument, NULL, OPT_NVCC_FLAGS},
	{"cuda-flags", required_argument, NULL, OPT_CUDA_FLAGS},
	{"torch", no_argument, NULL, OPT_TORCH},
	{"no-torch-flags", no_argument, NULL, OPT_NO_TORCH_FLAGS},
	{"python", required_argument, NULL, OPT_PYTHON},
	{"python-module", no_argument, NULL, OPT_PYTHON_MODULE},
	{"with-cuda", no_argument, NULL, OPT_WITH_CUDA},
	{"no-cuda", no_argument, NULL, OPT_NO_CUDA},
	{"launcher", required_argument, NULL, OPT_LAUNCHER},
	{"backend", required_argument, NULL, OPT_BACKEND},
	{"emit-ninja", no_argument, NULL, OPT_EMIT_NINJA},
	{"executable", no_argument, NULL, OPT_EXECUTABLE},
	{"no-compile-server", no_argument, NULL, OPT_NO_SERVER},
	{"no-nvcc-threads", no_argument, NULL, OPT_NO_NVCC_THREADS},
	{"no-host-pch", no_argument, NULL, OPT_NO_HOST_PCH},
	{"no-edge-cache", no_argument, NULL, OPT_NO_EDGE_CACHE},
	{NULL, 0, NULL, 0},
};

/* build reads the shared options as it always has: -j 0 is the default, a bad value is said
 * as it is met. */
static const struct cli_shared_spec shared_spec = {"build", 0, false, false, " seconds"};

/* --backend B into o; 0 or -1 (reported in one line). */
static int
parse_backend(const char *v, struct fb_build_opts *o)
{
	static const char *const backends[] = {"auto", "nvrtc", "nvcc", NULL};
	if (strcmp(v, "nvrtc") == 0) {
		o->backend = FB_BACKEND_NVRTC;
	} else if (strcmp(v, "nvcc") == 0) {
		o->backend = FB_BACKEND_NVCC;
	} else if (strcmp(v, "auto") == 0) {
		o->backend = FB_BACKEND_AUTO;
	} else {
		cli_bad_value("build", "--backend", v, backends);
		return -1;
	}
	return 0;
}

/* The shared options into sh, build's own into o; src (argc entries) takes the sources;
 * *no_server is set by --no-compile-server.
 * Operands and options mix in any order ("-": getopt returns operands in place, as 1), and a
 * "--" is refused as an unknown option. Returns -1 to go on, else the exit code (help shown,
 * or the usage error reported). */
static int
parse_args(int argc, char **argv, struct fb_build_opts *o, struct cli_shared *sh, const char **src, int *no_server)
{
	int c, at;
	optind = 1;
	for (;;) {
		at = optind; /* the word getopt reads next (it permutes nothing with "-") */
		if ((c = cli_getopt(argc, argv, "-" CLI_SHARED_SHORTS, longopts, "build")) == -1)
			break;
		int taken = cli_shared_opt(sh, c, optarg);
		if (taken < 0)
			return AP_EXIT_USAGE; /* one line, not the whole usage */
		if (taken)
			continue;
		switch (c) {
		case 1: src[o->nsources++] = optarg; break;
		case 'h': usage(stdout); return AP_EXIT_OK;
		case OPT_NAME: o->name = optarg; break;
		case OPT_BUILD_DIR: o->build_dir = optarg; break;
		case OPT_CFLAGS: o->cflags = optarg; break;
		case OPT_CXXFLAGS: o->cxxflags = optarg; break;
		case OPT_HOST_OPT: o->host_opt = strcmp(optarg, "none") == 0 ? "" : optarg; break;
		case OPT_LDFLAGS: o->ldflags = optarg; break;
		case OPT_NVCC_FLAGS: o->nvcc_flags = optarg; break;
		case OPT_CUDA_FLAGS: o->cuda_flags = optarg; break;
		case OPT_TORCH: o->torch = true; break;
		case OPT_NO_TORCH_FLAGS: o->torch_no_flags = true; break;
		case OPT_PYTHON: o->python = optarg; break;
		case OPT_PYTHON_MODULE: o->python_module = true; break;
		case OPT_WITH_CUDA: o->torch_cuda = 1; break;
		case OPT_NO_CUDA: o->torch_cuda = -1; break;
		case OPT_LAUNCHER: o->launcher = optarg; break;
		case OPT_BACKEND:
			if (parse_backend(optarg, o))
				return AP_EXIT_USAGE; /* one line, not the whole usage */
			break;
		case OPT_EMIT_NINJA: o->emit_ninja_only = true; break;
		case OPT_EXECUTABLE: o->executable = true; break;
		case OPT_NO_SERVER: *no_server = 1; break;
		case OPT_NO_NVCC_THREADS: o->no_nvcc_threads = true; break;
		case OPT_NO_HOST_PCH: o->no_host_pch = true; break;
		case OPT_NO_EDGE_CACHE: o->no_edge_cache = true; break;
		default: return AP_EXIT_USAGE;
		}
	}
	if (at < argc) { /* getopt stopped at a "--" */
		cli_bad_option("build", argv[at], CLI_UNKNOWN, NULL);
		return AP_EXIT_USAGE;
	}
	return -1;
}

/* The shared options' values into o. */
static void
take_shared(struct fb_build_opts *o, const struct cli_shared *sh)
{
	o->arch_list = sh->arch_list;
	o->output = sh->output;
	o->include_dirs = sh->incs;
	o->ninclude_dirs = sh->nincs;
	o->defines = sh->defs;
	o->ndefines = sh->ndefs;
	o->jobs = sh->jobs;
	o->verbose = sh->verbose;
	o->rdc = sh->rdc;
	o->lto = sh->lto;
}

/* The build's compile server (docs/compile-server.md), started once the build dir is ready. */
struct server {
	const char *program;
	int jobs, off, verbose;
	pid_t pid;
	char dir[4096];
	char sock[4096];
	const struct fb_config *cfg;
};

/* fb_build_opts.on_build_dir: the server's socket, which fb_build gives the edges; NULL: none. */
static const char *
start_server(void *ctx, const char *build_dir)
{
	struct server *s = ctx;
	if (s->off || s->cfg->compile_server == 0 || !s->program)
		return NULL;
	struct fb_jobs_info ji; /* fb_compile_default_jobs(): as the ninja pool the NVRTC edges run in */
	fb_jobs_default(NULL, NULL, 0, s->cfg->max_jobs, FB_JOBS_MAX, &ji);
	int jobs = ji.jobs;
	if (s->jobs > 0 && s->jobs < jobs)
		jobs = s->jobs;
	struct fb_error err = {0};
	if (fb_compile_server_start(s->program, build_dir, jobs, &s->pid, s->sock, sizeof(s->sock), &err) != 0) {
		if (s->verbose)
			warn("build: note: no compile server: %s", err.msg);
		return NULL;
	}
	snprintf(s->dir, sizeof(s->dir), "%s", build_dir);
	return s->sock;
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
	struct server srv = {0};
	struct fb_config cfg; /* read once: what the build itself uses */
	fb_config_read(&cfg);
	srv.cfg = &cfg;
	struct fb_build_opts o = {0};
	o.config = &cfg;
	o.backend = FB_BACKEND_AUTO;
	const char **src = xcalloc((size_t)argc, sizeof(*src));
	struct cli_shared sh = {.spec = &shared_spec};
	int rc = parse_args(argc, argv, &o, &sh, src, &srv.off);
	if (rc >= 0)
		goto out;
	take_shared(&o, &sh);
	rc = AP_EXIT_USAGE;
	if (cli_remote_mode_env(&cfg, cfg.remote_cache_mode, "build")) /* the edges would fail in ninja */
		goto out;
	cli_remote_resolve(&cfg, &sh.remote, &o.remote); /* fb_build gives its edges what they need of it */
	if (cli_rexec_url_check(o.remote.exec, "build"))
		goto out;
	if (!o.output && o.torch && o.name)
		o.output = "."; /* --torch --name NAME: ./NAME.so, or the module */
	if ((o.python || o.python_module || o.torch_cuda || o.torch_no_flags) && !o.torch) {
		warn("build: --python, --python-module, --with-cuda, --no-cuda and --no-torch-flags go with --torch");
		usage(stderr);
		goto out;
	}
	if (!o.output || o.nsources == 0) {
		warn("build: %s", !o.output ? "-o OUTPUT is required" : "no source files given");
		usage(stderr);
		goto out;
	}
	uint64_t max_size;
	if ((rc = cli_cache_limit(&cfg, &max_size)))
		goto out;
	rc = AP_EXIT_USAGE;
	note_max_jobs(&cfg, "build"); /* the edges, which read it too, then say nothing */
	o.sources = src;
	char self[4096];
	self_path(self, sizeof(self));
	if (self[0])
		o.fatbuild = self; /* the edges call back into this very program */
	if (!o.emit_ninja_only)
		cli_supervise(); /* from here on a signal stops ninja, its edges and the probe child too */
	o.cancel = cli_cancel_flag();
	srv.program = o.fatbuild;
	srv.jobs = o.jobs;
	srv.verbose = o.verbose;
	o.on_build_dir = start_server;
	o.on_build_dir_ctx = &srv;
	struct fb_build_result res;
	struct fb_error err = {0};
	int brc = fb_build(&o, &res, &err);
	fb_compile_server_stop(srv.pid, srv.dir);
	for (const char *w = o.verbose ? res.notes : ""; *w;) { /* -v: the backend of each .cu and why */
		size_t n = strcspn(w, "\n");
		warn("build: %.*s", (int)n, w);
		w += n + (w[n] == '\n');
	}
	warn_lines(res.warnings);
	if (!o.emit_ninja_only && !cli_stopped())
		cli_cache_trim_after(max_size, o.verbose); /* what every edge of the build put there */
	if (brc != 0 && err.code == FB_EARCH && !cli_stopped()) { /* the list's near-miss item named */
		char hint[96];
		struct ap_resolve_opts ro = {.config = &cfg};
		const char *list = o.arch_list ? o.arch_list : cfg.torch_cuda_arch_list;
		warn("%s%s", err.msg, archlist_hint(err.ap_code, list, &ro, NULL, hint, sizeof(hint)));
		rc = fb_error_exit_code(&err);
		goto out;
	}
	if (brc != 0) {
		rc = cli_stopped() ? cli_stop_exit("build") : fail_fb(&err);
		goto out;
	}
	if (o.emit_ninja_only)
		printf("%s\n", res.ninja_file);
	rc = AP_EXIT_OK;
out:
	free(src);
	cli_shared_free(&sh);
	return rc;
}
