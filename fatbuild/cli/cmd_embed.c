/* cmd_embed.c: `fatbuild embed` — wrap fatbins into a relocatable ELF object, or merge them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/safefs.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild embed IN.fatbin... -o OUT.o [--symbol NAME] [--hidden] [--no-segment]\n"
	        "       fatbuild embed --merge IN.fatbin... -o OUT.fatbin\n"
	        "\n"
	        "Wraps fatbinaries into a relocatable x86-64 ELF object that links with gcc or clang\n"
	        "into any program or shared library. The object holds:\n"
	        "  .nv_fatbin        the containers back to back (align 8), starting at the global\n"
	        "                    symbol NAME (default 'fatbin'); NAME_size (uint64_t) is their size\n"
	        "  .nvFatBinSegment  one {0x466243B1, 1, &container, 0} wrapper per container, as nvcc\n"
	        "                    emits, so cuobjdump and 'fatbuild inspect' find the images\n"
	        "  .note.GNU-stack   so the stack stays non-executable\n"
	        "Pass NAME to cuModuleLoadData, or link libfatbuild_runtime and use fbrt_function().\n"
	        "\n"
	        "Options:\n"
	        "  -o FILE          output (written atomically)\n"
	        "  --symbol NAME    symbol of the first container (default: fatbin)\n"
	        "  --hidden         hidden visibility: each shared object keeps its own copy\n"
	        "  --no-segment     leave out .nvFatBinSegment\n"
	        "  --merge          write ONE fatbin holding every image of the inputs (e.g. one\n"
	        "                   per-arch fatbin each), so the driver chooses among all of them\n"
	        "\n"
	        "Example:\n"
	        "  fatbuild compile --arch-list '8.0 8.6+PTX' -o k.fatbin k.cu\n"
	        "  fatbuild embed k.fatbin -o k.o --symbol my_kernels && cc -shared host.o k.o -o libx.so\n");
}

int
cmd_embed(int argc, char **argv)
{
	const char *out = NULL;
	struct fb_embed_opts o = {0};
	bool merge = false;
	static const char *const known[] = {"-o", "--output", "--symbol", "--hidden", "--no-segment", "--merge",
	                                    "-h", "--help", NULL};
	char **in = xcalloc((size_t)argc, sizeof(*in));
	size_t nin = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			free(in);
			return AP_EXIT_OK;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--symbol") == 0) {
			if (i + 1 >= argc) {
				cli_bad_option("embed", a, CLI_NEEDS_VALUE, NULL);
				free(in);
				return AP_EXIT_USAGE;
			}
			if (a[1] == 'o' || a[2] == 'o')
				out = argv[++i];
			else
				o.symbol = argv[++i];
		} else if (strncmp(a, "--symbol=", 9) == 0) {
			o.symbol = a + 9;
		} else if (strcmp(a, "--hidden") == 0) {
			o.hidden = true;
		} else if (strcmp(a, "--no-segment") == 0) {
			o.no_segment = true;
		} else if (strcmp(a, "--merge") == 0) {
			merge = true;
		} else if (a[0] == '-' && a[1]) {
			cli_bad_option("embed", a, CLI_UNKNOWN, known);
			free(in);
			return AP_EXIT_USAGE;
		} else {
			in[nin++] = argv[i];
		}
	}
	if (!out || nin == 0) {
		warn("embed: %s", !out ? "-o OUT is required" : "no input fatbin given");
		usage(stderr);
		free(in);
		return AP_EXIT_USAGE;
	}
	struct fb_mapped *maps = xcalloc(nin, sizeof(*maps));
	const void **bufs = xcalloc(nin, sizeof(*bufs));
	size_t *sizes = xcalloc(nin, sizeof(*sizes));
	int rc = AP_EXIT_OK;
	struct fb_error err = {0};
	if ((rc = check_output("embed", "-o", out, (const char *const *)in, nin)) != AP_EXIT_OK)
		goto done;
	for (size_t i = 0; i < nin; i++) {
		if (fb_map_file(in[i], &maps[i], &err) != 0) {
			warn("embed: %s", err.msg);
			rc = fb_exit_code(err.code);
			goto done;
		}
		bufs[i] = maps[i].data;
		sizes[i] = maps[i].size;
	}
	if (merge) {
		unsigned char *m;
		size_t msize;
		if (fb_container_merge(bufs, sizes, nin, &m, &msize, &err) == 0) {
			if (fb_write_file_atomic(out, m, msize, 0666, &err) != 0)
				rc = fail_fb(&err);
			free(m);
		} else {
			rc = fail_fb(&err);
		}
	} else if (fb_embed(bufs, sizes, nin, out, &o, &err) != 0) {
		rc = fail_fb(&err);
	}
done:
	for (size_t i = 0; i < nin; i++)
		fb_unmap_file(&maps[i]);
	free(maps);
	free(bufs);
	free(sizes);
	free(in);
	return rc;
}
