/* tools.c: the programs a build runs: fatbuild itself, its runtime library and header, ninja,
 * the host compilers and (--backend nvcc) nvcc. */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fatbuild.h"
#include "base/config.h"
#include "base/error.h"
#include "base/words.h"
#include "gen.h"
#include "tools.h"

/* Searches path (PATH's value) for an executable; returns 0 and fills out. */
static int
which(const char *path, const char *prog, char *out)
{
	if (strchr(prog, '/')) {
		if (access(prog, X_OK) != 0)
			return -1;
		return realpath(prog, out) ? 0 : -1;
	}
	char cand[PATHMAX];
	for (const char *pos = path; fb_path_next(&pos, prog, cand, sizeof(cand));)
		if (realpath(cand, out))
			return 0;
	return -1;
}

static bool
exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* The absolute path of cand into out (0), or cand itself (FB_ENOTOOL). */
static int
resolved(const char *cand, char *out, size_t size)
{
	char real[PATH_MAX];
	bool found = realpath(cand, real) != NULL;
	bfmt(out, size, "%s", found ? real : cand);
	return found ? 0 : FB_ENOTOOL;
}

#ifndef FB_RUNTIME_BUILD_PATH
#define FB_RUNTIME_BUILD_PATH NULL
#endif
#ifndef FB_INCLUDE_BUILD_DIR
#define FB_INCLUDE_BUILD_DIR NULL
#endif

/* given (NULL: env, the variable's value), else DIR/rel, else (when DIR/rel + probe is missing)
 * the build tree's built (if any); made absolute into out. */
static int
runtime_file(const char *dir, const char *given, const char *env, const char *rel, const char *probe,
             const char *built, char *out, size_t size)
{
	const char *v = given ? given : env;
	char cand[PATHMAX], p[PATHMAX + 32];
	if (v && v[0]) {
		bfmt(cand, sizeof(cand), "%s", v);
	} else {
		bfmt(cand, sizeof(cand), "%s/%s", dir, rel);
		bfmt(p, sizeof(p), "%s%s", cand, probe);
		if (built && !exists(p))
			bfmt(cand, sizeof(cand), "%s", built);
	}
	return resolved(cand, out, size);
}

static int
find_runtime_lib(const struct fb_config *cfg, const char *dir, const char *given, char *out, size_t size)
{
	return runtime_file(dir, given, cfg->runtime, "../lib/libfatbuild_runtime.a", "", FB_RUNTIME_BUILD_PATH, out,
	                    size);
}

static int
find_runtime_include(const struct fb_config *cfg, const char *dir, const char *given, char *out, size_t size)
{
	return runtime_file(dir, given, cfg->include, "../include", "/fatbuild_runtime.h", FB_INCLUDE_BUILD_DIR, out,
	                    size);
}

int
fb_build_runtime_lib(const char *dir, const char *runtime_lib, char *out, size_t size)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	return find_runtime_lib(&cfg, dir, runtime_lib, out, size);
}

int
fb_build_runtime_include(const char *dir, const char *include_dir, char *out, size_t size)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	return find_runtime_include(&cfg, dir, include_dir, out, size);
}

int
fb_build_find_tools(const struct fb_config *cfg, const struct fb_build_opts *o, bool need_nvcc, struct tools *t,
                    struct fb_error *err)
{
	const char *fb = o->fatbuild ? o->fatbuild : cfg->program;
	if (!fb || !fb[0])
		fb = "fatbuild";
	if (which(cfg->path, fb, t->fatbuild) != 0)
		return fb_seterr(err, FB_ENOTOOL, "cannot find the fatbuild program '%s' (set FATBUILD_PROGRAM or put it on PATH)", fb);
	char dir[PATHMAX];
	bfmt(dir, sizeof(dir), "%s", t->fatbuild);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	if (find_runtime_lib(cfg, dir, o->runtime_lib, t->runtime, sizeof(t->runtime)))
		return fb_seterr(err, FB_ENOTOOL, "cannot find libfatbuild_runtime.a (tried %s; set FATBUILD_RUNTIME)",
		                 t->runtime);
	if (find_runtime_include(cfg, dir, o->include_dir, t->include, sizeof(t->include)))
		return fb_seterr(err, FB_ENOTOOL, "cannot find the directory of fatbuild_runtime.h (tried %s; set FATBUILD_INCLUDE)",
		                 t->include);
	const char *nj = o->ninja ? o->ninja : cfg->ninja;
	if (!nj || !nj[0])
		nj = "ninja";
	if (which(cfg->path, nj, t->ninja) != 0)
		return fb_seterr(err, FB_ENOTOOL,
		            "ninja not found ('%s'): install it (apt-get install ninja-build, pip install ninja) or set "
		            "FATBUILD_NINJA",
		            nj);
	const char *cc = cfg->cc, *cxx = cfg->cxx;
	bfmt(t->cc, sizeof(t->cc), "%s", cc && cc[0] ? cc : "cc");
	t->cc_set = cc && cc[0];
	bfmt(t->cxx, sizeof(t->cxx), "%s", cxx && cxx[0] ? cxx : "c++");
	t->cuda_home[0] = 0;
	if (need_nvcc) {
		struct ap_error ae = {0};
		if (ap_cuda_home(t->cuda_home, sizeof(t->cuda_home), &ae) != 0)
			return fb_seterr(err, FB_ENOTOOL, "--backend nvcc: %s", ae.msg);
		char nv[PATHMAX + 16];
		bfmt(nv, sizeof(nv), "%s/bin/nvcc", t->cuda_home);
		if (access(nv, X_OK) != 0)
			return fb_seterr(err, FB_ENOTOOL, "--backend nvcc: %s not found (set CUDA_HOME)", nv);
	}
	return 0;
}

/* $CC / $CXX may be a command with words ("ccache gcc", "gcc -m64"): its first word must be a
 * program on path (PATH's value; or a path), else the build would stop at the first host edge
 * with a shell's "not found". */
int
fb_build_check_compiler(const char *path, const char *var, const char *value, struct fb_error *err)
{
	char **w = NULL, found[PATHMAX];
	size_t n = 0;
	int rc = fb_words_split(value, &w, &n, err);
	if (rc)
		return rc;
	if (n == 0)
		rc = fb_seterr(err, FB_ENOTOOL, "%s is blank: set it to a compiler command, e.g. %s=%s", var, var,
		          strcmp(var, "CC") == 0 ? "cc" : "c++");
	else if (which(path, w[0], found) != 0)
		rc = fb_seterr(err, FB_ENOTOOL, "%s='%.300s': '%.300s' %s", var, value, w[0],
		          strchr(w[0], '/') ? "is not an executable file" : "is not on PATH");
	fb_words_free(w);
	return rc;
}
