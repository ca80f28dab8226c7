/* fuzz_archlist.c: the arch-list parser/resolver and every output format.
 * Input: the list text, optionally followed by a NUL and device bytes (two per device: major,
 * minor, each mod 16; a first device byte 0xff means "no device visible"); the last byte's low
 * bits pick the CUDA table and --drop-unsupported. Invariants checked (abort on violation):
 * a result is sorted and unique, errors are one line, every format renders or refuses cleanly,
 * and the cmake rendering resolves back to the same targets. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archprobe.h"

static const int versions[] = {13000, 12090, 12080, 12040, 11080};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
same_or_die(const struct ap_archlist *a, const struct ap_archlist *b)
{
	if (ap_archlist_count(a) != ap_archlist_count(b))
		abort();
	for (size_t i = 0; i < ap_archlist_count(a); i++) {
		const struct ap_target *x = ap_archlist_get(a, i), *y = ap_archlist_get(b, i);
		if (x->sm != y->sm || x->variant != y->variant || x->kind != y->kind)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	size_t tlen = strlen(text);

	uint8_t last = size ? data[size - 1] : 0;
	struct ap_toolkit tk;
	if (ap_toolkit_builtin(versions[(last & 7) % 5], &tk, NULL) != 0)
		abort();
	struct ap_probe_result pr;
	memset(&pr, 0, sizeof(pr));
	struct ap_resolve_opts o = {.toolkit = &tk, .drop_unsupported = (last & 8) != 0, .no_probe = true,
	                            .fallback = (last & 16) ? "8.0 9.0+PTX" : NULL};
	if (tlen < size) {
		const uint8_t *d = data + tlen + 1;
		size_t nd = size - tlen - 1;
		if (nd && d[0] == 0xff) {
			pr.status = AP_PROBE_NO_DEVICE;
			snprintf(pr.reason, sizeof(pr.reason), "fuzz: no device");
		} else {
			pr.status = AP_PROBE_OK;
			for (size_t i = 0; i + 1 < nd && pr.ndevices < AP_MAX_DEVICES; i += 2) {
				pr.devices[pr.ndevices].ordinal = pr.ndevices;
				pr.devices[pr.ndevices].major = d[i] % 16;
				pr.devices[pr.ndevices].minor = d[i + 1] % 16;
				pr.ndevices++;
			}
		}
		o.devices = &pr;
	}

	struct ap_archlist *l = NULL;
	struct ap_error err = {0};
	int rc = ap_archlist_resolve(text, &o, &l, &err);
	if (rc) {
		if (l || err.code != rc || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		free(text);
		return 0;
	}
	if (!l || ap_archlist_count(l) == 0)
		abort();
	for (size_t i = 1; i < ap_archlist_count(l); i++) {
		const struct ap_target *a = ap_archlist_get(l, i - 1), *b = ap_archlist_get(l, i);
		long ka = a->sm * 100L + a->variant * 10 + a->kind, kb = b->sm * 100L + b->variant * 10 + b->kind;
		if (ka >= kb)
			abort();
	}
	for (size_t i = 0; i < ap_archlist_nwarnings(l); i++)
		if (!ap_archlist_warning(l, i) || strchr(ap_archlist_warning(l, i), '\n'))
			abort();
	for (int f = AP_FMT_NVCC; f <= AP_FMT_LIST; f++) {
		char *out = NULL;
		int frc = ap_archlist_format(l, (enum ap_format)f, &out, &err);
		if (frc == 0 && !out)
			abort();
		if (frc != 0 && (out || (f != AP_FMT_TORCH && f != AP_FMT_CLANG)))
			abort();
		if (f == AP_FMT_CMAKE) {
			struct ap_resolve_opts o2 = {.toolkit = &tk, .no_probe = true};
			struct ap_archlist *back = NULL;
			if (ap_archlist_resolve(out, &o2, &back, &err) != 0)
				abort();
			same_or_die(l, back);
			ap_archlist_free(back);
		}
		free(out);
	}
	ap_archlist_free(l);
	free(text);
	return 0;
}
