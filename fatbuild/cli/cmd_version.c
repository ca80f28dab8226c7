/* cmd_version.c: `fatbuild --version`: the tool, the NVRTC it would compile with and the
 * arches that NVRTC supports. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef FB_VERSION
#define FB_VERSION "0.1.0"
#endif

int
cmd_version(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("usage: fatbuild --version\n"
		       "\n"
		       "Prints the fatbuild version, the NVRTC that 'fatbuild compile' would load (from\n"
		       "CUDA_HOME, else the nvcc on PATH, else /usr/local/cuda), its version and the SASS\n"
		       "arches it supports. Exit %d; %d when no NVRTC can be loaded (the message says where\n"
		       "it looked).\n",
		       AP_EXIT_OK, AP_EXIT_FAIL);
		return AP_EXIT_OK;
	}
	if (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
		static const char *const known[] = {"-h", "--help", NULL};
		cli_bad_option("version", argv[1], CLI_UNKNOWN, known);
		return AP_EXIT_USAGE;
	}
	if (argc > 1) {
		warn("version: unexpected argument '%s'", argv[1]);
		return AP_EXIT_USAGE;
	}
	printf("fatbuild %s\n", FB_VERSION);
	struct fb_nvrtc_info info;
	struct fb_error err = {0};
	if (fb_nvrtc_info(NULL, &info, &err)) {
		printf("nvrtc: not found\n");
		fflush(stdout);
		warn("%s", err.msg);
		return AP_EXIT_FAIL;
	}
	printf("nvrtc: %d.%d (%s)\n", info.version / 1000, info.version % 1000 / 10, info.path);
	printf("arches:");
	for (int i = 0; i < info.narchs; i++)
		printf(" sm_%d", info.archs[i]);
	printf("\n");
	return AP_EXIT_OK;
}
