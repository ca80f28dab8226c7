/* cmd_pack.c: fatbuild pack: pack cubins, PTX and LTO-IR into one fatbin container. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/safefs.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild pack -o OUT.fatbin [--compress none|zstd|lz4] [--ident NAME]\n"
	        "                     [--cmdline OPTS] [-g] [--compress-text-only] IMAGE[@TARGET]...\n"
	        "\n"
	        "Packs device images into one fatbinary container, in the order given, byte-for-byte\n"
	        "as `fatbinary --create OUT --compress-mode=none` would (PTX is stored as given).\n"
	        "\n"
	        "  IMAGE              a .cubin (arch from its ELF e_flags; 'a' from .nv.compat), a .ptx\n"
	        "                     (arch from .target) or NVVM LTO-IR (needs @lto_XX)\n"
	        "  @TARGET            states the variant: k.cubin@sm_100f, k.ptx@compute_90a. The\n"
	        "                     cubin cannot record 'f', and for sm_90 the fatbin flag is what\n"
	        "                     the loader checks, so say it here.\n"
	        "  -o OUT             output file (written atomically)\n"
	        "  --compress MODE    none (default, loads on every driver), zstd (level 5, as nvcc)\n"
	        "                     or lz4 (LZ4 block, as fatbinary -compress-mode=speed)\n"
	        "  --ident NAME       identifier stored with every entry (fatbinary --ident)\n"
	        "  --cmdline OPTS     ptxas options stored with PTX entries for the JIT (fatbinary --cmdline)\n"
	        "  --compress-text-only  compress only PTX, LTO-IR and debug images, like fatbinary's\n"
	        "                     default (with --compress zstd: byte-identical to it)\n"
	        "  -g, --debug        mark every entry as debug code (flag 0x2)\n"
	        "\n"
	        "Example: fatbuild pack -o k.fatbin k_80.cubin k_90a.cubin@sm_90a k.ptx\n"
	        "Exit codes: %d ok, %d an image is malformed or the write failed, %d usage.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

/* What an image is: LTO-IR by its magic (its arch must be stated), else the one cubin or PTX
 * the scanner finds; want (NULL: none stated) must match its SM and gives the variant.
 * Returns the exit code (the failure reported). */
static int
identify(const unsigned char *data, size_t n, const char *path, const struct ap_target *want,
         enum fb_entry_kind *kind, struct ap_target *t)
{
	struct fb_error err = {0};
	struct fb_scan sc;
	int ret = AP_EXIT_OK;
	*kind = FB_KIND_ELF;
	if (n >= 4 && data[0] == 0xed && data[1] == 0x43 && data[2] == 0x4e && data[3] == 0x7f) {
		*kind = FB_KIND_LTO;
		if (!want) {
			warn("pack: %s: LTO-IR does not record its arch; write %s@lto_XX", path, path);
			return AP_EXIT_USAGE;
		}
		*t = *want;
		t->kind = AP_PTX;
		return AP_EXIT_OK;
	}
	if (fb_scan_buffer(data, n, path, &sc, &err) != 0)
		return fail_fb(&err);
	struct fb_parsed p;
	bool ok = sc.nblobs == 1 && sc.blobs[0].kind != FB_BLOB_FATBIN && strcmp(sc.type, "elf") != 0;
	if (!ok) {
		warn("pack: %s: a %s is not a cubin, PTX or LTO-IR image", path, sc.type);
		ret = AP_EXIT_FAIL;
	} else if (fb_scan_entries(data, &sc, &p, &err) != 0) {
		warn("pack: %s: %s", path, err.msg);
		ret = fb_exit_code(err.code);
	} else {
		*t = p.entries[0].target;
		*kind = sc.blobs[0].kind == FB_BLOB_CUBIN ? FB_KIND_ELF : FB_KIND_PTX;
		fb_parsed_free(&p);
		if (want) {
			char a[32], b[32];
			if (want->kind != t->kind || want->sm != t->sm) {
				warn("pack: %s is %s, not %s", path, ap_target_name(t, a, sizeof(a)),
				     ap_target_name(want, b, sizeof(b)));
				ret = AP_EXIT_FAIL;
			}
			t->variant = want->variant;
		}
	}
	fb_scan_free(&sc);
	return ret;
}

/* Adds one IMAGE[@TARGET] operand to fb; the exit code (the failure reported). */
static int
add_image(struct fb_fatbin *fb, const char *arg, const char *ident, const char *cmdline)
{
	char *path = xstrdup(arg);
	char *at = strrchr(path, '@');
	struct ap_target want = {0};
	if (at) {
		*at = 0;
		if (fb_target_parse(at + 1, &want) != 0) {
			warn("pack: %s: '%s' is not a target like sm_90a or compute_100f", arg, at + 1);
			free(path);
			return AP_EXIT_USAGE;
		}
	}
	struct fb_mapped m;
	struct fb_error err = {0};
	if (fb_map_file(path, &m, &err) != 0) {
		warn("pack: %s", err.msg);
		free(path);
		return fb_exit_code(err.code);
	}
	enum fb_entry_kind kind;
	struct ap_target t = {0};
	int ret = identify(m.data, m.size, path, at ? &want : NULL, &kind, &t);
	if (ret == AP_EXIT_OK) {
		int rc = fb_fatbin_add(fb, kind, &t, m.data, m.size, ident, kind == FB_KIND_ELF ? NULL : cmdline, &err);
		if (rc) {
			warn("pack: %s: %s", path, err.msg);
			ret = fb_exit_code(rc);
		}
	}
	fb_unmap_file(&m);
	free(path);
	return ret;
}

/* -o against the images it is made from (each IMAGE[@TARGET] operand without its @TARGET). */
static int
check_pack_output(const char *out, char **args, size_t n)
{
	char **in = xcalloc(n, sizeof(*in));
	for (size_t i = 0; i < n; i++) {
		in[i] = xstrdup(args[i]);
		char *at = strrchr(in[i], '@');
		if (at)
			*at = 0;
	}
	int ret = check_output("pack", "-o", out, (const char *const *)in, n);
	for (size_t i = 0; i < n; i++)
		free(in[i]);
	free(in);
	return ret;
}

int
cmd_pack(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"compress", required_argument, NULL, 'c'}, {"ident", required_argument, NULL, 'i'},
		{"cmdline", required_argument, NULL, 'C'}, {"debug", no_argument, NULL, 'g'},
		{"output", required_argument, NULL, 'o'}, {"compress-text-only", no_argument, NULL, 'T'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *out = NULL, *ident = NULL, *cmdline = NULL;
	enum fb_compress comp = FB_COMPRESS_NONE;
	bool debug = false, text_only = false;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "ho:g", longopts, "pack")) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'i': ident = optarg; break;
		case 'C': cmdline = optarg; break;
		case 'g': debug = true; break;
		case 'T': text_only = true; break;
		case 'c':
			if (strcmp(optarg, "none") == 0)
				comp = FB_COMPRESS_NONE;
			else if (strcmp(optarg, "zstd") == 0)
				comp = FB_COMPRESS_ZSTD;
			else if (strcmp(optarg, "lz4") == 0)
				comp = FB_COMPRESS_LZ4;
			else {
				warn("pack: unknown compression '%s' (none, zstd or lz4)", optarg);
				usage(stderr);
				return AP_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return AP_EXIT_OK;
		default: return AP_EXIT_USAGE;
		}
	}
	if (!out || optind >= argc) {
		warn("pack: %s", !out ? "no output file (-o OUT.fatbin)" : "no input image");
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	int ret = check_pack_output(out, argv + optind, (size_t)(argc - optind));
	if (ret != AP_EXIT_OK)
		return ret;
	struct fb_fatbin *fb = fb_fatbin_new();
	if (!fb)
		fatal(AP_EXIT_FAIL, "out of memory");
	fb_fatbin_set_options(fb, (debug ? FB_WRITE_DEBUG : 0) | (text_only ? FB_WRITE_COMPRESS_TEXT : 0));
	for (int i = optind; i < argc && ret == AP_EXIT_OK; i++)
		ret = add_image(fb, argv[i], ident, cmdline);
	if (ret == AP_EXIT_OK) {
		struct fb_error err = {0};
		unsigned char *buf = NULL;
		size_t len = 0;
		if (fb_fatbin_write(fb, comp, &buf, &len, &err) != 0 || fb_write_file_atomic(out, buf, len, 0666, &err) != 0)
			ret = fail_fb(&err);
		free(buf);
	}
	fb_fatbin_free(fb);
	return ret;
}
