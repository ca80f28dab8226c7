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

static const char synopsis[] =
	"usage: fatbuild compile [--arch-list LIST] [-I DIR] [-D NAME[=VAL]] [--std c++17|c++20]\n"
	"                        [--use-fast-math] [-G] [--lineinfo] [--maxrregcount N] [-Xnvrtc OPT]\n"
	"                        [-j N] [--no-cache] [--no-pch] [--compress default|none|zstd|lz4]\n"
	"                        [--depfile FILE] [--emit-dir DIR] [-v] -o OUT.fatbin KERNELS.cu...\n";

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
	"                     capped by the cgroup CPU quota; 'fatbuild env' shows the figure)\n"
	"  --no-cache         neither read nor write the cache (local or remote)\n"
	"  --no-pch           no precompiled headers (by default the jobs of one arch share a\n"
	"                     worker process whose NVRTC parses the headers once; same output)\n"
	"  --remote-cache URL a shared cache speaking Bazel's HTTP cache protocol (URL/ac/, URL/cas/:\n"
	"                     nginx WebDAV, bazel-remote); default FATBUILD_REMOTE_CACHE. Asked after\n"
	"                     the local cache misses; hits are verified and kept locally; a failing\n"
	"                     server means local compiles and one warning\n"
	"  --remote-cache-mode read|readwrite\n"
	"                     read never uploads (default FATBUILD_REMOTE_CACHE_MODE, else readwrite)\n"
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
static const char usage_more[] =
	"\n"
	"One job per kernel file and SASS target, and per PTX target that has no SASS twin (a\n"
	"'12.0+PTX' is one NVRTC run giving both). Progress on a terminal: [3/7] sm_90 kernels.cu 0.8s.\n"
	"On an error the log of the first failing target is printed as file:line:col: error: ...\n"
	"[sm_90], the other jobs are cancelled and nothing is written.\n"
	"\n"
	"Cache: FATBUILD_CACHE_DIR, else $XDG_CACHE_HOME/fatbuild, else ~/.cache/fatbuild\n"
	"('fatbuild cache stats|clear'). FATBUILD_REMOTE_CACHE_HEADER: one header sent to the\n"
	"remote cache ('Authorization: Bearer TOKEN'); FATBUILD_REMOTE_CACHE_TIMEOUT: seconds per\n"
	"request (default 10); FATBUILD_CACHE_BASEDIR: paths below it enter the cache key relative\n"
	"to it (default: each source's directory), so checkouts in other places share entries.\n"
	"\n"
	"Examples:\n"
	"  fatbuild compile --arch-list \"8.0 9.0 12.0+PTX\" -o build/kernels/ softmax.cu gemm.cu\n"
	"  fatbuild compile --arch-list 9.0a -I include --depfile k.fatbin.d -o k.fatbin k.cu\n"
	"\n"
	"Exit codes: 0 success, 1 compile error or no NVRTC, 2 usage or bad arch list, 128+signal\n"
	"when stopped by SIGINT, SIGTERM or SIGHUP (its NVRTC jobs are stopped, nothing is written).\n";

enum { OPT_ARCH = 256, OPT_STD, OPT_FAST, OPT_LINEINFO, OPT_MAXRREG, OPT_DEPFILE, OPT_EMIT, OPT_NOCACHE,
       OPT_COMPRESS, OPT_RDC, OPT_LTO, OPT_NOPCH, OPT_REMOTE, OPT_REMOTE_MODE };

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
		fprintf(stderr, "[%zu/%zu] %s %s cached%s\n", p->done, p->total, p->target, p->source,
		        p->remote ? " (remote)" : "");
	else if (p->pch && pr->verbose)
		fprintf(stderr, "[%zu/%zu] %s %s %.1fs (%s)\n", p->done, p->total, p->target, p->source, p->seconds, p->pch);
	else
		fprintf(stderr, "[%zu/%zu] %s %s %.1fs\n", p->done, p->total, p->target, p->source, p->seconds);
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

/* mkdir -p; 0 or -1 with errno. */
static int
mkdirs(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == 0) {
			char c = *p;
			*p = 0;
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return -1;
			*p = c;
			if (!c)
				return 0;
		}
	}
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
cmd_compile(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch-list", required_argument, NULL, OPT_ARCH},
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
		{"rdc", no_argument, NULL, OPT_RDC},
		{"lto", no_argument, NULL, OPT_LTO},
		{"remote-cache", required_argument, NULL, OPT_REMOTE},
		{"remote-cache-mode", required_argument, NULL, OPT_REMOTE_MODE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct strv incs = {0}, defs = {0}, xopts = {0};
	const char *list = NULL, *out = NULL, *depfile = NULL, *emit = NULL, *std = NULL, *compress = "default";
	const char *remote = getenv("FATBUILD_REMOTE_CACHE"), *remote_mode = getenv("FATBUILD_REMOTE_CACHE_MODE");
	int have_list = 0, verbose = 0, jobs = 0, maxrreg = 0, rc;
	struct fb_compile_opts o = {0};

	/* -Xnvrtc OPT is a two-token option getopt cannot spell; take it out first. */
	char **args = xcalloc((size_t)argc + 1, sizeof(*args));
	int nargs = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-Xnvrtc") == 0 || strcmp(argv[i], "--Xnvrtc") == 0) {
			if (i + 1 >= argc) {
				warn("compile: option '%s' needs a value", argv[i]);
				fputs(synopsis, stderr);
				free(args);
				return AP_EXIT_USAGE;
			}
			push(&xopts, argv[++i]);
		} else if (strncmp(argv[i], "-Xnvrtc=", 8) == 0) {
			push(&xopts, argv[i] + 8);
		} else {
			args[nargs++] = argv[i];
		}
	}
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(nargs, args, ":o:I:D:j:Gvh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ARCH: list = optarg; have_list = 1; break;
		case OPT_STD: std = optarg; break;
		case OPT_FAST: o.fast_math = true; break;
		case OPT_LINEINFO: o.lineinfo = true; break;
		case OPT_MAXRREG:
			if (parse_int("--maxrregcount", optarg, 16, 255, &maxrreg))
				goto usage;
			break;
		case OPT_DEPFILE: depfile = optarg; break;
		case OPT_EMIT: emit = optarg; break;
		case OPT_NOCACHE: o.no_cache = true; break;
		case OPT_NOPCH: o.no_pch = true; break;
		case OPT_COMPRESS: compress = optarg; break;
		case OPT_RDC: o.rdc = true; break;
		case OPT_LTO: o.lto = true; break;
		case OPT_REMOTE: remote = optarg; break;
		case OPT_REMOTE_MODE: remote_mode = optarg; break;
		case 'o': out = optarg; break;
		case 'I': push(&incs, optarg); break;
		case 'D': push(&defs, optarg); break;
		case 'j':
			if (parse_int("-j value", optarg, 1, 1024, &jobs))
				goto usage;
			break;
		case 'G': o.device_debug = true; break;
		case 'v': verbose = 1; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(usage_more, stdout);
			free(args);
			return AP_EXIT_OK;
		case ':':
			warn("compile: option '%s' needs a value", args[optind - 1]);
			goto usage;
		default:
			warn("compile: unknown option '%s'", args[optind - 1]);
			goto usage;
		}
	}
	if (remote_mode && *remote_mode && strcmp(remote_mode, "read") && strcmp(remote_mode, "readwrite")) {
		warn("compile: invalid --remote-cache-mode '%s' (read or readwrite)", remote_mode);
		goto usage;
	}
	if (optind >= nargs) {
		warn("compile: no kernel sources given");
		goto usage;
	}
	if (!out && !emit) {
		warn("compile: nothing to write: give -o OUT.fatbin (or --emit-dir DIR)");
		goto usage;
	}
	if (depfile && !out) {
		warn("compile: --depfile needs -o (the depfile's target)");
		goto usage;
	}
	if (std && strcmp(std, "c++17") && strcmp(std, "c++20") && strcmp(std, "c++14") && strcmp(std, "c++11")) {
		warn("compile: unsupported --std '%s' (use c++17 or c++20)", std);
		goto usage;
	}
	enum fb_compress cmode = FB_COMPRESS_ZSTD;
	bool compress_elf = false;
	if (strcmp(compress, "default") == 0) {
	} else if (strcmp(compress, "none") == 0) {
		cmode = FB_COMPRESS_NONE;
	} else if (strcmp(compress, "zstd") == 0) {
		compress_elf = true;
	} else if (strcmp(compress, "lz4") == 0) {
		cmode = FB_COMPRESS_LZ4;
		compress_elf = true;
	} else {
		warn("compile: unknown --compress '%s' (default, none, zstd, lz4)", compress);
		goto usage;
	}
	const char *const *sources = (const char *const *)args + optind;
	size_t nsources = (size_t)(nargs - optind);
	/* -o DIR/ (or an existing directory): one fatbin per kernel file, DIR/NAME.fatbin. */
	struct stat ost;
	int per_file = out && (out[strlen(out) - 1] == '/' || (stat(out, &ost) == 0 && S_ISDIR(ost.st_mode)));
	if (out && !per_file && nsources > 1)
		warn("warning: %s will hold the images of %zu kernel files, but a CUDA module loads one image "
		     "per GPU, so only one file's kernels can be found; give one file per fatbin or -o DIR/",
		     out, nsources);
	if (emit || per_file) {
		char a[PATH_MAX], b[PATH_MAX];
		for (size_t i = 0; i < nsources; i++)
			for (size_t k = 0; k < i; k++)
				if (strcmp(base_stem(sources[i], a, sizeof(a)), base_stem(sources[k], b, sizeof(b))) == 0) {
					warn("compile: %s: %s and %s would write the same file names", emit ? "--emit-dir" : "-o DIR/",
					     sources[k], sources[i]);
					goto usage;
				}
	}
	if (!have_list)
		list = getenv("TORCH_CUDA_ARCH_LIST");

	cli_supervise(); /* from here on a signal stops the NVRTC jobs and the probe child too */

	/* Targets. */
	struct ap_error aerr = {0};
	struct ap_archlist *l = NULL;
	struct ap_resolve_opts ro = {0};
	if (ap_archlist_resolve(list, &ro, &l, &aerr)) {
		free(args);
		free(incs.v);
		free(defs.v);
		free(xopts.v);
		return cli_stopped() ? cli_stop_exit("compile") : fail_ap(&aerr);
	}
	for (size_t i = 0; i < ap_archlist_nwarnings(l); i++)
		warn("warning: %s", ap_archlist_warning(l, i));
	size_t nt = ap_archlist_count(l);
	struct ap_target *targets = xcalloc(nt ? nt : 1, sizeof(*targets));
	for (size_t i = 0; i < nt; i++)
		targets[i] = *ap_archlist_get(l, i);
	ap_archlist_free(l);

	const char *bv = getenv("FATBUILD_COMPILE_VERBOSE"); /* `fatbuild build -v` with its compile server */
	if (bv && strcmp(bv, "1") == 0)
		verbose = 1;
	struct progress pr = {.show = verbose || isatty(2), .verbose = verbose};
	/* Without a cache the PCH directory goes beside the output. */
	char pchp[PATH_MAX];
	snprintf(pchp, sizeof(pchp), "%s", out);
	char *sl = strrchr(pchp, '/');
	if (!sl)
		snprintf(pchp, sizeof(pchp), ".");
	else if (sl == pchp)
		sl[1] = 0;
	else
		*sl = 0;
	o.pch_parent = pchp;
	o.targets = targets;
	o.ntargets = nt;
	o.include_dirs = incs.v;
	o.ninclude_dirs = incs.n;
	o.defines = defs.v;
	o.ndefines = defs.n;
	o.std = std;
	o.maxrregcount = maxrreg;
	o.nvrtc_opts = xopts.v;
	o.nnvrtc_opts = xopts.n;
	o.jobs = jobs;
	o.progress = on_progress;
	o.progress_ctx = &pr;
	o.cancel = cli_cancel_flag();
	o.remote_cache = remote && *remote ? remote : NULL;
	o.remote_header = getenv("FATBUILD_REMOTE_CACHE_HEADER");
	o.remote_read_only = remote_mode && strcmp(remote_mode, "read") == 0;
	const char *tmo = getenv("FATBUILD_REMOTE_CACHE_TIMEOUT");
	o.remote_timeout_ms = tmo && *tmo ? (long)(strtod(tmo, NULL) * 1000) : 0;
	o.cache_basedir = getenv("FATBUILD_CACHE_BASEDIR");

	double t0 = now();
	struct fb_compile_result *res = NULL;
	struct fb_error err = {0};
	rc = fb_compile(sources, nsources, &o, &res, &err);
	/* Corrupt cache entries are always reported: a recurring one points at a failing disk. */
	warn_lines(res ? res->cache_note : NULL);
	if (cli_stopped()) { /* checked once more below, before anything is written */
		rc = cli_stop_exit("compile");
		goto done;
	}
	if (res && res->server_note[0] && verbose)
		warn("compile: note: %s", res->server_note);
	if (res && res->pch_off[0] && (verbose || !strstr(res->pch_off, "no automatic-PCH API")))
		warn("compile: note: %s; compiled without", res->pch_off);
	if (rc == FB_ECOMPILE && res && res->log) {
		fputs(res->log, stderr);
		if (res->log[0] && res->log[strlen(res->log) - 1] != '\n')
			fputc('\n', stderr);
		if (err.msg[0] && !strstr(res->log, err.msg)) /* no log: say what NVRTC returned */
			warn("compile: %s", err.msg);
		warn("compile: failed for %s; other jobs cancelled, nothing written", res->failed_target);
		char hdr[256];
		if (fb_nvrtc_missing_host_header(res->log, hdr, sizeof(hdr)))
			warn("compile: NVRTC compiles device code only and has no host headers such as <%s>; build host "
			     "code with nvcc (fatbuild build --backend nvcc)",
			     hdr);
		rc = AP_EXIT_FAIL;
		goto done;
	}
	if (rc) {
		rc = fail_fb(&err);
		goto done;
	}
	if (res->log)
		fputs(res->log, stderr); /* warnings */

	/* Everything is in memory; now write, output first, depfile last. */
	if (cli_stopped()) {
		rc = cli_stop_exit("compile");
		goto done;
	}
	if (out && per_file) {
		if (mkdirs(out)) {
			warn("compile: cannot create %s:", out);
			rc = AP_EXIT_FAIL;
			goto done;
		}
		/* one container per kernel file: a shallow result holding that file's images */
		struct fb_compile_result one = *res;
		for (size_t s = 0; s < nsources; s++) {
			size_t first = 0, n = 0;
			while (first < res->nimages && res->images[first].source != s)
				first++;
			while (first + n < res->nimages && res->images[first + n].source == s)
				n++;
			one.images = res->images + first;
			one.nimages = n;
			char stem[PATH_MAX], path[PATH_MAX * 2 + 16];
			snprintf(path, sizeof(path), "%s/%s.fatbin", out, base_stem(sources[s], stem, sizeof(stem)));
			unsigned char *fat = NULL;
			size_t fatsize = 0;
			if (fb_compile_pack(&one, &o, cmode, compress_elf, &fat, &fatsize, &err) ||
			    fb_write_file_atomic(path, fat, fatsize, 0666, &err)) {
				free(fat);
				rc = fail_fb(&err);
				goto done;
			}
			free(fat);
		}
	} else if (out) {
		unsigned char *fat = NULL;
		size_t fatsize = 0;
		if (fb_compile_pack(res, &o, cmode, compress_elf, &fat, &fatsize, &err) ||
		    fb_write_file_atomic(out, fat, fatsize, 0666, &err)) {
			free(fat);
			rc = fail_fb(&err);
			goto done;
		}
		free(fat);
	}
	if (emit) {
		struct fb_error e2 = {0};
		if (mkdirs(emit)) {
			warn("compile: cannot create %s:", emit);
			rc = AP_EXIT_FAIL;
			goto done;
		}
		for (size_t i = 0; i < res->nimages; i++) {
			const struct fb_compile_image *im = &res->images[i];
			char stem[PATH_MAX], tn[32], path[PATH_MAX * 2 + 64];
			ap_target_name(&im->target, tn, sizeof(tn));
			snprintf(path, sizeof(path), "%s/%s.%s.%s", emit, base_stem(sources[im->source], stem, sizeof(stem)),
			         tn, im->kind == FB_KIND_PTX ? "ptx" : im->kind == FB_KIND_LTO ? "ltoir" : "cubin");
			if (fb_write_file_atomic(path, im->data, im->size, 0666, &e2)) {
				rc = fail_fb(&e2);
				goto done;
			}
		}
	}
	if (depfile && fb_depfile_write(depfile, out, (const char *const *)res->deps, res->ndeps, &err)) {
		rc = fail_fb(&err);
		goto done;
	}
	if (verbose)
		warn("compile: %zu images for %zu targets from %zu sources: %zu jobs, %zu cached, %zu compiled "
		     "(NVRTC %d.%d, -j %d) in %.2fs",
		     res->nimages, nt, nsources, res->njobs, res->ncached, res->ncompiled, res->nvrtc_version / 1000,
		     res->nvrtc_version % 1000 / 10, jobs ? jobs : fb_compile_default_jobs(), now() - t0);
	if (verbose && res->pch_made + res->pch_used + res->pch_refused)
		warn("compile: PCH made %zu, used %zu, refused %zu", res->pch_made, res->pch_used, res->pch_refused);
	if (verbose && o.remote_cache)
		warn("compile: remote cache %s: %zu of %zu jobs served", o.remote_cache, res->nremote, res->njobs);
	rc = AP_EXIT_OK;
done:
	fb_compile_result_free(res);
	free(targets);
	free(args);
	free(incs.v);
	free(defs.v);
	free(xopts.v);
	return rc;
usage:
	fputs(synopsis, stderr);
	free(args);
	free(incs.v);
	free(defs.v);
	free(xopts.v);
	return AP_EXIT_USAGE;
}
