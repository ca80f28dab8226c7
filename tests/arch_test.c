/* arch_test.c: the arch-list engine against docs/archlist.md, with the reference vectors of
 * docs/archlist.md §9 (T01–T35, C01–C12), on the built-in CUDA tables so the
 * result does not depend on the machine. Targets are compared as "sm_80 sm_86 compute_86"
 * (the resolved order); formats are compared exactly. T36-T38 (user cflags that switch PyTorch's
 * arch flags off) concern the build command, not the list, and are not here. Where PyTorch fails
 * or differs, the vector states our documented behaviour (docs/fatbuild-flags.md, "Deliberate differences"). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archprobe.h"
#include "check.h"

enum { OK = 0 };

struct vec {
	const char *id;
	const char *input;  /* NULL = unset */
	int cuda;           /* built-in table; 0 = 13.0 */
	const char *devs;   /* "8.6,10.0" visible devices; "none" no device; "nodriver"; NULL = not probed */
	bool drop;
	int rc;             /* expected status */
	const char *want;   /* targets (rc 0) or a substring of the error message */
	const char *warn;   /* a substring of some warning, or NULL for "no warning" */
	const char *source; /* expected ap_archlist_source, or NULL */
};

#define ALL13 "sm_75 sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_100 sm_103 sm_110 sm_120 sm_121 compute_121"
#define MAJOR13 "sm_75 sm_80 sm_90 sm_100 sm_110 sm_120 compute_120"
#define T01 "sm_80 sm_86 compute_86"

static const struct vec vecs[] = {
	/* docs/archlist.md §8 */
	{"ex1", "7.5 8.0;8.6+PTX", 0, NULL, false, OK, "sm_75 sm_80 sm_86 compute_86", NULL, "input"},
	{"ex-hopper-a", "Hopper 9.0a", 0, NULL, false, OK, "sm_90 compute_90 sm_90a", NULL, NULL},
	{"ex-7.0", "7.0", 0, NULL, false, AP_EUNSUPPORTED, "sm_70 was removed in CUDA 13.0", NULL, NULL},
	{"ex-7.0-oldest", "7.0", 0, NULL, false, AP_EUNSUPPORTED, "it supports sm_75 sm_80", NULL, NULL},
	/* PyTorch vectors, our semantics */
	{"T01", "8.0 8.6+PTX", 0, NULL, false, OK, T01, NULL, "input"},
	{"T02", "Ampere", 0, NULL, false, OK, T01, NULL, NULL},
	{"T03", "7.0;7.5", 0, NULL, false, AP_EUNSUPPORTED, "item 1 '7.0': sm_70 is not supported by CUDA 13.0", NULL, NULL},
	{"T03-drop", "7.0;7.5", 0, NULL, true, OK, "sm_75", "item 1 '7.0': dropped sm_70", NULL},
	{"T03-12.4", "7.0;7.5", 12040, NULL, false, OK, "sm_70 sm_75", NULL, NULL},
	{"T04", "Ampere+PTX", 0, NULL, false, OK, T01, NULL, NULL},
	{"T05", "Turing+Tegra", 0, NULL, false, AP_EPARSE, "item 1 'Turing+Tegra': not an arch; accepted:", NULL, NULL},
	{"T06", "Kepler+Tesla", 0, NULL, false, AP_EUNSUPPORTED, "sm_37 was removed in CUDA 12.0", NULL, NULL},
	{"T06-11.8", "Kepler+Tesla", 11080, NULL, false, OK, "sm_37", NULL, NULL},
	{"T07", "Hopper", 0, NULL, false, OK, "sm_90 compute_90", NULL, NULL},
	{"T08", "Blackwell", 0, NULL, false, OK, "sm_100 sm_103 sm_120 sm_121 compute_121", NULL, NULL},
	{"T09", "Blackwell+Tegra", 0, NULL, false, OK, "sm_110", NULL, NULL},
	{"T09-12.8", "Blackwell+Tegra", 12080, NULL, false, AP_EUNSUPPORTED, "11.0 is called 10.1, sm_101, before CUDA 13.0", NULL, NULL},
	{"T10", "9.0a", 0, NULL, false, OK, "sm_90a", NULL, NULL},
	{"T11", "9.0a+PTX", 0, NULL, false, OK, "sm_90a compute_90a", "not forward compatible", NULL},
	{"T12", "10.0f", 0, NULL, false, OK, "sm_100f", NULL, NULL},
	{"T13", "12.0a;12.1a", 0, NULL, false, OK, "sm_120a sm_121a", NULL, NULL},
	{"T14", "10.1", 0, NULL, false, AP_EUNSUPPORTED, "10.1 was renamed 11.0, sm_110, in CUDA 13.0", NULL, NULL},
	{"T14-12.8", "10.1", 12080, NULL, false, OK, "sm_101", NULL, NULL},
	{"T15", "11.0", 0, NULL, false, OK, "sm_110", NULL, NULL},
	{"T16", "8.0,8.6", 0, NULL, false, OK, "sm_80 sm_86", NULL, NULL},
	{"T17", "8.0  8.6", 0, NULL, false, OK, "sm_80 sm_86", NULL, NULL},
	{"T18a", "8.0;", 0, NULL, false, OK, "sm_80", NULL, NULL},
	{"T18b", " 8.0", 0, NULL, false, OK, "sm_80", NULL, NULL},
	{"T19a", "ampere", 0, NULL, false, OK, T01, NULL, NULL},
	{"T19b", "8.0+ptx", 0, NULL, false, OK, "sm_80 compute_80", NULL, NULL},
	{"T19c", "sm_80", 0, NULL, false, OK, "sm_80", NULL, NULL},
	{"T19d", "80", 0, NULL, false, OK, "sm_80 compute_80", NULL, NULL},
	{"T19e", "All", 0, NULL, false, OK, ALL13, NULL, NULL},
	{"T20", "8.0;8.0;8.0+PTX", 0, NULL, false, OK, "sm_80 compute_80", NULL, NULL},
	{"T21", "12.0 8.6 10.0", 0, NULL, false, OK, "sm_86 sm_100 sm_120", NULL, NULL},
	{"T22", "Ada Hopper", 0, NULL, false, OK, "sm_89 compute_89 sm_90 compute_90", NULL, NULL},
	{"T23", "Pascal 3.5", 0, NULL, false, AP_EUNSUPPORTED, "sm_60 was removed in CUDA 13.0", NULL, NULL},
	{"T23-11.8", "Pascal 3.5", 11080, NULL, false, OK, "sm_35 sm_60 sm_61 compute_61", NULL, NULL},
	{"T24", "Maxwell+Tegra;6.1", 0, NULL, false, AP_EUNSUPPORTED, "sm_53 was removed in CUDA 13.0", NULL, NULL},
	{"T24-12.4", "Maxwell+Tegra;6.1", 12040, NULL, false, OK, "sm_53 sm_61", NULL, NULL},
	{"T25", "5.0;6.0+PTX;7.0;7.5", 0, NULL, false, AP_EUNSUPPORTED, "item 1 '5.0'", NULL, NULL},
	{"T25-12.4", "5.0;6.0+PTX;7.0;7.5", 12040, NULL, false, OK, "sm_50 sm_60 compute_60 sm_70 sm_75", NULL, NULL},
	{"T25-drop", "5.0;6.0+PTX;7.0;7.5", 0, NULL, true, OK, "sm_75", "item 3 '7.0': dropped sm_70", NULL},
	{"T26", NULL, 0, "8.6", false, OK, "sm_86 compute_86", NULL, "devices"},
	{"T27", "native", 0, "8.6", false, OK, "sm_86 compute_86", NULL, "devices"},
	{"T28", "", 0, "8.0,8.6,8.0", false, OK, T01, NULL, "devices"},
	{"T29", NULL, 11080, "12.0", false, OK, "compute_90", "CUDA 11.8 has no sm_120 (its newest is sm_90); using compute_90 PTX", NULL},
	{"T29-13.0", NULL, 0, "12.0", false, OK, "sm_120 compute_120", NULL, NULL},
	{"T30", NULL, 0, "8.6,10.0", false, OK, "sm_86 sm_100 compute_100", NULL, NULL},
	{"T31", NULL, 0, "9.0,12.0", false, OK, "sm_90 sm_120 compute_120", NULL, NULL},
	{"T32", NULL, 0, "9.0", false, OK, "sm_90 compute_90", NULL, NULL},
	{"T33", NULL, 12080, "12.1", false, OK, "sm_120 compute_120", "CUDA 12.8 has no sm_121; using sm_120 SASS", NULL},
	{"T33-13.0", NULL, 0, "12.1", false, OK, "sm_121 compute_121", NULL, NULL},
	{"T34", NULL, 0, "none", false, OK, MAJOR13, "building for all-major", "fallback"},
	{"T35", NULL, 0, "nodriver", false, OK, MAJOR13, "libcuda.so.1 not found", "fallback"},
	/* CMake vectors */
	{"C01", "80;86-real;90a-virtual", 0, NULL, false, OK, "sm_80 compute_80 sm_86 compute_90a", "compute_90a PTX", NULL},
	{"C02a", "120;86;80", 0, NULL, false, OK, "sm_80 compute_80 sm_86 compute_86 sm_120 compute_120", NULL, NULL},
	{"C02b", "80;80", 0, NULL, false, OK, "sm_80 compute_80", NULL, NULL},
	{"C03", "80-real;86", 0, NULL, false, OK, T01, NULL, NULL},
	{"C04a", "all", 0, NULL, false, OK, ALL13, NULL, "input"},
	{"C04b", "all-major", 0, NULL, false, OK, MAJOR13, NULL, NULL},
	{"C04-12.8", "all-major", 12080, NULL, false, OK, "sm_50 sm_60 sm_70 sm_80 sm_90 sm_100 sm_120 compute_120", NULL, NULL},
	{"C06", "native", 0, "none", false, AP_ENODEVICE, "native: cuInit: CUDA_ERROR_NO_DEVICE; use auto", NULL, NULL},
	{"C07", "OFF", 0, NULL, false, AP_EPARSE, "CMake's OFF", NULL, NULL},
	{"C08", "100f", 0, NULL, false, OK, "sm_100f compute_100f", NULL, NULL},
	{"C09a", "8.6", 0, NULL, false, OK, "sm_86", NULL, NULL},
	{"C09b", "90f", 0, NULL, false, AP_EUNSUPPORTED, "sm_90 has no family-specific 'f' variant in any CUDA release", NULL, NULL},
	{"C11", "52", 0, NULL, false, AP_EUNSUPPORTED, "sm_52 was removed in CUDA 13.0", NULL, NULL},
	{"C12", "100;100f", 0, NULL, false, AP_EUNSUPPORTED, "sm_100 (from item 1) and sm_100f (from item 2) together: nvcc refuses", NULL, NULL},
	/* every token form */
	{"pt-af", "9.0a 10.0f 12.1f+PTX", 0, NULL, false, OK, "sm_90a sm_100f sm_121f compute_121f", NULL, NULL},
	{"nvcc-names", "compute_86 sm_90a compute_100f sm_120", 0, NULL, false, OK, "compute_86 sm_90a compute_100f sm_120", NULL, NULL},
	{"cmake-forms", "86-virtual 90a-real 100f", 0, NULL, false, OK, "compute_86 sm_90a sm_100f compute_100f", NULL, NULL},
	{"seps", "8.0\t8.6\n9.0;;,10.0 ,", 0, NULL, false, OK, "sm_80 sm_86 sm_90 sm_100", NULL, NULL},
	{"names-case", "HOPPER+ptx ada+PTX", 0, NULL, false, OK, "sm_89 compute_89 sm_90 compute_90", NULL, NULL},
	{"name-ptx-newest", "Blackwell+PTX", 0, NULL, false, OK, "sm_100 sm_103 sm_120 sm_121 compute_121", NULL, NULL},
	{"tegra-ptx", "Blackwell+Tegra+PTX Ampere+Tegra", 0, NULL, false, OK, "sm_87 sm_110 compute_110", NULL, NULL},
	{"turing", "Turing", 0, NULL, false, OK, "sm_75 compute_75", NULL, NULL},
	/* PyTorch 2.15's Rubin = 10.7+PTX; sm_107 from CUDA 13.4 (ptxas 13.4.92) */
	{"rubin", "Rubin", 13050, NULL, false, OK, "sm_107 compute_107", NULL, NULL},
	{"rubin-13.4", "rubin+ptx 10.7a", 13040, NULL, false, OK, "sm_107 compute_107 sm_107a", NULL, NULL},
	{"rubin-f", "10.7f+PTX", 13040, NULL, false, OK, "sm_107f compute_107f", NULL, NULL},
	{"rubin-13.3", "Rubin", 13030, NULL, false, AP_EUNSUPPORTED, "sm_107 needs CUDA 13.4 or newer", NULL, NULL},
	{"rubin-13.0", "Blackwell Rubin", 0, NULL, false, AP_EUNSUPPORTED, "item 2 'Rubin'", NULL, NULL},
	/* meson's names: SASS of each member, PTX only with +PTX */
	{"meson-names", "Lovelace Orin Hopper(A)", 0, NULL, false, OK, "sm_87 sm_89 sm_90a", NULL, NULL},
	{"meson-ptx", "lovelace+PTX", 0, NULL, false, OK, "sm_89 compute_89", NULL, NULL},
	{"meson-thor-13", "Thor+PTX", 0, NULL, false, OK, "sm_110 compute_110", NULL, NULL},
	{"meson-thor-12.9", "Thor+PTX", 12090, NULL, false, OK, "sm_101 compute_101", NULL, NULL},
	{"meson-thor-12.6", "Thor", 12060, NULL, false, AP_EUNSUPPORTED, "sm_110", NULL, NULL},
	{"meson-thor-a", "Thor(A) Blackwell(A)", 0, NULL, false, OK, "sm_100a sm_103a sm_110a sm_120a sm_121a", NULL, NULL},
	{"meson-xavier-12", "Xavier Pascal+Tegra", 11080, NULL, false, OK, "sm_62 sm_72", NULL, NULL},
	{"meson-kepler-tegra", "Kepler+Tegra", 11080, NULL, false, AP_EUNSUPPORTED, "sm_32 is not supported", NULL, NULL},
	{"meson-fermi", "Fermi", 11080, NULL, false, AP_EUNSUPPORTED, "sm_20 is not supported", NULL, NULL},
	/* a name both have: PyTorch's meaning (PTX on the newest member) */
	{"shared-name", "Ampere", 0, NULL, false, OK, "sm_80 sm_86 compute_86", NULL, NULL},
	{"volta-12", "Volta Volta+Tegra", 12040, NULL, false, OK, "sm_70 compute_70 sm_72", NULL, NULL},
	{"kepler-11.8", "Kepler Maxwell", 11080, NULL, false, OK, "sm_35 compute_35 sm_50 sm_52 compute_52", NULL, NULL},
	{"ptx-order", "8.6+PTX 8.6a 8.6", 0, NULL, false, AP_EUNSUPPORTED, "no arch-specific 'a' variant", NULL, NULL},
	{"order-variants", "100f 10.0a 10.0+PTX", 0, NULL, false, AP_EUNSUPPORTED, "nvcc refuses", NULL, NULL},
	{"order-a-plain", "10.0a+PTX 10.0+PTX 10.3f", 0, NULL, false, OK, "sm_100 compute_100 sm_100a compute_100a sm_103f", "compute_100a PTX", NULL},
	{"a-plain-ok", "120a 120", 0, NULL, false, OK, "sm_120 compute_120 sm_120a compute_120a", "compute_120a PTX runs on compute capability 12.0 only", NULL},
	{"f-ptx-plain-ok", "12.0+PTX 120f-virtual", 0, NULL, false, OK, "sm_120 compute_120 compute_120f", NULL, NULL},
	{"8.0a", "8.0a", 0, NULL, false, AP_EUNSUPPORTED, "sm_80 has no arch-specific 'a' variant in any CUDA release", NULL, NULL},
	{"8.0a-drop", "8.0a", 0, NULL, true, AP_EUNSUPPORTED, "in any CUDA release", NULL, NULL},
	{"f-on-12.8", "10.0f", 12080, NULL, false, AP_EUNSUPPORTED, "sm_100f needs CUDA 12.9 or newer", NULL, NULL},
	{"f-on-12.8-drop", "8.0 10.0f", 12080, NULL, true, OK, "sm_80", "dropped sm_100f", NULL},
	{"a-on-11.8", "9.0a", 11080, NULL, false, AP_EUNSUPPORTED, "sm_90a needs CUDA 12.0 or newer", NULL, NULL},
	{"new-on-old", "12.0", 12040, NULL, false, AP_EUNSUPPORTED, "sm_120 needs CUDA 12.8 or newer", NULL, NULL},
	{"unknown-sm", "99", 0, NULL, false, AP_EUNSUPPORTED, "sm_99 is not supported by CUDA 13.0 (no CUDA release", NULL, NULL},
	{"unknown-sm-drop", "99 8.0", 0, NULL, true, OK, "sm_80", "dropped sm_99", NULL},
	{"future-a", "130a", 0, NULL, false, AP_EUNSUPPORTED, "sm_130a is not supported", NULL, NULL},
	{"all-dropped", "7.0 7.2", 0, NULL, true, AP_EUNSUPPORTED, "no arch is left", NULL, NULL},
	{"bad-plusplus", "8.6+PTX+PTX", 0, NULL, false, AP_EPARSE, "item 1 '8.6+PTX+PTX'", NULL, NULL},
	{"bad-pos", "8.0 8.6 86x", 0, NULL, false, AP_EPARSE, "item 3 '86x': not an arch; accepted: 8.6 9.0a", NULL, NULL},
	{"bad-minor", "8.60", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"bad-zero", "0.0", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"bad-realreal", "100-real-real", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"bad-sm-ptx", "sm_80+PTX", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"bad-upper-sfx", "9.0A", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"bad-lto", "lto_90", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"bad-1digit", "8", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"bad-ptx-only", "+PTX", 0, NULL, false, AP_EPARSE, "item 1", NULL, NULL},
	{"empty-auto", " ;; ,\t", 0, "none", false, OK, MAJOR13, "all-major", "fallback"},
	/* devices */
	{"native-mixed", "8.6 native", 0, "9.0", false, OK, "sm_86 sm_90 compute_90", NULL, "devices"},
	{"native-old", "native", 0, "7.0", false, AP_EUNSUPPORTED, "older than the oldest arch CUDA 13.0 supports (sm_75)", NULL, NULL},
	{"auto-old", "auto", 0, "7.0,8.6", false, OK, "sm_86 compute_86", "compute capability 7.0) is older", NULL},
	{"auto-old-only", "auto", 0, "7.0", false, OK, MAJOR13, "no visible device is supported", "fallback"},
	{"dev-between", "native", 0, "10.1", false, OK, "sm_100 compute_100", "CUDA 13.0 has no sm_101; using sm_100 SASS", NULL},
	{"dev-newer-major", "native", 0, "13.0", false, OK, "compute_121", "its newest is sm_121", NULL},
	{"dev-newer-same", "native", 0, "12.5", false, OK, "sm_121 compute_121", "using sm_121 SASS", NULL},
	{"native-nodriver", "native", 0, "nodriver", false, AP_ENODRIVER, "libcuda.so.1 not found", NULL, NULL},
	{"native-noprobe", "native", 0, NULL, false, AP_ENODEVICE, "device probing is disabled", NULL, NULL},
	{"auto-noprobe", "auto", 0, NULL, false, OK, MAJOR13, "device probing is disabled", "fallback"},
};

/* A probe result for a vec's devs. */
static void
fake_devices(const char *devs, struct ap_probe_result *r)
{
	memset(r, 0, sizeof(*r));
	if (strcmp(devs, "none") == 0) {
		r->status = AP_PROBE_NO_DEVICE;
		snprintf(r->reason, sizeof(r->reason), "cuInit: CUDA_ERROR_NO_DEVICE");
		return;
	}
	if (strcmp(devs, "nodriver") == 0) {
		r->status = AP_PROBE_NO_DRIVER;
		snprintf(r->reason, sizeof(r->reason), "libcuda.so.1 not found");
		return;
	}
	r->status = AP_PROBE_OK;
	const char *p = devs;
	while (*p && r->ndevices < AP_MAX_DEVICES) {
		struct ap_device *d = &r->devices[r->ndevices];
		d->ordinal = r->ndevices;
		d->major = (int)strtol(p, (char **)&p, 10);
		p++; /* '.' */
		d->minor = (int)strtol(p, (char **)&p, 10);
		snprintf(d->name, sizeof(d->name), "Fake GPU %d.%d", d->major, d->minor);
		r->ndevices++;
		if (*p == ',')
			p++;
	}
}

/* "sm_80 sm_86 compute_86" for a list. */
static void
names_of(const struct ap_archlist *l, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ap_archlist_count(l) && n < size; i++) {
		char name[32];
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? " " : "", ap_target_name(ap_archlist_get(l, i), name, sizeof(name)));
	}
}

static bool
has_warning(const struct ap_archlist *l, const char *sub)
{
	for (size_t i = 0; i < ap_archlist_nwarnings(l); i++)
		if (strstr(ap_archlist_warning(l, i), sub))
			return true;
	return false;
}

static int
resolve(const char *text, int cuda, const char *devs, bool drop, const char *fallback, struct ap_archlist **l,
        struct ap_error *err)
{
	struct ap_toolkit tk;
	struct ap_probe_result pr;
	if (ap_toolkit_builtin(cuda ? cuda : 13000, &tk, err))
		return -1;
	struct ap_resolve_opts o = {.toolkit = &tk, .drop_unsupported = drop, .fallback = fallback, .no_probe = true};
	if (devs) {
		fake_devices(devs, &pr);
		o.devices = &pr;
	}
	return ap_archlist_resolve(text, &o, l, err);
}

/* Every resolved list survives a round trip through the cmake format (which can write any
 * list) and, when it has no PTX-only arch, through the torch format. */
static void
round_trip(const struct ap_archlist *l, int cuda, const char *id)
{
	static const enum ap_format fmts[] = {AP_FMT_CMAKE, AP_FMT_TORCH, AP_FMT_BAZEL};
	char want[1024], got[sizeof(((struct ap_error *)0)->msg) + 32]; /* "error N: " and a whole message */
	names_of(l, want, sizeof(want));
	for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
		char *text = NULL;
		struct ap_error err = {0};
		if (ap_archlist_format(l, fmts[k], &text, &err) != 0) {
			CHECK(fmts[k] != AP_FMT_CMAKE && strstr(err.msg, "PTX without SASS"));
			continue;
		}
		if (fmts[k] == AP_FMT_BAZEL) {
			/* rules_cuda specs are "compute_X:sm_X,compute_X" / "sm_X" / "compute_X": nvcc names */
			for (char *c = text; *c; c++)
				if (*c == ':' || *c == ',')
					*c = ' ';
		}
		struct ap_archlist *back = NULL;
		int rc = resolve(text, cuda, NULL, false, NULL, &back, &err);
		if (rc == 0)
			names_of(back, got, sizeof(got));
		else
			snprintf(got, sizeof(got), "error %d: %s", rc, err.msg);
		if (strcmp(got, want) != 0)
			fprintf(stderr, "%s: round trip through '%s' (format %d)\n", id, text, (int)fmts[k]);
		CHECK_STR(got, want);
		ap_archlist_free(back);
		free(text);
	}
}

/* A device whose query failed (error set, CC 0.0) is skipped, not built for as "0.0". */
static void
test_failed_device(void)
{
	struct ap_toolkit tk;
	struct ap_probe_result pr;
	struct ap_archlist *l = NULL;
	struct ap_error err = {0};
	char got[256];
	CHECK(ap_toolkit_builtin(13000, &tk, &err) == 0);
	fake_devices("8.6,9.0", &pr);
	pr.devices[1].major = pr.devices[1].minor = 0;
	pr.devices[1].error = 999;
	struct ap_resolve_opts o = {.toolkit = &tk, .no_probe = true, .devices = &pr};
	CHECK(ap_archlist_resolve("native", &o, &l, &err) == 0);
	if (l) {
		names_of(l, got, sizeof(got));
		CHECK_STR(got, "sm_86 compute_86");
	}
	ap_archlist_free(l);
}

static void
test_vectors(void)
{
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
		const struct vec *v = &vecs[i];
		struct ap_archlist *l = NULL;
		struct ap_error err = {0};
		int rc = resolve(v->input, v->cuda, v->devs, v->drop, NULL, &l, &err);
		if (rc != v->rc) {
			fprintf(stderr, "%s: '%s': rc %d (%s), want %d\n", v->id, v->input ? v->input : "(unset)", rc, err.msg,
			        v->rc);
			CHECK(rc == v->rc);
			ap_archlist_free(l);
			continue;
		}
		if (rc != 0) {
			CHECK(l == NULL);
			CHECK(err.code == v->rc);
			if (!strstr(err.msg, v->want))
				fprintf(stderr, "%s: error '%s' lacks '%s'\n", v->id, err.msg, v->want);
			CHECK(strstr(err.msg, v->want) != NULL);
			CHECK(strchr(err.msg, '\n') == NULL);
			continue;
		}
		char got[1024];
		names_of(l, got, sizeof(got));
		if (strcmp(got, v->want) != 0)
			fprintf(stderr, "%s: '%s'\n", v->id, v->input ? v->input : "(unset)");
		CHECK_STR(got, v->want);
		if (v->warn) {
			if (!has_warning(l, v->warn)) {
				fprintf(stderr, "%s: no warning with '%s'; got %zu:\n", v->id, v->warn, ap_archlist_nwarnings(l));
				for (size_t k = 0; k < ap_archlist_nwarnings(l); k++)
					fprintf(stderr, "  %s\n", ap_archlist_warning(l, k));
			}
			CHECK(has_warning(l, v->warn));
		} else {
			if (ap_archlist_nwarnings(l))
				fprintf(stderr, "%s: unexpected warning: %s\n", v->id, ap_archlist_warning(l, 0));
			CHECK(ap_archlist_nwarnings(l) == 0);
		}
		if (v->source)
			CHECK_STR(ap_archlist_source(l), v->source);
		/* origins: input items are 1-based positions; devices/fallback 0 */
		for (size_t k = 0; k < ap_archlist_count(l); k++) {
			const struct ap_target *t = ap_archlist_get(l, k);
			if (strcmp(ap_archlist_source(l), "input") == 0)
				CHECK(t->origin >= 1);
			CHECK(t->origin >= 0);
		}
		round_trip(l, v->cuda, v->id);
		ap_archlist_free(l);
	}
}

/* docs/archlist.md §6: every format of `8.0 8.6+PTX`, and more. */
static void
test_formats(void)
{
	static const struct {
		const char *input;
		enum ap_format fmt;
		int rc;
		const char *want;
	} cases[] = {
		{"8.0 8.6+PTX", AP_FMT_NVCC, 0,
		 "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_86,code=compute_86"},
		{"8.0 8.6+PTX", AP_FMT_TORCH, 0, "8.0 8.6+PTX"},
		{"8.0 8.6+PTX", AP_FMT_CMAKE, 0, "80-real;86"},
		{"8.0 8.6+PTX", AP_FMT_CLANG, 0,
		 "--offload-arch=sm_80 --offload-arch=sm_86 --no-cuda-include-ptx=all --cuda-include-ptx=sm_86"},
		{"8.0 8.6+PTX", AP_FMT_NVRTC, 0, "-arch=sm_80\n-arch=sm_86\n-arch=compute_86\n"},
		{"8.0 8.6+PTX", AP_FMT_BAZEL, 0, "sm_80;compute_86:sm_86,compute_86"},
		{"8.0 8.6+PTX", AP_FMT_LIST, 0, "80;86"},
		{"9.0a 10.0f+PTX", AP_FMT_NVCC, 0,
		 "-gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_100f,code=sm_100f "
		 "-gencode=arch=compute_100f,code=compute_100f"},
		{"9.0a 10.0f+PTX", AP_FMT_TORCH, 0, "9.0a 10.0f+PTX"},
		{"9.0a 10.0f+PTX", AP_FMT_CMAKE, 0, "90a-real;100f"},
		{"9.0a 10.0f+PTX", AP_FMT_CLANG, 0,
		 "--offload-arch=sm_90a --offload-arch=sm_100f --no-cuda-include-ptx=all --cuda-include-ptx=sm_100f"},
		{"9.0a 10.0f+PTX", AP_FMT_LIST, 0, "90a;100f"},
		{"compute_86 9.0", AP_FMT_TORCH, AP_EUNSUPPORTED, NULL},
		{"compute_86 9.0", AP_FMT_CLANG, AP_EUNSUPPORTED, NULL},
		{"compute_86 9.0", AP_FMT_CMAKE, 0, "86-virtual;90-real"},
		{"compute_86 9.0", AP_FMT_BAZEL, 0, "compute_86;sm_90"},
		{"compute_86 9.0", AP_FMT_LIST, 0, "90"},
		{"compute_86 9.0", AP_FMT_NVRTC, 0, "-arch=compute_86\n-arch=sm_90\n"},
		{"all", AP_FMT_CLANG, 0,
		 "--offload-arch=sm_75 --offload-arch=sm_80 --offload-arch=sm_86 --offload-arch=sm_87 --offload-arch=sm_88 "
		 "--offload-arch=sm_89 --offload-arch=sm_90 --offload-arch=sm_100 --offload-arch=sm_103 "
		 "--offload-arch=sm_110 --offload-arch=sm_120 --offload-arch=sm_121 --no-cuda-include-ptx=all "
		 "--cuda-include-ptx=sm_121"},
		{"all-major", AP_FMT_CMAKE, 0, "75-real;80-real;90-real;100-real;110-real;120"},
		{"8.0 8.6+PTX", (enum ap_format)99, AP_EINVAL, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ap_archlist *l = NULL;
		struct ap_error err = {0};
		CHECK(resolve(cases[i].input, 0, NULL, false, NULL, &l, &err) == 0);
		char *out = (char *)"x";
		int rc = ap_archlist_format(l, cases[i].fmt, &out, &err);
		if (rc != cases[i].rc)
			fprintf(stderr, "format %d of '%s': rc %d (%s)\n", (int)cases[i].fmt, cases[i].input, rc, err.msg);
		CHECK(rc == cases[i].rc);
		if (rc == 0)
			CHECK_STR(out, cases[i].want);
		else
			CHECK(out == NULL && err.msg[0]);
		free(rc == 0 ? out : NULL);
		ap_archlist_free(l);
	}

	/* clang by version: 22 (new offload driver) asks for PTX, older ones leave it out */
	static const struct {
		const char *input;
		int clang, rc;
		const char *want;
	} cl[] = {
		{"8.0 8.6+PTX", 22, 0, "--offload-arch=sm_80 --offload-arch=sm_86 --cuda-include-ptx=sm_86"},
		{"8.0 8.6+PTX", 14, 0, "--offload-arch=sm_80 --offload-arch=sm_86 --no-cuda-include-ptx=sm_80"},
		{"8.0 8.6+PTX", 18, 0, "--offload-arch=sm_80 --offload-arch=sm_86 --no-cuda-include-ptx=sm_80"},
		{"8.0 8.6+PTX", 23, 0, "--offload-arch=sm_80 --offload-arch=sm_86 --cuda-include-ptx=sm_86"},
		{"9.0a 12.1a", 22, 0, "--offload-arch=sm_90a --offload-arch=sm_121a"},
		{"8.9", 14, AP_EUNSUPPORTED, "clang 14 cannot compile CUDA for sm_89"},
		{"10.0f", 22, AP_EUNSUPPORTED, "clang 22 cannot compile CUDA for sm_100f"},
		{"11.0", 22, AP_EUNSUPPORTED, "PTX ISA 9.0"},
		{"compute_86 9.0", 22, AP_EUNSUPPORTED, "PTX without SASS"},
	};
	for (size_t i = 0; i < sizeof(cl) / sizeof(cl[0]); i++) {
		struct ap_archlist *cll = NULL;
		struct ap_error cerr = {0};
		CHECK(resolve(cl[i].input, 0, NULL, false, NULL, &cll, &cerr) == 0);
		char *out = NULL;
		int rc = ap_archlist_format_clang(cll, cl[i].clang, &out, &cerr);
		CHECK(rc == cl[i].rc);
		if (rc == 0)
			CHECK_STR(out, cl[i].want);
		else
			CHECK(out == NULL && strstr(cerr.msg, cl[i].want) != NULL);
		free(out);
		ap_archlist_free(cll);
	}

	/* json: one document with targets, source, warnings, toolkit */
	struct ap_archlist *l = NULL;
	struct ap_error err = {0};
	CHECK(resolve("9.0a+PTX \"x", 0, NULL, false, NULL, &l, &err) == AP_EPARSE);
	CHECK(resolve("8.0 9.0a+PTX", 0, NULL, false, NULL, &l, &err) == 0);
	char *js = NULL;
	CHECK(ap_archlist_format(l, AP_FMT_JSON, &js, &err) == 0);
	CHECK(js && strstr(js, "{\"name\": \"sm_80\", \"sm\": 80, \"variant\": \"plain\", \"kind\": \"sass\", \"origin\": 1, "
	                       "\"from\": \"input\"}"));
	CHECK(js && strstr(js, "{\"name\": \"compute_90a\", \"sm\": 90, \"variant\": \"a\", \"kind\": \"ptx\", \"origin\": 2"));
	CHECK(js && strstr(js, "\"source\": \"input\""));
	CHECK(js && strstr(js, "\"warnings\": [\n    \"item 2 '9.0a+PTX': compute_90a PTX"));
	CHECK(js && strstr(js, "\"toolkit\": {\"version\": \"13.0\", \"source\": \"built-in table for CUDA 13.0\", \"sm\": [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121], \"a\": [90, 100, 103, 110, 120, 121], \"f\": [100, 103, 110, 120, 121]}"));
	CHECK(js && js[strlen(js) - 1] == '\n');
	free(js);
	ap_archlist_free(l);

	/* json escapes whatever bytes a warning carries */
	CHECK(resolve("7.0 \"\x01\xff 8.0", 0, NULL, true, NULL, &l, &err) == AP_EPARSE);
	CHECK(strstr(err.msg, "item 2") != NULL);

	CHECK(ap_format_parse("nvcc") == AP_FMT_NVCC);
	CHECK(ap_format_parse("json") == AP_FMT_JSON);
	CHECK(ap_format_parse("list") == AP_FMT_LIST);
	CHECK(ap_format_parse("NVCC") == -1);
	CHECK(ap_format_parse("") == -1);
	CHECK(ap_format_parse(NULL) == -1);
}

static void
test_target_names(void)
{
	struct ap_target t;
	char buf[32];
	CHECK(ap_target_parse("sm_90a", &t) == 0 && t.sm == 90 && t.variant == AP_ARCH && t.kind == AP_SASS);
	CHECK_STR(ap_target_name(&t, buf, sizeof(buf)), "sm_90a");
	CHECK(ap_target_parse("compute_100f", &t) == 0 && t.sm == 100 && t.variant == AP_FAMILY && t.kind == AP_PTX);
	CHECK_STR(ap_target_name(&t, buf, sizeof(buf)), "compute_100f");
	CHECK(ap_target_parse("compute_86", &t) == 0 && t.sm == 86 && t.variant == AP_PLAIN);
	CHECK_STR(ap_target_name(&t, buf, sizeof(buf)), "compute_86");
	CHECK(ap_target_parse("sm_8", &t) == AP_EPARSE);
	CHECK(ap_target_parse("sm_1000", &t) == AP_EPARSE);
	CHECK(ap_target_parse("sm_90x", &t) == AP_EPARSE);
	CHECK(ap_target_parse("8.6", &t) == AP_EPARSE);
	CHECK(ap_target_parse("", &t) == AP_EPARSE);
	CHECK(ap_target_parse(NULL, &t) == AP_EPARSE);
}

static void
test_env(void)
{
	struct ap_archlist *l = NULL;
	struct ap_error err = {0};
	char got[512];

	/* ARCHPROBE_ARCHS replaces probing */
	setenv("ARCHPROBE_ARCHS", "8.6 sm_90,120", 1);
	CHECK(resolve("native", 0, NULL, false, NULL, &l, &err) == 0);
	names_of(l, got, sizeof(got));
	CHECK_STR(got, "sm_86 sm_90 sm_120 compute_120");
	CHECK_STR(ap_archlist_source(l), "override");
	ap_archlist_free(l);
	setenv("ARCHPROBE_ARCHS", "8.6 nope", 1);
	CHECK(resolve("auto", 0, NULL, false, NULL, &l, &err) == AP_EPARSE);
	CHECK(strstr(err.msg, "ARCHPROBE_ARCHS item 2 'nope'") != NULL);
	unsetenv("ARCHPROBE_ARCHS");

	/* fallback chain: opts->fallback, then ARCHPROBE_FALLBACK, then all-major */
	setenv("ARCHPROBE_FALLBACK", "8.0", 1);
	CHECK(resolve(NULL, 0, "none", false, "7.5+PTX", &l, &err) == 0);
	names_of(l, got, sizeof(got));
	CHECK_STR(got, "sm_75 compute_75");
	CHECK(has_warning(l, "from --fallback: 7.5+PTX"));
	CHECK(ap_archlist_get(l, 0)->origin == 0);
	ap_archlist_free(l);
	CHECK(resolve("auto", 0, "none", false, NULL, &l, &err) == 0);
	names_of(l, got, sizeof(got));
	CHECK_STR(got, "sm_80");
	CHECK(has_warning(l, "from ARCHPROBE_FALLBACK: 8.0"));
	CHECK_STR(ap_archlist_source(l), "fallback");
	ap_archlist_free(l);
	setenv("ARCHPROBE_FALLBACK", "native", 1);
	CHECK(resolve("auto", 0, "none", false, NULL, &l, &err) == AP_EPARSE);
	CHECK(strstr(err.msg, "ARCHPROBE_FALLBACK item 1 'native'") != NULL);
	setenv("ARCHPROBE_FALLBACK", "7.0", 1);
	CHECK(resolve("auto", 0, "none", false, NULL, &l, &err) == AP_EUNSUPPORTED);
	CHECK(strstr(err.msg, "ARCHPROBE_FALLBACK item 1 '7.0'") != NULL);
	unsetenv("ARCHPROBE_FALLBACK");

	/* native with no device names CUDA_VISIBLE_DEVICES when it is set */
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	CHECK(resolve("native", 0, "none", false, NULL, &l, &err) == AP_ENODEVICE);
	CHECK(strstr(err.msg, "CUDA_VISIBLE_DEVICES='' is set") != NULL);
	CHECK(ap_exit_code(err.code) == AP_EXIT_FAIL);
	unsetenv("CUDA_VISIBLE_DEVICES");
	CHECK(resolve("native", 0, "none", false, NULL, &l, &err) == AP_ENODEVICE);
	CHECK(strstr(err.msg, "CUDA_VISIBLE_DEVICES") == NULL);

	/* exit codes of the error classes */
	CHECK(ap_exit_code(AP_EPARSE) == AP_EXIT_USAGE);
	CHECK(ap_exit_code(AP_EUNSUPPORTED) == AP_EXIT_USAGE);

	/* the library's own prober (placeholder or real) for auto never fails the list */
	struct ap_toolkit tk;
	CHECK(ap_toolkit_builtin(13000, &tk, &err) == 0);
	struct ap_resolve_opts o = {.toolkit = &tk};
	setenv("ARCHPROBE_FALLBACK", "9.0", 1);
	CHECK(ap_archlist_resolve("auto", &o, &l, &err) == 0);
	CHECK(l && ap_archlist_count(l) > 0);
	ap_archlist_free(l);
	unsetenv("ARCHPROBE_FALLBACK");

	/* misuse */
	CHECK(ap_archlist_resolve("8.0", &o, NULL, &err) == AP_EINVAL);
	CHECK(ap_archlist_count(NULL) == 0 && ap_archlist_get(NULL, 0) == NULL && ap_archlist_nwarnings(NULL) == 0);
	ap_archlist_free(NULL);
}

int
main(void)
{
	test_failed_device();
	unsetenv("ARCHPROBE_ARCHS");
	unsetenv("ARCHPROBE_FALLBACK");
	unsetenv("CUDA_VISIBLE_DEVICES");
	test_target_names();
	test_vectors();
	test_formats();
	test_env();
	return check_done();
}
