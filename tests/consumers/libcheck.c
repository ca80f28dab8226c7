/* libcheck.c: links the installed libraries (CMake imported targets, pkg-config or meson) and
 * prints "80-real;86" for "8.0 8.6+PTX" checked against CUDA 13.0's built-in table, which
 * needs no GPU and no toolkit. Exit 0 when the answer is that, else 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archprobe.h>
#include <fatbuild.h>

int
main(void)
{
	struct ap_toolkit tk;
	struct ap_error err = {0};
	struct ap_resolve_opts opts = {0};
	struct ap_archlist *l = NULL;
	char *text = NULL;
	int ok;

	if (ap_toolkit_builtin(13000, &tk, &err) != 0) {
		fprintf(stderr, "libcheck: %s\n", err.msg);
		return 1;
	}
	opts.toolkit = &tk;
	opts.no_probe = true;
	if (ap_archlist_resolve("8.0 8.6+PTX", &opts, &l, &err) != 0 ||
	    ap_archlist_format(l, AP_FMT_CMAKE, &text, &err) != 0) {
		fprintf(stderr, "libcheck: %s\n", err.msg);
		ap_archlist_free(l);
		return 1;
	}
	printf("%s\n", text);
	/* A libfatbuild call, so that the link needs libfatbuild too. */
	printf("%s\n", fb_strerror(FB_ENOIMAGE));
	ok = strcmp(text, "80-real;86") == 0;
	free(text);
	ap_archlist_free(l);
	return ok ? 0 : 1;
}
