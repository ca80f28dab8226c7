/* cmd_dlink.c: `fatbuild dlink`, the device link of relocatable cubins or LTO-IR for one target
 * with nvJitLink (the work is fb_dlink in devlink/dlink.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/safefs.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild dlink --target TARGET [--lto] [--devrt] [-G] [--lineinfo] [-Xnvjitlink OPT]\n"
	        "                      [-v] -o OUT.fatbin INPUTS...\n"
	        "\n"
	        "Device-links relocatable device code for one target with nvJitLink (from the toolkit in\n"
	        "use, as NVRTC): the INPUTS are what 'fatbuild compile --rdc' (relocatable cubins) or\n"
	        "'--lto' (LTO-IR) wrote, fatbins or bare cubins; from each, the images for TARGET are\n"
	        "linked into one image, written as a one-entry fatbin that the driver loads like any other.\n"
	        "\n"
	        "Options:\n"
	        "  --target TARGET  sm_86, sm_90a (a linked cubin), or compute_86 (a linked PTX, from LTO-IR)\n"
	        "  --lto            the inputs are LTO-IR: link-time optimisation (nvJitLink -lto)\n"
	        "  --devrt          add the device runtime libcudadevrt.a (dynamic parallelism: kernels\n"
	        "                   that launch kernels); SASS targets only\n"
	        "  -G, --lineinfo   device debug info / line tables (nvJitLink -g / -lineinfo)\n"
	        "  -Xnvjitlink OPT  pass OPT to nvJitLink unchanged (repeatable)\n"
	        "  -o FILE          the linked fatbin to write\n"
	        "  -v               say what was linked\n"
	        "\n"
	        "Example:\n"
	        "  fatbuild compile --rdc --arch-list 8.6 -o a.fatbin a.cu && \\\n"
	        "  fatbuild compile --rdc --arch-list 8.6 -o b.fatbin b.cu && \\\n"
	        "  fatbuild dlink --target sm_86 --devrt -o linked.fatbin a.fatbin b.fatbin\n"
	        "\n"
	        "Exit codes: %d linked, %d link error, no image for TARGET or no nvJitLink, %d usage.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

struct dlink_args {
	const char *out, *target;
	bool verbose;
	const char **in, **extra; /* argc entries each */
	size_t nin;
};

/* The options and inputs into d and o. Returns -1 to go on, else the exit code (help printed,
 * or the usage error reported). */
static int
parse_args(int argc, char **argv, struct dlink_args *d, struct fb_dlink_opts *o)
{
	static const char *const known[] = {"--target", "--lto", "--devrt", "-G", "--lineinfo", "-Xnvjitlink",
	                                    "-o", "-v", "-h", "--help", NULL};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return AP_EXIT_OK;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--target") == 0 || strcmp(a, "-Xnvjitlink") == 0) {
			if (i + 1 >= argc) {
				cli_bad_option("dlink", a, CLI_NEEDS_VALUE, NULL);
				return AP_EXIT_USAGE;
			}
			const char *v = argv[++i];
			if (a[1] == 'o')
				d->out = v;
			else if (a[1] == 'X')
				d->extra[o->nextra++] = v;
			else
				d->target = v;
		} else if (strncmp(a, "--target=", 9) == 0) {
			d->target = a + 9;
		} else if (strcmp(a, "--lto") == 0) {
			o->lto = true;
		} else if (strcmp(a, "--devrt") == 0) {
			o->devrt = true;
		} else if (strcmp(a, "-G") == 0) {
			o->device_debug = true;
		} else if (strcmp(a, "--lineinfo") == 0) {
			o->lineinfo = true;
		} else if (strcmp(a, "-v") == 0) {
			d->verbose = true;
		} else if (a[0] == '-' && a[1]) {
			cli_bad_option("dlink", a, CLI_UNKNOWN, known);
			return AP_EXIT_USAGE;
		} else {
			d->in[d->nin++] = a;
		}
	}
	return -1;
}

/* Links the mapped inputs and writes the one-entry fatbin; the exit code. */
static int
link_and_write(const void **bufs, const size_t *sizes, const struct dlink_args *d, const struct fb_dlink_opts *o)
{
	struct fb_error err = {0};
	struct fb_dlink_result res = {0};
	int rc = AP_EXIT_OK;
	int lrc = fb_dlink(bufs, sizes, d->in, d->nin, o, &res, &err);
	if (res.log && res.log[0])
		fputs(res.log, stderr); /* nvJitLink's errors and warnings */
	if (lrc) {
		rc = fail_fb(&err);
	} else {
		unsigned char *fat = NULL;
		size_t fatsize = 0;
		if (fb_dlink_pack(&res, o->target, FB_COMPRESS_ZSTD, &fat, &fatsize, &err) ||
		    fb_write_file_atomic(d->out, fat, fatsize, 0666, &err))
			rc = fail_fb(&err);
		else if (d->verbose)
			warn("dlink: %s: %zu image%s%s linked with nvJitLink %d.%d (%s) into %zu bytes of %s", d->target,
			     res.ninputs, res.ninputs == 1 ? "" : "s", o->devrt ? " + libcudadevrt" : "",
			     res.jitlink_version / 1000, res.jitlink_version % 1000 / 10, res.jitlink_path, res.size,
			     res.kind == FB_KIND_PTX ? "PTX" : "SASS");
		free(fat);
	}
	fb_dlink_result_clear(&res);
	return rc;
}

/* Maps every input, then links them; the exit code. */
static int
dlink_files(const struct dlink_args *d, const struct fb_dlink_opts *o)
{
	struct fb_mapped *maps = xcalloc(d->nin, sizeof(*maps));
	const void **bufs = xcalloc(d->nin, sizeof(*bufs));
	size_t *sizes = xcalloc(d->nin, sizeof(*sizes));
	struct fb_error err = {0};
	int rc = AP_EXIT_OK;
	for (size_t i = 0; i < d->nin && rc == AP_EXIT_OK; i++) {
		if (fb_map_file(d->in[i], &maps[i], &err) != 0)
			rc = fail_fb(&err);
		bufs[i] = maps[i].data;
		sizes[i] = maps[i].size;
	}
	if (rc == AP_EXIT_OK)
		rc = link_and_write(bufs, sizes, d, o);
	for (size_t i = 0; i < d->nin; i++)
		fb_unmap_file(&maps[i]);
	free(maps);
	free(bufs);
	free(sizes);
	return rc;
}

int
cmd_dlink(int argc, char **argv)
{
	struct dlink_args d = {0};
	struct fb_dlink_opts o = {0};
	d.in = xcalloc((size_t)argc, sizeof(*d.in));
	d.extra = xcalloc((size_t)argc, sizeof(*d.extra));
	int rc = parse_args(argc, argv, &d, &o);
	if (rc < 0) {
		struct ap_target t;
		rc = AP_EXIT_USAGE;
		if (!d.out || !d.target || d.nin == 0) {
			warn("dlink: %s", !d.target ? "--target is required" : !d.out ? "-o OUT is required" : "no inputs given");
			usage(stderr);
		} else if (fb_target_parse(d.target, &t) != 0 || strncmp(d.target, "lto_", 4) == 0) {
			warn("dlink: invalid --target '%s' (sm_86, sm_90a, compute_86)", d.target);
			usage(stderr);
		} else if ((rc = check_output("dlink", "-o", d.out, d.in, d.nin)) == AP_EXIT_OK) {
			o.target = &t;
			o.extra = d.extra;
			rc = dlink_files(&d, &o);
		}
	}
	free(d.in);
	free(d.extra);
	return rc;
}
