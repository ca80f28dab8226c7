/* cmd_size.c: fatbuild size: what the device code of a file costs per kind and arch, and
 * what a prune to an arch list would remove and keep. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
	"usage: fatbuild size [--arch-list LIST] [--format table|json] [-v] [--zstd-level N] FILE...\n"
	"\n"
	"Bytes stored (entry header + stored payload) and uncompressed, per kind and arch,\n"
	"across every container of each file (.fatbin, .cubin, .o, .a, .so, executable).\n"
	"\n"
	"  --arch-list LIST   also show what `fatbuild prune` to LIST would keep and remove,\n"
	"                     the file size after it, and the zstd-compressed size of the\n"
	"                     file before and after (what an archive or image layer saves)\n"
	"  -arch, -gencode    nvcc/nvprune spellings, added to the list\n"
	"  --prune-lto, --prune-relocatable   as for prune\n"
	"  --zstd-level N     level of the compressed-size estimate (default 3; 0: skip)\n"
	"  -v, --verbose      one line per container\n"
	"  --format table|json\n"
	"\n"
	"Example: fatbuild size --arch-list \"9.0\" /usr/local/cuda/lib64/libcurand.so.10\n";

struct sopts {
	bool json, verbose, first;
	const char *targets;
};

static const char *
row_name(const struct fb_size_row *r, char *buf, size_t n)
{
	char tn[32];
	if (r->disk_kind == FB_DISK_KIND_ELF || r->disk_kind == FB_DISK_KIND_PTX)
		ap_target_name(&r->target, tn, sizeof(tn));
	else if (r->disk_kind == FB_DISK_KIND_LTO)
		snprintf(tn, sizeof(tn), "lto_%d", r->target.sm);
	else
		snprintf(tn, sizeof(tn), "%d", r->target.sm);
	snprintf(buf, n, "%s%s", tn, r->obfuscated ? " (obfuscated)" : "");
	return buf;
}

static double
pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void
print_table(const char *path, const struct fb_size_report *r, const struct sopts *o)
{
	char kb[16], an[64];
	printf("%s: %s, %llu bytes, %zu container%s, %zu entr%s\n", path, r->type, (unsigned long long)r->file_size,
	       r->ncontainers, r->ncontainers == 1 ? "" : "s", r->nentries, r->nentries == 1 ? "y" : "ies");
	printf("  %-5s %-20s %8s %14s %14s", "kind", "arch", "entries", "stored", "uncompressed");
	if (r->pruned)
		printf(" %8s %14s %14s", "kept", "kept stored", "removed");
	putchar('\n');
	for (size_t i = 0; i < r->nrows; i++) {
		const struct fb_size_row *w = &r->rows[i];
		printf("  %-5s %-20s %8llu %14llu %14llu", fb_disk_kind_name(w->disk_kind, kb, sizeof(kb)),
		       row_name(w, an, sizeof(an)), (unsigned long long)w->entries, (unsigned long long)w->stored,
		       (unsigned long long)w->uncompressed);
		if (r->pruned)
			printf(" %8llu %14llu %14llu", (unsigned long long)w->kept_entries, (unsigned long long)w->kept_stored,
			       (unsigned long long)(w->stored - w->kept_stored));
		putchar('\n');
	}
	printf("  %-5s %-20s %8zu %14llu %14llu", "total", "", r->nentries, (unsigned long long)r->stored,
	       (unsigned long long)r->uncompressed);
	if (r->pruned)
		printf(" %8zu %14llu %14llu", r->kept_entries, (unsigned long long)r->kept_stored,
		       (unsigned long long)(r->stored - r->kept_stored));
	putchar('\n');
	if (o->verbose) {
		for (size_t c = 0; c < r->ncontainers; c++) {
			const struct fb_size_container *k = &r->containers[c];
			printf("  container %zu%s%s at 0x%zx: %zu bytes, %zu entries, %llu stored", c, k->where[0] ? " " : "",
			       k->where, k->offset, k->size, k->entries, (unsigned long long)k->stored);
			if (r->pruned)
				printf(", keeps %zu (%llu)", k->kept_entries, (unsigned long long)k->kept_stored);
			putchar('\n');
		}
	}
	if (r->pruned) {
		printf("  prune to %s: keeps %zu of %zu entries, %llu of %llu bytes (removes %.1f%%)\n", o->targets,
		       r->kept_entries, r->nentries, (unsigned long long)r->kept_stored, (unsigned long long)r->stored,
		       pct(r->stored - r->kept_stored, r->stored));
		if (r->prune.in_place)
			printf("  file after: %llu bytes (linked: rewritten in place, size kept; %llu bytes zeroed)\n",
			       (unsigned long long)r->pruned_file_size, (unsigned long long)r->prune.removed_bytes);
		else
			printf("  file after: %llu bytes (%.1f%% smaller)\n", (unsigned long long)r->pruned_file_size,
			       pct(r->file_size - r->pruned_file_size, r->file_size));
		if (r->prune.missing)
			printf("  missing: %zu containers have no image for some listed GPU\n", r->prune.missing);
	}
	if (r->zstd_before)
		printf("  zstd: %llu bytes", (unsigned long long)r->zstd_before);
	if (r->zstd_before && r->pruned)
		printf(" before, %llu after (%.1f%% smaller)", (unsigned long long)r->zstd_after,
		       pct(r->zstd_before - r->zstd_after, r->zstd_before));
	if (r->zstd_before)
		putchar('\n');
}

static void
print_json(const char *path, const struct fb_size_report *r, const struct sopts *o)
{
	char kb[16], an[64];
	printf("%s\n    {\"path\": ", o->first ? "" : ",");
	json_str(path, strlen(path));
	printf(", \"type\": \"%s\", \"file_size\": %llu, \"containers\": %zu, \"entries\": %zu, \"stored\": %llu, "
	       "\"uncompressed\": %llu,\n     \"rows\": [",
	       r->type, (unsigned long long)r->file_size, r->ncontainers, r->nentries, (unsigned long long)r->stored,
	       (unsigned long long)r->uncompressed);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct fb_size_row *w = &r->rows[i];
		printf("%s\n       {\"kind\": \"%s\", \"arch\": ", i ? "," : "", fb_disk_kind_name(w->disk_kind, kb, sizeof(kb)));
		row_name(w, an, sizeof(an));
		char *sp = strchr(an, ' ');
		if (sp)
			*sp = 0;
		json_str(an, strlen(an));
		printf(", \"obfuscated\": %s, \"entries\": %llu, \"stored\": %llu, \"uncompressed\": %llu",
		       w->obfuscated ? "true" : "false", (unsigned long long)w->entries, (unsigned long long)w->stored,
		       (unsigned long long)w->uncompressed);
		if (r->pruned)
			printf(", \"kept_entries\": %llu, \"kept_stored\": %llu, \"kept_uncompressed\": %llu",
			       (unsigned long long)w->kept_entries, (unsigned long long)w->kept_stored,
			       (unsigned long long)w->kept_uncompressed);
		putchar('}');
	}
	printf("]");
	if (o->verbose) {
		printf(",\n     \"container_list\": [");
		for (size_t c = 0; c < r->ncontainers; c++) {
			const struct fb_size_container *k = &r->containers[c];
			printf("%s\n       {\"where\": ", c ? "," : "");
			json_str(k->where, strlen(k->where));
			printf(", \"offset\": %zu, \"size\": %zu, \"entries\": %zu, \"stored\": %llu", k->offset, k->size, k->entries,
			       (unsigned long long)k->stored);
			if (r->pruned)
				printf(", \"kept_entries\": %zu, \"kept_stored\": %llu", k->kept_entries, (unsigned long long)k->kept_stored);
			putchar('}');
		}
		printf("]");
	}
	if (r->pruned) {
		printf(",\n     \"prune\": {\"targets\": ");
		json_str(o->targets, strlen(o->targets));
		printf(", \"kept_entries\": %zu, \"kept_stored\": %llu, \"kept_uncompressed\": %llu, \"removed_stored\": %llu, "
		       "\"file_size_after\": %llu, \"in_place\": %s, \"missing\": %zu}",
		       r->kept_entries, (unsigned long long)r->kept_stored, (unsigned long long)r->kept_uncompressed,
		       (unsigned long long)(r->stored - r->kept_stored), (unsigned long long)r->pruned_file_size,
		       r->prune.in_place ? "true" : "false", r->prune.missing);
	}
	if (r->zstd_before) {
		printf(",\n     \"zstd_before\": %llu", (unsigned long long)r->zstd_before);
		if (r->pruned)
			printf(", \"zstd_after\": %llu", (unsigned long long)r->zstd_after);
	}
	printf("}");
}

/* Each file's report, as a table or one JSON document; the worst exit code. */
static int
size_files(char **files, size_t n, const struct fb_size_opts *so, struct sopts *o)
{
	int ret = AP_EXIT_OK;
	if (o->json)
		printf("{\"files\": [");
	for (size_t i = 0; i < n; i++) {
		struct fb_error err = {0};
		struct fb_mapped m;
		struct fb_size_report r;
		if (fb_map_file(files[i], &m, &err) != 0 || fb_size(m.data, m.size, files[i], so, &r, &err) != 0) {
			if (m.data)
				fb_unmap_file(&m);
			int e = fail_fb(&err);
			if (e > ret)
				ret = e;
			continue;
		}
		fb_unmap_file(&m);
		if (o->json)
			print_json(files[i], &r, o);
		else
			print_table(files[i], &r, o);
		o->first = false;
		fb_size_report_free(&r);
	}
	if (o->json)
		printf("\n]}\n");
	return ret;
}

int
cmd_size(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch-list", required_argument, NULL, 'a'}, {"format", required_argument, NULL, 'f'},
		{"verbose", no_argument, NULL, 'v'}, {"zstd-level", required_argument, NULL, 'z'},
		{"prune-lto", no_argument, NULL, 'L'}, {"prune-relocatable", no_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	char names[4096] = "";
	argc = prune_take_nvcc_args(argc, argv, names, sizeof(names));
	if (argc < 0)
		return AP_EXIT_USAGE;
	const char *list = NULL;
	struct sopts o = {false, false, true, NULL};
	struct fb_size_opts so = {0};
	so.zstd_level = 3;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hv", longopts, "size")) != -1) {
		switch (c) {
		case 'a': list = optarg; break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o.json = true;
			else if (strcmp(optarg, "table") != 0) {
				warn("size: --format must be table or json, not '%s'", optarg);
				return AP_EXIT_USAGE;
			}
			break;
		case 'v': o.verbose = true; break;
		case 'z': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 22) {
				warn("size: --zstd-level must be 0..22, not '%s'", optarg);
				return AP_EXIT_USAGE;
			}
			so.zstd_level = (int)v;
			break;
		}
		case 'L': so.prune_lto = true; break;
		case 'R': so.prune_relocatable = true; break;
		case 'h': fputs(usage_text, stdout); return AP_EXIT_OK;
		default: return AP_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		warn("size: no input file");
		fputs(usage_text, stderr);
		return AP_EXIT_USAGE;
	}
	struct ap_target *ts;
	char tt[1024];
	int prc = prune_targets(names, sizeof(names), list, true, &ts, &so.ntargets, tt, sizeof(tt));
	if (prc)
		return prc;
	so.targets = ts;
	if (!ts)
		so.zstd_level = 0; /* the compressed size is a before/after comparison */
	o.targets = tt;
	int ret = size_files(argv + optind, (size_t)(argc - optind), &so, &o);
	free(ts);
	return ret;
}
