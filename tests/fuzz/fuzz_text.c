/* fuzz_text.c: the small text parsers that read what tools and files hand back:
 * NVRTC logs (fb_nvrtc_log_rewrite / fb_nvrtc_log_first: "f.cu(12): error: ..." to
 * "f.cu:12:5: error: ... [tag]"), PTX headers (fb_ptx_info: .version / .target), target names
 * (fb_target_parse / ap_target_name) and Makefile depfile escaping (fb_depfile_escape).
 * Input: arbitrary bytes (a private copy, NUL-terminated where a C string is expected).
 * Invariants (abort on violation): no crash or over-read; fb_nvrtc_log_first gives one line
 * that fits its buffer; a parsed target prints back to a name that parses to the same target;
 * a depfile-escaped path has every blank and '#' after a '\\' and every '$' doubled. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"
#include "fatbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;

	char *rw = fb_nvrtc_log_rewrite(s, "sm_90");
	if (rw) {
		char first[256];
		memset(first, 'x', sizeof(first));
		fb_nvrtc_log_first(rw, first, sizeof(first));
		if (!memchr(first, 0, sizeof(first)) || strchr(first, '\n'))
			abort();
		free(rw);
	}

	/* PTX: an exact-size copy, not NUL-terminated */
	unsigned char *exact = malloc(size ? size : 1);
	if (exact) {
		memcpy(exact, data, size);
		int major = -1, minor = -1;
		struct ap_target t;
		struct fb_error err = {0};
		int rc = fb_ptx_info(exact, size, &major, &minor, &t, &err);
		if (rc && (err.code != rc || !err.msg[0] || strchr(err.msg, '\n')))
			abort();
		free(exact);
	}

	struct ap_target t;
	if (size < 64 && fb_target_parse(s, &t) == 0) {
		char name[64];
		struct ap_target back;
		if (!ap_target_name(&t, name, sizeof(name)) || fb_target_parse(name, &back) != 0 || back.sm != t.sm ||
		    back.variant != t.variant || back.kind != t.kind)
			abort();
	}

	char *e = fb_depfile_escape(s);
	if (e) {
		/* the documented contract: blanks and '#' get a '\\' before them, '$' is doubled (a
		 * backslash already in the path is not escaped: ninja reads "\\$$" back wrongly) */
		for (const char *p = e; *p; p++) {
			if (*p == '$') {
				if (p[1] != '$')
					abort();
				p++;
			} else if ((*p == ' ' || *p == '#') && (p == e || p[-1] != '\\')) {
				abort();
			}
		}
		free(e);
	}
	free(s);
	return 0;
}
