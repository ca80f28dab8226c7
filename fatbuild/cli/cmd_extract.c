/* cmd_extract.c: fatbuild extract: write one image of a fatbinary, decompressed. */
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
	        "usage: fatbuild extract --arch sm_80|compute_86 [--container N] [--max-size BYTES]\n"
	        "                        FILE -o OUT\n"
	        "\n"
	        "Writes the one image of FILE whose arch is exactly the one named (sm_X is a cubin,\n"
	        "compute_X is PTX, lto_X is LTO-IR; 'a'/'f' must match too), decompressed. FILE may be\n"
	        "a .fatbin or any file 'fatbuild inspect' reads. When a library holds that arch in\n"
	        "several containers, pick one with --container N (the index inspect prints).\n"
	        "PTX is written without its trailing NUL; cubins without the container's padding.\n"
	        "\n"
	        "  --arch NAME        the image to write\n"
	        "  --container N      only look in container N\n"
	        "  --max-size BYTES   refuse to decompress more than this (default 1 GiB)\n"
	        "  -o OUT             output file (written atomically)\n"
	        "\n"
	        "Example: fatbuild extract --arch sm_90a k.fatbin -o k_90a.cubin\n"
	        "Exit codes: %d ok, %d no such image, malformed or obfuscated input, %d usage.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

/* The image named arch (want; lto_ names LTO-IR) in p, in one container (container >= 0: that
 * one); *hit the first when a container holds several (said). 0 or the exit code (reported). */
static int
find_image(const struct fb_parsed *p, const struct ap_target *want, long container, const char *path,
           const char *arch, const struct fb_entry **out)
{
	bool want_lto = strncmp(arch, "lto_", 4) == 0;
	const struct fb_entry *hit = NULL;
	size_t nhits = 0, ncont = 0;
	long lastc = -1;
	for (size_t i = 0; i < p->nentries; i++) {
		const struct fb_entry *e = &p->entries[i];
		bool is_lto = e->disk_kind == FB_DISK_KIND_LTO;
		if (e->target.sm != want->sm || e->target.variant != want->variant || e->target.kind != want->kind ||
		    is_lto != want_lto)
			continue;
		if (container >= 0 && (long)e->container != container)
			continue;
		if (!hit)
			hit = e;
		nhits++;
		if ((long)e->container != lastc)
			ncont++, lastc = (long)e->container;
	}
	if (!hit) {
		warn("extract: %s has no %s image%s", path, arch, container >= 0 ? " in that container" : "");
		return AP_EXIT_FAIL;
	}
	if (ncont > 1) {
		warn("extract: %s has %s in %zu containers; choose one with --container N (see 'fatbuild inspect')", path,
		     arch, ncont);
		return AP_EXIT_FAIL;
	}
	if (nhits > 1)
		warn("extract: %s has %zu %s images in container %zu; writing the first", path, nhits, arch, hit->container);
	*out = hit;
	return AP_EXIT_OK;
}

/* The image decompressed (at most cap bytes; 0: the library's bound), PTX without its
 * trailing NULs, written to out. 0 or the exit code (reported). */
static int
write_image(const struct fb_entry *hit, unsigned long long cap, const char *path, const char *out)
{
	struct fb_error err = {0};
	unsigned char *img = NULL;
	size_t n = 0;
	int ret = AP_EXIT_OK;
	if (fb_entry_image(hit, cap, &img, &n, &err) != 0) {
		warn("extract: %s: %s", path, err.msg);
		return fb_exit_code(err.code);
	}
	if (hit->disk_kind == FB_DISK_KIND_PTX)
		while (n && img[n - 1] == 0)
			n--;
	if (fb_write_file_atomic(out, img, n, 0666, &err) != 0)
		ret = fail_fb(&err);
	free(img);
	return ret;
}

int
cmd_extract(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch", required_argument, NULL, 'a'}, {"container", required_argument, NULL, 'c'},
		{"max-size", required_argument, NULL, 'm'}, {"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *arch = NULL, *out = NULL;
	long container = -1;
	unsigned long long cap = 0;
	int c;
	char *end;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "ho:", longopts, "extract")) != -1) {
		switch (c) {
		case 'a': arch = optarg; break;
		case 'o': out = optarg; break;
		case 'c':
			container = strtol(optarg, &end, 10);
			if (end == optarg || *end || container < 0) {
				warn("extract: invalid --container value '%s'", optarg);
				return AP_EXIT_USAGE;
			}
			break;
		case 'm':
			cap = strtoull(optarg, &end, 0);
			if (end == optarg || *end || cap == 0 || optarg[0] == '-') {
				warn("extract: invalid --max-size value '%s'", optarg);
				return AP_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return AP_EXIT_OK;
		default: return AP_EXIT_USAGE;
		}
	}
	if (!arch || !out || optind + 1 != argc) {
		warn("extract: %s", !arch ? "--arch is required" : !out ? "-o OUT is required" : "exactly one input file");
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	struct ap_target want;
	if (fb_target_parse(arch, &want) != 0) {
		warn("extract: '%s' is not an image name like sm_80, sm_90a, compute_86", arch);
		return AP_EXIT_USAGE;
	}
	const char *path = argv[optind];
	int rc = check_output("extract", "-o", out, &path, 1);
	if (rc)
		return rc;
	struct fb_error err = {0};
	struct fb_mapped m;
	if (fb_map_file(path, &m, &err) != 0)
		return fail_fb(&err);
	struct fb_scan sc;
	struct fb_parsed p = {0};
	int ret = AP_EXIT_OK;
	if (fb_scan_buffer(m.data, m.size, path, &sc, &err) != 0) {
		fb_unmap_file(&m);
		return fail_fb(&err);
	}
	if (fb_scan_entries(m.data, &sc, &p, &err) != 0) {
		warn("extract: %s: %s", path, err.msg);
		ret = fb_exit_code(err.code);
		goto done;
	}
	const struct fb_entry *hit;
	if ((ret = find_image(&p, &want, container, path, arch, &hit)) == AP_EXIT_OK)
		ret = write_image(hit, cap, path, out);
done:
	fb_parsed_free(&p);
	fb_scan_free(&sc);
	fb_unmap_file(&m);
	return ret;
}
