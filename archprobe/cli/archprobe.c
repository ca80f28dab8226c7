/* archprobe: which CUDA GPUs are visible, and the arch list they need (docs/probe.md §7). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "archprobe.h"
#include "base/cliutil.h"
#include "base/config.h"

const char cli_prog[] = "archprobe";

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: archprobe [--format FORMAT] [--arch-list LIST] [--fallback LIST] [--strict]\n"
	        "                 [--timeout S] [--libcuda PATH] [--no-subprocess] [--cache[=FILE]]\n"
	        "                 [--cuda-version X.Y] [--silent] [-v] [-h]\n"
	        "\n"
	        "Asks the CUDA driver (libcuda.so.1, loaded with dlopen in a helper process with a timeout; no\n"
	        "context is created) which GPUs are visible, and prints them with the arch list they need:\n"
	        "one entry per distinct compute capability, numerically sorted, PTX for the newest (what the\n"
	        "arch list 'native' means in fatbuild and docs/archlist.md).\n"
	        "\n"
	        "Formats (--format):\n"
	        "  table       (default) the devices, the driver, and under them the arch list\n"
	        "  json        everything, schema archprobe/1: status, source, reason, cuda_error, driver, env,\n"
	        "              devices[], archs[], min, max, toolkit\n"
	        "  cmake torch nvcc clang list nvrtc bazel\n"
	        "              the arch list only; devices 8.6 + 9.0 give cmake '86-real;90', torch '8.6 9.0+PTX'\n"
	        "  nvptx-arch  drop-in for LLVM's nvptx-arch: one sm_XY line per device in enumeration order\n"
	        "              (duplicates kept); exit %d with no output when there is no device, %d on failure\n"
	        "  nvcc-query  drop-in for CUDA's __nvcc_device_query: sorted unique '86,90' without newline;\n"
	        "              exit %d when the driver counts 0 devices, %d on any other failure\n"
	        "Installed or linked under the name nvptx-arch or __nvcc_device_query, archprobe uses that\n"
	        "format by default.\n"
	        "\n"
	        "Options:\n"
	        "  --arch-list LIST   resolve LIST instead (any mix of 8.6 / 86-real / sm_86 / Ampere / native /\n"
	        "                     auto / all-major), printed like `fatbuild flags`\n"
	        "  --fallback LIST    when probing fails (no driver, stub, no device, driver error, timeout) or\n"
	        "                     no device is supported, print LIST's archs instead, exit %d, and say why on\n"
	        "                     stderr (default: ARCHPROBE_FALLBACK; none: the failure is an error)\n"
	        "  --strict           never fall back; a device that could not be queried is an error (exit %d)\n"
	        "  --timeout S        give the driver S seconds (default: ARCHPROBE_TIMEOUT, else 10)\n"
	        "  --libcuda PATH     load exactly this file (default: ARCHPROBE_LIBCUDA, else libcuda.so.1 via\n"
	        "                     the system search, else /usr/lib/wsl/lib/libcuda.so.1)\n"
	        "  --no-subprocess    query the driver in this process (faster; no timeout or crash guard)\n"
	        "  --cache[=FILE]     reuse an earlier ok answer while nothing it depends on changed (libcuda\n"
	        "                     file, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, boot);\n"
	        "                     default FILE: $XDG_CACHE_HOME/archprobe/probe (also ARCHPROBE_CACHE=FILE|1)\n"
	        "  --cuda-version X.Y\n"
	        "                     check archs against the built-in table of CUDA X.Y instead of the\n"
	        "                     installed toolkit (CUDA_HOME, nvcc on PATH, /usr/local/cuda)\n"
	        "  --clang-version N  --format clang as clang N reads it (22+: --cuda-include-ptx for PTX; older:\n"
	        "                     --no-cuda-include-ptx for SASS only); default: a spelling every clang reads\n"
	        "  --silent           no diagnostics on stderr (as __nvcc_device_query --silent)\n"
	        "  -v, --verbose      also print the loader trace on stderr\n"
	        "  -h, --help         this text\n"
	        "\n"
	        "Environment: ARCHPROBE_ARCHS=\"8.6 9.0\" replaces probing (CI, docker build); ARCHPROBE_FALLBACK,\n"
	        "ARCHPROBE_TIMEOUT, ARCHPROBE_LIBCUDA, ARCHPROBE_CACHE as the options; CUDA_VISIBLE_DEVICES and\n"
	        "CUDA_DEVICE_ORDER reach the driver untouched and are reported.\n"
	        "\n"
	        "Examples:\n"
	        "  archprobe                                  devices and their arch list\n"
	        "  cmake -DCMAKE_CUDA_ARCHITECTURES=\"$(archprobe --format cmake --fallback all-major)\" ..\n"
	        "  TORCH_CUDA_ARCH_LIST=\"$(archprobe --format torch)\" pip install .\n"
	        "  clang --nvptx-arch-tool=\"archprobe --format nvptx-arch\" ...   (or a symlink named nvptx-arch)\n"
	        "\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_FAIL, AP_EXIT_OK, AP_EXIT_DRIVER);
	cli_exit_codes(f);
	fprintf(f,
	        "No visible device: the message names CUDA_VISIBLE_DEVICES when it is set.\n"
	        "With --fallback (not --strict) the probe failures %d and %d-%d print the fallback and exit %d.\n",
	        AP_EXIT_FAIL, AP_EXIT_NODRIVER, AP_EXIT_TIMEOUT, AP_EXIT_OK);
}

/* cli_exit_codes writes the codes as numbers; these are they. */
_Static_assert(AP_EXIT_OK == 0 && AP_EXIT_FAIL == 1 && AP_EXIT_USAGE == 2 && AP_EXIT_NODRIVER == 3 &&
                   AP_EXIT_STUB == 4 && AP_EXIT_DRIVER == 5 && AP_EXIT_TIMEOUT == 6 && AP_EXIT_UNSAFE == 7,
               "the exit codes of cli_exit_codes (base/cliutil.c)");

enum { FMT_TABLE = 100, FMT_JSON, FMT_NVPTX_ARCH, FMT_NVCC_QUERY };

struct cli {
	int fmt;
	const char *arch_list, *fallback, *cuda_version;
	const char *fallback_opt; /* --fallback; NULL when it came from ARCHPROBE_FALLBACK */
	bool strict, silent, verbose;
	int clang; /* --clang-version; -1 when not given */
	struct ap_probe_opts probe;
	struct fb_config config; /* the environment, read once at the start */
};

static bool silent;

static void
msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
msg(const char *fmt, ...)
{
	va_list ap;

	if (silent)
		return;
	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

static int
usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	usage(stderr);
	return AP_EXIT_USAGE;
}

static int
probe_exit(enum ap_probe_status s)
{
	switch (s) {
	case AP_PROBE_OK: return AP_EXIT_OK;
	case AP_PROBE_NO_DEVICE: return AP_EXIT_FAIL;
	case AP_PROBE_NO_DRIVER: return AP_EXIT_NODRIVER;
	case AP_PROBE_STUB: return AP_EXIT_STUB;
	case AP_PROBE_DRIVER_ERROR: return AP_EXIT_DRIVER;
	default: return AP_EXIT_TIMEOUT;
	}
}

static int
parse_format(const char *s)
{
	if (!strcmp(s, "table") || !strcmp(s, "text"))
		return FMT_TABLE;
	if (!strcmp(s, "json"))
		return FMT_JSON;
	if (!strcmp(s, "nvptx-arch"))
		return FMT_NVPTX_ARCH;
	if (!strcmp(s, "nvcc-query"))
		return FMT_NVCC_QUERY;
	return ap_format_parse(s);
}

static int
parse_args(int argc, char **argv, struct cli *c)
{
	enum { O_FORMAT = 256, O_ARCH, O_FALLBACK, O_STRICT, O_TIMEOUT, O_LIBCUDA, O_NOSUB, O_CUDA, O_SILENT, O_CACHE, O_CLANG };
	static const struct option longopts[] = {
		{"format", required_argument, NULL, O_FORMAT},
		{"arch-list", required_argument, NULL, O_ARCH},
		{"fallback", required_argument, NULL, O_FALLBACK},
		{"strict", no_argument, NULL, O_STRICT},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"libcuda", required_argument, NULL, O_LIBCUDA},
		{"no-subprocess", no_argument, NULL, O_NOSUB},
		{"cuda-version", required_argument, NULL, O_CUDA},
		{"silent", no_argument, NULL, O_SILENT},
		{"cache", optional_argument, NULL, O_CACHE},
		{"clang-version", required_argument, NULL, O_CLANG},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *base = strrchr(argv[0], '/');
	char *end;
	int o;

	base = base ? base + 1 : argv[0];
	c->fmt = FMT_TABLE;
	c->clang = -1;
	if (!strncmp(base, "nvptx-arch", 10))
		c->fmt = FMT_NVPTX_ARCH;
	else if (!strncmp(base, "__nvcc_device_query", 19))
		c->fmt = FMT_NVCC_QUERY;
	while ((o = cli_getopt(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (o) {
		case O_FORMAT:
			if ((c->fmt = parse_format(optarg)) < 0)
				return usage_error("unknown format '%s' (table, json, cmake, torch, nvcc, clang, list, nvrtc, "
				                   "bazel, nvptx-arch, nvcc-query)", optarg);
			break;
		case O_ARCH: c->arch_list = optarg; break;
		case O_FALLBACK: c->fallback = c->fallback_opt = optarg; break;
		case O_STRICT: c->strict = true; break;
		case O_TIMEOUT:
			c->probe.timeout = strtod(optarg, &end);
			if (end == optarg || *end || !(c->probe.timeout > 0) || c->probe.timeout > 1e6)
				return usage_error("invalid --timeout value '%s' (seconds, e.g. 10 or 0.5)", optarg);
			break;
		case O_LIBCUDA: c->probe.libcuda = optarg; break;
		case O_NOSUB: c->probe.no_subprocess = true; break;
		case O_CUDA: c->cuda_version = optarg; break;
		case O_SILENT: c->silent = true; break;
		case O_CACHE: c->probe.cache = optarg ? optarg : "1"; break;
		case O_CLANG: {
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 3 || v > 999)
				return usage_error("invalid --clang-version '%s' (the clang major version, e.g. 22)", optarg);
			c->clang = (int)v;
			break;
		}
		case 'v': c->verbose = true; break;
		case 'h':
			usage(stdout);
			return -1;
		default: return AP_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}

/* ---- output helpers ------------------------------------------------------------------------- */

/* A JSON string, or null for NULL. */
static void
json_opt(const char *s)
{
	if (s)
		json_str(s, strlen(s));
	else
		fputs("null", stdout);
}

static void
cc_text(const struct ap_device *d, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%d", d->major, d->minor);
}

static void
version_text(int v, char *buf, size_t size)
{
	if (v > 0)
		snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
	else
		snprintf(buf, size, "unknown");
}

static void
memory_text(uint64_t bytes, char *buf, size_t size)
{
	if (!bytes)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f GiB", (double)bytes / (1024.0 * 1024.0 * 1024.0));
}

static char *
targets_text(const struct ap_archlist *l)
{
	size_t n = ap_archlist_count(l), cap = 16 * n + 1;
	char *s = malloc(cap), name[32];

	if (!s)
		return NULL;
	s[0] = 0;
	for (size_t i = 0; i < n; i++) {
		ap_target_name(ap_archlist_get(l, i), name, sizeof(name));
		if (i)
			strcat(s, " ");
		strcat(s, name);
	}
	return s;
}

static void
print_table(const struct ap_probe_result *r, bool probed, const struct ap_archlist *l, const char *archs_note,
            const char *override)
{
	if (probed && r->status == AP_PROBE_OK) {
		int wname = 4;
		char cc[16], mem[32];
		for (int i = 0; i < r->ndevices; i++)
			if ((int)strlen(r->devices[i].name) > wname)
				wname = (int)strlen(r->devices[i].name);
		printf("%-3s %-5s %-*s %-10s %4s  %-40s  %s\n", "GPU", "CC", wname, "NAME", "MEMORY", "SMS", "UUID", "PCI");
		for (int i = 0; i < r->ndevices; i++) {
			const struct ap_device *d = &r->devices[i];
			if (d->error) {
				const char *n = ap_cuda_error_name(d->error);
				printf("%-3d ?     (query failed: %s)\n", d->ordinal, n ? n : "unknown CUresult");
				continue;
			}
			cc_text(d, cc, sizeof(cc));
			memory_text(d->total_memory, mem, sizeof(mem));
			printf("%-3d %-5s %-*s %-10s %4d  %-40s  %s\n", d->ordinal, cc, wname, d->name[0] ? d->name : "-", mem,
			       d->multiprocessors, d->uuid[0] ? d->uuid : "-", d->pci_bus_id[0] ? d->pci_bus_id : "-");
		}
	}
	if (probed && *r->library && r->status != AP_PROBE_NO_DRIVER) {
		char v[16];
		version_text(r->driver_version, v, sizeof(v));
		printf("driver: CUDA %s, %s\n", v, r->library);
	}
	if (probed && r->cuda_visible_devices_set)
		printf("CUDA_VISIBLE_DEVICES=%s\n", r->cuda_visible_devices);
	if (probed && *r->cuda_device_order)
		printf("CUDA_DEVICE_ORDER=%s\n", r->cuda_device_order);
	if (l) {
		char *t = targets_text(l);
		printf("archs (%s): %s\n", ap_archlist_source(l), t ? t : "?");
		free(t);
	} else if (archs_note) {
		printf("archs: %s\n", archs_note);
	}
	if (!probed && l && !strcmp(ap_archlist_source(l), "override"))
		printf("devices: not probed: ARCHPROBE_ARCHS=%s\n", override);
}

/* A CUDA error as {"code": N, "name": "CUDA_ERROR_..."}; 0 is null. */
static void
json_cuda_error(int code)
{
	if (code) {
		printf("{\"code\": %d, \"name\": ", code);
		json_opt(ap_cuda_error_name(code));
		putchar('}');
	} else {
		fputs("null", stdout);
	}
}

/* An SM number; 0 (none) is null. */
static void
json_sm(int sm)
{
	if (sm)
		printf("%d", sm);
	else
		fputs("null", stdout);
}

static void
json_device(const struct ap_device *d)
{
	char cc[16];
	cc_text(d, cc, sizeof(cc));
	printf("{\"ordinal\": %d, \"name\": ", d->ordinal);
	json_opt(d->name);
	printf(", \"major\": %d, \"minor\": %d, \"cc\": ", d->major, d->minor);
	json_opt(d->error ? NULL : cc);
	printf(", \"sm\": %d, \"uuid\": ", d->error ? 0 : d->major * 10 + d->minor);
	json_opt(d->uuid[0] ? d->uuid : NULL);
	printf(", \"mig\": %s, \"pci_bus_id\": ", d->mig ? "true" : "false");
	json_opt(d->pci_bus_id[0] ? d->pci_bus_id : NULL);
	printf(", \"total_memory\": %llu, \"multiprocessors\": %d, \"integrated\": %s, \"compute_mode\": %d, "
	       "\"error\": ", (unsigned long long)d->total_memory, d->multiprocessors,
	       d->integrated ? "true" : "false", d->compute_mode);
	json_cuda_error(d->error);
	putchar('}');
}

static void
json_toolkit(const struct ap_toolkit *tk)
{
	char v[16];
	version_text(tk->version, v, sizeof(v));
	printf("{\"version\": ");
	json_opt(v);
	printf(", \"supported\": [");
	for (int i = 0; i < tk->nsm; i++)
		printf("%s%d", i ? ", " : "", tk->sm[i]);
	printf("], \"source\": ");
	json_opt(tk->source);
	putchar('}');
}

static void
print_json(const struct ap_probe_result *r, bool probed, const struct ap_archlist *l, const char *archs_note)
{
	char v[16];
	int min = 0, max = 0;

	printf("{\n  \"schema\": \"archprobe/1\",\n  \"status\": ");
	json_opt(probed ? ap_probe_status_name(r->status) : "not_probed");
	printf(",\n  \"source\": ");
	json_opt(l ? ap_archlist_source(l) : NULL);
	printf(",\n  \"reason\": ");
	json_opt(probed && r->reason[0] ? r->reason : archs_note);
	printf(",\n  \"cuda_error\": ");
	json_cuda_error(probed ? r->cuda_error : 0);
	printf(",\n  \"driver\": {\"library\": ");
	json_opt(probed && *r->library && r->status != AP_PROBE_NO_DRIVER ? r->library : NULL);
	version_text(r->driver_version, v, sizeof(v));
	printf(", \"cuda_version\": ");
	json_opt(r->driver_version > 0 ? v : NULL);
	printf(", \"int\": %d},\n  \"env\": {\"CUDA_VISIBLE_DEVICES\": ", r->driver_version);
	json_opt(r->cuda_visible_devices_set ? r->cuda_visible_devices : NULL);
	printf(", \"CUDA_DEVICE_ORDER\": ");
	json_opt(*r->cuda_device_order ? r->cuda_device_order : NULL);
	printf("},\n  \"devices\": [");
	for (int i = 0; i < r->ndevices; i++) {
		printf("%s\n    ", i ? "," : "");
		json_device(&r->devices[i]);
	}
	printf("%s],\n  \"archs\": [", r->ndevices ? "\n  " : "");
	for (size_t i = 0; l && i < ap_archlist_count(l); i++) {
		const struct ap_target *t = ap_archlist_get(l, i);
		char name[32];
		ap_target_name(t, name, sizeof(name));
		printf("%s", i ? ", " : "");
		json_opt(name);
		if (!min || t->sm < min)
			min = t->sm;
		if (t->sm > max)
			max = t->sm;
	}
	printf("],\n  \"min\": ");
	json_sm(min);
	printf(", \"max\": ");
	json_sm(max);
	printf(",\n  \"toolkit\": ");
	if (l)
		json_toolkit(ap_archlist_toolkit(l));
	else
		fputs("null", stdout);
	printf(",\n  \"warnings\": [");
	for (size_t i = 0; l && i < ap_archlist_nwarnings(l); i++) {
		printf("%s", i ? ", " : "");
		json_opt(ap_archlist_warning(l, i));
	}
	printf("],\n  \"seconds\": %.3f\n}\n", probed ? r->seconds : 0.0);
}

/* ---- drop-in formats ------------------------------------------------------------------------ */

/* A failed probe, for the drop-ins: the reason, exit 1. */
static int
dropin_failed(const struct ap_probe_result *r)
{
	msg("%s", r->reason);
	return 1;
}

/* The index of the first device that could not be queried, or ndevices. */
static int
first_failed(const struct ap_probe_result *r)
{
	int i = 0;
	while (i < r->ndevices && !r->devices[i].error)
		i++;
	return i;
}

/* LLVM nvptx-arch: sm_XY per device in order until one fails; no device is success. */
static int
out_nvptx_arch(const struct ap_probe_result *r)
{
	if (r->status == AP_PROBE_NO_DEVICE)
		return 0;
	if (r->status != AP_PROBE_OK)
		return dropin_failed(r);
	int bad = first_failed(r);
	for (int i = 0; i < bad; i++)
		printf("sm_%d%d\n", r->devices[i].major, r->devices[i].minor);
	return bad < r->ndevices ? dropin_failed(r) : 0;
}

/* CUDA __nvcc_device_query: sorted unique CC digits, comma-separated, no newline; a device
 * count of 0 is exit 2, every other failure (including one bad device) exit 1. */
static int
out_nvcc_query(const struct ap_probe_result *r)
{
	int sms[AP_MAX_DEVICES], n = 0;

	if (r->status == AP_PROBE_NO_DEVICE && r->cuda_error == 0) {
		msg("%s", r->reason);
		return 2;
	}
	if (r->status != AP_PROBE_OK || first_failed(r) < r->ndevices)
		return dropin_failed(r);
	for (int i = 0; i < r->ndevices; i++) {
		int sm = r->devices[i].major * 10 + r->devices[i].minor, k;
		for (k = n; k > 0 && sms[k - 1] > sm; k--)
			sms[k] = sms[k - 1];
		if (k > 0 && sms[k - 1] == sm) {
			for (; k < n; k++)
				sms[k] = sms[k + 1];
			continue;
		}
		sms[k] = sm;
		n++;
	}
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", sms[i]);
	return 0;
}

/* ---- main ---------------------------------------------------------------------------------- */

static int
load_toolkit(const struct cli *c, struct ap_toolkit *tk, struct ap_error *err)
{
	if (c->cuda_version) {
		int v = ap_cuda_version_parse(c->cuda_version);
		if (v < 0) {
			snprintf(err->msg, sizeof(err->msg), "invalid --cuda-version '%s' (write X.Y, e.g. 12.8)",
			         c->cuda_version);
			err->code = AP_EINVAL;
			return AP_EINVAL;
		}
		return ap_toolkit_builtin(v, tk, err);
	}
	return ap_toolkit_detect(NULL, tk, err);
}

/* The probe result without devices that could not be queried (they have no arch). */
static void
usable_devices(const struct ap_probe_result *r, struct ap_probe_result *u)
{
	*u = *r;
	u->ndevices = 0;
	for (int i = 0; i < r->ndevices; i++)
		if (!r->devices[i].error)
			u->devices[u->ndevices++] = r->devices[i];
}

static int
emit(const struct cli *c, const struct ap_probe_result *r, bool probed, const struct ap_archlist *l,
     const char *note)
{
	char *out = NULL;
	struct ap_error err = {0};

	if (c->fmt == FMT_TABLE) {
		print_table(r, probed, l, note, c->config.archprobe_archs);
	} else if (c->fmt == FMT_JSON) {
		print_json(r, probed, l, note);
	} else if (l) {
		int frc = c->clang >= 0 && c->fmt == AP_FMT_CLANG ? ap_archlist_format_clang(l, c->clang, &out, &err)
		                                                  : ap_archlist_format(l, (enum ap_format)c->fmt, &out, &err);
		if (frc) {
			msg("%s", err.msg);
			return ap_exit_code(err.code);
		}
		fputs(out, stdout);
		if (!*out || out[strlen(out) - 1] != '\n')
			putchar('\n');
		free(out);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg("cannot write the output");
		return AP_EXIT_FAIL;
	}
	return AP_EXIT_OK;
}

/* Whether an arch list needs the devices: it names native or auto, or is blank (= auto). */
static bool
mentions_devices(const char *list)
{
	bool blank = true;

	for (const char *p = list; *p; p++) {
		if (!strchr(" \t\n;,", *p))
			blank = false;
		if (!strncasecmp(p, "native", 6) || !strncasecmp(p, "auto", 4))
			return true;
	}
	return blank;
}

static void
print_warnings(const struct ap_archlist *l)
{
	for (size_t i = 0; l && i < ap_archlist_nwarnings(l); i++)
		msg("%s", ap_archlist_warning(l, i));
}

/* What the ways of answering share: the options, the probe result (and its usable devices),
 * the toolkit and the list resolved. */
struct run {
	struct cli *c;
	struct ap_probe_result *r, *u;
	struct ap_archlist *l;
	struct ap_toolkit tk;
	struct ap_resolve_opts ro;
};

/* A library error: its message, and its exit code. */
static int
fail(const struct ap_error *err)
{
	msg("%s", err->msg);
	return ap_exit_code(err->code);
}

/* fail() for --arch-list's error, with the spelling a near-miss item likely meant. */
static int
fail_list(const struct run *x, const struct ap_error *err)
{
	struct ap_resolve_opts one = x->ro;
	struct cli_arches ks = {x->tk.sm, x->tk.a, x->tk.f, x->tk.nsm, x->tk.na, x->tk.nf};
	struct cli_resolver r = {ap_archlist_resolve, ap_archlist_free, AP_EPARSE, &one};
	char pick[64];
	one.no_probe = true; /* an item alone is checked, never a device asked */
	if (err->code != AP_EPARSE || !cli_arch_suggest(x->c->arch_list, cli_arch_item_check, &r, &ks, pick, sizeof(pick)))
		return fail(err);
	msg("%s (did you mean '%s'?)", err->msg, pick);
	return ap_exit_code(err->code);
}

/* Whether the format prints an arch list (all but the drop-ins). */
static bool
list_format(const struct cli *c)
{
	return c->fmt != FMT_NVPTX_ARCH && c->fmt != FMT_NVCC_QUERY;
}

/* A device that could not be queried: an error with --strict, else a warning. 0 or the exit code. */
static int
check_left_out(const struct cli *c, const struct ap_probe_result *r)
{
	if (r->status != AP_PROBE_OK || !r->reason[0])
		return 0;
	if (c->strict) {
		msg("%s", r->reason);
		return AP_EXIT_DRIVER;
	}
	msg("warning: %s", r->reason);
	return 0;
}

/* An explicit list: the arch-list engine (it probes itself for native/auto). */
static int
answer_list(struct run *x)
{
	const struct cli *c = x->c;
	const char *override = c->config.archprobe_archs;
	struct ap_error err = {0};
	bool probed = false;
	int rc;

	if (!list_format(c))
		return usage_error("--arch-list does not apply to --format nvptx-arch / nvcc-query");
	if (load_toolkit(c, &x->tk, &err) != 0)
		return fail(&err);
	/* native/auto: probe here, so that table and json show the devices too */
	if (mentions_devices(c->arch_list) && !(override && *override)) {
		if ((rc = ap_probe(&c->probe, x->r, &err)) != 0) {
			msg("%s", err.msg);
			return ap_exit_code(rc);
		}
		probed = true;
		if ((rc = check_left_out(c, x->r)) != 0)
			return rc;
		usable_devices(x->r, x->u);
		x->ro.devices = x->r->status == AP_PROBE_OK ? x->u : x->r;
	}
	x->ro.fallback = c->fallback_opt;
	if (ap_archlist_resolve(c->arch_list, &x->ro, &x->l, &err) != 0)
		return fail_list(x, &err);
	print_warnings(x->l);
	return emit(c, x->r, probed, x->l, NULL);
}

/* ARCHPROBE_ARCHS replaces probing (the drop-ins always report the real devices). */
static int
answer_override(struct run *x)
{
	struct ap_error err = {0};

	x->ro.no_probe = true;
	if (load_toolkit(x->c, &x->tk, &err) != 0 || ap_archlist_resolve("native", &x->ro, &x->l, &err) != 0)
		return fail(&err);
	print_warnings(x->l);
	return emit(x->c, x->r, false, x->l, NULL);
}

static void
print_trace(const struct ap_probe_result *r)
{
	for (const char *t = r->trace; *t;) {
		size_t n = strcspn(t, "\n");
		warn("trace: %.*s", (int)n, t);
		t += n + (t[n] == '\n');
	}
	warn("trace: %s in %.3f s", ap_probe_status_name(r->status), r->seconds);
}

/* The probe failed and there is no fallback: say why (json still prints what is known). */
static int
probe_failure(const struct cli *c, const struct ap_probe_result *r)
{
	if (r->status == AP_PROBE_NO_DRIVER || r->status == AP_PROBE_NO_DEVICE)
		msg("%s; pass --fallback LIST (or an explicit --arch-list) to answer without a GPU", r->reason);
	else
		msg("%s", r->reason);
	if (c->fmt == FMT_JSON)
		emit(c, r, true, NULL, NULL);
	return probe_exit(r->status);
}

/* No toolkit to check the archs against: table and json show the devices with a note. */
static int
no_toolkit(const struct cli *c, const struct ap_probe_result *r, const struct ap_error *err)
{
	if (c->fmt == FMT_TABLE || c->fmt == FMT_JSON) {
		char note[sizeof(err->msg) + 64];
		snprintf(note, sizeof(note), "unknown: %s (pass --cuda-version X.Y)", err->msg);
		msg("%s (pass --cuda-version X.Y)", err->msg);
		int rc = emit(c, r, true, NULL, note);
		if (rc == 0 && r->status != AP_PROBE_OK)
			rc = probe_exit(r->status);
		return rc;
	}
	msg("%s (or pass --cuda-version X.Y)", err->msg);
	return ap_exit_code(err->code);
}

/* The devices probed: their list, or the fallback when there are none usable. */
static int
answer_probe(struct run *x)
{
	const struct cli *c = x->c;
	const struct ap_probe_result *r = x->r;
	struct ap_error err = {0};
	int rc;

	if ((rc = ap_probe(&c->probe, x->r, &err)) != 0) {
		msg("%s", err.msg);
		return ap_exit_code(rc);
	}
	if (c->verbose && !silent)
		print_trace(r);
	if (c->fmt == FMT_NVPTX_ARCH)
		return out_nvptx_arch(r);
	if (c->fmt == FMT_NVCC_QUERY)
		return out_nvcc_query(r);
	if ((rc = check_left_out(c, r)) != 0)
		return rc;
	if (r->status != AP_PROBE_OK && !c->fallback)
		return probe_failure(c, r);
	if (load_toolkit(c, &x->tk, &err) != 0)
		return no_toolkit(c, r, &err);
	usable_devices(r, x->u);
	x->ro.devices = x->u;
	if (r->status == AP_PROBE_OK)
		rc = ap_archlist_resolve("native", &x->ro, &x->l, &err);
	if (r->status != AP_PROBE_OK || (rc != 0 && c->fallback && err.code == AP_EUNSUPPORTED)) {
		x->ro.fallback = c->fallback_opt; /* else the engine reads ARCHPROBE_FALLBACK and says so */
		rc = ap_archlist_resolve("auto", &x->ro, &x->l, &err);
	}
	if (rc)
		return fail(&err);
	print_warnings(x->l);
	return emit(c, r, true, x->l, NULL);
}

int
main(int argc, char **argv)
{
	struct cli c = {0};
	struct run x = {.c = &c};
	const char *override;
	int rc;

	if ((rc = ap_probe_child_main(argc, argv)) >= 0) {
		if (rc == AP_EXIT_USAGE)
			warn("%s is the internal helper mode of ap_probe (protocol --probe-child=1, result on fd 3)",
			     argv[1]);
		return rc;
	}
	fb_config_read(&c.config);
	override = c.config.archprobe_archs;
	if ((rc = parse_args(argc, argv, &c)) != 0)
		return rc < 0 ? AP_EXIT_OK : rc;
	c.probe.config = &c.config;
	silent = c.silent;
	if (!c.fallback && (c.fallback = c.config.archprobe_fallback) && !*c.fallback)
		c.fallback = NULL;
	if (c.strict)
		c.fallback = NULL;
	if (!(x.r = calloc(1, sizeof(*x.r))) || !(x.u = calloc(1, sizeof(*x.u)))) {
		msg("out of memory");
		free(x.r);
		return AP_EXIT_FAIL;
	}
	x.ro.probe = &c.probe;
	x.ro.config = &c.config;
	x.ro.toolkit = &x.tk;
	if (c.arch_list)
		rc = answer_list(&x);
	else if (list_format(&c) && override && *override)
		rc = answer_override(&x);
	else
		rc = answer_probe(&x);
	ap_archlist_free(x.l);
	free(x.r);
	free(x.u);
	return rc;
}
