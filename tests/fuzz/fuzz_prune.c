/* fuzz_prune.c: the prune rewriter (fb_prune_buffer: .fatbin compaction, relocatable ELF
 * rewrite through libelf, ar archives with their symbol tables, linked ELF in place) and
 * fb_size on its input.
 * Input: byte 0 picks the targets (bit i: sm_75, sm_80, sm_86, sm_90, sm_100, sm_120,
 * compute_80, compute_120; none set: sm_90), byte 1 the options (bit 0 allow_missing, bit 1
 * prune_lto, bit 2 prune_relocatable), the rest is the file.
 * Invariants (abort on violation): errors are one line with the code returned; on success the
 * entry counts add up, a linked file keeps its size, a relocatable file or fatbin never grows
 * by more than libelf's relayout can add, and pruning the output again to the same list
 * removes nothing and keeps every entry (the kept images are what the model picks). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_err(int rc, const struct fb_error *err)
{
	if (err->code != rc || !err->msg[0] || strchr(err->msg, '\n'))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ap_target all[8] = {
		{75, AP_PLAIN, AP_SASS, 0},  {80, AP_PLAIN, AP_SASS, 0},  {86, AP_PLAIN, AP_SASS, 0},
		{90, AP_PLAIN, AP_SASS, 0},  {100, AP_PLAIN, AP_SASS, 0}, {120, AP_PLAIN, AP_SASS, 0},
		{80, AP_PLAIN, AP_PTX, 0},   {120, AP_PLAIN, AP_PTX, 0},
	};
	if (size < 2)
		return 0;
	struct ap_target ts[8];
	size_t nt = 0;
	for (int i = 0; i < 8; i++)
		if (data[0] & (1u << i))
			ts[nt++] = all[i];
	if (!nt)
		ts[nt++] = all[3];
	struct fb_prune_opts o = {ts, nt, (data[1] & 1) != 0, (data[1] & 2) != 0, (data[1] & 4) != 0, 0};
	size_t n = size - 2;
	unsigned char *buf = malloc(n ? n : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 2, n);

	struct fb_error err = {0};
	struct fb_prune_report r;
	unsigned char *out = NULL;
	size_t osz = 0;
	int rc = fb_prune_buffer(buf, n, "in.bin", &o, &out, &osz, &r, &err);
	if (rc) {
		check_err(rc, &err);
		if (out)
			abort();
	} else {
		if (r.kept_entries + r.removed_entries != r.nentries || r.out_size != osz || r.in_size != n)
			abort();
		if (r.in_place && osz != n)
			abort();
		if (strcmp(r.type, "fatbin") == 0 && osz > n)
			abort();
		struct fb_prune_report r2;
		unsigned char *out2 = NULL;
		size_t osz2 = 0;
		struct fb_prune_opts o2 = o;
		o2.allow_missing = true;
		struct fb_error err2 = {0};
		int rc2 = fb_prune_buffer(out, osz, "out.bin", &o2, &out2, &osz2, &r2, &err2);
		if (rc2 || r2.removed_entries != 0 || r2.nentries != r.kept_entries)
			abort();
		free(out2);
		fb_prune_report_free(&r2);
	}
	fb_prune_report_free(&r);
	free(out);

	struct fb_size_opts so = {ts, nt, o.prune_lto, o.prune_relocatable, 0};
	struct fb_size_report sr;
	memset(&err, 0, sizeof(err));
	rc = fb_size(buf, n, "in.bin", &so, &sr, &err);
	if (rc) {
		check_err(rc, &err);
	} else {
		uint64_t stored = 0, kept = 0;
		for (size_t i = 0; i < sr.nrows; i++) {
			stored += sr.rows[i].stored;
			kept += sr.rows[i].kept_stored;
			if (sr.rows[i].kept_entries > sr.rows[i].entries)
				abort();
		}
		if (stored != sr.stored || kept != sr.kept_stored || sr.kept_stored > sr.stored)
			abort();
		fb_size_report_free(&sr);
	}
	free(buf);
	return 0;
}
