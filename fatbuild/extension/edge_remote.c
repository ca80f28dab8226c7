/* edge_remote.c: a host or nvcc compile edge both caches missed, run at a REAPI executor
 * (docs/remote-cache.md §9 "Host and nvcc edges"): the header list (the edge cache's manifest or
 * the last depfile, else the compiler's -M run here), the Action (rexec/edge_action.c), the run
 * through rexec/exec.c, and what decides between the compile's own answer and a fallback. Any
 * failure of the executor leaves the edge to the local compile, said once per build through the
 * state file the compile jobs use (fb_exec_state_claim). */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "edge_remote.h"
#include "edgecache.h"
#include "fatbin/elfid.h"
#include "rexec/rexec.h"

extern char **environ;

/* The words of the -M run: the compile's without its outputs (-c, -o, -MD, -MF, nvcc's keep
 * dir and --threads), then -M -MF dep. */
static int
scan_words(const char *const *w, const char *dep, struct fb_strlist *v)
{
	static const char *const drop1[] = {"-c", "-MD", "-MMD", "-keep", "--keep"};
	static const char *const drop2[] = {"-o", "-MF", "-MT", "-MQ", "-keep-dir", "--keep-dir", "--threads", "-t"};
	for (size_t i = 0; w[i]; i++) {
		bool skip = false;
		for (size_t k = 0; k < sizeof(drop1) / sizeof(drop1[0]); k++)
			skip |= strcmp(w[i], drop1[k]) == 0;
		for (size_t k = 0; !skip && k < sizeof(drop2) / sizeof(drop2[0]); k++)
			if (strcmp(w[i], drop2[k]) == 0) {
				skip = true;
				i += w[i + 1] != NULL;
			}
		if (!skip)
			fb_strlist_add(v, w[i]);
	}
	fb_strlist_add(v, "-M");
	fb_strlist_add(v, "-MF");
	fb_strlist_add(v, dep);
	return v->oom ? -1 : 0;
}

/* Runs v with its output to /dev/null; its exit status, or -1 when it could not start. */
static int
run_quiet(char *const *v)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int st = 0, rc = posix_spawnp(&pid, v[0], &fa, NULL, v, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Each file a depfile's text names into files, absolute. */
static void
depfile_files(const char *text, struct fb_strlist *files)
{
	char path[PATH_MAX], abs[PATH_MAX];
	for (const char *pos = fb_depfile_deps(text); fb_depfile_next(&pos, path, sizeof(path));)
		fb_strlist_add(files, path[0] != '/' && realpath(path, abs) ? abs : path);
}

/* The depfile text of a remote compile with FB_EDGE_ROOT/ spelled / again: the files it names,
 * absolute, into deps. */
static int
depfile_back(const char *text, struct fb_strlist *deps)
{
	char path[PATH_MAX];
	size_t n = strlen(FB_EDGE_ROOT);
	for (const char *pos = fb_depfile_deps(text); fb_depfile_next(&pos, path, sizeof(path));)
		fb_strlist_add(deps, strncmp(path, FB_EDGE_ROOT "/", n + 1) == 0 ? path + n : path);
	return deps->oom ? -1 : 0;
}

/* The files the compile reads, learnt here with the compiler's -M (a preprocessing pass: the
 * cost of a cold edge with no manifest). 0, or 1 with why. */
static int
learn_files(const char *const *words, const char *tmpdir, struct fb_strlist *files, char *why, size_t wsize)
{
	char dep[PATH_MAX];
	snprintf(dep, sizeof(dep), "%s/fbedge-deps.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkstemp(dep);
	if (fd < 0) {
		snprintf(why, wsize, "cannot make a temporary file in %.200s: %s", tmpdir ? tmpdir : "/tmp", strerror(errno));
		return 1;
	}
	close(fd);
	struct fb_strlist v = {0};
	char *text = NULL;
	size_t n = 0;
	int st = scan_words(words, dep, &v) == 0 ? run_quiet(v.v) : -1;
	int rc = st == 0 && fb_read_file(dep, &text, &n, NULL) == 0 ? 0 : 1;
	if (rc)
		snprintf(why, wsize, "the compiler's -M run (its header list) failed");
	else
		depfile_files(text, files);
	unlink(dep);
	free(text);
	fb_strlist_free(&v);
	return rc;
}

/* The edge's compile alone: --remote-cmd's words, else the command itself when it is no shell
 * line. 0, or 1 with why. */
static int
compile_words(const struct fb_edge_opts *o, struct fb_strlist *w, char *why, size_t wsize, struct fb_error *err)
{
	if (o->remote_cmd) {
		int rc = fb_edge_unquote(o->remote_cmd, w, err);
		if (rc == 1)
			snprintf(why, wsize, "--remote-cmd is not one compile's words");
		return rc;
	}
	const char *base = strrchr(o->argv[0], '/') ? strrchr(o->argv[0], '/') + 1 : o->argv[0];
	if (strcmp(base, "sh") == 0 || strcmp(base, "bash") == 0 || strcmp(base, "dash") == 0) {
		snprintf(why, wsize, "a shell line (give the compile with --remote-cmd)");
		return 1;
	}
	for (size_t i = 0; o->argv[i]; i++)
		fb_strlist_add(w, o->argv[i]);
	return w->oom ? fb_seterr(err, FB_ENOMEM, "out of memory") : 0;
}

/* The variables that move include paths or nvcc's flags: their paths would not be rewritten. */
static const char *
moving_env(const struct fb_config *cfg)
{
	return cfg->cpath ? "CPATH" : cfg->c_include_path ? "C_INCLUDE_PATH" : cfg->cplus_include_path ? "CPLUS_INCLUDE_PATH"
	       : cfg->gcc_exec_prefix ? "GCC_EXEC_PREFIX" : cfg->compiler_path ? "COMPILER_PATH"
	       : cfg->nvcc_prepend_flags ? "NVCC_PREPEND_FLAGS" : cfg->nvcc_append_flags ? "NVCC_APPEND_FLAGS" : NULL;
}

/* The toolchain directories besides /usr's: each --tool's CUDA home (.../bin/nvcc), the
 * configured one and /usr/local/cuda, by their spelling and real paths. */
static void
toolchain_dirs(const struct fb_edge_opts *o, const struct fb_config *cfg, struct fb_strlist *d)
{
	char buf[PATH_MAX], real[PATH_MAX];
	for (size_t i = 0; i < o->ntools; i++) {
		size_t n = strlen(o->tools[i]);
		if (n > 9 && strcmp(o->tools[i] + n - 9, "/bin/nvcc") == 0) {
			snprintf(buf, sizeof(buf), "%.*s", (int)(n - 9), o->tools[i]);
			fb_strlist_add(d, buf);
		}
	}
	if (cfg->cuda_home && cfg->cuda_home[0] == '/')
		fb_strlist_add(d, cfg->cuda_home);
	fb_strlist_add(d, "/usr/local/cuda");
	for (size_t i = 0, n = d->n; i < n; i++)
		if (realpath(d->v[i], real) && strcmp(real, d->v[i]) != 0)
			fb_strlist_add(d, real);
}

/* The state of a worker that lacks the compile's toolchain: STATE-tools (and so, as the
 * executor's, STATE-tools-exec), besides the executor's own, so that the build's other host
 * and nvcc edges stay here without asking while its NVRTC jobs, which bring their compiler,
 * still go (docs/remote-cache.md §9 "Host and nvcc edges"). */
static const char *
tools_state(const struct fb_edge_opts *o, char *buf, size_t size)
{
	return o->remote.state && *o->remote.state && snprintf(buf, size, "%s-tools", o->remote.state) < (int)size ? buf
	                                                                                                           : NULL;
}

/* The executor's failure (tools: the worker cannot run the compiler), said once per build in
 * its state file (the executor's, or tools_state), the edge compiled here. */
static void
farm_failed(const struct fb_edge_opts *o, bool tools, struct fb_edge_result *r, const char *msg)
{
	char why[512], st[4200];
	snprintf(why, sizeof(why), "%.500s", msg && *msg ? msg : "failed");
	fb_text_oneline(why);
	if (fb_exec_state_claim(tools ? tools_state(o, st, sizeof(st)) : o->remote.state, why))
		snprintf(r->exec_note, sizeof(r->exec_note), "%s", why);
	snprintf(r->where, sizeof(r->where), "local: %s",
	         tools ? "the worker cannot run the compiler" : "the executor failed");
}

/* Runs x at the executor: 0 with out filled (the compile's answer), FB_EIO (the farm's failure,
 * err says it), another code of ours. */
static int
exec_once(const struct fb_edge_opts *o, struct fb_edge_action *x, struct fb_exec_out *out, struct fb_error *err)
{
	struct fb_exec_opts xo = {o->remote.exec, o->remote.header, o->remote.exec_timeout_ms, o->remote.exec_props,
	                          o->remote.nexec_props, NULL, 0};
	struct fb_exec *e = NULL;
	struct fb_exec_cmd c = {(const char *const *)x->argv, (int)x->argc, x->env,    x->nenv, x->outputs,
	                        x->noutputs,                   x->in,         (int)x->nin};
	int rc = fb_exec_open(&xo, &e, err);
	if (!rc)
		rc = fb_exec_run(e, &c, out, err);
	fb_exec_close(e);
	return rc;
}

/* What a successful run gave: an object of this machine and a depfile; else the farm failed. */
static int
take_result(struct fb_exec_out *out, struct fb_edge_remote *res, struct fb_error *err)
{
	if (!out->data[0] || !out->data[1])
		return fb_seterr(err, FB_EIO, "the worker's compile exited 0 without its %s",
		                 out->data[0] ? "depfile" : "object");
	struct fb_error e = {0};
	if (fb_elf_host_object(out->data[0], out->size[0], &e) != 0)
		return fb_seterr(err, FB_EIO, "the worker's object: %.300s", e.msg);
	char *text = strndup((const char *)out->data[1], out->size[1]);
	if (!text || depfile_back(text, &res->deps) != 0) {
		free(text);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	free(text);
	res->obj = out->data[0];
	res->obj_size = out->size[0];
	out->data[0] = NULL;
	return 0;
}

/* The files the compile reads: known (the manifest's), else the last depfile's, else -M's;
 * *fresh: learnt now. 0, or 1 with why. */
static int
input_files(const struct fb_edge_opts *o, const struct fb_config *cfg, const struct fb_strlist *known,
            const char *const *words, struct fb_strlist *files, bool *fresh, char *why, size_t wsize)
{
	char *text = NULL;
	size_t n = 0;
	*fresh = false;
	if (known && known->n) {
		for (size_t i = 0; i < known->n; i++)
			fb_strlist_add(files, known->v[i]);
		return 0;
	}
	if (fb_read_file(o->depfile, &text, &n, NULL) == 0) {
		depfile_files(text, files);
		free(text);
		if (files->n)
			return 0;
	}
	*fresh = true;
	return learn_files(words, cfg->tmpdir, files, why, wsize);
}

/* Whether every file of a is in b. */
static bool
subset(const struct fb_strlist *a, const struct fb_strlist *b)
{
	for (size_t i = 0; i < a->n; i++) {
		size_t k = 0;
		while (k < b->n && strcmp(a->v[i], b->v[k]) != 0)
			k++;
		if (k == b->n)
			return false;
	}
	return true;
}

/* The variables the worker's compile gets as here, "NAME=VALUE" into buf (5 rows): n. */
static size_t
pass_env(const struct fb_config *cfg, char buf[5][4200], const char *v[5])
{
	const struct {
		const char *name, *value;
	} e[] = {{"SOURCE_DATE_EPOCH", cfg->source_date_epoch}, {"LANG", cfg->lang}, {"LC_ALL", cfg->lc_all},
	         {"LC_CTYPE", cfg->lc_ctype}, {"LC_MESSAGES", cfg->lc_messages}};
	size_t n = 0;
	for (size_t i = 0; i < 5; i++)
		if (e[i].value) {
			snprintf(buf[n], 4200, "%s=%.4000s", e[i].name, e[i].value);
			v[n] = buf[n];
			n++;
		}
	return n;
}

/* One try: the Action of words with files, run. 1 when it ran there (res
 * filled), 0 when the edge is compiled here (r->where says why), < 0: an error of ours. */
static int
try_remote(const struct fb_edge_opts *o, const struct fb_config *cfg, const struct fb_strlist *files,
           const struct fb_strlist *words, const struct fb_strlist *tc, struct fb_edge_result *r,
           struct fb_edge_remote *res, struct fb_error *err)
{
	char why[400] = "";
	int rc = 0;
	struct fb_edge_action *x = NULL;
	char ebuf[5][4200];
	const char *env[5];
	size_t nenv = pass_env(cfg, ebuf, env);
	struct fb_edge_action_in ai = {(const char *const *)words->v, o->output, o->depfile,
	                               (const char *const *)files->v, files->n, (const char *const *)tc->v, tc->n,
	                               env, nenv};
	if (!rc)
		rc = fb_edge_action_new(&ai, &x, why, sizeof(why), err);
	if (rc == 1)
		snprintf(r->where, sizeof(r->where), "local: %.240s", why);
	if (rc)
		return rc == 1 ? 0 : -rc;
	struct fb_exec_out out = {0};
	struct fb_error e = {0};
	rc = exec_once(o, x, &out, &e);
	fb_edge_action_free(x);
	bool tools = !rc && (out.exit_code == 126 || out.exit_code == 127);
	if (tools)
		rc = fb_seterr(&e, FB_EIO, "the worker cannot run %.200s (exit %d: %s; give a property that selects "
		               "workers with your toolchain, --remote-exec-property)", words->v[0], out.exit_code,
		               out.exit_code == 127 ? "not on its PATH" : "not executable");
	if (!rc && out.exit_code == 0)
		rc = take_result(&out, res, &e);
	if (!rc) {
		res->status = out.exit_code;
		res->cached = out.cached;
		res->log = out.err;
		out.err = NULL;
		if (res->log)
			fb_edge_log_back(res->log);
	}
	fb_exec_out_clear(&out);
	if (rc == FB_EIO)
		farm_failed(o, tools, r, e.msg);
	else if (rc == FB_EINVAL) /* the Action's own checks (rexec.h): a path REAPI cannot carry */
		snprintf(r->where, sizeof(r->where), "local: %.240s", e.msg);
	else if (rc)
		return -fb_seterr(err, rc, "%s", e.msg);
	return rc ? 0 : 1;
}

/* The run at the executor, res filled as try_remote does. */
static int
remote_run(const struct fb_edge_opts *o, const struct fb_config *cfg, const struct fb_strlist *known,
           struct fb_edge_result *r, struct fb_edge_remote *res, struct fb_error *err)
{
	char why[400] = "";
	const char *env = moving_env(cfg);
	if (fb_exec_state_seen(o->remote.state, why, sizeof(why))) {
		snprintf(r->where, sizeof(r->where), "local: the executor failed (earlier in this build)");
		return 0;
	}
	char st[4200];
	if (fb_exec_state_seen(tools_state(o, st, sizeof(st)), why, sizeof(why))) {
		snprintf(r->where, sizeof(r->where), "local: the worker cannot run the compiler (earlier in this build)");
		return 0;
	}
	if (env) {
		snprintf(r->where, sizeof(r->where), "local: %s is set (its paths are not moved)", env);
		return 0;
	}
	struct fb_strlist words = {0}, tc = {0};
	int rc = compile_words(o, &words, why, sizeof(why), err);
	if (rc == 1)
		snprintf(r->where, sizeof(r->where), "local: %.240s", why);
	if (rc) {
		fb_strlist_free(&words);
		return rc == 1 ? 0 : -rc;
	}
	toolchain_dirs(o, cfg, &tc);
	struct fb_strlist files = {0}, now = {0};
	bool fresh = false;
	rc = input_files(o, cfg, known, (const char *const *)words.v, &files, &fresh, why, sizeof(why));
	if (rc == 1)
		snprintf(r->where, sizeof(r->where), "local: %.240s", why);
	rc = rc ? 0 : try_remote(o, cfg, &files, &words, &tc, r, res, err);
	/* An error with an old header list may be an #include added since, missing there: again
	 * with the list -M gives now, unless that names nothing more. */
	if (rc == 1 && res->status != 0 && !fresh &&
	    learn_files((const char *const *)words.v, cfg->tmpdir, &now, why, sizeof(why)) == 0 && !subset(&now, &files)) {
		fb_edge_remote_clear(res);
		rc = try_remote(o, cfg, &now, &words, &tc, r, res, err);
	}
	fb_strlist_free(&files);
	fb_strlist_free(&now);
	if (rc == 1)
		snprintf(r->where, sizeof(r->where), res->cached ? "remote (the executor's cache)" : "remote");
	fb_strlist_free(&words);
	fb_strlist_free(&tc);
	return rc;
}

int
fb_edge_remote_run(const struct fb_edge_opts *o, const struct fb_config *cfg, const struct fb_strlist *known,
                   struct fb_edge_result *r, struct fb_error *err)
{
	struct fb_edge_remote res = {0};
	int ran = remote_run(o, cfg, known, r, &res, err);
	if (ran == 1) {
		r->status = res.status;
		r->log = res.log;
		res.log = NULL;
		r->hit = res.cached ? FB_EDGE_EXEC_CACHED : FB_EDGE_EXEC;
	}
	int rc = ran == 1 && res.status == 0 ? fb_write_file_atomic(o->output, res.obj, res.obj_size, 0644, err) : 0;
	if (!rc && ran == 1 && res.status == 0)
		rc = fb_edge_write_depfile(o, res.deps.v, res.deps.n, err);
	fb_edge_remote_clear(&res);
	return rc ? -rc : ran;
}

void
fb_edge_remote_clear(struct fb_edge_remote *res)
{
	free(res->obj);
	free(res->log);
	fb_strlist_free(&res->deps);
	memset(res, 0, sizeof(*res));
}
