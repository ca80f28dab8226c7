/* cmd_diff.c: fatbuild diff: tells two device-code files apart entry by entry (container,
 * kind, arch, sizes, a hash of the stored bytes), so that a user sees why two builds differ:
 * which kernel images changed, or that the device code is the same and the difference lies
 * in the host part. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild diff [-q] A B\n"
	        "\n"
	        "Compares two files that hold device code (.fatbin, .cubin, .ptx, .o, .a, .so,\n"
	        "executables) entry by entry: the fatbin containers in order, and in each the entries\n"
	        "in order. Each pair is printed with kind, arch, stored size and a hash of the stored\n"
	        "bytes (FNV-1a 64, for telling entries apart, not for security), marked '=' when the\n"
	        "stored bytes are identical, '!' when they differ, '-' or '+' when only A or only B has\n"
	        "it. When every entry agrees but the files do not, the first differing byte outside is\n"
	        "named (host code, symbols, layout).\n"
	        "\n"
	        "  -q   print only the summary line\n"
	        "\n"
	        "Example: fatbuild diff build1/libext.so build2/libext.so\n"
	        "Exit codes: %d the files are identical, %d they differ, %d usage or a file cannot be read.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

struct side {
	const char *path;
	struct fb_mapped m;
	struct fb_scan sc;
	struct fb_parsed p;
	int mapped, scanned, parsed;
};

static int
load(struct side *s)
{
	struct fb_error err = {0};
	if (fb_map_file(s->path, &s->m, &err)) {
		warn("diff: %s", err.msg);
		return -1;
	}
	s->mapped = 1;
	if (fb_scan_buffer(s->m.data, s->m.size, s->path, &s->sc, &err)) {
		warn("diff: %s", err.msg);
		return -1;
	}
	s->scanned = 1;
	if (fb_scan_entries(s->m.data, &s->sc, &s->p, &err)) {
		warn("diff: %s: %s", s->path, err.msg);
		return -1;
	}
	s->parsed = 1;
	return 0;
}

static void
unload(struct side *s)
{
	if (s->parsed)
		fb_parsed_free(&s->p);
	if (s->scanned)
		fb_scan_free(&s->sc);
	if (s->mapped)
		fb_unmap_file(&s->m);
}

static uint64_t
fnv(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h;
}

static void
describe(const struct fb_entry *e, char *kind, size_t ksize, char *arch, size_t asize)
{
	char kb[16];
	snprintf(kind, ksize, "%s", fb_disk_kind_name(e->disk_kind, kb, sizeof(kb)));
	ap_target_name(&e->target, arch, asize);
}

static int
same_entry(const struct fb_entry *a, const struct fb_entry *b)
{
	return a->disk_kind == b->disk_kind && a->target.sm == b->target.sm && a->target.variant == b->target.variant &&
	       a->flags == b->flags && a->header_size == b->header_size && a->stored_size == b->stored_size &&
	       a->ident_len == b->ident_len && (!a->ident_len || memcmp(a->ident, b->ident, a->ident_len) == 0) &&
	       a->options_len == b->options_len && (!a->options_len || memcmp(a->options, b->options, a->options_len) == 0) &&
	       memcmp(a->payload, b->payload, a->stored_size) == 0;
}

static void
row(char mark, size_t c, size_t i, const struct fb_entry *a, const struct fb_entry *b)
{
	char ka[16] = "-", aa[32] = "-", kb[16] = "-", ab[32] = "-", sa[24] = "-", sb[24] = "-", ha[20] = "-", hb[20] = "-";
	if (a) {
		describe(a, ka, sizeof(ka), aa, sizeof(aa));
		snprintf(sa, sizeof(sa), "%zu", a->stored_size);
		snprintf(ha, sizeof(ha), "%016" PRIx64, fnv(a->payload, a->stored_size));
	}
	if (b) {
		describe(b, kb, sizeof(kb), ab, sizeof(ab));
		snprintf(sb, sizeof(sb), "%zu", b->stored_size);
		snprintf(hb, sizeof(hb), "%016" PRIx64, fnv(b->payload, b->stored_size));
	}
	const char *kind = a ? ka : kb, *arch = a ? aa : ab;
	char what[64] = "";
	if (a && b && (strcmp(ka, kb) || strcmp(aa, ab)))
		snprintf(what, sizeof(what), "  (B: %s %s)", kb, ab);
	printf("%c %3zu %3zu %-5s %-13s %10s %10s  %-16s %s%s\n", mark, c, i, kind, arch, sa, sb, ha, hb, what);
}

int
cmd_diff(int argc, char **argv)
{
	static const char *const known[] = {"-q", "-h", "--help", "--", NULL};
	int quiet = 0, a = 1;
	for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
		if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return AP_EXIT_OK;
		}
		if (strcmp(argv[a], "-q") == 0) {
			quiet = 1;
			continue;
		}
		if (strcmp(argv[a], "--") == 0) {
			a++;
			break;
		}
		cli_bad_option("diff", argv[a], CLI_UNKNOWN, known);
		return AP_EXIT_USAGE;
	}
	if (argc - a != 2) {
		warn("diff: expected two files, got %d", argc - a);
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	struct side A = {.path = argv[a]}, B = {.path = argv[a + 1]};
	if (load(&A) || load(&B)) {
		unload(&A);
		unload(&B);
		return AP_EXIT_USAGE;
	}
	size_t nc = A.p.ncontainers > B.p.ncontainers ? A.p.ncontainers : B.p.ncontainers;
	size_t ndiff = 0, nsame = 0;
	if (!quiet)
		printf("  %3s %3s %-5s %-13s %10s %10s  %-16s %s\n", "ct", "#", "kind", "arch", "stored A", "stored B",
		       "hash A", "hash B");
	for (size_t c = 0; c < nc; c++) {
		const struct fb_container *ca = c < A.p.ncontainers ? &A.p.containers[c] : NULL;
		const struct fb_container *cb = c < B.p.ncontainers ? &B.p.containers[c] : NULL;
		size_t na = ca ? ca->count : 0, nb = cb ? cb->count : 0, n = na > nb ? na : nb;
		for (size_t i = 0; i < n; i++) {
			const struct fb_entry *ea = i < na ? &A.p.entries[ca->first + i] : NULL;
			const struct fb_entry *eb = i < nb ? &B.p.entries[cb->first + i] : NULL;
			char mark = !ea ? '+' : !eb ? '-' : same_entry(ea, eb) ? '=' : '!';
			if (mark == '=')
				nsame++;
			else
				ndiff++;
			if (!quiet)
				row(mark, c, i, ea, eb);
		}
	}
	int ret;
	if (A.m.size == B.m.size && memcmp(A.m.data, B.m.data, A.m.size) == 0) {
		printf("%s and %s are identical (%zu entr%s)\n", A.path, B.path, nsame, nsame == 1 ? "y" : "ies");
		ret = AP_EXIT_OK;
	} else if (ndiff) {
		printf("%s and %s differ: %zu of %zu entr%s differ\n", A.path, B.path, ndiff, ndiff + nsame,
		       ndiff + nsame == 1 ? "y" : "ies");
		ret = AP_EXIT_FAIL;
	} else {
		size_t k = 0, n = A.m.size < B.m.size ? A.m.size : B.m.size;
		while (k < n && A.m.data[k] == B.m.data[k])
			k++;
		printf("%s and %s differ outside the device code (all %zu entr%s identical): first at byte %zu of %zu/%zu\n",
		       A.path, B.path, nsame, nsame == 1 ? "y" : "ies", k, A.m.size, B.m.size);
		ret = AP_EXIT_FAIL;
	}
	unload(&A);
	unload(&B);
	return ret;
}
