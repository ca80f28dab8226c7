/* cmd_check.c: fatbuild check: will these libraries run on these GPUs, before run time
 * (fb_check; docs/check-environment.md, docs/fatbuild-inspect.md "check"). */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check_report.h"
#include "cli.h"
#include "base/config.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild check --arch 8.9[,9.0,...]|native [--format text|json] [--quiet] [-j N] PATH...\n"
	        "       fatbuild check --arch LIST --python PY [PATH...]\n"
	        "\n"
	        "Says, before run time, whether the device code of every library in PATH will run on\n"
	        "each GPU of LIST, and how: SASS as is, PTX JIT-compiled, or that no kernel image is\n"
	        "available, and why. PATH is a file (.so, .a, .o, .fatbin, .cubin, .ptx, executable),\n"
	        "a directory (walked; symbolic links are never followed, FIFOs never opened), or a\n"
	        "wheel, sdist or any zip or tar archive (read in place through libarchive). Files are\n"
	        "recognised by their content, not their names. Each container of a library is a\n"
	        "module of its own and the library runs when some module has an image (libraries ship\n"
	        "per-arch modules); files without device code are counted, not failed. Device code a\n"
	        "library keeps outside .nv_fatbin (cuFFT, cuBLASLt, CUPTI) or compiles at run time\n"
	        "(NVRTC's built-ins) is reported as loaded by other means. A directory, archive or\n"
	        "interpreter gets a report by distribution (METADATA of *.dist-info, else the folder)\n"
	        "and a summary line per GPU.\n"
	        "\n"
	        "  --arch LIST      compute capabilities: 8.9, 89, 9.0, 12.0 or sm_90 / sm_90a names.\n"
	        "                   X.Y is a real GPU (it runs its own 'a' code). sm_90 models\n"
	        "                   nvJitLink -arch=sm_90 (refuses sm_90a images). native asks the\n"
	        "                   driver for the visible GPUs.\n"
	        "  --python PY      also check the site-packages (purelib and platlib) of this\n"
	        "                   interpreter (a venv's bin/python)\n"
	        "  --format FMT     text (default) or json: one document with every verdict, for CI\n"
	        "  -j, --jobs N     files read at once (default: the CPUs)\n"
	        "  --quiet          print only what cannot run (and, for directories, the summary)\n"
	        "\n"
	        "The rules are the model of docs/fatbin.md §7 as observed with nvJitLink 13.0: SASS\n"
	        "of the same major and a lower or equal minor (sm_87/88 only exact; sm >= 100 needs\n"
	        "the compat blob for a lower minor); 'a' only on the same SM; 'f' within the family;\n"
	        "PTX compute_X on any sm >= X; the highest arch wins, SASS on a tie.\n"
	        "Relocatable cubins (-rdc) and LTO-IR are not loadable until device-linked ('fatbuild\n"
	        "dlink', or 'fatbuild build --rdc/--lto'); in archives and objects they are\n"
	        "device-link inputs, elsewhere they are reported apart.\n"
	        "\n"
	        "Example: fatbuild check --arch 8.0,9.0,12.0 --python .venv/bin/python\n"
	        "Exit codes: %d every library with device code runs on every arch, %d some library\n"
	        "cannot run on some arch or a file could not be read (or native found no device), %d\n"
	        "usage, %d-%d driver trouble for native.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_NODRIVER, AP_EXIT_TIMEOUT);
}

#define MAXDEV 64

static int
parse_arch(const char *s, struct ap_target *t)
{
	memset(t, 0, sizeof(*t));
	if (strncmp(s, "sm_", 3) == 0 || strncmp(s, "compute_", 8) == 0) {
		if (fb_target_parse(s, t) != 0)
			return -1;
		t->kind = AP_SASS;
		return 0;
	}
	int ma = 0, mi = 0, nd = 0;
	const char *p = s;
	while (isdigit((unsigned char)*p) && nd < 4)
		ma = ma * 10 + (*p++ - '0'), nd++;
	if (!nd)
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		mi = *p++ - '0';
		t->sm = ma * 10 + mi;
	} else {
		t->sm = ma;
	}
	if (*p == 'a')
		p++;
	if (*p || t->sm < 10)
		return -1;
	t->variant = AP_ARCH; /* a real device runs its own arch-specific code */
	return 0;
}

static int
probe_native(struct ap_target *devs, size_t *ndev)
{
	struct ap_probe_result *r = xcalloc(1, sizeof(*r));
	struct ap_error aerr = {0};
	if (ap_probe(NULL, r, &aerr) != 0) {
		free(r);
		return fail_ap(&aerr);
	}
	int code = AP_EXIT_OK;
	switch (r->status) {
	case AP_PROBE_OK: break;
	case AP_PROBE_NO_DEVICE: code = AP_EXIT_FAIL; break;
	case AP_PROBE_NO_DRIVER: code = AP_EXIT_NODRIVER; break;
	case AP_PROBE_STUB: code = AP_EXIT_STUB; break;
	case AP_PROBE_DRIVER_ERROR: code = AP_EXIT_DRIVER; break;
	default: code = AP_EXIT_TIMEOUT; break;
	}
	if (code == AP_EXIT_OK && r->ndevices == 0)
		code = AP_EXIT_FAIL;
	if (code != AP_EXIT_OK) {
		warn("check: --arch native: %s", r->reason[0] ? r->reason : ap_probe_status_name(r->status));
		free(r);
		return code;
	}
	if (r->reason[0]) /* a device whose query failed or whose CC is impossible: left out */
		warn("warning: check --arch native: %s", r->reason);
	for (int i = 0; i < r->ndevices && *ndev < MAXDEV; i++) {
		if (r->devices[i].error)
			continue;
		int sm = r->devices[i].major * 10 + r->devices[i].minor;
		bool dup = false;
		for (size_t j = 0; j < *ndev; j++)
			dup |= devs[j].sm == sm;
		if (!dup)
			devs[(*ndev)++] = (struct ap_target){sm, AP_ARCH, AP_SASS, 0};
	}
	free(r);
	return AP_EXIT_OK;
}

/* An --arch item, for archlist_hint: 0 when parse_devices takes it, else -1. */
static int
device_check(const char *item, void *ctx)
{
	struct ap_target t;
	(void)ctx;
	return strcmp(item, "native") == 0 || parse_arch(item, &t) == 0 ? 0 : -1;
}

/* --arch LIST into devs; 0 or the exit code (message said). */
static int
parse_devices(const char *arch, struct ap_target *devs, size_t *ndev)
{
	char *list = xstrdup(arch), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(list, ",; ", &save); tok && !rc; tok = strtok_r(NULL, ",; ", &save)) {
		if (strcmp(tok, "native") == 0) {
			rc = probe_native(devs, ndev);
		} else if (*ndev == MAXDEV || parse_arch(tok, &devs[*ndev]) != 0) {
			char hint[96];
			warn("check: '%s' is not a compute capability like 8.9 or sm_90a%s", tok,
			     archlist_hint(AP_EPARSE, arch, NULL, device_check, hint, sizeof(hint)));
			rc = AP_EXIT_USAGE;
		} else {
			(*ndev)++;
		}
	}
	free(list);
	if (!rc && !*ndev) {
		warn("check: --arch is empty");
		rc = AP_EXIT_USAGE;
	}
	return rc;
}

/* The progress line on a terminal, at most ten times a second, wiped at the end. */
struct progress {
	struct timespec last;
	bool shown;
};

static void
progress(const struct fb_check_progress *p, void *ctx)
{
	struct progress *pr = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (now.tv_sec - pr->last.tv_sec) * 1000 + (now.tv_nsec - pr->last.tv_nsec) / 1000000;
	if (ms < 100 && p->done < p->total)
		return;
	pr->last = now;
	pr->shown = true;
	fprintf(stderr, "\r\033[Kcheck: %zu/%zu files, %.1f/%.1f GB: %.60s", p->done, p->total, p->bytes_done / 1e9,
	        p->bytes_total / 1e9, p->current);
	fflush(stderr);
}

/* Directories, archives and interpreters get the report by distribution. */
static bool
env_mode(const struct fb_check_opts *o, const struct fb_check_report *r)
{
	if (o->python)
		return true;
	for (size_t i = 0; i < o->npaths; i++) {
		struct stat st;
		if (stat(o->paths[i], &st) == 0 && S_ISDIR(st.st_mode))
			return true;
	}
	for (size_t g = 0; g < r->ngroups; g++)
		if (r->groups[g].archive)
			return true;
	return false;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch", required_argument, NULL, 'a'},   {"quiet", no_argument, NULL, 'q'},
		{"python", required_argument, NULL, 'p'}, {"format", required_argument, NULL, 'f'},
		{"jobs", required_argument, NULL, 'j'},   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *arch = NULL, *python = NULL;
	bool quiet = false, json = false;
	int c, jobs = 0;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hqj:", longopts, "check")) != -1) {
		switch (c) {
		case 'a': arch = optarg; break;
		case 'q': quiet = true; break;
		case 'p': python = optarg; break;
		case 'j': {
			char *end;
			long j = strtol(optarg, &end, 10);
			if (*end || end == optarg || j < 1 || j > 1024) {
				warn("check: -j %s: give a number of files to read at once, 1 to 1024", optarg);
				return AP_EXIT_USAGE;
			}
			jobs = (int)j;
			break;
		}
		case 'f':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0) {
				warn("check: --format %s: use text or json", optarg);
				return AP_EXIT_USAGE;
			}
			json = strcmp(optarg, "json") == 0;
			break;
		case 'h': usage(stdout); return AP_EXIT_OK;
		default: return AP_EXIT_USAGE;
		}
	}
	if (!arch || (optind >= argc && !python)) {
		warn("check: %s", !arch ? "--arch is required" : "no input file, directory or --python");
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	struct ap_target devs[MAXDEV];
	size_t ndev = 0;
	int rc = parse_devices(arch, devs, &ndev);
	if (rc)
		return rc;
	struct progress pr = {0};
	struct fb_config cfg;
	fb_config_read(&cfg);
	const char *tmp = cfg.tmpdir;
	struct fb_check_opts o = {
		.devices = devs, .ndevices = ndev, .paths = (const char *const *)argv + optind,
		.npaths = (size_t)(argc - optind), .python = python, .jobs = jobs, .tmpdir = tmp && *tmp ? tmp : NULL,
		.progress = isatty(2) && !json ? progress : NULL, .progress_ctx = &pr, .config = &cfg,
	};
	struct fb_check_report r;
	struct fb_error err = {0};
	if (fb_check(&o, &r, &err) != 0)
		return fail_fb(&err);
	if (pr.shown)
		fprintf(stderr, "\r\033[K");
	struct check_view v = {&r, devs, ndev, quiet};
	rc = check_exit_code(&v);
	if (json)
		check_print_json(&v, rc);
	else if (env_mode(&o, &r))
		check_print_env(&v);
	else
		check_print_files(&v);
	fb_check_report_free(&r);
	return rc;
}
