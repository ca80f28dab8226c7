/* toolkit.c: what each CUDA release supports, and which toolkit is in use.
 *
 * Built-in tables (docs/archlist.md §3.1, checked against nvcc 13.0.88): one row per
 * real arch with the release that added it and the one that removed it, and the releases
 * from which the 'a' (arch-specific) and 'f' (family-specific) variants exist:
 *   sm_35/37 removed 12.0; sm_50..72 removed 13.0; 80@11.0 86@11.1 87@11.4 89/90@11.8;
 *   90a@12.0; 100 101 120 (+a)@12.8; 103 121 (+a) and every f@12.9; 101 renamed 110 and
 *   88 added @13.0. Releases with a table: 11.8, 12.0 … 12.9, 13.0.
 *
 * Detection: the toolkit directory is CUDA_HOME, else the nvcc on PATH (…/bin/nvcc → …), else
 * /usr/local/cuda. Its arch set comes from NVRTC (nvrtcGetSupportedArchs, dlopen'ed), else
 * from `nvcc --list-gpu-code`, else from the built-in table of its version; the suffix rules
 * always come from the built-in table. toolkit.source says which. */
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

#include "arch_int.h"
#include "error_int.h"

extern char **environ;

struct window {
	int sm;
	int since, until;   /* real arch exists in [since, until); until 0 = still present */
	int a_since, f_since; /* 0 = never */
};

static const struct window windows[] = {
	{35, 0, 12000, 0, 0},
	{37, 0, 12000, 0, 0},
	{50, 0, 13000, 0, 0},
	{52, 0, 13000, 0, 0},
	{53, 0, 13000, 0, 0},
	{60, 0, 13000, 0, 0},
	{61, 0, 13000, 0, 0},
	{62, 0, 13000, 0, 0},
	{70, 0, 13000, 0, 0},
	{72, 0, 13000, 0, 0},
	{75, 0, 0, 0, 0},
	{80, 11000, 0, 0, 0},
	{86, 11010, 0, 0, 0},
	{87, 11040, 0, 0, 0},
	{88, 13000, 0, 0, 0},
	{89, 11080, 0, 0, 0},
	{90, 11080, 0, 12000, 0},
	{100, 12080, 0, 12080, 12090},
	{101, 12080, 13000, 12080, 12090},
	{103, 12090, 0, 12090, 12090},
	{110, 13000, 0, 13000, 13000},
	{120, 12080, 0, 12080, 12090},
	{121, 12090, 0, 12090, 12090},
};
#define NWINDOWS (sizeof(windows) / sizeof(windows[0]))

static const int releases[] = {11080, 12000, 12010, 12020, 12030, 12040, 12050, 12060,
                               12070, 12080, 12090, 13000};
#define NRELEASES (sizeof(releases) / sizeof(releases[0]))

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
		if (version > 0)
			ap_seterr(err, AP_EINVAL, "no built-in table for CUDA %s (known: 11.8, 12.0 to 12.9, 13.0)",
			       ap_tk_version_str(version, v, sizeof(v)));
		else
			ap_seterr(err, AP_EINVAL, "invalid CUDA version %d (known: 11.8, 12.0 to 12.9, 13.0)", version);
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

/* dirname of dirname of the resolved path of nvcc on PATH, into buf. */
static bool
nvcc_on_path(char *buf, size_t size)
{
	const char *path = getenv("PATH");
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
						if (strlen(real) < size) {
							strcpy(buf, real);
							return true;
						}
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

int
ap_cuda_home(char *buf, size_t size, struct ap_error *err)
{
	const char *env = getenv("CUDA_HOME");
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
	if (nvcc_on_path(buf, size))
		return AP_OK;
	if (is_dir("/usr/local/cuda") && size > strlen("/usr/local/cuda")) {
		strcpy(buf, "/usr/local/cuda");
		return AP_OK;
	}
	ap_seterr(err, AP_ENOTOOLKIT,
	       "no CUDA toolkit found (CUDA_HOME unset, no nvcc on PATH, no /usr/local/cuda); set CUDA_HOME");
	return AP_ENOTOOLKIT;
}

/* ---- detection ---------------------------------------------------------------------------- */

/* NVRTC's C API, declared here (no CUDA headers at build time). nvrtcResult 0 = NVRTC_SUCCESS. */
typedef int (*nvrtc_version_fn)(int *major, int *minor);
typedef int (*nvrtc_num_archs_fn)(int *n);
typedef int (*nvrtc_archs_fn)(int *archs);

static const char *const libdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"};
static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12"};

/* Loads NVRTC from home and reads its version and arches. Returns true on success; else
 * why holds the reason. */
static bool
nvrtc_query(const char *home, int *version, int *sm, int *nsm, char *path, size_t pathsize, char *why, size_t whysize)
{
	snprintf(why, whysize, "no libnvrtc.so.13/.12 under %.200s", home);
	for (size_t d = 0; d < sizeof(libdirs) / sizeof(libdirs[0]); d++) {
		for (size_t k = 0; k < sizeof(nvrtc_names) / sizeof(nvrtc_names[0]); k++) {
			char p[PATH_MAX];
			if ((size_t)snprintf(p, sizeof(p), "%s/%s/%s", home, libdirs[d], nvrtc_names[k]) >= sizeof(p))
				continue;
			if (access(p, R_OK) != 0)
				continue;
			/* RTLD_NODELETE: unloading NVRTC would also unload the libstdc++ it pulled in,
			 * leaking libstdc++'s exception pool (LeakSanitizer reports 72704 bytes). */
			void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
			if (!h) {
				const char *e = dlerror();
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
			bool ok = false;
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
			if (ok)
				return true;
		}
	}
	return false;
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
		FILE *f = fopen(p, "r");
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

int
ap_toolkit_detect(const char *cuda_home, struct ap_toolkit *out, struct ap_error *err)
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
		int rc = ap_cuda_home(home, sizeof(home), err);
		if (rc)
			return rc;
	}

	int version = 0;
	if (nvrtc_query(home, &version, out->sm, &out->nsm, path, sizeof(path), why, sizeof(why))) {
		snprintf(out->source, sizeof(out->source), "NVRTC %.200s", path);
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
	suffix_rules(version, out);
	return AP_OK;
}
