/* fuzz_rexec.c: remote execution's protocol layer (rexec/action.c, docs/remote-cache.md §9):
 * what an executor answers, which any server may get wrong, and the input-root builder. Input:
 * a selector byte, then
 *   0: one google.longrunning.Operation (fb_rexec_decode_operation; the seeds in
 *      corpus/fuzz_rexec/ were serialized by the protobuf runtime with BuildGrid's protos);
 *   1: two Operations, a varint length before the first (a stream: the second updates the first's
 *      result);
 *   2: input paths separated by '\n' (fb_rexec_action_new).
 * Invariants: the decoder accepts or says FB_EFORMAT with a message, nothing else; an accepted
 * result's output paths are relative (fb_rexec_path_ok), named once, inline data inside the
 * input; action_new accepts or says FB_EINVAL with a message, accepts only relative paths, and
 * gives the same Action digest for the paths in reverse order. Abort on any violation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/pb.h"
#include "rexec/action.h"
#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_result(const struct fb_rexec_result *r, int rc, const struct fb_error *e, size_t n)
{
	if (rc != 0 && rc != FB_EFORMAT)
		abort();
	if (rc != 0 && !e->msg[0])
		abort(); /* every rejection says why */
	if (rc != 0)
		return;
	for (int i = 0; i < r->nfiles; i++) {
		if (!fb_rexec_path_ok(r->files[i].path, strlen(r->files[i].path)) || (r->files[i].data && r->files[i].size > n))
			abort();
		for (int k = 0; k < i; k++)
			if (!strcmp(r->files[i].path, r->files[k].path))
				abort();
	}
	if ((r->out.data && r->out.size > n) || (r->err.data && r->err.size > n))
		abort();
}

static void
paths(const unsigned char *p, size_t n)
{
	enum { MAXIN = 64 };
	struct fb_exec_input in[MAXIN], rev[MAXIN];
	char *buf = malloc(n + 1), *s = buf;
	int k = 0;
	if (!buf)
		return;
	memcpy(buf, p, n);
	buf[n] = 0;
	while (s && k < MAXIN) {
		char *nl = strchr(s, '\n');
		if (nl)
			*nl = 0;
		in[k] = (struct fb_exec_input){s, (const unsigned char *)s, strlen(s), k & 1, ""};
		k++;
		s = nl ? nl + 1 : NULL;
	}
	for (int i = 0; i < k; i++)
		rev[i] = in[k - 1 - i];
	static const char *const argv[] = {"true"};
	struct fb_rexec_spec sp = {argv, 1, NULL, 0, NULL, 0, NULL, 0, in, k, 0}, sr = sp;
	sr.inputs = rev;
	struct fb_rexec_action *a = NULL, *b = NULL;
	struct fb_error e = {0};
	int rc = fb_rexec_action_new(&sp, &a, &e);
	if ((rc != 0 && rc != FB_EINVAL) || (rc && (!e.msg[0] || a)))
		abort();
	for (int i = 0; !rc && i < k; i++)
		if (!fb_rexec_path_ok(in[i].path, strlen(in[i].path)))
			abort();
	if (!rc) {
		char h1[65], h2[65];
		uint64_t n1, n2;
		if (fb_rexec_action_new(&sr, &b, &e))
			abort();
		fb_rexec_action_digest(a, h1, &n1);
		fb_rexec_action_digest(b, h2, &n2);
		if (strcmp(h1, h2) || n1 != n2)
			abort();
	}
	fb_rexec_action_free(a);
	fb_rexec_action_free(b);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const unsigned char *p = data + 1;
	size_t n = size - 1;
	struct fb_rexec_result r = {0};
	struct fb_error e = {0};
	switch (data[0] % 3) {
	case 0:
		check_result(&r, fb_rexec_decode_operation(p, n, &r, &e), &e, n);
		break;
	case 1: {
		struct fb_pb b = {p, p + n};
		uint64_t k;
		if (fb_pb_varint(&b, &k) || k > (uint64_t)(b.end - b.p))
			break;
		int rc = fb_rexec_decode_operation(b.p, (size_t)k, &r, &e);
		check_result(&r, rc, &e, n);
		if (!rc)
			check_result(&r, fb_rexec_decode_operation(b.p + k, (size_t)(b.end - b.p - (long)k), &r, &e), &e, n);
		break;
	}
	default:
		paths(p, n);
	}
	fb_rexec_result_clear(&r);
	return 0;
}
