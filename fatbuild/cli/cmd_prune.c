/* cmd_prune.c: fatbuild prune: keep only the images the loader would use for an arch list,
 * in a .fatbin, .o, .a, .so or executable. Also the arch-list reading `size` shares. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "base/safefs.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild prune --arch-list LIST [options] IN -o OUT\n"
	        "       fatbuild prune -arch sm_90 | -gencode arch=compute_90,code=[sm_90,compute_90] ... IN -o OUT\n"
	        "\n"
	        "Keeps, in every container of IN, exactly the images the CUDA loader would use on the\n"
	        "listed GPUs: for each sm_X (8.0, 9.0a, ...) the SASS a real X GPU runs, or the PTX it\n"
	        "would JIT when no SASS fits; for each compute_X (+PTX) the PTX a JIT for X starts from.\n"
	        "Kept entries and everything else stay byte for byte as they were.\n"
	        "\n"
	        "  IN is a .fatbin (containers compacted), a relocatable .o or an .a archive (device\n"
	        "  sections rewritten to their new size, as nvprune does), or a shared library or\n"
	        "  executable (each container rewritten in place inside its section with the freed\n"
	        "  bytes zeroed: every address stays valid, the file keeps its size, and the zeros\n"
	        "  compress to nothing).\n"
	        "\n"
	        "  --arch-list LIST     the GPUs to keep (any fatbuild flags syntax: \"8.0 9.0 12.0+PTX\")\n"
	        "  -arch NAME, -gencode arch=A,code=C, --generate-code  nvprune/nvcc spellings, added\n"
	        "  -o, --output OUT     where to write (atomically); OUT may be IN only with --in-place\n"
	        "  --in-place           allow OUT = IN (the file is replaced)\n"
	        "  --allow-missing      prune even when a container keeps no image for a listed GPU\n"
	        "                       (its kernels cannot run there, before or after the prune)\n"
	        "  --prune-lto          also drop LTO-IR whose arch is not listed (kept by default)\n"
	        "  --prune-relocatable  linked files: also prune __nv_relfatbin containers and those\n"
	        "                       holding relocatable cubins (kept by default)\n"
	        "  --dry-run            report, write nothing\n"
	        "  --quiet              print nothing on success\n"
	        "\n"
	        "Obfuscated entries and unknown kinds are kept and reported.\n"
	        "Example: fatbuild prune --arch-list \"8.0 9.0\" libk.so -o libk.pruned.so\n"
	        "Exit codes: %d pruned, %d a container would keep no image (without --allow-missing),\n"
	        "%d usage or bad input.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

/* Appends the code= names of an nvcc -gencode value ("arch=compute_80,code=[sm_80,compute_80]"). */
static void
gencode_names(const char *v, char *buf, size_t n)
{
	const char *c = strstr(v, "code=");
	size_t l = strlen(buf);
	if (!c) {
		snprintf(buf + l, n - l, " %s", v); /* let the resolver report it */
		return;
	}
	c += 5;
	const char *end = strstr(c, ",arch=");
	if (!end)
		end = c + strlen(c);
	if (l + 1 < n)
		buf[l++] = ' ';
	for (; c < end && l + 1 < n; c++) {
		if (*c == '[' || *c == ']' || *c == '"' || *c == '\'')
			continue;
		buf[l++] = *c == ',' ? ' ' : *c;
	}
	buf[l] = 0;
}

/* Removes -arch/-gencode/--generate-code (and their values) from argv, appending the names
 * they give to names. Returns the new argc, or -1 when one has no value. */
int
prune_take_nvcc_args(int argc, char **argv, char *names, size_t n)
{
	int w = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		bool gencode = false, arch = false;
		static const char *const gen[] = {"-gencode", "--gencode", "--generate-code"};
		static const char *const arc[] = {"-arch", "--gpu-architecture", "--arch"};
		for (size_t k = 0; k < 3; k++) {
			size_t gl = strlen(gen[k]), al = strlen(arc[k]);
			if (strncmp(a, gen[k], gl) == 0 && (a[gl] == 0 || a[gl] == '='))
				gencode = true, val = a[gl] == '=' ? a + gl + 1 : NULL;
			if (k < 2 && strncmp(a, arc[k], al) == 0 && (a[al] == 0 || a[al] == '='))
				arch = true, val = a[al] == '=' ? a + al + 1 : NULL;
		}
		if (!gencode && !arch) {
			argv[w++] = argv[i];
			continue;
		}
		if (!val) {
			if (i + 1 >= argc) {
				cli_bad_option(argv[0], a, CLI_NEEDS_VALUE, NULL);
				return -1;
			}
			val = argv[++i];
		}
		if (gencode) {
			gencode_names(val, names, n);
		} else {
			size_t l = strlen(names);
			snprintf(names + l, n - l, " %s", val);
		}
	}
	argv[w] = NULL;
	return w;
}

static int
prune_resolve(const char *text, struct ap_archlist **out)
{
	struct ap_error aerr = {0};
	struct ap_resolve_opts ro = {0};
	if (!text || !*text) {
		warn("--arch-list (or -arch/-gencode) is required");
		return AP_EXIT_USAGE;
	}
	if (ap_archlist_resolve(text, &ro, out, &aerr) != 0)
		return fail_archlist(&aerr, text, &ro);
	warn_archlist(*out);
	return AP_EXIT_OK;
}

static void
prune_targets_text(const struct ap_archlist *l, char *buf, size_t n)
{
	size_t w = 0;
	buf[0] = 0;
	for (size_t i = 0; i < ap_archlist_count(l) && w < n; i++) {
		char tn[32];
		w += (size_t)snprintf(buf + w, n - w, "%s%s", i ? " " : "", ap_target_name(ap_archlist_get(l, i), tn, sizeof(tn)));
	}
}

int
prune_targets(char *names, size_t n, const char *list, bool optional, struct ap_target **ts, size_t *nt,
              char *text, size_t tn)
{
	size_t tl = strlen(names);
	if (list)
		snprintf(names + tl, n - tl, " %s", list);
	*ts = NULL;
	*nt = 0;
	text[0] = 0;
	if (optional && !names[0])
		return 0;
	struct ap_archlist *al = NULL;
	int r = prune_resolve(names[0] == ' ' ? names + 1 : names, &al);
	if (r)
		return r;
	*ts = targets_copy(al, nt);
	prune_targets_text(al, text, tn);
	ap_archlist_free(al);
	return 0;
}

static const char *
human(uint64_t b, char *buf, size_t n)
{
	if (b >= 1024 * 1024)
		snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024.0));
	else if (b >= 1024)
		snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
	else
		snprintf(buf, n, "%llu B", (unsigned long long)b);
	return buf;
}

/* What the prune kept and removed, on stdout; to: the output (or "(dry run)"), tt: the targets. */
static void
print_report(const struct fb_prune_report *rep, const struct fb_prune_opts *po, const char *in, const char *to,
             const char *tt)
{
	char a[32], b[32], s1[32], s2[32];
	printf("%s (%s) -> %s: kept %zu of %zu images for %s in %zu container%s (%s kept, %s removed)\n", in, rep->type,
	       to, rep->kept_entries, rep->kept_entries + rep->removed_entries, tt, rep->ncontainers,
	       rep->ncontainers == 1 ? "" : "s", human(rep->kept_bytes, a, sizeof(a)), human(rep->removed_bytes, b, sizeof(b)));
	if (rep->in_place)
		printf("linked file: containers rewritten in place inside their sections, file size kept (%s); the %s "
		       "freed are zeros and compress to nothing\n",
		       human(rep->out_size, s1, sizeof(s1)), human(rep->removed_bytes, s2, sizeof(s2)));
	else
		printf("file: %s -> %s\n", human(rep->in_size, s1, sizeof(s1)), human(rep->out_size, s2, sizeof(s2)));
	if (rep->kept_relocatable)
		printf("kept whole: %zu container(s) with relocatable code (--prune-relocatable prunes them)\n",
		       rep->kept_relocatable);
	if (rep->kept_lto)
		printf("kept: %zu LTO-IR entries%s\n", rep->kept_lto, po->prune_lto ? " (listed archs)" : " (--prune-lto prunes them)");
	if (rep->kept_other)
		printf("kept: %zu obfuscated or unknown entries\n", rep->kept_other);
	if (rep->missing)
		printf("missing: %zu containers have no image for some listed GPU (allowed)\n", rep->missing);
	if (rep->missing_ptx)
		printf("no PTX: %zu containers have no PTX for a listed compute_X\n", rep->missing_ptx);
}

/* Prunes the file in into outp (NULL: a dry run, nothing written) with in's mode, notes
 * said; *rep filled (free it). 0 or the exit code (reported). */
static int
prune_file(const char *in, const char *outp, const struct fb_prune_opts *po, struct fb_prune_report *rep)
{
	struct fb_error err = {0};
	struct fb_mapped m;
	if (fb_map_file(in, &m, &err) != 0)
		return fail_fb(&err);
	unsigned char *o = NULL;
	size_t osz = 0;
	int rc = fb_prune_buffer(m.data, m.size, in, po, &o, &osz, rep, &err);
	fb_unmap_file(&m);
	if (rep->notes)
		warn_lines(rep->notes);
	if (rc) {
		free(o);
		return fail_fb(&err);
	}
	if (outp) {
		struct stat st;
		int mode = stat(in, &st) == 0 ? (int)(st.st_mode & 07777) : 0644;
		rc = fb_write_file_atomic(outp, o, osz, mode, &err);
	}
	free(o);
	return rc ? fail_fb(&err) : 0;
}

int
cmd_prune(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch-list", required_argument, NULL, 'a'}, {"output", required_argument, NULL, 'o'},
		{"in-place", no_argument, NULL, 'i'}, {"allow-missing", no_argument, NULL, 'm'},
		{"prune-lto", no_argument, NULL, 'L'}, {"prune-relocatable", no_argument, NULL, 'R'},
		{"dry-run", no_argument, NULL, 'n'}, {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	char names[4096] = "";
	argc = prune_take_nvcc_args(argc, argv, names, sizeof(names));
	if (argc < 0)
		return AP_EXIT_USAGE;
	const char *list = NULL, *outp = NULL;
	bool in_place = false, dry = false, quiet = false;
	struct fb_prune_opts po = {0};
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "ho:q", longopts, "prune")) != -1) {
		switch (c) {
		case 'a': list = optarg; break;
		case 'o': outp = optarg; break;
		case 'i': in_place = true; break;
		case 'm': po.allow_missing = true; break;
		case 'L': po.prune_lto = true; break;
		case 'R': po.prune_relocatable = true; break;
		case 'n': dry = true; break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return AP_EXIT_OK;
		default: return AP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || (!outp && !dry)) {
		warn("prune: %s", optind >= argc ? "no input file" : optind < argc - 1 ? "one input file at a time" : "-o OUT is required");
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	const char *in = argv[optind];
	if (outp) {
		int r = dry ? AP_EXIT_OK : check_output("prune", "-o", outp, NULL, 0);
		if (r)
			return r;
		struct fb_error oe = {0};
		if (!in_place && fb_output_check("-o", outp, &in, 1, &oe) != 0) {
			warn("prune: -o %s is the input; pass --in-place to replace it", outp);
			return AP_EXIT_USAGE;
		}
	}
	struct ap_target *ts;
	char tt[1024];
	int r = prune_targets(names, sizeof(names), list, false, &ts, &po.ntargets, tt, sizeof(tt));
	if (r)
		return r;
	po.targets = ts;

	struct fb_prune_report rep = {0};
	int rc = prune_file(in, dry ? NULL : outp, &po, &rep);
	free(ts);
	if (rc) {
		fb_prune_report_free(&rep);
		return rc;
	}
	if (!quiet)
		print_report(&rep, &po, in, dry ? "(dry run)" : outp, tt);
	fb_prune_report_free(&rep);
	return AP_EXIT_OK;
}
