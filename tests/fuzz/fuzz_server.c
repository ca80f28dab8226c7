/* fuzz_server.c: one job of the build's compile server (server.c, docs/compile-server.md), as
 * read from its socket: bytes another process wrote. Input: arbitrary bytes as a job.
 * Invariants: fb_server_job_parse accepts it or returns -1, nothing else; every string it
 * hands back ends inside the input; what it accepts, written again in the wire format with
 * each string's own length, parses to the same strings. Abort on any violation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "compile/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
inside(const char *s, const uint8_t *data, size_t size)
{
	const uint8_t *p = (const uint8_t *)s;
	return p >= data && p < data + size && memchr(p, 0, (size_t)(data + size - p)) != NULL;
}

static uint8_t *
put_str(uint8_t *w, const char *s)
{
	size_t n = strlen(s) + 1;
	fb_wr64(w, n);
	memcpy(w + 8, s, n);
	return w + 8 + n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_server_job j, k;
	int rc = fb_server_job_parse(data, size, &j);
	if (rc != 0) {
		if (rc != -1 || j.opts)
			abort();
		return 0;
	}
	const char *strs[] = {j.home, j.nvrtc, j.cwd, j.name, j.text};
	for (size_t i = 0; i < 5; i++)
		if (!inside(strs[i], data, size))
			abort();
	if (j.nopts > size / 9)
		abort();
	for (size_t i = 0; i < j.nopts; i++)
		if (!inside(j.opts[i], data, size))
			abort();
	uint8_t *again = malloc(size + 8), *w = again; /* strings only shrink to their strlen */
	if (!again)
		abort();
	fb_wr64(w, j.flags);
	w += 8;
	for (size_t i = 0; i < 5; i++)
		w = put_str(w, strs[i]);
	fb_wr64(w, j.nopts);
	w += 8;
	for (size_t i = 0; i < j.nopts; i++)
		w = put_str(w, j.opts[i]);
	if (fb_server_job_parse(again, (size_t)(w - again), &k) != 0 || k.flags != j.flags || k.nopts != j.nopts)
		abort();
	const char *ks[] = {k.home, k.nvrtc, k.cwd, k.name, k.text};
	for (size_t i = 0; i < 5; i++)
		if (strcmp(ks[i], strs[i]) != 0)
			abort();
	for (size_t i = 0; i < j.nopts; i++)
		if (strcmp(k.opts[i], j.opts[i]) != 0)
			abort();
	free(k.opts);
	free(j.opts);
	free(again);
	return 0;
}
