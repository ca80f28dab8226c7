/* cmd_inspect.c: fatbuild inspect: list the containers and images of device-code files. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild inspect [--format table|json] [--kernels] [--max-size BYTES] FILE...\n"
	        "\n"
	        "Lists every fatbin container and every image in .fatbin, .cubin, .ptx, .o, .a, .so\n"
	        "and executables: kind (elf = SASS cubin, ptx, lto = LTO-IR), arch (sm_90a, compute_86),\n"
	        "stored and uncompressed size, compression, flags and identifier. Host files are read\n"
	        "through mmap; containers are found in the .nv_fatbin and __nv_relfatbin sections (also\n"
	        "inside static-archive members). Nothing is decompressed unless --kernels asks for it.\n"
	        "\n"
	        "  --format table|json  output format (default table). json is one document; every\n"
	        "                       entry is an object with at least \"kind\" and \"arch\".\n"
	        "  --kernels            also list the kernels of each cubin (decompressing if needed):\n"
	        "                       registers and static shared memory. On sm >= 90 the cubin\n"
	        "                       stores 1024 bytes more than the code asked for; the user\n"
	        "                       value is shown and marked as derived.\n"
	        "  --max-size BYTES     refuse to decompress an image larger than this (default 1 GiB)\n"
	        "\n"
	        "Example: fatbuild inspect --kernels build/kernels.fatbin\n"
	        "Exit codes: %d ok, %d a file is malformed or unreadable, %d usage.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

struct opts {
	bool json, kernels;
	uint64_t cap;
};

static const char *
comp_name(enum fb_compress c)
{
	return c == FB_COMPRESS_ZSTD ? "zstd" : c == FB_COMPRESS_LZ4 ? "lz4" : "none";
}

static uint64_t
entry_size(const struct fb_entry *e)
{
	return e->compress != FB_COMPRESS_NONE ? e->uncompressed_size : (uint64_t)e->stored_size;
}

/* Kernels of an ELF entry; prints to stdout in the chosen format. Returns 0 or an exit code. */
static int
print_kernels(const struct fb_entry *e, const struct opts *o, const char *file)
{
	unsigned char *img = NULL;
	size_t n = 0;
	struct fb_error err = {0};
	int rc = fb_entry_image(e, o->cap, &img, &n, &err);
	if (rc == FB_EUNSUPPORTED) {
		if (o->json)
			printf(", \"kernels\": null");
		else
			printf("      (kernels not listed: %s)\n", err.msg);
		return 0;
	}
	if (rc) {
		warn("%s: %s", file, err.msg);
		return fb_exit_code(rc);
	}
	struct fb_cubin c;
	rc = fb_cubin_read(img, n, &c, &err);
	if (rc) {
		free(img);
		warn("%s: container %zu: entry %zu: %s", file, e->container, e->index, err.msg);
		return fb_exit_code(rc);
	}
	char dm[1024];
	bool mismatch = c.sm != e->target.sm; /* loaders follow the header; say so */
	if (o->json)
		printf(", \"elf_type\": \"%s\", \"elf_sm\": %d, \"kernels\": [", c.relocatable ? "rel" : "exec", c.sm);
	if (!o->json && mismatch)
		printf("      warning: the cubin is for sm_%d but the entry header says %d (loaders trust the header)\n", c.sm,
		       e->target.sm);
	if (!o->json)
		printf("      %s cubin, ELF ABI %d, e_flags 0x%08" PRIx32 ", %zu kernel%s\n", c.relocatable ? "relocatable (ET_REL)" : "executable (ET_EXEC)",
		       c.abi_version, c.e_flags, c.nkernels, c.nkernels == 1 ? "" : "s");
	for (size_t k = 0; k < c.nkernels; k++) {
		const struct fb_kernel *kk = &c.kernels[k];
		fb_demangle(kk->name, dm, sizeof(dm));
		if (o->json) {
			printf("%s{\"name\": ", k ? ", " : "");
			json_str(kk->name, strlen(kk->name));
			printf(", \"demangled\": ");
			json_str(dm, strlen(dm));
			printf(", \"registers\": %d, \"shared\": %" PRId64 ", \"shared_stored\": %" PRId64
			       ", \"shared_derived\": %s, \"code_size\": %" PRIu64 "}",
			       kk->registers, kk->shared_user, kk->shared_stored, kk->shared_derived ? "true" : "false", kk->code_size);
		} else {
			printf("      kernel %s  registers %d  shared %" PRId64, dm, kk->registers, kk->shared_user);
			if (kk->shared_derived)
				printf(" (derived: stored %" PRId64 " - 1024)", kk->shared_stored);
			printf("  code %" PRIu64 "\n", kk->code_size);
		}
	}
	if (o->json)
		printf("]");
	fb_cubin_free(&c);
	free(img);
	return 0;
}

static void
flag_notes(uint64_t f, char *buf, size_t size)
{
	buf[0] = 0;
	size_t l = 0;
	struct { uint64_t bit; const char *name; } names[] = {
		{FB_FLAG_DEBUG, "debug"}, {FB_FLAG_OBFUSCATED, "obfuscated"}, {FB_FLAG_COMPAT, "compat"},
		{FB_FLAG_COMPRESS_OLD, "compress-old"}, {FB_FLAG_WINDOWS, "windows"}, {FB_FLAG_MAC, "mac"},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f & names[i].bit)
			l += (size_t)snprintf(buf + l, l < size ? size - l : 0, "%s%s", l ? "," : "", names[i].name);
	if ((f & ~FB_FLAGS_KNOWN) && l < size)
		snprintf(buf + l, size - l, "%sunknown:0x%" PRIx64, l ? "," : "", f & ~FB_FLAGS_KNOWN);
}

/* One entry: a table row or a JSON object without its closing brace; with --kernels, the
 * cubin's kernels too. Returns print_kernels' status, or 0. */
static int
print_entry(const struct fb_entry *e, size_t i, const struct opts *o, const char *path)
{
	char tn[32], kb[16], notes[128];
	ap_target_name(&e->target, tn, sizeof(tn));
	const char *kind = fb_disk_kind_name(e->disk_kind, kb, sizeof(kb));
	if (e->disk_kind == FB_DISK_KIND_LTO)
		snprintf(tn, sizeof(tn), "lto_%d%s", e->target.sm,
		         e->target.variant == AP_ARCH ? "a" : e->target.variant == AP_FAMILY ? "f" : "");
	flag_notes(e->flags, notes, sizeof(notes));
	if (o->json) {
		printf("%s\n      {\"kind\": \"%s\", \"arch\": \"%s\", \"sm\": %d, \"offset\": %zu, \"header_size\": %" PRIu32
		       ", \"stored_size\": %zu, \"size\": %" PRIu64 ", \"compression\": \"%s\", \"flags\": %" PRIu64
		       ", \"version\": \"%u.%u\", \"obfuscated\": %s, \"identifier\": ",
		       i ? "," : "", kind, tn, e->target.sm, e->offset, e->header_size, e->stored_size, entry_size(e),
		       comp_name(e->compress), e->flags, e->major, e->minor, e->obfuscated ? "true" : "false");
		if (e->ident)
			json_str(e->ident, e->ident_len);
		else
			printf("null");
		printf(", \"options\": ");
		if (e->options)
			json_str(e->options, e->options_len);
		else
			printf("null");
	} else {
		printf("    %-3zu %-5s %-13s %10zu %10" PRIu64 " %-5s 0x%-8" PRIx64 " %-7s ", i, kind, tn, e->stored_size,
		       entry_size(e), comp_name(e->compress), e->flags, notes[0] ? notes : "-");
		if (e->ident)
			for (size_t k = 0; k < e->ident_len && k < 200; k++)
				putchar(e->ident[k] >= 0x20 && e->ident[k] < 0x7f ? e->ident[k] : '?');
		else
			putchar('-');
		putchar('\n');
	}
	if (o->kernels && e->disk_kind == FB_DISK_KIND_ELF)
		return print_kernels(e, o, path);
	return 0;
}

static int
inspect_file(const char *path, const struct opts *o, int *nprinted)
{
	struct fb_error err = {0};
	struct fb_mapped m;
	int rc = fb_map_file(path, &m, &err);
	if (rc) {
		warn("%s", err.msg);
		return fb_exit_code(rc);
	}
	struct fb_scan sc;
	rc = fb_scan_buffer(m.data, m.size, path, &sc, &err);
	if (rc) {
		fb_unmap_file(&m);
		warn("%s", err.msg);
		return fb_exit_code(rc);
	}
	struct fb_parsed p;
	rc = fb_scan_entries(m.data, &sc, &p, &err);
	if (rc) {
		fb_scan_free(&sc);
		fb_unmap_file(&m);
		warn("%s: %s", path, err.msg);
		return fb_exit_code(rc);
	}
	int ret = 0;
	if (o->json) {
		printf("%s\n  {\"file\": ", (*nprinted)++ ? "," : "");
		json_str(path, strlen(path));
		printf(", \"type\": \"%s\", \"containers\": [", sc.type);
	} else {
		size_t real = 0;
		for (size_t c = 0; c < p.ncontainers; c++)
			real += !p.containers[c].bare;
		printf("%s: %s, %zu container%s, %zu entr%s\n", path, sc.type, real, real == 1 ? "" : "s", p.nentries,
		       p.nentries == 1 ? "y" : "ies");
	}
	for (size_t c = 0; c < p.ncontainers; c++) {
		const struct fb_container *ct = &p.containers[c];
		const char *where = sc.blobs[ct->blob].where;
		if (o->json) {
			printf("%s\n    {\"index\": %zu, \"offset\": %zu, \"size\": %zu, \"bare\": %s, \"where\": ", c ? "," : "", c,
			       ct->offset, ct->size, ct->bare ? "true" : "false");
			json_str(where, strlen(where));
			printf(", \"entries\": [");
		} else if (ct->bare) {
			printf("  %s image (no container)%s%s\n", sc.type, *where ? " in " : "", where);
		} else {
			printf("  container %zu at 0x%zx, %zu bytes%s%s\n", c, ct->offset, ct->size, *where ? ", " : "", where);
			printf("    %-3s %-5s %-13s %10s %10s %-5s %-10s %-7s %s\n", "#", "kind", "arch", "stored", "size", "comp",
			       "flags", "notes", "identifier");
		}
		for (size_t i = 0; i < ct->count; i++) {
			int r = print_entry(&p.entries[ct->first + i], i, o, path);
			if (r && !ret)
				ret = r;
			if (o->json)
				printf("}");
		}
		if (o->json)
			printf("]}");
	}
	if (o->json)
		printf("]}");
	fb_parsed_free(&p);
	fb_scan_free(&sc);
	fb_unmap_file(&m);
	return ret;
}

static int
parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x = strtoull(s, &end, 0);
	if (end == s || s[0] == '-')
		return -1;
	if (*end == 'k' || *end == 'K')
		x <<= 10, end++;
	else if (*end == 'M')
		x <<= 20, end++;
	else if (*end == 'G')
		x <<= 30, end++;
	if (*end || x == 0)
		return -1;
	*v = x;
	return 0;
}

int
cmd_inspect(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'}, {"kernels", no_argument, NULL, 'k'},
		{"max-size", required_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	struct opts o = {false, false, 0};
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hk", longopts, "inspect")) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o.json = true;
			else if (strcmp(optarg, "table") == 0)
				o.json = false;
			else {
				warn("inspect: unknown format '%s' (table or json)", optarg);
				usage(stderr);
				return AP_EXIT_USAGE;
			}
			break;
		case 'k': o.kernels = true; break;
		case 'm':
			if (parse_size(optarg, &o.cap) != 0) {
				warn("inspect: invalid --max-size value '%s'", optarg);
				return AP_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return AP_EXIT_OK;
		default: return AP_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		warn("inspect: no input file");
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	int ret = 0, nprinted = 0;
	if (o.json)
		printf("{\"files\": [");
	for (int i = optind; i < argc; i++) {
		int r = inspect_file(argv[i], &o, &nprinted);
		if (r && !ret)
			ret = r;
	}
	if (o.json)
		printf("\n]}\n");
	return ret;
}
