/* cmd_cache.c: `fatbuild cache stats|clear`, the compile cache (cache.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild cache stats|clear|dir\n"
	        "\n"
	        "The compile cache holds one verified entry per (kernel, headers, options, NVRTC version,\n"
	        "target) that 'fatbuild compile' has built. It lives in FATBUILD_CACHE_DIR, else\n"
	        "$XDG_CACHE_HOME/fatbuild, else ~/.cache/fatbuild. Entries are written atomically and\n"
	        "checked (size and SHA-256) when read; a damaged entry is rebuilt. Deleting the directory\n"
	        "at any time is safe. It must be yours and writable by nobody else (else exit %d); a team\n"
	        "cache in a setgid group directory is opt-in: FATBUILD_CACHE_SHARED=1 (docs/security.md).\n"
	        "\n"
	        "  stats   print the directory, the number of entries and their size, and what the cache\n"
	        "          served: local and remote hits, misses, remote errors, corrupt entries, bytes\n"
	        "  clear   remove every entry\n"
	        "  dir     print the directory only\n"
	        "\n"
	        "Exit codes: %d success, %d the cache could not be read or cleared, %d usage, %d a cache\n"
	        "directory another user could write into.\n",
	        AP_EXIT_UNSAFE, AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_UNSAFE);
}

int
cmd_cache(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return AP_EXIT_OK;
	}
	if (argc != 2) {
		warn("cache: %s", argc < 2 ? "which action? (stats, clear or dir)" : "too many arguments");
		fputs("usage: fatbuild cache stats|clear|dir\n", stderr);
		return AP_EXIT_USAGE;
	}
	struct fb_error err = {0};
	if (strcmp(argv[1], "stats") == 0) {
		struct fb_cache_stats st;
		if (fb_cache_stats(NULL, &st, &err))
			return fail_fb(&err);
		printf("cache: %s\n", st.dir);
		printf("entries: %llu\n", (unsigned long long)st.entries);
		printf("size: %llu bytes (%.1f MiB)\n", (unsigned long long)st.bytes, (double)st.bytes / 1048576.0);
		if (st.temporaries)
			printf("unfinished writes: %llu\n", (unsigned long long)st.temporaries);
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
		printf("remote bytes: %llu down, %llu up\n", (unsigned long long)n.bytes_down,
		       (unsigned long long)n.bytes_up);
		return AP_EXIT_OK;
	}
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
	warn("cache: unknown action '%s' (stats, clear or dir)", argv[1]);
	fputs("usage: fatbuild cache stats|clear|dir\n", stderr);
	return AP_EXIT_USAGE;
}
