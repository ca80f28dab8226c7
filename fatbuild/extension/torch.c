/* torch.c: build --torch. One short `python -c` asks torch what torch.utils.cpp_extension
 * would use (include dirs, lib dir, torch.version.cuda, the C++ ABI flag and standard) and
 * Python for Python.h's dir and the extension suffix; the answer is cached in the build dir.
 * The words added to compile and link commands are the ones cpp_extension adds for a CUDA
 * extension on Linux. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "torch.h"
#include "base/words.h"

extern char **environ;

#define CACHE_MAGIC "fatbuild torch query 1"

/* Every line of ours starts with "fbtq "; anything else is Python's own output (warnings). */

/* The interpreter's absolute path (a name searched on path, PATH's value), symbolic links kept:
 * a venv's bin/python links to the base interpreter, and resolving it would lose the venv (its
 * site-packages, its torch). */
static int
find_python(const char *path, const char *python, char *out, size_t size)
{
	const char *cands[2] = {python, NULL};
	if (!python || !python[0]) {
		cands[0] = "python3";
		cands[1] = "python";
	}
	for (int i = 0; i < 2 && cands[i]; i++) {
		const char *p = cands[i];
		if (strchr(p, '/')) {
			if (access(p, X_OK) != 0)
				continue;
			if (p[0] == '/') {
				snprintf(out, size, "%s", p);
			} else {
				char cwd[FB_TORCH_PATH];
				if (!getcwd(cwd, sizeof(cwd)))
					continue;
				while (p[0] == '.' && p[1] == '/')
					p += 2;
				int w = snprintf(out, size, "%s/%s", cwd, p);
				if (w < 0 || (size_t)w >= size)
					continue;
			}
			return 0;
		}
		char cand[FB_TORCH_PATH];
		for (const char *pos = path; fb_path_next(&pos, p, cand, sizeof(cand));) {
			if (cand[0] == '/') {
				snprintf(out, size, "%s", cand);
				return 0;
			}
		}
	}
	return -1;
}

/* The cache key: what decides which torch `python` imports, short of running it. */
static void
make_key(const struct fb_config *cfg, const char *python, char *key, size_t size)
{
	const char *pp = cfg->pythonpath, *ph = cfg->pythonhome, *pu = cfg->pythonuserbase;
	snprintf(key, size, "key %s|%s|%s|%s", python, pp ? pp : "", ph ? ph : "", pu ? pu : "");
}

/* Takes one "fbtq k=v" line into t. Returns 1 for the error line (v in err), 0 otherwise. */
static int
take(struct fb_torch *t, char *line, bool *stamps_ok, char *errline, size_t errsize)
{
	line[strcspn(line, "\n")] = 0;
	if (strncmp(line, "fbtq ", 5) != 0)
		return 0;
	char *k = line + 5, *v = strchr(k, '=');
	if (!v)
		return 0;
	*v++ = 0;
	if (strcmp(k, "error") == 0) {
		snprintf(errline, errsize, "%s", v);
		return 1;
	}
	if (strcmp(k, "version") == 0)
		snprintf(t->version, sizeof(t->version), "%s", v);
	else if (strcmp(k, "cuda") == 0)
		snprintf(t->cuda, sizeof(t->cuda), "%s", v);
	else if (strcmp(k, "abi") == 0)
		t->cxx11_abi = atoi(v);
	else if (strcmp(k, "include") == 0 && t->ninclude < FB_TORCH_MAXINC)
		snprintf(t->include[t->ninclude++], FB_TORCH_PATH, "%s", v);
	else if (strcmp(k, "libdir") == 0)
		snprintf(t->lib_dir, sizeof(t->lib_dir), "%s", v);
	else if (strcmp(k, "pyinclude") == 0)
		snprintf(t->py_include, sizeof(t->py_include), "%s", v);
	else if (strcmp(k, "extsuffix") == 0)
		snprintf(t->ext_suffix, sizeof(t->ext_suffix), "%s", v);
	else if (strcmp(k, "std") == 0)
		snprintf(t->std, sizeof(t->std), "%s", v);
	else if (strcmp(k, "stamp") == 0) {
		/* "MTIME_NS SIZE PATH": from the cache, still the same file? */
		long long mt = 0, sz = 0;
		int off = 0;
		struct stat st;
		if (sscanf(v, "%lld %lld %n", &mt, &sz, &off) < 2 || off <= 0)
			return 0;
		if (t->nstamp < 2)
			snprintf(t->stamp[t->nstamp++], FB_TORCH_PATH, "%s", v + off);
		if (stamps_ok && (stat(v + off, &st) != 0 || (long long)st.st_size != sz ||
		                  (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec != mt))
			*stamps_ok = false;
	}
	return 0;
}

static bool
complete(const struct fb_torch *t)
{
	return t->version[0] && t->lib_dir[0] && t->ninclude && t->py_include[0] && t->ext_suffix[0] && t->std[0];
}

static bool
read_cache(const char *path, const char *key, struct fb_torch *t)
{
	int fd;
	if (fb_open_regular(path, 0, &fd, NULL, NULL) != 0)
		return false;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return false;
	}
	char line[FB_TORCH_PATH + 64], errline[8];
	bool ok = fgets(line, sizeof(line), f) && strncmp(line, CACHE_MAGIC "\n", sizeof(CACHE_MAGIC)) == 0 &&
	          fgets(line, sizeof(line), f) && (line[strcspn(line, "\n")] = 0, strcmp(line, key) == 0);
	bool stamps_ok = true;
	while (ok && fgets(line, sizeof(line), f))
		if (take(t, line, &stamps_ok, errline, sizeof(errline)))
			ok = false;
	fclose(f);
	return ok && stamps_ok && complete(t);
}

/* python -c QUERY, stdout and stderr into one pipe (*fd, its reading end); no current directory
 * on sys.path (a ./torch source tree would shadow the installed one). */
static int
spawn_query(const char *python, pid_t *pid, int *fd, struct fb_error *err)
{
	size_t nenv = 0;
	while (environ[nenv])
		nenv++;
	char **envp = calloc(nenv + 2, sizeof(*envp));
	if (!envp)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	size_t e = 0;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], "PYTHONSAFEPATH=", 15) != 0)
			envp[e++] = environ[i];
	envp[e++] = "PYTHONSAFEPATH=1";
	envp[e] = NULL;
	int fds[2];
	if (pipe(fds) != 0) {
		free(envp);
		return fb_seterr(err, FB_EIO, "--torch: pipe: %s", strerror(errno));
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	char *argv[] = {(char *)python, "-c", (char *)fb_torch_query_py, NULL};
	int src = posix_spawn(pid, python, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	close(fds[1]);
	if (src != 0) {
		close(fds[0]);
		return fb_seterr(err, FB_ENOTOOL, "--torch: cannot run %s: %s", python, strerror(src));
	}
	*fd = fds[0];
	return 0;
}

/* Reads the answer lines from fd (closed) into t and ans (for the cache); errline gets the error
 * line, last the last line of Python's own. */
static void
read_answers(int fd, struct fb_torch *t, struct fb_buf *ans, char *errline, size_t errsize, char *last,
             size_t lastsize)
{
	FILE *f = fdopen(fd, "r");
	char line[FB_TORCH_PATH + 64];
	while (f && fgets(line, sizeof(line), f) && !ans->oom) {
		if (strncmp(line, "fbtq ", 5) != 0) {
			if (line[0] && line[0] != '\n')
				snprintf(last, lastsize, "%.*s", (int)strcspn(line, "\n"), line);
			continue;
		}
		fb_buf_puts(ans, line);
		take(t, line, NULL, errline, errsize);
	}
	if (f)
		fclose(f);
	else
		close(fd);
}

/* Best effort: a build dir we cannot write to only means asking again next time. */
static void
write_cache(const char *cache, const char *key, const struct fb_buf *ans)
{
	size_t clen = strlen(CACHE_MAGIC) + strlen(key) + ans->len + 3;
	char *text = malloc(clen);
	if (text) {
		int n = snprintf(text, clen, "%s\n%s\n%s", CACHE_MAGIC, key, ans->s ? ans->s : "");
		if (n > 0)
			fb_write_file_atomic(cache, text, (size_t)n, 0644, NULL);
		free(text);
	}
}

int
fb_torch_query(const struct fb_config *config, const char *python, const char *cache_dir, struct fb_torch *t,
               struct fb_error *err)
{
	struct fb_config local;
	const struct fb_config *cfg = fb_config_or_read(config, &local);
	memset(t, 0, sizeof(*t));
	if (find_python(cfg->path, python, t->python, sizeof(t->python)) != 0)
		return fb_seterr(err, FB_ENOTOOL, "--torch: %s not found%s", python && python[0] ? python : "python3",
		            python && python[0] ? "" : " on PATH (choose the interpreter with --python PY)");
	char key[3 * FB_TORCH_PATH], cache[FB_TORCH_PATH + 32];
	make_key(cfg, t->python, key, sizeof(key));
	snprintf(cache, sizeof(cache), "%s/torch.query", cache_dir);
	char python_path[FB_TORCH_PATH];
	snprintf(python_path, sizeof(python_path), "%s", t->python);
	if (read_cache(cache, key, t)) {
		t->cached = true;
		return 0;
	}
	memset(t, 0, sizeof(*t));
	snprintf(t->python, sizeof(t->python), "%s", python_path);
	pid_t pid = -1;
	int fd = -1;
	int rc = spawn_query(t->python, &pid, &fd, err);
	if (rc)
		return rc;
	char errline[512] = "", last[512] = "";
	struct fb_buf ans = {0};
	read_answers(fd, t, &ans, errline, sizeof(errline), last, sizeof(last));
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ans.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	else if (errline[0])
		rc = fb_seterr(err, FB_ENOTOOL,
		               "--torch: %s cannot import torch (%s); install it (%s -m pip install torch) or choose "
		               "the interpreter with --python PY",
		               t->python, errline, t->python);
	else if (!complete(t))
		rc = fb_seterr(err, FB_ENOTOOL, "--torch: asking %s for torch's paths failed (%s%s)", t->python,
		               WIFSIGNALED(status) ? "killed by a signal" : "exit status ",
		               WIFSIGNALED(status) ? "" : last[0] ? last : "no answer");
	else
		write_cache(cache, key, &ans);
	free(ans.s);
	return rc;
}

/* ---- the words ---- */

static void
add(struct fb_strlist *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add(struct fb_strlist *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = n < 0 ? NULL : malloc((size_t)n + 1);
	if (!s) {
		v->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	fb_strlist_add(v, s);
	free(s);
}

/* The NULL-terminated vector, or NULL (and nothing kept) when an add failed or none was made. */
static char **
done(struct fb_strlist *v)
{
	if (v->oom || !v->v) {
		fb_strlist_free(v);
		return NULL;
	}
	return v->v;
}

void
fb_torch_words_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Whether the blank-separated words of s hold a -std= (a user's choice wins, and nvcc refuses
 * two). */
static bool
has_std(const char *s)
{
	for (const char *p = s ? strstr(s, "-std=") : NULL; p; p = strstr(p + 1, "-std="))
		if (p == s || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '-')
			return true;
	return false;
}

/* The words torch's load() puts first for C++ and nvcc alike (torch.utils.cpp_extension,
 * _write_ninja_file_to_build_library): the extension's defines (none for a program), the C++
 * ABI macro only for a torch built with the old ABI (the compiler's default is the new one, and
 * torch 2.15 adds none), then -isystem torch's include dirs, CUDA's (with_cuda: cuda_home set)
 * and Python's, in that order. */
static void
common(struct fb_strlist *v, const struct fb_torch *t, const char *name, const char *cuda_home)
{
	if (name) {
		add(v, "-DTORCH_EXTENSION_NAME=%s", name);
		add(v, "-DTORCH_API_INCLUDE_EXTENSION_H");
	}
	if (!t->cxx11_abi)
		add(v, "-D_GLIBCXX_USE_CXX11_ABI=0");
	for (size_t i = 0; i < t->ninclude; i++) {
		add(v, "-isystem");
		add(v, "%s", t->include[i]);
	}
	if (cuda_home && cuda_home[0] && strcmp(cuda_home, "/usr") != 0) {
		add(v, "-isystem");
		add(v, "%s/include", cuda_home);
	}
	add(v, "-isystem");
	add(v, "%s", t->py_include);
}

char **
fb_torch_cxx_words(const struct fb_torch *t, const char *name, const char *cuda_home)
{
	struct fb_strlist v = {0};
	common(&v, t, name, cuda_home);
	add(&v, "-std=%s", t->std); /* always: a later -std= of the user's wins, as with torch */
	return done(&v);
}

char **
fb_torch_nvcc_words(const struct fb_torch *t, const char *name, const char *cuda_home, const char *user_flags)
{
	struct fb_strlist v = {0};
	common(&v, t, name, cuda_home);
	static const char *const nvcc[] = {"-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
	                                   "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
	                                   "--expt-relaxed-constexpr"};
	for (size_t i = 0; i < sizeof(nvcc) / sizeof(nvcc[0]); i++)
		add(&v, "%s", nvcc[i]);
	if (!has_std(user_flags))
		add(&v, "-std=%s", t->std); /* nvcc refuses a second -std */
	return done(&v);
}

char **
fb_torch_link_words(const struct fb_torch *t, const char *cuda_home, bool with_cuda, bool program)
{
	struct fb_strlist v = {0};
	add(&v, "-L%s", t->lib_dir);
	add(&v, "-lc10");
	if (with_cuda)
		add(&v, "-lc10_cuda");
	add(&v, "-ltorch_cpu");
	if (with_cuda)
		add(&v, "-ltorch_cuda");
	add(&v, "-ltorch");
	/* A module finds torch's libraries in the process that imported torch, as torch's own
	 * builds do: no RUNPATH naming this machine's torch. A program has no torch loaded first. */
	if (program)
		add(&v, "-Wl,-rpath,%s", t->lib_dir);
	else
		add(&v, "-ltorch_python");
	if (with_cuda && cuda_home && cuda_home[0]) {
		char lib[FB_TORCH_PATH + 16];
		struct stat st;
		snprintf(lib, sizeof(lib), "%s/lib64", cuda_home);
		if (stat(lib, &st) != 0)
			snprintf(lib, sizeof(lib), "%s/lib", cuda_home);
		add(&v, "-L%s", lib);
		add(&v, "-lcudart");
	}
	return done(&v);
}

void
fb_torch_cuda_check(const struct fb_torch *t, int toolkit_version, const char *cuda_home, char *buf, size_t size)
{
	if (size)
		buf[0] = 0;
	int major = t->cuda[0] ? atoi(t->cuda) : 0;
	if (!major || toolkit_version <= 0 || toolkit_version / 1000 == major)
		return;
	snprintf(buf, size,
	         "--torch: the CUDA toolkit in use (%d.%d, %s) differs in major version from the one torch %s was built "
	         "with (%s): the extension may not load or run; use a CUDA %d toolkit (CUDA_HOME) or a torch built for "
	         "CUDA %d",
	         toolkit_version / 1000, toolkit_version % 1000 / 10, cuda_home && cuda_home[0] ? cuda_home : "?",
	         t->version, t->cuda, major, toolkit_version / 1000);
}
