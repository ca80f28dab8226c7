/* toolkit.c: what each CUDA release supports, and which toolkit is in use.
 *
 * Built-in tables: one row per real arch with the release that added it and the one that
 * removed it, and the releases from which the 'a' (arch-specific) and 'f' (family-specific)
 * variants exist. Every row was read from NVIDIA's own tools of each release (ptxas --help's
 * --gpu-name list, NVRTC's nvrtcGetSupportedArchs and, for CUDA 13, nvcc --list-gpu-code) from
 * the pip wheels nvidia-cuda-nvcc/-nvrtc 13.0.88 13.1.115 13.2.86 13.3.73 13.4.92 13.5.37,
 * -cu12 12.0.140 … 12.9.86 and -cu11 11.8.89; docs/toolkits.md has the readings and
 * scripts/toolkit-facts.sh regenerates and checks them. Releases with a table: 11.8, 12.0 …
 * 12.6, 12.8, 12.9 (there was no CUDA 12.7), 13.0 … 13.5.
 *
 * Detection: the toolkit directory is CUDA_HOME, else the nvcc on PATH (…/bin/nvcc → …), else
 * /usr/local/cuda; a pip wheel tree (site-packages/nvidia/cu13, nvidia/cuda_nvcc next to
 * nvidia/cuda_nvrtc) is one too, and FATBUILD_NVRTC names an NVRTC of its own (ap_nvrtc_candidates).
 * Its arch set comes from NVRTC (nvrtcGetSupportedArchs, dlopen'ed), else from
 * `nvcc --list-gpu-code`, else from the built-in table of its version; the suffix rules come
 * from the built-in table, or for a release newer than every table from its ptxas --help
 * (else the newest table). toolkit.source says which. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"

extern char **environ;

struct window {
	int sm;
	int since, until;   /* real arch exists in [since, until); until 0 = still present */
	int a_since, f_since; /* 0 = never */
};

static const struct window windows[] = {
	/* sm, since, until, a since, f since: the first release whose ptxas/NVRTC lists it */
	{35, 0, 12000, 0, 0},               /* in 11.8; gone from 12.0.140 */
	{37, 0, 12000, 0, 0},               /* in 11.8; gone from 12.0.140 */
	{50, 0, 13000, 0, 0},               /* 11.8 … 12.9.86; gone from 13.0.88 */
	{52, 0, 13000, 0, 0},               /* 11.8 … 12.9.86 */
	{53, 0, 13000, 0, 0},               /* 11.8 … 12.9.86 */
	{60, 0, 13000, 0, 0},               /* 11.8 … 12.9.86 */
	{61, 0, 13000, 0, 0},               /* 11.8 … 12.9.86 */
	{62, 0, 13000, 0, 0},               /* 11.8 … 12.9.86 */
	{70, 0, 13000, 0, 0},               /* 11.8 … 12.9.86 */
	{72, 0, 13000, 0, 0},               /* 11.8 … 12.9.86 */
	{75, 0, 0, 0, 0},                   /* 11.8 … 13.5.37 */
	{80, 11000, 0, 0, 0},               /* 11.8 … 13.5.37 (since 11.0: release notes) */
	{86, 11010, 0, 0, 0},               /* 11.8 … 13.5.37 (since 11.1: release notes) */
	{87, 11040, 0, 0, 0},               /* 11.8 … 13.5.37 (since 11.4: release notes) */
	{88, 13000, 0, 0, 0},               /* 13.0.88 … 13.5.37; no 12.x lists it */
	{89, 11080, 0, 0, 0},               /* 11.8.89 … */
	{90, 11080, 0, 12000, 0},           /* 11.8.89 …; 90a from 12.0.140 */
	{100, 12080, 0, 12080, 12090},      /* 12.8.93 (+a) …; 100f from 12.9.86 */
	{101, 12080, 13000, 12080, 12090},  /* 12.8.93 … 12.9.86; renamed 110 in 13.0.88 */
	{103, 12090, 0, 12090, 12090},      /* 12.9.86 (+a, +f) … */
	{107, 13040, 0, 13040, 13040},      /* 13.4.92 (+a, +f) …; not in 13.3.73 */
	{110, 13000, 0, 13000, 13000},      /* 13.0.88 (+a, +f) … */
	{120, 12080, 0, 12080, 12090},      /* 12.8.93 (+a) …; 120f from 12.9.86 */
	{121, 12090, 0, 12090, 12090},      /* 12.9.86 (+a, +f) … */
};
#define NWINDOWS (sizeof(windows) / sizeof(windows[0]))

static const int releases[] = {11080, 12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080,
                               12090, 13000, 13010, 13020, 13030, 13040, 13050};
#define NRELEASES (sizeof(releases) / sizeof(releases[0]))
#define KNOWN_RELEASES "11.8, 12.0 to 12.6, 12.8, 12.9, 13.0 to 13.5"

int
ap_tk_newest_release(void)
{
	return releases[NRELEASES - 1];
}

char *
ap_tk_version_str(int version, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
	return buf;
}

static bool
in_window(const struct window *w, int version)
{
	return version >= w->since && (w->until == 0 || version < w->until);
}

/* Fills sm/a/f of out from the table rows for `version` (any version, not only releases). */
static void
fill_from_table(int version, struct ap_toolkit *out)
{
	out->nsm = out->na = out->nf = 0;
	for (size_t i = 0; i < NWINDOWS; i++) {
		const struct window *w = &windows[i];
		if (!in_window(w, version))
			continue;
		out->sm[out->nsm++] = w->sm;
		if (w->a_since && version >= w->a_since)
			out->a[out->na++] = w->sm;
		if (w->f_since && version >= w->f_since)
			out->f[out->nf++] = w->sm;
	}
}

int
ap_cuda_version_parse(const char *s)
{
	if (!s)
		return -1;
	int major = 0, minor = 0, nd = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++, nd++)
		major = major * 10 + (*p - '0');
	if (nd == 0 || nd > 2 || *p != '.')
		return -1;
	p++;
	nd = 0;
	for (; *p >= '0' && *p <= '9'; p++, nd++)
		minor = minor * 10 + (*p - '0');
	if (nd == 0 || nd > 2 || *p != '\0' || major == 0)
		return -1;
	return major * 1000 + minor * 10;
}

static bool
is_release(int version)
{
	for (size_t i = 0; i < NRELEASES; i++)
		if (releases[i] == version)
			return true;
	return false;
}

int
ap_toolkit_builtin(int version, struct ap_toolkit *out, struct ap_error *err)
{
	char v[16];
	if (!out) {
		ap_seterr(err, AP_EINVAL, "ap_toolkit_builtin: out is NULL");
		return AP_EINVAL;
	}
	memset(out, 0, sizeof(*out));
	if (!is_release(version)) {
		if (version == 12070)
			ap_seterr(err, AP_EINVAL, "there was no CUDA 12.7 (12.6 was followed by 12.8; known: " KNOWN_RELEASES ")");
		else if (version > 0)
			ap_seterr(err, AP_EINVAL, "no built-in table for CUDA %s (known: " KNOWN_RELEASES ")",
			       ap_tk_version_str(version, v, sizeof(v)));
		else
			ap_seterr(err, AP_EINVAL, "invalid CUDA version %d (known: " KNOWN_RELEASES ")", version);
		return AP_EINVAL;
	}
	out->version = version;
	fill_from_table(version, out);
	snprintf(out->source, sizeof(out->source), "built-in table for CUDA %s", ap_tk_version_str(version, v, sizeof(v)));
	return AP_OK;
}

bool
ap_tk_variant_exists(int sm, enum ap_variant var)
{
	for (size_t i = 0; i < NWINDOWS; i++)
		if (windows[i].sm == sm)
			return var == AP_PLAIN || (var == AP_ARCH ? windows[i].a_since : windows[i].f_since) != 0;
	return false;
}

void
ap_tk_variant_list(enum ap_variant var, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NWINDOWS && n < size; i++)
		if ((var == AP_ARCH ? windows[i].a_since : windows[i].f_since) != 0)
			n += (size_t)snprintf(buf + n, size - n, "%s%d", n ? " " : "", windows[i].sm);
}

static bool
in_list(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool
ap_tk_has(const struct ap_toolkit *tk, int sm, enum ap_variant var)
{
	if (!in_list(tk->sm, tk->nsm, sm))
		return false;
	if (var == AP_ARCH)
		return in_list(tk->a, tk->na, sm);
	if (var == AP_FAMILY)
		return in_list(tk->f, tk->nf, sm);
	return true;
}

bool
ap_tk_hint(int sm, enum ap_variant var, int version, char *buf, size_t size)
{
	char v1[16];
	static const char suffix[] = {'\0', 'a', 'f'};
	if (sm == 101 && version >= 13000) {
		snprintf(buf, size, "10.1 was renamed 11.0, sm_110, in CUDA 13.0");
		return true;
	}
	if (sm == 110 && version < 13000 && version >= 12080) {
		snprintf(buf, size, "11.0 is called 10.1, sm_101, before CUDA 13.0");
		return true;
	}
	for (size_t i = 0; i < NWINDOWS; i++) {
		const struct window *w = &windows[i];
		if (w->sm != sm)
			continue;
		if (w->until && version >= w->until) {
			snprintf(buf, size, "sm_%d was removed in CUDA %s", sm, ap_tk_version_str(w->until, v1, sizeof(v1)));
			return true;
		}
		if (version < w->since) {
			snprintf(buf, size, "sm_%d needs CUDA %s or newer", sm, ap_tk_version_str(w->since, v1, sizeof(v1)));
			return true;
		}
		int since = var == AP_ARCH ? w->a_since : var == AP_FAMILY ? w->f_since : 0;
		if (var != AP_PLAIN && since && version < since) {
			snprintf(buf, size, "sm_%d%c needs CUDA %s or newer", sm, suffix[var],
			         ap_tk_version_str(since, v1, sizeof(v1)));
			return true;
		}
		return false;
	}
	return false;
}

/* ---- which toolkit ---------------------------------------------------------------------- */

static bool
is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool
is_exec(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* dirname of dirname of the resolved path of nvcc on PATH, into buf. A toolkit found whose
 * path does not fit is not skipped: *toolong is set and false returned, so the caller reports
 * it instead of looking further (or silently truncating). */
static bool
nvcc_on_path(const char *path, char *buf, size_t size, bool *toolong)
{
	if (!path)
		return false;
	const char *p = path;
	while (*p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char cand[PATH_MAX];
		if (n > 0 && n + sizeof("/nvcc") < sizeof(cand)) {
			memcpy(cand, p, n);
			strcpy(cand + n, "/nvcc");
			char real[PATH_MAX];
			if (is_exec(cand) && realpath(cand, real)) {
				char *s = strrchr(real, '/');
				if (s && s != real) {
					*s = '\0';
					s = strrchr(real, '/');
					if (s && s != real) {
						*s = '\0';
						if (strlen(real) >= size) {
							*toolong = true;
							return false;
						}
						strcpy(buf, real);
						return true;
					}
				}
			}
		}
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

/* ap_cuda_home with the configuration read (CUDA_HOME, PATH). */
static int
find_cuda_home(const struct fb_config *cfg, char *buf, size_t size, struct ap_error *err)
{
	const char *env = cfg->cuda_home;
	if (!buf || size == 0) {
		ap_seterr(err, AP_EINVAL, "ap_cuda_home: no buffer");
		return AP_EINVAL;
	}
	if (env && *env) {
		if (!is_dir(env)) {
			ap_seterr(err, AP_ENOTOOLKIT, "CUDA_HOME=%.200s is not a directory; point it at a CUDA toolkit", env);
			return AP_ENOTOOLKIT;
		}
		if (strlen(env) >= size) {
			ap_seterr(err, AP_EINVAL, "CUDA_HOME is too long");
			return AP_EINVAL;
		}
		strcpy(buf, env);
		return AP_OK;
	}
	bool toolong = false;
	if (nvcc_on_path(cfg->path, buf, size, &toolong))
		return AP_OK;
	if (toolong) {
		ap_seterr(err, AP_EINVAL, "the toolkit of the nvcc on PATH has a path too long for a %zu-byte buffer", size);
		return AP_EINVAL;
	}
	if (is_dir("/usr/local/cuda") && size <= strlen("/usr/local/cuda")) {
		ap_seterr(err, AP_EINVAL, "/usr/local/cuda is too long for a %zu-byte buffer", size);
		return AP_EINVAL;
	}
	if (is_dir("/usr/local/cuda")) {
		strcpy(buf, "/usr/local/cuda");
		return AP_OK;
	}
	ap_seterr(err, AP_ENOTOOLKIT,
	       "no CUDA toolkit found (CUDA_HOME unset, no nvcc on PATH, no /usr/local/cuda); set CUDA_HOME");
	return AP_ENOTOOLKIT;
}

int
ap_cuda_home(char *buf, size_t size, struct ap_error *err)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	return find_cuda_home(&cfg, buf, size, err);
}

/* ---- detection ---------------------------------------------------------------------------- */

/* NVRTC's C API, declared here (no CUDA headers at build time). nvrtcResult 0 = NVRTC_SUCCESS. */
typedef int (*nvrtc_version_fn)(int *major, int *minor);
typedef int (*nvrtc_num_archs_fn)(int *n);
typedef int (*nvrtc_archs_fn)(int *archs);

/* ---- where NVRTC is ----------------------------------------------------------------------- */

static const char *const libdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"};
/* pip wheel trees: site-packages/nvidia/cu13/lib (CUDA 13 wheels put nvcc and NVRTC in one
 * tree), site-packages/nvidia/cuda_nvrtc/lib (the -cu12/-cu11 wheels: nvcc's wheel is the
 * sibling nvidia/cuda_nvcc). Looked for under home (home = site-packages/nvidia) and, for
 * home = nvidia/cuda_nvcc, in the cuda_nvrtc beside it. */
static const char *const wheeldirs[] = {"cu13/lib", "cuda_nvrtc/lib", "cu12/lib"};
static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
#define NNAMES (sizeof(nvrtc_names) / sizeof(nvrtc_names[0]))

static int
add_cand(char (*paths)[AP_PATH_MAX], int n, int max, const char *dir, const char *sub, const char *name)
{
	if (n >= max)
		return n;
	int k = snprintf(paths[n], AP_PATH_MAX, "%s%s%s%s%s", dir, *dir ? "/" : "", sub, *sub ? "/" : "", name);
	if (k < 0 || k >= AP_PATH_MAX)
		return n;
	for (int i = 0; i < n; i++)
		if (strcmp(paths[i], paths[n]) == 0)
			return n;
	return n + 1;
}

/* ap_nvrtc_candidates with FATBUILD_NVRTC's value (env, NULL when unset). */
static int
nvrtc_candidates(const char *env, const char *home, char (*paths)[AP_PATH_MAX], int max)
{
	int n = 0;
	if (!paths || max <= 0)
		return 0;
	if (env && *env) {
		struct stat st;
		if (stat(env, &st) == 0 && S_ISDIR(st.st_mode)) {
			static const char *const subs[] = {"", "lib", "lib64"};
			for (size_t s = 0; s < 3; s++)
				for (size_t k = 0; k < NNAMES; k++)
					n = add_cand(paths, n, max, env, subs[s], nvrtc_names[k]);
		} else
			n = add_cand(paths, n, max, "", "", env);
		return n;
	}
	if (!home || !*home) {
		for (size_t k = 0; k < NNAMES; k++)
			n = add_cand(paths, n, max, "", "", nvrtc_names[k]);
		return n;
	}
	for (size_t d = 0; d < sizeof(libdirs) / sizeof(libdirs[0]); d++)
		for (size_t k = 0; k < NNAMES; k++)
			n = add_cand(paths, n, max, home, libdirs[d], nvrtc_names[k]);
	char parent[AP_PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", home);
	size_t len = strlen(parent);
	while (len > 1 && parent[len - 1] == '/')
		parent[--len] = '\0';
	/* parent = dirname(home); in_nvidia when its last component is "nvidia" */
	bool in_nvidia = false;
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		const char *last = strrchr(parent, '/');
		in_nvidia = strcmp(last ? last + 1 : parent, "nvidia") == 0;
	}
	/* home = site-packages/nvidia: its wheel trees, newest first */
	for (size_t w = 0; w < sizeof(wheeldirs) / sizeof(wheeldirs[0]); w++)
		for (size_t k = 0; k < NNAMES; k++)
			n = add_cand(paths, n, max, home, wheeldirs[w], nvrtc_names[k]);
	/* home = nvidia/cuda_nvcc (a -cu12/-cu11 nvcc wheel): the NVRTC wheel of the same
	 * generation beside it, never the nvidia/cu13 tree another wheel may have put there */
	const char *base = strrchr(home, '/');
	base = base ? base + 1 : home;
	if (in_nvidia && strncmp(base, "cuda_nvcc", 9) == 0)
		for (size_t k = 0; k < NNAMES; k++)
			n = add_cand(paths, n, max, parent, "cuda_nvrtc/lib", nvrtc_names[k]);
	return n;
}

int
ap_nvrtc_candidates(const char *home, char (*paths)[AP_PATH_MAX], int max)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	return nvrtc_candidates(cfg.nvrtc, home, paths, max);
}

/* Loads NVRTC (ap_nvrtc_candidates of home, env: FATBUILD_NVRTC) and reads its version and arches. Returns true on
 * success; else why holds the reason. */
static bool
nvrtc_query(const char *env, const char *home, int *version, int *sm, int *nsm, char *path, size_t pathsize, char *why,
            size_t whysize)
{
	char (*c)[AP_PATH_MAX] = malloc(AP_MAX_NVRTC_CANDIDATES * sizeof(*c));
	if (!c) {
		snprintf(why, whysize, "out of memory");
		return false;
	}
	int nc = nvrtc_candidates(env, home, c, AP_MAX_NVRTC_CANDIDATES);
	if (env && *env)
		snprintf(why, whysize, "FATBUILD_NVRTC=%.200s is not a libnvrtc.so.* (nor a folder with one)", env);
	else
		snprintf(why, whysize, "no libnvrtc.so.13/.12 under %.200s (nor .so.11.2; looked in lib64, lib and pip wheel trees nvidia/cu13/lib, nvidia/cuda_nvrtc/lib)", home);
	bool ok = false;
	for (int i = 0; i < nc && !ok; i++) {
		const char *p = c[i];
		if (strchr(p, '/') && access(p, R_OK) != 0)
			continue;
		/* RTLD_NODELETE: unloading NVRTC would also unload the libstdc++ it pulled in,
		 * leaking libstdc++'s exception pool (LeakSanitizer reports 72704 bytes). */
		void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (!h) {
			const char *e = dlerror();
			if (strchr(p, '/'))
				snprintf(why, whysize, "cannot load %.200s: %.200s", p, e ? e : "?");
			continue;
		}
		nvrtc_version_fn ver;
		nvrtc_num_archs_fn num;
		nvrtc_archs_fn get;
		*(void **)&ver = dlsym(h, "nvrtcVersion");
		*(void **)&num = dlsym(h, "nvrtcGetNumSupportedArchs");
		*(void **)&get = dlsym(h, "nvrtcGetSupportedArchs");
		int major = 0, minor = 0, n = 0;
		if (!ver || !num || !get)
			snprintf(why, whysize, "%.200s lacks nvrtcGetSupportedArchs", p);
		else if (ver(&major, &minor) != 0 || num(&n) != 0 || n <= 0 || n > AP_MAX_SMS)
			snprintf(why, whysize, "%.200s: nvrtcGetNumSupportedArchs failed (n=%d)", p, n);
		else {
			int buf[AP_MAX_SMS];
			if (get(buf) != 0)
				snprintf(why, whysize, "%.200s: nvrtcGetSupportedArchs failed", p);
			else {
				*nsm = n;
				memcpy(sm, buf, sizeof(int) * (size_t)n);
				*version = major * 1000 + minor * 10;
				snprintf(path, pathsize, "%s", p);
				ok = true;
			}
		}
		dlclose(h);
	}
	free(c);
	return ok;
}

/* Runs argv, captures up to size-1 bytes of stdout into buf. Returns the exit status or -1. */
static int
run_capture(char *const argv[], char *buf, size_t size)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc != 0) {
		close(fd[0]);
		return -1;
	}
	size_t len = 0;
	for (;;) {
		char tmp[512];
		ssize_t r = read(fd[0], tmp, sizeof(tmp));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t take = (size_t)r;
		if (len + take > size - 1)
			take = size - 1 - len;
		memcpy(buf + len, tmp, take);
		len += take;
	}
	buf[len] = '\0';
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Parses "sm_75\nsm_80…" (nvcc --list-gpu-code) into sm; returns the count or -1. */
static int
parse_gpu_code(const char *s, int *sm)
{
	int n = 0;
	while ((s = strstr(s, "sm_")) != NULL) {
		s += 3;
		int v = 0, nd = 0;
		for (; *s >= '0' && *s <= '9' && nd < 4; s++, nd++)
			v = v * 10 + (*s - '0');
		if (nd == 0 || (*s >= 'a' && *s <= 'z'))
			continue; /* suffixed code names are not real arches of their own */
		if (n == AP_MAX_SMS)
			return -1;
		if (!in_list(sm, n, v))
			sm[n++] = v;
	}
	return n;
}

/* The version from include/cuda.h (CUDA_VERSION) or `nvcc --version`; 0 if unknown. */
static int
version_from_files(const char *home)
{
	static const char *const incs[] = {"include/cuda.h", "targets/x86_64-linux/include/cuda.h",
	                                   "targets/sbsa-linux/include/cuda.h"};
	for (size_t i = 0; i < sizeof(incs) / sizeof(incs[0]); i++) {
		char p[PATH_MAX];
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", home, incs[i]) >= sizeof(p))
			continue;
		FILE *f = fb_fopen_regular(p, 0);
		if (!f)
			continue;
		char line[512];
		int v = 0;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "#define CUDA_VERSION %d", &v) == 1)
				break;
		fclose(f);
		if (v > 0)
			return v;
	}
	char nvcc[PATH_MAX], out[4096];
	if ((size_t)snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", home) >= sizeof(nvcc) || !is_exec(nvcc))
		return 0;
	char *argv[] = {nvcc, "--version", NULL};
	if (run_capture(argv, out, sizeof(out)) != 0)
		return 0;
	const char *r = strstr(out, "release ");
	if (!r)
		return 0;
	int major, minor;
	if (sscanf(r, "release %d.%d", &major, &minor) != 2)
		return 0;
	return major * 1000 + minor * 10;
}

/* The suffix rules for version: its own table, else the newest release older than it. */
static void
suffix_rules(int version, struct ap_toolkit *out)
{
	int use = 0;
	for (size_t i = 0; i < NRELEASES; i++)
		if (releases[i] <= version)
			use = releases[i];
	out->na = out->nf = 0;
	if (!use)
		return;
	struct ap_toolkit t;
	fill_from_table(use, &t);
	for (int i = 0; i < t.na; i++)
		if (in_list(out->sm, out->nsm, t.a[i]))
			out->a[out->na++] = t.a[i];
	for (int i = 0; i < t.nf; i++)
		if (in_list(out->sm, out->nsm, t.f[i]))
			out->f[out->nf++] = t.f[i];
}

/* The a and f sets from `home/bin/ptxas --help` (its --gpu-name list of sm_X, sm_Xa, sm_Xf),
 * kept to the arches out already has. False when there is no ptxas or no such list. */
static bool
suffix_from_ptxas(const char *home, struct ap_toolkit *out)
{
	char ptxas[PATH_MAX];
	if (!home[0] || (size_t)snprintf(ptxas, sizeof(ptxas), "%s/bin/ptxas", home) >= sizeof(ptxas) || !is_exec(ptxas))
		return false;
	size_t size = 256 * 1024;
	char *buf = malloc(size);
	if (!buf)
		return false;
	char *argv[] = {ptxas, "--help", NULL};
	bool ok = false;
	const char *sec, *vals, *end;
	if (run_capture(argv, buf, size) == 0 && (sec = strstr(buf, "--gpu-name")) &&
	    (vals = strstr(sec, "Allowed values for this option:")) && (end = strstr(vals, "Default value"))) {
		out->na = out->nf = 0;
		for (const char *p = vals; (p = strstr(p, "'sm_")) != NULL && p < end;) {
			p += 4;
			int v = 0, nd = 0;
			for (; *p >= '0' && *p <= '9' && nd < 4; p++, nd++)
				v = v * 10 + (*p - '0');
			if (nd == 0 || (p[0] != 'a' && p[0] != 'f') || p[1] != '\'' || !in_list(out->sm, out->nsm, v))
				continue;
			if (p[0] == 'a' && out->na < AP_MAX_SMS && !in_list(out->a, out->na, v))
				out->a[out->na++] = v;
			else if (p[0] == 'f' && out->nf < AP_MAX_SMS && !in_list(out->f, out->nf, v))
				out->f[out->nf++] = v;
		}
		qsort(out->a, (size_t)out->na, sizeof(int), cmp_int);
		qsort(out->f, (size_t)out->nf, sizeof(int), cmp_int);
		ok = true;
	}
	free(buf);
	return ok;
}

int
ap_toolkit_detect(const char *cuda_home, struct ap_toolkit *out, struct ap_error *err)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	return ap_toolkit_detect_config(&cfg, cuda_home, out, err);
}

int
ap_toolkit_detect_config(const struct fb_config *cfg, const char *cuda_home, struct ap_toolkit *out,
                         struct ap_error *err)
{
	char home[PATH_MAX], why[512], path[PATH_MAX], v[16];
	if (!out) {
		ap_seterr(err, AP_EINVAL, "ap_toolkit_detect: out is NULL");
		return AP_EINVAL;
	}
	memset(out, 0, sizeof(*out));
	if (cuda_home) {
		if (!is_dir(cuda_home)) {
			ap_seterr(err, AP_ENOTOOLKIT, "%.300s is not a directory (expected a CUDA toolkit)", cuda_home);
			return AP_ENOTOOLKIT;
		}
		snprintf(home, sizeof(home), "%s", cuda_home);
	} else {
		int rc = find_cuda_home(cfg, home, sizeof(home), err);
		if (rc && !(cfg->nvrtc && *cfg->nvrtc))
			return rc;
		if (rc)
			home[0] = '\0'; /* an NVRTC-only install */
	}

	int version = 0;
	if (nvrtc_query(cfg->nvrtc, home, &version, out->sm, &out->nsm, path, sizeof(path), why, sizeof(why))) {
		snprintf(out->source, sizeof(out->source), "NVRTC %.200s", path);
	} else if (!home[0]) {
		ap_seterr(err, AP_ENOTOOLKIT, "cannot use NVRTC: %.400s", why);
		return AP_ENOTOOLKIT;
	} else {
		version = version_from_files(home);
		char nvcc[PATH_MAX], buf[4096];
		int n = -1;
		if ((size_t)snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", home) < sizeof(nvcc) && is_exec(nvcc)) {
			char *argv[] = {nvcc, "--list-gpu-code", NULL};
			if (run_capture(argv, buf, sizeof(buf)) == 0)
				n = parse_gpu_code(buf, out->sm);
		}
		if (n > 0) {
			out->nsm = n;
			snprintf(out->source, sizeof(out->source), "%.200s --list-gpu-code (NVRTC unusable)", nvcc);
		} else if (version && is_release(version)) {
			struct ap_toolkit t;
			fill_from_table(version, &t);
			out->nsm = t.nsm;
			memcpy(out->sm, t.sm, sizeof(t.sm));
			snprintf(out->source, sizeof(out->source), "built-in table for CUDA %s (no NVRTC or nvcc in %.150s)",
			         ap_tk_version_str(version, v, sizeof(v)), home);
		} else {
			ap_seterr(err, AP_ENOTOOLKIT, "cannot tell which arches the CUDA toolkit at %.150s supports: %.250s",
			       home, why);
			return AP_ENOTOOLKIT;
		}
	}
	if (!version) {
		ap_seterr(err, AP_ENOTOOLKIT, "cannot tell the CUDA version of %.300s (no NVRTC, cuda.h or nvcc)", home);
		return AP_ENOTOOLKIT;
	}
	out->version = version;
	qsort(out->sm, (size_t)out->nsm, sizeof(int), cmp_int);
	if (version > ap_tk_newest_release()) {
		/* newer than every table: never refused; its own ptxas says which a/f it takes */
		size_t l = strlen(out->source);
		if (suffix_from_ptxas(home, out))
			snprintf(out->source + l, sizeof(out->source) - l, "; a/f from %.120s/bin/ptxas --help", home);
		else {
			suffix_rules(version, out);
			snprintf(out->source + l, sizeof(out->source) - l, "; a/f from the CUDA %s table",
			         ap_tk_version_str(ap_tk_newest_release(), v, sizeof(v)));
		}
	} else
		suffix_rules(version, out);
	return AP_OK;
}
