/* cmd_cache.c: `fatbuild cache stats|clear|trim|dir`, the compile cache (cache/store.c,
 * trim.c), and its size limit, which builds and compiles apply when they end. */
#include <ctype.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/config.h"

static const char synopsis[] = "usage: fatbuild cache stats|clear|dir\n"
                               "       fatbuild cache trim [--max-size SIZE]\n";

static void
usage(FILE *f)
{
	fputs(synopsis, f);
	fprintf(f,
	        "\n"
	        "The compile cache holds one verified entry per (kernel, headers, options, NVRTC version,\n"
	        "target) that 'fatbuild compile' has built, the objects of host and nvcc compiles, and\n"
	        "precompiled torch headers. It lives in FATBUILD_CACHE_DIR, else $XDG_CACHE_HOME/fatbuild,\n"
	        "else ~/.cache/fatbuild. Entries are written atomically and checked (size and SHA-256) when\n"
	        "read; a damaged entry is rebuilt. Deleting the directory at any time is safe. It must be\n"
	        "yours and writable by nobody else (else exit %d); a team cache in a setgid group directory\n"
	        "is opt-in: FATBUILD_CACHE_SHARED=1 (docs/security.md).\n"
	        "\n"
	        "It is kept under a size limit, FATBUILD_CACHE_MAX_SIZE (default 5G, as ccache; 0: none):\n"
	        "when a build or compile ends with the cache over it, the least recently used entries and\n"
	        "PCHs are removed until 90%% of the limit is left. Sizes are what the files take on disk.\n"
	        "\n"
	        "  stats   print the directory, the entries, PCHs and their size against the limit, and\n"
	        "          what the cache served: local and remote hits, misses, remote errors, corrupt\n"
	        "          entries, bytes, evictions\n"
	        "  clear   remove every entry and PCH (in a team cache, those you may remove)\n"
	        "  trim    evict the least recently used until the cache fits the limit (now, even\n"
	        "          when the counters say it fits: trim measures)\n"
	        "  dir     print the directory only\n"
	        "\n"
	        "  --max-size SIZE  trim's limit instead of FATBUILD_CACHE_MAX_SIZE: bytes, or a number\n"
	        "                   with k, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024),\n"
	        "                   a trailing B allowed: 500M, 5G, 1.5GiB\n"
	        "\n"
	        "Exit codes: %d success, %d the cache could not be read or cleared, %d usage (a bad size\n"
	        "too), %d a cache directory another user could write into.\n",
	        AP_EXIT_UNSAFE, AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_UNSAFE);
}

/* What every message about a bad size ends with. */
#define SIZE_FORM                                                                                              \
	"a size is digits with an optional unit k, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (of 1024) and B: "   \
	"500M, 5G, 1.5GiB; 0 for no limit"

/* One grammar for FATBUILD_CACHE_MAX_SIZE and --max-size (docs/caches.md "Size"): digits, a
 * fraction only before a unit, the unit's letter in either case, an optional B. Integers only:
 * strtod would take blanks, signs, hexadecimal, exponents and "inf", and round past 2^53. NULL,
 * or why s is not a size. */
static const char *
size_read(const char *s, uint64_t *out)
{
	const char *p = s;
	uint64_t v = 0;
	if (!*p)
		return "it is empty";
	if (!isdigit((unsigned char)*p))
		return isspace((unsigned char)*p)         ? "a blank is not part of it"
		       : (*p == '-' || *p == '+')          ? "a sign is not part of it"
		                                            : "it does not start with a digit";
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return "it is over 18446744073709551615 bytes";
		v = v * 10 + d;
	}
	const char *frac = NULL;
	size_t nfrac = 0;
	if (*p == '.') {
		frac = ++p;
		if (!(nfrac = strspn(p, "0123456789")))
			return "a '.' needs digits after it";
		p += nfrac;
	}
	static const char units[] = "kmgt";
	const char *u = *p ? strchr(units, tolower((unsigned char)*p)) : NULL;
	uint64_t scale = 1;
	if (u) {
		int binary = p[1] == 'i';
		for (const char *k = units; k <= u; k++)
			scale *= binary ? 1024 : 1000;
		p += 1 + binary;
	}
	if (*p == 'B')
		p++;
	if (*p) {
		if (p == s + 1 && *s == '0' && (*p == 'x' || *p == 'X'))
			return "hexadecimal is not taken";
		if (*p == 'e' || *p == 'E')
			return "an exponent is not taken";
		return isspace((unsigned char)*p) ? "a blank is not part of it" : "what follows the number is not a unit";
	}
	if (frac && !u)
		return "a fraction needs a unit (1.5G)";
	/* the fraction's bytes, rounded down, from its last digit on: each step's division is exact
	 * enough, as floor((m + floor(y)) / 10) = floor((m + y) / 10) for whole m */
	uint64_t part = 0;
	for (size_t i = nfrac; i-- > 0;)
		part = ((uint64_t)(frac[i] - '0') * scale + part) / 10;
	if (v > UINT64_MAX / scale || v * scale > UINT64_MAX - part)
		return "it is over 18446744073709551615 bytes";
	*out = v * scale + part;
	if (!*out && strpbrk(s, "123456789"))
		return "it is less than one byte";
	return NULL;
}

int
cli_cache_limit(const struct fb_config *cfg, uint64_t *max)
{
	const char *v = cfg->cache_max_size, *why;
	*max = FB_CACHE_DEFAULT_MAX_SIZE;
	if (!v || !*v)
		return 0;
	uint64_t n;
	if (!(why = size_read(v, &n))) {
		*max = n;
		return 0;
	}
	warn("FATBUILD_CACHE_MAX_SIZE='%.100s' is not a size: %s; " SIZE_FORM, v, why);
	return AP_EXIT_USAGE;
}

/* "12.0 KiB", "1.2 GiB": for people. */
static void
human(uint64_t n, char *buf, size_t size)
{
	static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(*unit)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu bytes", (unsigned long long)n);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
}

void
cli_cache_trim_after(uint64_t max, bool verbose)
{
	struct fb_cache_trim_result r;
	struct fb_error err = {0};
	if (fb_cache_trim(NULL, max, FB_TRIM_IF_OVER, &r, &err) != 0) {
		if (verbose)
			warn("cache: not trimmed: %s", err.msg);
		return;
	}
	if (verbose && r.evicted) {
		char b[32], a[32], m[32];
		human(r.before, b, sizeof(b));
		human(r.after, a, sizeof(a));
		human(max, m, sizeof(m));
		warn("cache: over its limit (%s): %llu entries evicted, %s -> %s", m, (unsigned long long)r.evicted,
		     b, a);
	}
}

/* The compiler launcher's steps by kind, a line for each kind it has counted (none before
 * the first launcher build: the lines above are all a cache without one shows). */
static void
print_kinds(const struct fb_cache_counters *n)
{
	const struct {
		const char *name;
		uint64_t hits, misses;
	} k[] = {{"cicc", n->cicc_hits, n->cicc_misses}, {"ptxas", n->ptxas_hits, n->ptxas_misses},
	         {"host", n->host_hits, n->host_misses}};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].hits || k[i].misses)
			printf("launcher %s: hits %llu, misses %llu\n", k[i].name, (unsigned long long)k[i].hits,
			       (unsigned long long)k[i].misses);
}

static int
print_stats(const struct fb_config *cfg)
{
	struct fb_error err = {0};
	struct fb_cache_stats st;
	uint64_t max;
	int rc = cli_cache_limit(cfg, &max);
	if (rc)
		return rc;
	if (fb_cache_stats(NULL, &st, &err))
		return fail_fb(&err);
	char h[32];
	printf("cache: %s\n", st.dir);
	printf("entries: %llu\n", (unsigned long long)st.entries);
	human(st.host_pch_bytes, h, sizeof(h));
	printf("host PCHs: %llu (%s)\n", (unsigned long long)st.host_pchs, h);
	human(st.bytes, h, sizeof(h));
	printf("size: %s (%llu bytes on disk)\n", h, (unsigned long long)st.bytes);
	if (max) {
		human(max, h, sizeof(h));
		printf("limit: %s (%llu bytes)\n", h, (unsigned long long)max);
	} else {
		printf("limit: none\n");
	}
	if (st.temporaries)
		printf("unfinished writes: %llu\n", (unsigned long long)st.temporaries);
	if (st.refused)
		printf("shards refused (not read): %llu\n", (unsigned long long)st.refused);
	struct fb_cache_counters n;
	if (fb_cache_counters_read(st.dir, &n, &err))
		return fail_fb(&err);
	printf("local hits: %llu\n", (unsigned long long)n.local_hits);
	printf("remote hits: %llu\n", (unsigned long long)n.remote_hits);
	printf("misses (compiled): %llu\n", (unsigned long long)n.misses);
	printf("remote misses: %llu\n", (unsigned long long)n.remote_misses);
	printf("remote errors: %llu\n", (unsigned long long)n.remote_errors);
	printf("corrupt entries: %llu local, %llu remote\n", (unsigned long long)n.local_corrupt,
	       (unsigned long long)n.remote_corrupt);
	printf("uploads: %llu\n", (unsigned long long)n.uploads);
	printf("remote bytes: %llu down, %llu up\n", (unsigned long long)n.bytes_down, (unsigned long long)n.bytes_up);
	human(n.evicted_bytes, h, sizeof(h));
	printf("evictions: %llu (%s)\n", (unsigned long long)n.evictions, h);
	print_kinds(&n);
	return AP_EXIT_OK;
}

static int
trim(const struct fb_config *cfg, int argc, char **argv)
{
	static const struct option longs[] = {
		{"max-size", required_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	uint64_t max;
	const char *given = NULL;
	optind = 1;
	for (int c; (c = cli_getopt(argc, argv, "+h", longs, "cache trim")) != -1;) {
		if (c == 'h') {
			usage(stdout);
			return AP_EXIT_OK;
		}
		if (c != 'm')
			return AP_EXIT_USAGE;
		given = optarg;
	}
	if (optind != argc) {
		warn("cache trim: unexpected argument '%s'", argv[optind]);
		fputs(synopsis, stderr);
		return AP_EXIT_USAGE;
	}
	const char *why = given ? size_read(given, &max) : NULL;
	if (why) {
		warn("cache trim: --max-size '%.100s' is not a size: %s; " SIZE_FORM, given, why);
		return AP_EXIT_USAGE;
	}
	int rc = given ? 0 : cli_cache_limit(cfg, &max);
	if (rc)
		return rc;
	struct fb_cache_trim_result r;
	struct fb_error err = {0};
	char dir[4096];
	if (fb_cache_dir(dir, sizeof(dir), &err) || fb_cache_trim(dir, max, 0, &r, &err))
		return fail_fb(&err);
	char b[32], a[32], m[32], e[32];
	if (!max) {
		printf("%s: no limit (FATBUILD_CACHE_MAX_SIZE=0): nothing trimmed\n", dir);
		return AP_EXIT_OK;
	}
	human(r.before, b, sizeof(b));
	human(r.after, a, sizeof(a));
	human(max, m, sizeof(m));
	human(r.evicted_bytes, e, sizeof(e));
	printf("%s: %s of %s: evicted %llu (%llu host PCHs, %s), now %s\n", dir, b, m, (unsigned long long)r.evicted,
	       (unsigned long long)r.host_pchs, e, a);
	if (r.skipped)
		printf("kept %llu in use (read since the walk, or a PCH a build holds)\n", (unsigned long long)r.skipped);
	return AP_EXIT_OK;
}

int
cmd_cache(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return AP_EXIT_OK;
	}
	struct fb_config cfg;
	fb_config_read(&cfg);
	if (argc >= 2 && strcmp(argv[1], "trim") == 0)
		return trim(&cfg, argc - 1, argv + 1);
	if (argc != 2) {
		warn("cache: %s", argc < 2 ? "which action? (stats, clear, trim or dir)" : "too many arguments");
		fputs(synopsis, stderr);
		return AP_EXIT_USAGE;
	}
	struct fb_error err = {0};
	if (strcmp(argv[1], "stats") == 0)
		return print_stats(&cfg);
	if (strcmp(argv[1], "clear") == 0) {
		uint64_t n = 0;
		char dir[4096];
		if (fb_cache_dir(dir, sizeof(dir), &err) || fb_cache_clear(dir, &n, &err))
			return fail_fb(&err);
		printf("removed %llu entries from %s\n", (unsigned long long)n, dir);
		return AP_EXIT_OK;
	}
	if (strcmp(argv[1], "dir") == 0) {
		char dir[4096];
		if (fb_cache_dir(dir, sizeof(dir), &err))
			return fail_fb(&err);
		puts(dir);
		return AP_EXIT_OK;
	}
	if (argv[1][0] == '-' && argv[1][1]) {
		static const char *const known[] = {"-h", "--help", NULL};
		cli_bad_option("cache", argv[1], CLI_UNKNOWN, known);
		return AP_EXIT_USAGE;
	}
	warn("cache: unknown action '%.100s' (stats, clear, trim or dir)", argv[1]);
	fputs(synopsis, stderr);
	return AP_EXIT_USAGE;
}
