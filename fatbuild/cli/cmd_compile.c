/* cmd_compile.c: `fatbuild compile`, kernels → one fatbin for every arch, with NVRTC in
 * parallel and cached (the work is fb_compile in compile.c). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "base/config.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "plumbing.h"

static const char synopsis[] =
	"usage: fatbuild compile [--arch-list LIST] [-I DIR] [-D NAME[=VAL]] [--std c++17|c++20]\n"
	"                        [--use-fast-math] [-G] [--lineinfo] [--maxrregcount N] [-Xnvrtc OPT]\n"
	"                        [-j N] [--no-cache] [--no-pch] [--compress default|none|zstd|lz4]\n"
	"                        [--depfile FILE] [--emit-dir DIR] [--remote-exec URL] [-v]\n"
	"                        -o OUT.fatbin KERNELS.cu...\n";

static const char usage_text[] =
	"usage: fatbuild compile [OPTIONS] -o OUT.fatbin KERNELS.cu...\n"
	"\n"
	"Compiles CUDA kernels with NVRTC for every target of an arch list into one fatbinary:\n"
	"all targets at once (one NVRTC process per job), and never the same thing twice (a\n"
	"content-addressed cache keyed by the source, every header it reads, the options, the\n"
	"NVRTC version and the target). NVRTC comes from the toolkit in use: CUDA_HOME, else the\n"
	"nvcc on PATH, else /usr/local/cuda; its include/ and include/cccl (CUB, Thrust, libcu++)\n"
	"are on the include path, so cuda_fp16.h, cuda_bf16.h and <cub/...> work.\n"
	"\n"
	"Options:\n"
	"  --arch-list LIST   targets (as 'fatbuild flags': \"8.0 8.6+PTX\", \"80;90a\", Hopper, all-major,\n"
	"                     native, auto); default TORCH_CUDA_ARCH_LIST, unset means auto\n"
	"  -o FILE            the fatbinary to write (load it with cuModuleLoadData/cuModuleLoadFatBinary);\n"
	"                     -o DIR/ (or an existing directory) writes DIR/NAME.fatbin per kernel file\n"
	"  -I DIR             add an include directory (the source's own directory comes first)\n"
	"  -D NAME[=VAL]      define a macro\n"
	"  --std c++17|c++20  language standard (default c++17)\n"
	"  --use-fast-math    NVRTC --use_fast_math\n"
	"  -G                 device debug info (-G); entries are flagged as nvcc does\n"
	"  --lineinfo         line tables for profilers (-lineinfo)\n"
	"  --maxrregcount N   cap registers per thread\n"
	"  -Xnvrtc OPT        pass OPT to NVRTC unchanged (repeatable)\n"
	"  -j N               parallel NVRTC jobs (default: MAX_JOBS when it is a number, else the CPUs,\n"
	"                     capped by the cgroup CPU quota; 'fatbuild env' shows the figure); at\n"
	"                     most 256, the compile server's bound: a larger N or MAX_JOBS is capped\n"
	"  --no-cache         neither read nor write the cache (local or remote)\n"
	"  --no-pch           no precompiled headers (by default the jobs of one arch share a\n"
	"                     worker process whose NVRTC parses the headers once; same output)\n"
	"  --remote-cache URL\n"
	"                     a shared cache speaking Bazel's HTTP cache protocol (URL/ac/, URL/cas/:\n"
	"                     nginx WebDAV, bazel-remote) or, for grpc://HOST:PORT[/INSTANCE] and\n"
	"                     grpcs://, REAPI v2 (BuildGrid, Buildbarn, BuildBuddy, EngFlow);\n"
	"                     default FATBUILD_REMOTE_CACHE. Asked after\n"
	"                     the local cache misses; hits are verified and kept locally; a failing\n"
	"                     server means local compiles and one warning\n"
	"  --remote-cache-mode read|readwrite\n"
	"                     read never uploads (default FATBUILD_REMOTE_CACHE_MODE, else readwrite)\n";

/* The options' second half (ISO C bounds one string literal to 4095 bytes). */
static const char usage_text2[] =
	"  --remote-exec URL  run the NVRTC jobs the caches miss at a REAPI executor, grpc://HOST:PORT\n"
	"                     [/INSTANCE] or grpcs:// (BuildGrid, Buildbarn, BuildBuddy, EngFlow;\n"
	"                     default FATBUILD_REMOTE_EXECUTOR): each job sends the worker program,\n"
	"                     NVRTC and its headers, so workers need no CUDA; a failing executor\n"
	"                     means local compiles and one warning\n"
	"  --remote-exec-property K=V\n"
	"                     a platform property the executor's workers must offer (repeatable;\n"
	"                     OSFamily=linux and ISA=x86-64 are always sent)\n"
	"  --remote-jobs N    jobs at the executor at once (default 4 x the local -j default)\n"
	"  --remote-exec-timeout S\n"
	"                     seconds a job may wait in the queue and run there (default 600)\n"
	"  --compress MODE    default: zstd PTX, raw cubins (as nvcc); none; zstd or lz4 (everything)\n"
	"  --depfile FILE     write a Makefile-style depfile for OUT (every source and header read),\n"
	"                     for ninja 'deps = gcc' or make\n"
	"  --emit-dir DIR     also write each image: DIR/NAME.sm_90.cubin, DIR/NAME.compute_120.ptx\n"
	"  --rdc              relocatable device code (-rdc=true): relocatable cubins, for extern\n"
	"                     __device__ across files and dynamic parallelism; PTX targets as LTO-IR.\n"
	"                     Not loadable until 'fatbuild dlink' links them\n"
	"  --lto              LTO-IR (-dlto) for every target, for a link-time-optimised 'fatbuild dlink --lto'\n"
	"  -v                 progress and a summary even when stderr is not a terminal\n"
	"  -h, --help         this text\n";

/* The rest of the help (ISO C bounds one string literal to 4095 bytes). */
static void
usage_more(FILE *f)
{
	fprintf(f,
	        "\n"
	        "One job per kernel file and SASS target, and per PTX target that has no SASS twin (a\n"
	        "'12.0+PTX' is one NVRTC run giving both). Progress on a terminal: [3/7] sm_90 kernels.cu 0.8s.\n"
	        "On an error the log of the first failing target is printed as file:line:col: error: ...\n"
	        "[sm_90], the other jobs are cancelled and nothing is written.\n"
	        "\n"
	        "Environment: FATBUILD_CACHE_DIR, the cache (else $XDG_CACHE_HOME/fatbuild, else\n"
	        "~/.cache/fatbuild; 'fatbuild cache stats|clear|trim'); FATBUILD_CACHE_MAX_SIZE: its size\n"
	        "limit, applied as the compile ends (default 5G; 0: none); FATBUILD_REMOTE_CACHE_HEADER: one header\n"
	        "sent to the remote cache ('Authorization: Bearer TOKEN'); FATBUILD_REMOTE_CACHE_TIMEOUT:\n"
	        "seconds per request (default 10); FATBUILD_CACHE_BASEDIR: paths below it enter the cache\n"
	        "key relative to it (default: each source's directory), so checkouts in other places share\n"
	        "entries; MAX_JOBS, CUDA_HOME, FATBUILD_REMOTE_CACHE and _MODE as above.\n"
	        "\n"
	        "Examples:\n"
	        "  fatbuild compile --arch-list \"8.0 9.0 12.0+PTX\" -o build/kernels/ softmax.cu gemm.cu\n"
	        "  fatbuild compile --arch-list 9.0a -I include --depfile k.fatbin.d -o k.fatbin k.cu\n"
	        "\n"
	        "Exit codes: %d success, %d compile error or no NVRTC, %d usage or bad arch list, %d a cache\n"
	        "directory another user could write into, 128+signal when stopped by SIGINT, SIGTERM or SIGHUP\n"
	        "(its NVRTC jobs are stopped, nothing is written); every code: 'fatbuild --help'.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_UNSAFE);
}

enum { OPT_STD = CLI_OPT_OWN, OPT_FAST, OPT_LINEINFO, OPT_MAXRREG, OPT_DEPFILE, OPT_EMIT, OPT_NOCACHE,
       OPT_COMPRESS, OPT_NOPCH };

/* compile reads the shared options as it always has: -j from 1, --remote-cache-mode checked
 * with the other options after the parse (check_args), +N taken, no unit said. */
static const struct cli_shared_spec shared_spec = {"compile", 1, true, true, ""};

struct strv {
	const char **v;
	size_t n;
};

static void
push(struct strv *s, const char *x)
{
	s->v = xreallocarray(s->v, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = x;
}

struct progress {
	int show, verbose;
};

static void
on_progress(void *ctx, const struct fb_compile_progress *p)
{
	struct progress *pr = ctx;
	if (!pr->show)
		return;
	if (p->cached)
		say("[%zu/%zu] %s %s cached%s", p->done, p->total, p->target, p->source, p->remote ? " (remote)" : "");
	else if (p->where && pr->verbose)
		say("[%zu/%zu] %s %s %.1fs (%s%s%s)", p->done, p->total, p->target, p->source, p->seconds, p->where,
		    p->pch ? "; " : "", p->pch ? p->pch : "");
	else if (p->pch && pr->verbose)
		say("[%zu/%zu] %s %s %.1fs (%s)", p->done, p->total, p->target, p->source, p->seconds, p->pch);
	else
		say("[%zu/%zu] %s %s %.1fs", p->done, p->total, p->target, p->source, p->seconds);
}

static int
parse_int(const char *what, const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi) {
		warn("compile: invalid %s '%s' (want %d..%d)", what, s, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static const char *
base_stem(const char *path, char *buf, size_t size)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	const char *dot = strrchr(b, '.');
	size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
	snprintf(buf, size, "%.*s", (int)n, b);
	return buf;
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What the command line asks for; args is argv without the -Xnvrtc pairs, the sources its tail;
 * out, verbose and jobs are sh's, taken after the parse. */
struct compile_cli {
	struct cli_shared sh;
	struct strv xopts;
	char **args;
	int nargs;
	const char *out, *depfile, *emit, *std, *compress;
	int verbose, jobs, maxrreg, per_file;
	enum fb_compress cmode;
	bool compress_elf;
	bool bad_option; /* said in its one line, without the synopsis */
	const char *const *sources;
	size_t nsources;
	struct fb_config cfg; /* the environment, read once at the command's start */
};

static void
cli_free(struct compile_cli *c)
{
	free(c->args);
	free(c->xopts.v);
	cli_shared_free(&c->sh);
}

/* -Xnvrtc OPT is a two-token option getopt cannot spell; take it out first. 0 or -1 (reported). */
static int
take_xnvrtc(struct compile_cli *c, int argc, char **argv)
{
	c->args = xcalloc((size_t)argc + 1, sizeof(*c->args));
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-Xnvrtc") == 0 || strcmp(argv[i], "--Xnvrtc") == 0) {
			if (i + 1 >= argc) {
				cli_bad_option("compile", argv[i], CLI_NEEDS_VALUE, NULL);
				c->bad_option = true;
				return -1;
			}
			push(&c->xopts, argv[++i]);
		} else if (strncmp(argv[i], "-Xnvrtc=", 8) == 0) {
			push(&c->xopts, argv[i] + 8);
		} else {
			c->args[c->nargs++] = argv[i];
		}
	}
	return 0;
}

/* The options into c and o. Returns -1 to go on, else the exit code (help printed, or the
 * usage error reported without the synopsis). */
static int
parse_args(struct compile_cli *c, struct fb_compile_opts *o)
{
	static const struct option longopts[] = {
		CLI_SHARED_LONGOPTS, /* then compile's own */
		{"std", required_argument, NULL, OPT_STD},
		{"use-fast-math", no_argument, NULL, OPT_FAST},
		{"use_fast_math", no_argument, NULL, OPT_FAST},
		{"lineinfo", no_argument, NULL, OPT_LINEINFO},
		{"maxrregcount", required_argument, NULL, OPT_MAXRREG},
		{"depfile", required_argument, NULL, OPT_DEPFILE},
		{"emit-dir", required_argument, NULL, OPT_EMIT},
		{"no-cache", no_argument, NULL, OPT_NOCACHE},
		{"no-pch", no_argument, NULL, OPT_NOPCH},
		{"compress", required_argument, NULL, OPT_COMPRESS},
		{NULL, 0, NULL, 0},
	};
	optind = 1;
	int ch;
	while ((ch = cli_getopt(c->nargs, c->args, CLI_SHARED_SHORTS "G", longopts, "compile")) != -1) {
		int taken = cli_shared_opt(&c->sh, ch, optarg);
		if (taken < 0)
			return AP_EXIT_USAGE;
		if (taken)
			continue;
		switch (ch) {
		case OPT_STD: c->std = optarg; break;
		case OPT_FAST: o->fast_math = true; break;
		case OPT_LINEINFO: o->lineinfo = true; break;
		case OPT_MAXRREG:
			if (parse_int("--maxrregcount", optarg, 16, 255, &c->maxrreg))
				return AP_EXIT_USAGE;
			break;
		case OPT_DEPFILE: c->depfile = optarg; break;
		case OPT_EMIT: c->emit = optarg; break;
		case OPT_NOCACHE: o->no_cache = true; break;
		case OPT_NOPCH: o->no_pch = true; break;
		case OPT_COMPRESS: c->compress = optarg; break;
		case 'G': o->device_debug = true; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(usage_text2, stdout);
			usage_more(stdout);
			return AP_EXIT_OK;
		default: c->bad_option = true; return AP_EXIT_USAGE;
		}
	}
	o->rdc = c->sh.rdc;
	o->lto = c->sh.lto;
	c->out = c->sh.output;
	c->verbose = c->sh.verbose;
	c->jobs = c->sh.jobs;
	c->sources = (const char *const *)c->args + optind;
	c->nsources = optind < c->nargs ? (size_t)(c->nargs - optind) : 0;
	return -1;
}

/* DIR/STEM.fatbin, the file -o DIR/ writes for source s. */
static void
per_file_path(const struct compile_cli *c, size_t s, char *path, size_t size)
{
	char stem[PATH_MAX];
	size_t n = strlen(c->out);
	snprintf(path, size, "%.*s/%s.fatbin", (int)(n > 1 && c->out[n - 1] == '/' ? n - 1 : n), c->out,
	         base_stem(c->sources[s], stem, sizeof(stem)));
}

/* DIR/STEM.TARGET.{cubin,ptx,ltoir}, the file --emit-dir DIR writes for image im. */
static void
emit_path(const struct compile_cli *c, const struct fb_compile_image *im, char *path, size_t size)
{
	char stem[PATH_MAX], tn[32];
	ap_target_name(&im->target, tn, sizeof(tn));
	snprintf(path, size, "%s/%s.%s.%s", c->emit, base_stem(c->sources[im->source], stem, sizeof(stem)), tn,
	         im->kind == FB_KIND_PTX ? "ptx" : im->kind == FB_KIND_LTO ? "ltoir" : "cubin");
}

/* Every file the command writes against the files it read (n of them: the sources, or every
 * file of the compile once it ran); res NULL: before the compile (--emit-dir's names need its
 * images). 0 or the exit code (reported). */
static int
check_outputs(const struct compile_cli *c, const struct fb_compile_result *res, const char *const *in, size_t n)
{
	char path[PATH_MAX * 2 + 64];
	int rc = 0;
	if (c->out && !c->per_file)
		rc = check_output("compile", "-o", c->out, in, n);
	for (size_t s = 0; !rc && c->out && c->per_file && s < c->nsources; s++) {
		per_file_path(c, s, path, sizeof(path));
		rc = check_output("compile", "output", path, in, n);
	}
	for (size_t i = 0; !rc && c->emit && res && i < res->nimages; i++) {
		emit_path(c, &res->images[i], path, sizeof(path));
		rc = check_output("compile", "output", path, in, n);
	}
	if (!rc && c->depfile)
		rc = check_output("compile", "--depfile", c->depfile, in, n);
	return rc;
}

/* --compress MODE into c->cmode and c->compress_elf; 0 or -1 (reported). */
static int
parse_compress(struct compile_cli *c)
{
	c->cmode = FB_COMPRESS_ZSTD;
	c->compress_elf = false;
	if (strcmp(c->compress, "default") == 0) {
	} else if (strcmp(c->compress, "none") == 0) {
		c->cmode = FB_COMPRESS_NONE;
	} else if (strcmp(c->compress, "zstd") == 0) {
		c->compress_elf = true;
	} else if (strcmp(c->compress, "lz4") == 0) {
		c->cmode = FB_COMPRESS_LZ4;
		c->compress_elf = true;
	} else {
		static const char *const modes[] = {"default", "none", "zstd", "lz4", NULL};
		cli_bad_value("compile", "--compress", c->compress, modes);
		c->bad_option = true; /* said in one line: no synopsis */
		return -1;
	}
	return 0;
}

/* What the options say together; 0, -1 (reported: a usage error) or an exit code (reported,
 * no synopsis: an output that names an input). Sets c->per_file. */
static int
check_args(struct compile_cli *c)
{
	const char *mode = c->sh.remote.mode ? c->sh.remote.mode : c->cfg.remote_cache_mode;
	if (mode && *mode && cli_remote_mode_check(mode, "compile")) {
		c->bad_option = true;
		return -1;
	}
	if (cli_rexec_url_check(c->sh.remote.exec ? c->sh.remote.exec : c->cfg.remote_executor, "compile"))
		return -1;
	if (c->nsources == 0) {
		warn("compile: no kernel sources given");
		return -1;
	}
	if (!c->out && !c->emit) {
		warn("compile: nothing to write: give -o OUT.fatbin (or --emit-dir DIR)");
		return -1;
	}
	if (c->depfile && !c->out) {
		warn("compile: --depfile needs -o (the depfile's target)");
		return -1;
	}
	if (c->std && !fb_compile_std_ok(c->std)) {
		warn("compile: unsupported --std '%s' (use c++17 or c++20)", c->std);
		return -1;
	}
	if (parse_compress(c))
		return -1;
	/* -o DIR/ (or an existing directory): one fatbin per kernel file, DIR/NAME.fatbin. */
	struct stat ost;
	const char *out = c->out;
	c->per_file = out && (out[strlen(out) - 1] == '/' || (stat(out, &ost) == 0 && S_ISDIR(ost.st_mode)));
	int rc = check_outputs(c, NULL, c->sources, c->nsources);
	if (rc)
		return rc;
	if (out && !c->per_file && c->nsources > 1)
		warn("warning: %s will hold the images of %zu kernel files, but a CUDA module loads one image "
		     "per GPU, so only one file's kernels can be found; give one file per fatbin or -o DIR/",
		     out, c->nsources);
	if (c->emit || c->per_file) {
		char a[PATH_MAX], b[PATH_MAX];
		for (size_t i = 0; i < c->nsources; i++)
			for (size_t k = 0; k < i; k++)
				if (strcmp(base_stem(c->sources[i], a, sizeof(a)), base_stem(c->sources[k], b, sizeof(b))) == 0) {
					warn("compile: %s: %s and %s would write the same file names",
					     c->emit ? "--emit-dir" : "-o DIR/", c->sources[k], c->sources[i]);
					return -1;
				}
	}
	return 0;
}

/* The arch list resolved (warnings printed) into a malloc'd array; 0 or the exit code. */
static int
resolve_targets(const struct fb_config *cfg, const char *list, struct ap_target **out, size_t *n)
{
	struct ap_error aerr = {0};
	struct ap_archlist *l = NULL;
	struct ap_resolve_opts ro = {.config = cfg};
	if (ap_archlist_resolve(list, &ro, &l, &aerr))
		return cli_stopped() ? cli_stop_exit("compile") : fail_archlist(&aerr, list, &ro);
	warn_archlist(l);
	*out = targets_copy(l, n);
	ap_archlist_free(l);
	return 0;
}

/* Without a cache the PCH directory goes beside the output (the current one for none). */
static void
pch_parent(const char *out, char *buf, size_t n)
{
	snprintf(buf, n, "%s", out ? out : ".");
	char *sl = strrchr(buf, '/');
	if (!sl)
		snprintf(buf, n, ".");
	else if (sl == buf)
		sl[1] = 0;
	else
		*sl = 0;
}

/* The rest of o: what the command line and the environment give the library. */
static void
fill_opts(struct fb_compile_opts *o, const struct compile_cli *c, struct progress *pr)
{
	o->include_dirs = c->sh.incs;
	o->ninclude_dirs = c->sh.nincs;
	o->defines = c->sh.defs;
	o->ndefines = c->sh.ndefs;
	o->std = c->std;
	o->maxrregcount = c->maxrreg;
	o->nvrtc_opts = c->xopts.v;
	o->nnvrtc_opts = c->xopts.n;
	o->jobs = c->jobs;
	o->progress = on_progress;
	o->progress_ctx = pr;
	o->cancel = cli_cancel_flag();
	cli_remote_resolve(&c->cfg, &c->sh.remote, &o->remote);
	if (o->remote.cache && !*o->remote.cache)
		o->remote.cache = NULL;
	if (o->remote.exec && !*o->remote.exec)
		o->remote.exec = NULL;
	o->cache_basedir = c->cfg.cache_basedir;
	o->config = &c->cfg;
}

/* The fatbuild-nvrtc-worker in ../libexec/fatbuild/ from this program's directory (installed
 * and built there: off the PATH, since it is run only by remote executors), for remote
 * execution; "" when this program's path cannot be read. */
static void
worker_path(char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	buf[0] = 0;
	if (n <= 0)
		return;
	self[n] = 0;
	char *sl = strrchr(self, '/');
	if (sl)
		snprintf(buf, size, "%.*s/../libexec/fatbuild/fatbuild-nvrtc-worker", (int)(sl - self), self);
}

/* A failed compile: the log (the first failing target's), what NVRTC said without one, and a
 * hint for host headers. Returns AP_EXIT_FAIL. */
static int
report_compile_error(const struct fb_compile_result *res, const struct fb_error *err)
{
	fputs(res->log, stderr);
	if (res->log[0] && res->log[strlen(res->log) - 1] != '\n')
		fputc('\n', stderr);
	if (err->msg[0] && !strstr(res->log, err->msg)) /* no log: say what NVRTC returned */
		warn("compile: %s", err->msg);
	warn("compile: failed for %s; other jobs cancelled, nothing written", res->failed_target);
	char hdr[256];
	if (fb_nvrtc_missing_host_header(res->log, hdr, sizeof(hdr)))
		warn("compile: NVRTC compiles device code only and has no host headers such as <%s>; build host "
		     "code with nvcc (fatbuild build --backend nvcc)",
		     hdr);
	return AP_EXIT_FAIL;
}

/* Packs r into one container at path; 0 or the exit code. */
static int
write_fatbin(const char *path, const struct fb_compile_result *r, const struct fb_compile_opts *o,
             const struct compile_cli *c)
{
	struct fb_error err = {0};
	unsigned char *fat = NULL;
	size_t fatsize = 0;
	int rc = 0;
	if (fb_compile_pack(r, o, c->cmode, c->compress_elf, &fat, &fatsize, &err) ||
	    fb_write_file_atomic(path, fat, fatsize, 0666, &err))
		rc = fail_fb(&err);
	free(fat);
	return rc;
}

/* -o DIR/: one container per kernel file, each a shallow result holding that file's images. */
static int
write_per_file(const struct fb_compile_result *res, const struct fb_compile_opts *o, const struct compile_cli *c)
{
	struct fb_error derr = {0};
	if (fb_dir_make_output(c->out, &derr)) {
		warn("compile: %s", derr.msg);
		return AP_EXIT_FAIL;
	}
	struct fb_compile_result one = *res;
	for (size_t s = 0; s < c->nsources; s++) {
		size_t first = 0, n = 0;
		while (first < res->nimages && res->images[first].source != s)
			first++;
		while (first + n < res->nimages && res->images[first + n].source == s)
			n++;
		one.images = res->images + first;
		one.nimages = n;
		char path[PATH_MAX * 2 + 16];
		per_file_path(c, s, path, sizeof(path));
		int rc = write_fatbin(path, &one, o, c);
		if (rc)
			return rc;
	}
	return 0;
}

/* --emit-dir DIR: each image as DIR/STEM.TARGET.{cubin,ptx,ltoir}. */
static int
write_emit(const struct fb_compile_result *res, const struct compile_cli *c)
{
	struct fb_error err = {0};
	struct fb_error derr = {0};
	if (fb_dir_make_output(c->emit, &derr)) {
		warn("compile: %s", derr.msg);
		return AP_EXIT_FAIL;
	}
	for (size_t i = 0; i < res->nimages; i++) {
		const struct fb_compile_image *im = &res->images[i];
		char path[PATH_MAX * 2 + 64];
		emit_path(c, im, path, sizeof(path));
		if (fb_write_file_atomic(path, im->data, im->size, 0666, &err))
			return fail_fb(&err);
	}
	return 0;
}

/* Everything is in memory; now write, output first, depfile last. 0 or the exit code. */
static int
write_outputs(const struct fb_compile_result *res, const struct fb_compile_opts *o, const struct compile_cli *c)
{
	/* the headers are known now: none of them is overwritten either */
	int rc = check_outputs(c, res, (const char *const *)res->deps, res->ndeps);
	if (!rc && c->out)
		rc = c->per_file ? write_per_file(res, o, c) : write_fatbin(c->out, res, o, c);
	if (!rc && c->emit)
		rc = write_emit(res, c);
	struct fb_error err = {0};
	if (!rc && c->depfile &&
	    fb_depfile_write(c->depfile, c->out, (const char *const *)res->deps, res->ndeps, &err))
		rc = fail_fb(&err);
	return rc;
}

/* -v: what ran, and how the caches did. */
static void
summary(const struct fb_compile_result *res, const struct fb_compile_opts *o, const struct compile_cli *c,
        double seconds)
{
	warn("compile: %zu images for %zu targets from %zu sources: %zu jobs, %zu cached, %zu compiled "
	     "(NVRTC %d.%d, -j %d) in %.2fs",
	     res->nimages, o->ntargets, c->nsources, res->njobs, res->ncached, res->ncompiled, res->nvrtc_version / 1000,
	     res->nvrtc_version % 1000 / 10, c->jobs ? c->jobs : fb_compile_default_jobs(), seconds);
	if (res->pch_made + res->pch_used + res->pch_refused)
		warn("compile: PCH made %zu, used %zu, refused %zu", res->pch_made, res->pch_used, res->pch_refused);
	if (o->remote.cache) {
		char shown[512];
		fb_remote_url_redact(o->remote.cache, shown, sizeof(shown));
		warn("compile: remote cache %s: %zu of %zu jobs served", shown, res->nremote, res->njobs);
	}
	if (o->remote.exec) {
		char shown[512];
		fb_remote_url_redact(o->remote.exec, shown, sizeof(shown));
		warn("compile: remote-exec %s: %zu of %zu jobs ran there", shown, res->nexecuted, res->njobs);
	}
}

/* Compiles, then writes; the exit code. */
static int
compile_and_write(struct fb_compile_opts *o, const struct compile_cli *c)
{
	double t0 = now();
	struct fb_compile_result *res = NULL;
	struct fb_error err = {0};
	int rc = fb_compile(c->sources, c->nsources, o, &res, &err);
	/* Corrupt cache entries are always reported: a recurring one points at a failing disk. */
	warn_lines(res ? res->cache_note : NULL);
	if (cli_stopped()) { /* checked once more below, before anything is written */
		rc = cli_stop_exit("compile");
		goto done;
	}
	if (res && res->server_note[0] && c->verbose)
		warn("compile: note: %s", res->server_note);
	if (res && res->exec_note[0]) { /* the executor failed: one line, always */
		char shown[512];
		fb_remote_url_redact(o->remote.exec, shown, sizeof(shown));
		warn("remote-exec: %s: %s; compiling here", shown, res->exec_note);
	}
	if (res && res->pch_off[0] && (c->verbose || !res->pch_unsupported))
		warn("compile: note: %s; compiled without", res->pch_off);
	if (rc == FB_ECOMPILE && res && res->log) {
		rc = report_compile_error(res, &err);
		goto done;
	}
	if (rc) {
		rc = fail_fb(&err);
		goto done;
	}
	if (res->log)
		fputs(res->log, stderr); /* warnings */
	if (cli_stopped()) {
		rc = cli_stop_exit("compile");
		goto done;
	}
	rc = write_outputs(res, o, c);
	if (o->remote.exec && *o->remote.exec) /* for `fatbuild build -v`'s summary */
		fb_exec_tally_add(o->remote.state, 0, res->nexecuted, res->ncached, res->njobs);
	if (!rc && c->verbose)
		summary(res, o, c, now() - t0);
done:
	fb_compile_result_free(res);
	return rc;
}

int
cmd_compile(int argc, char **argv)
{
	struct compile_cli c = {.sh.spec = &shared_spec, .compress = "default"};
	struct fb_compile_opts o = {0};
	fb_config_read(&c.cfg);
	int rc = take_xnvrtc(&c, argc, argv) ? AP_EXIT_USAGE : parse_args(&c, &o);
	const char *mode = c.sh.remote.mode ? c.sh.remote.mode : c.cfg.remote_cache_mode;
	if (rc < 0 && cli_remote_mode_env(&c.cfg, mode, "compile")) {
		cli_free(&c);
		return AP_EXIT_USAGE;
	}
	int bad = rc < 0 ? check_args(&c) : 0;
	if (bad)
		rc = bad < 0 ? AP_EXIT_USAGE : bad;
	if (rc >= 0) {
		if (rc == AP_EXIT_USAGE && bad <= 0 && !c.bad_option)
			fputs(synopsis, stderr);
		cli_free(&c);
		return rc;
	}
	uint64_t max_size;
	if ((rc = cli_cache_limit(&c.cfg, &max_size))) {
		cli_free(&c);
		return rc;
	}
	if (!c.jobs)
		note_max_jobs(&c.cfg, "compile");
	cli_supervise(); /* from here on a signal stops the NVRTC jobs and the probe child too */
	struct ap_target *targets = NULL;
	size_t nt = 0;
	rc = resolve_targets(&c.cfg, c.sh.arch_list ? c.sh.arch_list : c.cfg.torch_cuda_arch_list, &targets, &nt);
	const char *bv = c.cfg.compile_verbose; /* `fatbuild build -v` with its compile server */
	if (bv && strcmp(bv, "1") == 0)
		c.verbose = 1;
	if (rc == 0) {
		struct progress pr = {.show = c.verbose || isatty(2), .verbose = c.verbose};
		char pchp[PATH_MAX], worker[PATH_MAX + 32];
		pch_parent(c.out, pchp, sizeof(pchp));
		worker_path(worker, sizeof(worker));
		o.pch_parent = pchp;
		o.targets = targets;
		o.ntargets = nt;
		fill_opts(&o, &c, &pr);
		o.remote.worker = worker;
		rc = compile_and_write(&o, &c);
		if (!o.no_cache && !cli_stopped())
			cli_cache_trim_after(max_size, c.verbose);
	}
	free(targets);
	cli_free(&c);
	return rc;
}
