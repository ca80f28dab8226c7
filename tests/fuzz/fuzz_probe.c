/* fuzz_probe.c: what the probe reads back from its child process and from the opt-in probe
 * cache: the "key value" record ("archprobe-probe 1", status, cuda_error, driver_version,
 * library, reason, trace, device/name/uuid/pci per device, end), i.e. whatever a broken or
 * hostile driver makes the child write, then everything downstream of it: the device check,
 * the explanation, and the arch-list resolver on those devices.
 * Input: arbitrary bytes (a NUL-terminated private copy). The last byte picks the arch list
 * ("native", "auto", "native 8.0+PTX", "") and the CUDA table.
 * Invariants (abort on violation): no crash or over-read; ndevices stays in 0..AP_MAX_DEVICES;
 * after ap_probe_check_devices every device without an error has a real compute capability
 * (major 1..99, minor 0..9) and an ok result has at least one; the explained reason is one
 * line; serialising the result and parsing it back gives the same devices and status; the
 * resolver either fails with a one-line message or gives a sorted, unique list whose SASS
 * targets never exceed the newest device (no 8.12 -> 9.2). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archprobe.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const lists[] = {"native", "auto", "native 8.0+PTX", ""};

static void
same_devices_or_die(const struct ap_probe_result *a, const struct ap_probe_result *b)
{
	if (a->status != b->status || a->ndevices != b->ndevices || a->cuda_error != b->cuda_error ||
	    a->driver_version != b->driver_version)
		abort();
	for (int i = 0; i < a->ndevices; i++) {
		const struct ap_device *x = &a->devices[i], *y = &b->devices[i];
		if (x->ordinal != y->ordinal || x->major != y->major || x->minor != y->minor ||
		    x->multiprocessors != y->multiprocessors || x->total_memory != y->total_memory ||
		    x->error != y->error || x->mig != y->mig)
			abort();
	}
}

/* Serialises r through a temporary file (the child writes to a pipe; a file has no size limit
 * here) and parses it back into out. */
static void
round_trip(const struct ap_probe_result *r, const struct ap_probe_detail *d, struct ap_probe_result *out)
{
	FILE *f = tmpfile();
	if (!f)
		return;
	ap_probe_serialize(fileno(f), r, d);
	long n = lseek(fileno(f), 0, SEEK_END);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && pread(fileno(f), buf, (size_t)n, 0) == n) {
		buf[n] = 0;
		memset(out, 0, sizeof(*out));
		struct ap_probe_detail back = {AP_DETAIL_NONE, ""};
		if (!ap_probe_parse_reply(buf, out, &back))
			abort(); /* our own record must be complete */
		if (back.kind != d->kind)
			abort();
		same_devices_or_die(r, out);
	}
	free(buf);
	fclose(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = malloc(size + 1);
	struct ap_probe_result *r = calloc(1, sizeof(*r)), *back = calloc(1, sizeof(*back));
	if (!text || !r || !back)
		goto out;
	memcpy(text, data, size);
	text[size] = 0;
	uint8_t last = size ? data[size - 1] : 0;

	struct ap_probe_detail detail = {AP_DETAIL_NONE, ""};
	bool complete = ap_probe_parse_reply(text, r, &detail);
	if (r->ndevices < 0 || r->ndevices > AP_MAX_DEVICES)
		abort();
	if (!complete) /* what ap_probe does with an incomplete reply */
		r->ndevices = 0;
	ap_probe_check_devices(r, &detail);
	int newest = 0;
	for (int i = 0; i < r->ndevices; i++) {
		const struct ap_device *d = &r->devices[i];
		if (d->error)
			continue;
		if (d->major < 1 || d->major > 99 || d->minor < 0 || d->minor > 9)
			abort();
		if (d->major * 10 + d->minor > newest)
			newest = d->major * 10 + d->minor;
	}
	ap_probe_explain(r, &detail, (last & 1) ? "/nonexistent/libcuda.so.1" : NULL, "/nonexistent");
	if (!memchr(r->reason, 0, sizeof(r->reason)) || strchr(r->reason, '\n'))
		abort();

	round_trip(r, &detail, back);

	/* the resolver on these devices, as archprobe --arch-list / fatbuild flags use them */
	struct ap_toolkit tk;
	if (ap_toolkit_builtin((last & 8) ? 12080 : 13000, &tk, NULL) != 0)
		abort();
	struct ap_resolve_opts o = {.toolkit = &tk, .devices = r, .no_probe = true,
	                            .fallback = (last & 16) ? "8.0" : NULL};
	struct ap_archlist *l = NULL;
	struct ap_error err = {0};
	int rc = ap_archlist_resolve(lists[(last >> 1) & 3], &o, &l, &err);
	if (rc) {
		if (l || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
	} else {
		size_t n = ap_archlist_count(l);
		if (n == 0)
			abort();
		for (size_t i = 0; i < n; i++) {
			const struct ap_target *t = ap_archlist_get(l, i);
			if (i) {
				const struct ap_target *p = ap_archlist_get(l, i - 1);
				if (p->sm * 100L + p->variant * 10 + p->kind >= t->sm * 100L + t->variant * 10 + t->kind)
					abort();
			}
			/* from devices alone (no fallback, no explicit item), no SASS newer than a device */
			if (r->status == AP_PROBE_OK && newest && !(last & 16) && ((last >> 1) & 3) == 0 &&
			    t->kind == AP_SASS && t->sm > newest)
				abort();
		}
		for (size_t i = 0; i < ap_archlist_nwarnings(l); i++)
			if (strchr(ap_archlist_warning(l, i), '\n'))
				abort();
	}
	ap_archlist_free(l);
out:
	free(text);
	free(r);
	free(back);
	return 0;
}
