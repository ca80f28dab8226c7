/* cmd_flags.c: `fatbuild flags`: an arch list → compiler flags (docs/archlist.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/config.h"

static const char synopsis[] =
	"usage: fatbuild flags [--arch-list LIST] [--format FORMAT] [--cuda-version X.Y]\n"
	"                      [--drop-unsupported] [--fallback LIST] [--clang-version N]\n"
	"Run 'fatbuild flags --help' for the accepted lists, formats and examples.\n";

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild flags [--arch-list LIST] [--format FORMAT] [--cuda-version X.Y]\n"
	        "                      [--drop-unsupported] [--fallback LIST] [--clang-version N]\n"
	        "       fatbuild --arch-list LIST [--format FORMAT] ...   (same thing)\n"
	        "\n"
	        "Prints the flags that build for the GPUs of an arch list, checked against the CUDA toolkit\n"
	        "in use (CUDA_HOME, else the nvcc on PATH, else /usr/local/cuda).\n"
	        "\n"
	        "LIST mixes any of these, separated by spaces, tabs, newlines, ';' or ',':\n"
	        "  8.6  9.0a  10.0f      SASS for that arch (PyTorch syntax); add +PTX for PTX too\n"
	        "  86   90a   100f       CMake syntax: SASS and PTX; 86-real = SASS only, 86-virtual = PTX only\n"
	        "  sm_86  compute_86     nvcc names: SASS / PTX\n"
	        "  Turing Ampere Ada Hopper Blackwell Ampere+Tegra Blackwell+Tegra Rubin (any case)\n"
	        "                        PyTorch's named lists; Name+PTX adds PTX for its newest arch\n"
	        "  Orin Lovelace Xavier Thor Hopper(A) Blackwell(A) ...   meson's names (SASS; +PTX for PTX)\n"
	        "  native                the visible GPUs (an error when there is none)\n"
	        "  auto                  the visible GPUs, else the fallback list (with a notice)\n"
	        "  all  all-major        every arch / the oldest arch of every major, plus PTX for the newest\n"
	        "Without --arch-list, TORCH_CUDA_ARCH_LIST is read; unset or empty means auto.\n"
	        "\n"
	        "Options:\n"
	        "  --arch-list LIST      the arch list (also accepted as the only operand)\n"
	        "  --format FORMAT       nvcc (default): -gencode=arch=compute_86,code=sm_86 ...\n"
	        "                        torch: 8.0 8.6+PTX   cmake: 80-real;86   list: 80;86\n"
	        "                        clang: --offload-arch=sm_86 ...   bazel: sm_80;compute_86:sm_86,compute_86\n"
	        "                        nvrtc: one -arch= per line (one NVRTC compile each)   json: everything\n"
	        "  --cuda-version X.Y    check against the built-in table of CUDA X.Y (11.8, 12.0-12.6,\n"
	        "                        12.8, 12.9, 13.0-13.5)\n"
	        "                        instead of the installed toolkit\n"
	        "  --drop-unsupported    drop arches the toolkit lacks, with a warning, instead of failing\n"
	        "                        (for one list shared by several toolkits)\n"
	        "  --clang-version N     --format clang for clang N: 22+ gets --cuda-include-ptx=sm_X for PTX,\n"
	        "                        older --no-cuda-include-ptx=sm_X for SASS only; for 14 and 22 an arch\n"
	        "                        that clang cannot compile is an error (default: a spelling all read)\n"
	        "  --fallback LIST       what auto builds for when no GPU is visible\n"
	        "                        (default: ARCHPROBE_FALLBACK, else all-major)\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "Environment: TORCH_CUDA_ARCH_LIST (the default list), ARCHPROBE_FALLBACK (auto's fallback),\n"
	        "ARCHPROBE_ARCHS (compute capabilities that replace device probing, e.g. \"8.6 9.0\"), CUDA_HOME.\n"
	        "\n"
	        "Examples:\n"
	        "  fatbuild flags --arch-list \"8.0 8.6+PTX\"\n"
	        "      -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_86,code=compute_86\n"
	        "  fatbuild --arch-list Ampere --format cmake            80-real;86\n"
	        "  fatbuild --arch-list \"9.0a 10.0f+PTX\" --format torch   9.0a 10.0f+PTX\n"
	        "  nvcc $(fatbuild --arch-list \"$TORCH_CUDA_ARCH_LIST\") -c kernel.cu\n"
	        "  cmake -DCMAKE_CUDA_ARCHITECTURES=\"$(fatbuild --arch-list auto --format cmake)\" ..\n"
	        "  fatbuild --arch-list \"7.0 7.5 8.0\" --cuda-version 13.0 --drop-unsupported\n"
	        "\n"
	        "Warnings and notices go to stderr as \"fatbuild: warning: ...\".\n"
	        "Exit codes: %d success; %d native found no GPU (the message mentions CUDA_VISIBLE_DEVICES when\n"
	        "set), or no toolkit; %d bad usage, unparseable item or unsupported arch (stdout stays empty);\n"
	        "%d no CUDA driver, %d stub driver, %d driver error, %d probe timed out (native only).\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_NODRIVER, AP_EXIT_STUB, AP_EXIT_DRIVER, AP_EXIT_TIMEOUT);
}

struct flags_args {
	const char *list, *fallback, *cuda;
	bool have_list, drop, have_fmt;
	int fmt, clang; /* clang: --clang-version, or -1 */
};

/* The options and the one operand into f. Returns -1 to go on, else the exit code (help
 * printed, or the usage error reported). */
static int
parse_args(int argc, char **argv, struct flags_args *f)
{
	enum { OPT_ARCH = 256, OPT_FORMAT, OPT_CUDA, OPT_DROP, OPT_FALLBACK, OPT_CLANG };
	static const struct option longopts[] = {
		{"arch-list", required_argument, NULL, OPT_ARCH},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"cuda-version", required_argument, NULL, OPT_CUDA},
		{"drop-unsupported", no_argument, NULL, OPT_DROP},
		{"fallback", required_argument, NULL, OPT_FALLBACK},
		{"clang-version", required_argument, NULL, OPT_CLANG},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "+h", longopts, "flags")) != -1) {
		switch (c) {
		case OPT_ARCH:
			f->list = optarg;
			f->have_list = true;
			break;
		case OPT_FORMAT:
			f->fmt = ap_format_parse(optarg);
			f->have_fmt = true;
			if (f->fmt < 0) {
				warn("flags: unknown format '%s' (nvcc, torch, cmake, clang, nvrtc, bazel, json, list)", optarg);
				return AP_EXIT_USAGE;
			}
			break;
		case OPT_CUDA: f->cuda = optarg; break;
		case OPT_DROP: f->drop = true; break;
		case OPT_FALLBACK: f->fallback = optarg; break;
		case OPT_CLANG: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 3 || v > 999) {
				warn("flags: invalid --clang-version '%s' (the clang major version, e.g. 22)", optarg);
				return AP_EXIT_USAGE;
			}
			f->clang = (int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return AP_EXIT_OK;
		default: return AP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		if (f->have_list || optind + 1 < argc) {
			warn("flags: unexpected argument '%s' (give the list once, quoted)",
			     argv[f->have_list ? optind : optind + 1]);
			fputs(synopsis, stderr);
			return AP_EXIT_USAGE;
		}
		f->list = argv[optind];
		f->have_list = true;
	}
	return -1;
}

/* The toolkit the list is checked against: --cuda-version's table, else the installed one.
 * 0 or the exit code. */
static int
load_toolkit(const char *cuda, struct ap_toolkit *tk)
{
	struct ap_error err = {0};
	if (cuda) {
		int v = ap_cuda_version_parse(cuda);
		if (v < 0) {
			warn("flags: invalid --cuda-version '%s' (write X.Y, e.g. 12.8)", cuda);
			return AP_EXIT_USAGE;
		}
		if (ap_toolkit_builtin(v, tk, &err))
			return fail_ap(&err);
	} else if (ap_toolkit_detect(NULL, tk, &err)) {
		warn("%s (or pass --cuda-version X.Y to check against a built-in table)", err.msg);
		return ap_exit_code(err.code);
	}
	return 0;
}

/* The list in its format on stdout, with a final newline; the exit code. */
static int
print_list(const struct ap_archlist *l, const struct flags_args *f)
{
	struct ap_error err = {0};
	char *out = NULL;
	int rc;
	if (f->clang >= 0)
		rc = ap_archlist_format_clang(l, f->clang, &out, &err);
	else
		rc = ap_archlist_format(l, (enum ap_format)f->fmt, &out, &err);
	if (rc)
		return fail_ap(&err);
	size_t n = strlen(out);
	fputs(out, stdout);
	if (n == 0 || out[n - 1] != '\n')
		fputc('\n', stdout);
	free(out);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		warn("flags: cannot write the output:");
		return AP_EXIT_FAIL;
	}
	return AP_EXIT_OK;
}

int
cmd_flags(int argc, char **argv)
{
	struct flags_args f = {.fmt = AP_FMT_NVCC, .clang = -1};
	struct fb_config cfg;
	fb_config_read(&cfg);
	int rc = parse_args(argc, argv, &f);
	if (rc >= 0)
		return rc;
	if (!f.have_list)
		f.list = cfg.torch_cuda_arch_list;
	if (f.clang >= 0 && f.have_fmt && f.fmt != AP_FMT_CLANG) {
		warn("flags: --clang-version applies to --format clang only");
		return AP_EXIT_USAGE;
	}
	if (f.clang >= 0)
		f.fmt = AP_FMT_CLANG;

	struct ap_toolkit tk;
	if ((rc = load_toolkit(f.cuda, &tk)) != 0)
		return rc;
	struct ap_resolve_opts opts = {.toolkit = &tk, .drop_unsupported = f.drop, .fallback = f.fallback, .config = &cfg};
	struct ap_archlist *l = NULL;
	struct ap_error err = {0};
	if (ap_archlist_resolve(f.list, &opts, &l, &err))
		return fail_archlist(&err, f.list, &opts);
	warn_archlist(l);
	rc = print_list(l, &f);
	ap_archlist_free(l);
	return rc;
}
