/* cmd_env.c: `fatbuild env` — what a build will use, and how each piece was found. */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "base/cpus.h"
#include "base/config.h"
#include "base/words.h"
#include "base/strbuf.h"
#include "plumbing.h"

extern char **environ;

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild env [--include-paths]\n"
	        "\n"
	        "Prints what 'fatbuild build' will use and how it found each piece: the CUDA toolkit\n"
	        "(CUDA_HOME, else the nvcc on PATH, else /usr/local/cuda), NVRTC and nvcc with their\n"
	        "versions and arches, ninja, the C and C++ compilers ($CC/$CXX, default cc/c++) with their\n"
	        "versions, the runtime library and header, and the build and cache directories.\n"
	        "Exits 1 when something the default build needs (NVRTC, ninja, a compiler) is missing.\n"
	        "\n"
	        "  --include-paths   print only the include directories host code needs (one per line):\n"
	        "                    fatbuild_runtime.h's, then CUDA's (for --backend nvcc host code)\n");
}

/* Runs argv (no shell), returns its exit status and the first line (or all) of its output. */
static int
capture(const char *const *argv, char *out, size_t size, int all)
{
	int p[2];
	out[0] = 0;
	if (pipe(p) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		return -1;
	}
	size_t n = 0;
	ssize_t r;
	char buf[4096];
	while ((r = read(p[0], buf, sizeof(buf))) > 0) {
		size_t k = (size_t)r < size - 1 - n ? (size_t)r : size - 1 - n;
		memcpy(out + n, buf, k);
		n += k;
	}
	out[n] = 0;
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!all)
		out[strcspn(out, "\n")] = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
which(const struct fb_config *cfg, const char *prog, char *out, size_t size)
{
	if (strchr(prog, '/')) {
		snprintf(out, size, "%s", prog);
		return access(prog, X_OK);
	}
	char cand[PATH_MAX];
	const char *pos = cfg->path;
	if (!fb_path_next(&pos, prog, cand, sizeof(cand)))
		return -1;
	snprintf(out, size, "%s", cand);
	return 0;
}

static void
self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = 0;
	char *s = strrchr(buf, '/');
	if (s)
		*s = 0;
}

/* The runtime library and header directory, as the build finds them beside this program. */
static void
runtime_paths(char *lib, size_t lsize, char *inc, size_t isize)
{
	char dir[PATH_MAX], cand[PATH_MAX];
	self_dir(dir, sizeof(dir));
	if (fb_build_runtime_lib(dir, NULL, cand, sizeof(cand)))
		snprintf(lib, lsize, "%.4000s (missing)", cand);
	else
		snprintf(lib, lsize, "%s", cand);
	if (fb_build_runtime_include(dir, NULL, cand, sizeof(cand)))
		snprintf(inc, isize, "%.4000s (missing)", cand);
	else
		snprintf(inc, isize, "%s", cand);
}

static int
compiler(const struct fb_config *cfg, const char *label, const char *var, const char *value, const char *def)
{
	const char *cc = value;
	const char *how = cc && cc[0] ? var : "default";
	if (!cc || !cc[0])
		cc = def;
	char path[PATH_MAX], ver[512];
	/* $CC may carry words ("ccache gcc"): split as the build does, look up the first. */
	char **w = NULL;
	size_t n = 0;
	struct fb_error e = {0};
	if (fb_words_split(cc, &w, &n, &e) != 0 || n == 0) {
		printf("%-10s '%s': NO COMMAND (from %s; set %s)\n", label, cc, how, var);
		fb_words_free(w);
		return 1;
	}
	if (which(cfg, w[0], path, sizeof(path)) != 0) {
		printf("%-10s %s: NOT FOUND (%s from %s is not on PATH; set %s)\n", label, cc, w[0], how, var);
		fb_words_free(w);
		return 1;
	}
	printf("%-10s", label);
	for (size_t i = 0; i < n; i++)
		printf(" '%s'", w[i]);
	const char **argv = xcalloc(n + 2, sizeof(*argv));
	for (size_t i = 0; i < n; i++)
		argv[i] = w[i];
	argv[n] = "--version";
	capture(argv, ver, sizeof(ver), 0);
	printf(" (%s is %s, from %s): %s\n", w[0], path, how, ver);
	free(argv);
	fb_words_free(w);
	return 0;
}

/* NVRTC (1 when missing: the default build needs it) and nvJitLink. */
static int
print_libs(const struct fb_config *cfg, const char *home)
{
	int missing = 0;
	struct fb_nvrtc_info ni;
	struct fb_error fe = {0};
	if (fb_nvrtc_info(home, &ni, &fe) == 0) {
		const char *nv = cfg->nvrtc;
		const char *nvhow = nv && nv[0] ? "FATBUILD_NVRTC or --nvrtc"
		                    : !home || !strchr(ni.path, '/') ? "the loader's search path"
		                    : strncmp(ni.path, home, strlen(home)) == 0 ? "CUDA_HOME's tree"
		                                                               : "the pip wheel next to CUDA_HOME";
		printf("%-10s %d.%d (%s, from %s); arches:", "NVRTC", ni.version / 1000, ni.version % 1000 / 10, ni.path,
		       nvhow);
		for (int i = 0; i < ni.narchs; i++)
			printf(" sm_%d", ni.archs[i]);
		printf("\n");
	} else {
		printf("%-10s NOT FOUND: %s\n", "NVRTC", fe.msg);
		missing = 1;
	}
	struct fb_jitlink_info ji;
	if (fb_jitlink_info(home, &ji, &fe) == 0)
		printf("%-10s %d.%d (%s; the device link of --rdc/--lto)\n", "nvJitLink", ji.version / 1000,
		       ji.version % 1000 / 10, ji.path);
	else
		printf("%-10s NOT FOUND (needed only for --rdc/--lto): %s\n", "nvJitLink", fe.msg);
	return missing;
}

/* nvcc's release and arches (only --backend nvcc needs it). */
static void
print_nvcc(const char *home)
{
	char nvcc[PATH_MAX + 16], out[16384];
	snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", home ? home : "/usr/local/cuda");
	if (access(nvcc, X_OK) != 0) {
		printf("%-10s not found at %s (only --backend nvcc needs it)\n", "nvcc", nvcc);
		return;
	}
	const char *v[] = {nvcc, "--version", NULL};
	capture(v, out, sizeof(out), 1);
	const char *rel = strstr(out, "release ");
	char ver[32] = "?";
	if (rel)
		snprintf(ver, sizeof(ver), "%.*s", (int)strcspn(rel + 8, ","), rel + 8);
	const char *l[] = {nvcc, "--list-gpu-arch", NULL};
	capture(l, out, sizeof(out), 1);
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
	size_t n = strlen(out);
	while (n && out[n - 1] == ' ')
		out[--n] = 0;
	printf("%-10s %s (%s; for --backend nvcc); arches: %s\n", "nvcc", ver, nvcc, out);
}

/* ninja ($FATBUILD_NINJA, else on PATH); 1 when missing. */
static int
print_ninja(const struct fb_config *cfg)
{
	const char *nj = cfg->ninja;
	const char *njhow = nj && nj[0] ? "FATBUILD_NINJA" : "PATH";
	if (!nj || !nj[0])
		nj = "ninja";
	char njpath[PATH_MAX], out[16384];
	if (which(cfg, nj, njpath, sizeof(njpath)) != 0) {
		printf("%-10s NOT FOUND ('%s' from %s): install it (apt-get install ninja-build, pip install ninja) "
		       "or set FATBUILD_NINJA\n",
		       "ninja", nj, njhow);
		return 1;
	}
	const char *v[] = {njpath, "--version", NULL};
	capture(v, out, sizeof(out), 0);
	printf("%-10s %s (%s, from %s)\n", "ninja", out, njpath, njhow);
	return 0;
}

/* The remote cache (docs/caches.md), its URL's credentials shown as ***. */
static void
print_remote(const struct fb_config *cfg)
{
	const char *url = cfg->remote_cache, *mode = cfg->remote_cache_mode;
	if (!url || !url[0]) {
		printf("%-10s none (FATBUILD_REMOTE_CACHE or --remote-cache URL; docs/caches.md)\n", "remote");
		return;
	}
	char shown[512];
	fb_remote_url_redact(url, shown, sizeof(shown));
	bool ok = !mode || !mode[0] || strcmp(mode, "read") == 0 || strcmp(mode, "readwrite") == 0;
	printf("%-10s %s (%s, from FATBUILD_REMOTE_CACHE%s)\n", "remote", shown,
	       !ok ? "INVALID FATBUILD_REMOTE_CACHE_MODE: read or readwrite" : mode && mode[0] ? mode : "readwrite",
	       cfg->remote_cache_header ? " with FATBUILD_REMOTE_CACHE_HEADER" : "");
}

/* The remote executor (docs/remote-cache.md §9): its URL and, asked within 3 s, what it says
 * of itself or why it cannot be reached. */
static void
print_executor(const struct fb_config *cfg)
{
	const char *url = cfg->remote_executor;
	if (!url || !url[0]) {
		printf("%-10s none (FATBUILD_REMOTE_EXECUTOR or compile --remote-exec URL; docs/remote-cache.md §9)\n",
		       "executor");
		return;
	}
	char shown[512], caps[512] = "";
	struct fb_error e = {0};
	fb_remote_url_redact(url, shown, sizeof(shown));
	if (fb_exec_probe(url, cfg->remote_cache_header, 3000, caps, sizeof(caps), &e) == 0)
		printf("%-10s %s (from FATBUILD_REMOTE_EXECUTOR): reachable, %s\n", "executor", shown, caps);
	else
		printf("%-10s %s (from FATBUILD_REMOTE_EXECUTOR): NOT REACHABLE: %s\n", "executor", shown, e.msg);
}

/* The build and cache directories, the arch list, the job count and the compile server. */
static void
print_settings(const struct fb_config *cfg)
{
	struct fb_error fe = {0};
	const char *bd = cfg->build_dir;
	char bdir[PATH_MAX];
	if (fb_build_dir_default(NULL, bdir, sizeof(bdir), &fe) != 0)
		printf("%-10s NONE (%s)\n", "build dir", fe.msg);
	else if (bd && bd[0])
		printf("%-10s %s (from FATBUILD_BUILD_DIR)\n", "build dir", bdir);
	else
		printf("%-10s %s (default; set FATBUILD_BUILD_DIR)\n", "build dir", bdir);
	char cache[PATH_MAX];
	uint64_t max;
	const char *ms = cfg->cache_max_size;
	if (fb_cache_dir(cache, sizeof(cache), &fe) != 0)
		printf("%-10s NONE (%s)\n", "cache", fe.msg);
	else if (cli_cache_limit(cfg, &max) != 0) /* its one line on stderr says why */
		printf("%-10s %s (INVALID FATBUILD_CACHE_MAX_SIZE: builds and compiles stop at it, exit 2)\n", "cache",
		       cache);
	else if (!ms || !*ms)
		printf("%-10s %s (size limit 5G, the default; FATBUILD_CACHE_MAX_SIZE sets it)\n", "cache", cache);
	else if (max)
		printf("%-10s %s (size limit %.40s, from FATBUILD_CACHE_MAX_SIZE)\n", "cache", cache, ms);
	else
		printf("%-10s %s (no size limit: FATBUILD_CACHE_MAX_SIZE=0)\n", "cache", cache);
	const char *arch = cfg->torch_cuda_arch_list;
	printf("%-10s %s\n", "arch list", arch && arch[0] ? arch : "auto (TORCH_CUDA_ARCH_LIST is unset)");
	struct fb_jobs_info jobs;
	fb_jobs_default(NULL, NULL, 0, cfg->max_jobs, FB_JOBS_MAX, &jobs);
	printf("%-10s %d (from %s; -j or MAX_JOBS overrides)\n", "jobs", jobs.jobs, jobs.where);
	if (cfg->compile_server == 0)
		printf("%-10s off (from FATBUILD_COMPILE_SERVER=0)\n", "server");
	else
		printf("%-10s on: fatbuild build keeps warm NVRTC workers for its edges (--no-compile-server or "
		       "FATBUILD_COMPILE_SERVER=0: off)\n", "server");
}

int
cmd_env(int argc, char **argv)
{
	int include_only = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return AP_EXIT_OK;
		} else if (strcmp(argv[i], "--include-paths") == 0) {
			include_only = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			static const char *const known[] = {"--include-paths", "-h", "--help", NULL};
			cli_bad_option("env", argv[i], CLI_UNKNOWN, known);
			return AP_EXIT_USAGE;
		} else {
			warn("env: unknown argument '%s'", argv[i]);
			usage(stderr);
			return AP_EXIT_USAGE;
		}
	}
	char lib[PATH_MAX], inc[PATH_MAX], home[PATH_MAX];
	struct fb_config cfg;
	fb_config_read(&cfg);
	runtime_paths(lib, sizeof(lib), inc, sizeof(inc));
	struct ap_error ae = {0};
	int have_home = ap_cuda_home(home, sizeof(home), &ae) == 0;
	if (include_only) {
		printf("%s\n", inc);
		if (have_home)
			printf("%s/include\n", home);
		return AP_EXIT_OK;
	}
	const char *ch = cfg.cuda_home;
	char nvpath[PATH_MAX];
	const char *how = ch && ch[0] ? "CUDA_HOME" : which(&cfg, "nvcc", nvpath, sizeof(nvpath)) == 0 ? "nvcc on PATH"
	                                                                                         : "default location";
	if (have_home)
		printf("%-10s %s (from %s%s)\n", "CUDA_HOME", home, how,
		       strstr(home, "/nvidia/cu13") || strstr(home, "/nvidia/cuda_nvcc") || strstr(home, "/nvidia/cu12")
		           ? "; a pip wheel tree" : "");
	else
		printf("%-10s NOT FOUND: %s\n", "CUDA_HOME", ae.msg);
	int missing = print_libs(&cfg, have_home ? home : NULL);
	print_nvcc(have_home ? home : NULL);
	missing |= print_ninja(&cfg);
	missing |= compiler(&cfg, "CC", "CC", cfg.cc, "cc");
	missing |= compiler(&cfg, "CXX", "CXX", cfg.cxx, "c++");
	printf("%-10s %s\n", "runtime", lib);
	printf("%-10s %s\n", "include", inc);
	print_settings(&cfg);
	print_remote(&cfg);
	print_executor(&cfg);
	if (missing)
		warn("env: something the build needs is missing (see NOT FOUND above)");
	return missing ? AP_EXIT_FAIL : AP_EXIT_OK;
}
