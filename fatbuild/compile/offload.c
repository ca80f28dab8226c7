/* offload.c: the NVRTC jobs the caches missed, run at a remote executor (docs/remote-cache.md §9
 * "Remote NVRTC jobs"). Each job is one Action whose input root (rexec/jobroot.c lays it out)
 * holds everything it needs, so any Linux x86-64 worker runs it without a CUDA install: the
 * worker program (nvrtc_worker.c), the NVRTC this run loaded and its builtins library, and the
 * source and headers at their paths mapped below _fb/. The worker gets the job's options with
 * every -I mapped the same way and the source's own name, so NVRTC finds the same headers in the
 * same order and names the source as a local compile does; its log is mapped back. The headers
 * are those the scan of #include lines found (depfile.c, the toolkit's included), at every path
 * NVRTC opens them by, and every file a __has_include probe finds, so that a probe answers as it
 * does here. A header that chooses an include by macro (thrust's
 * #include __THRUST_DEVICE_SYSTEM_TAG_HEADER) cannot be followed: when it is the toolkit's, the
 * job gets the toolkit's include/ tree whole; when it is the client's, the job stays here. A job
 * whose compile at the executor cannot open a header the scan missed is compiled here. The
 * shared files go to the executor's CAS once, before the jobs, through the handle that keeps
 * gRPC up for the round; each unit of the round runs on a thread of this process (schedule.c
 * starts it here), never in a forked child, so no gRPC state crosses a fork
 * (docs/remote-cache.md §9); each job has a channel of its own and answers through a pipe as a
 * local worker does (child.c), or with FB_RESULT_FARM when the executor failed it: that job,
 * and every one not yet sent, is compiled here, and the run says so once. What is the round's
 * (its threads, its jobs, their answers) stays here; the root's layout, the shared files' reads
 * and the build's upload lock are remote execution's (rexec/rexec.h). */
#define _GNU_SOURCE /* pipe2 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "depfile.h"
#include "run.h"
#include "base/safefs.h"
#include "fatbin/elfid.h"

#define WORKER FB_JOBROOT_WORKER
#define TOOLKIT FB_JOBROOT_TOOLKIT

int
fb_job_check(const struct run *r, const struct job *j, const struct fb_cache_entry *e, struct fb_error *err)
{
	const struct ap_target *tg = r->o->targets;
	if (j->lto ? !e->cubin_size : (j->sass != NONE && !e->cubin_size) || (j->ptx != NONE && !e->ptx_size))
		return FB_ENOIMAGE;
	if (j->lto)
		return fb_image_check(FB_KIND_LTO, &tg[j->sass != NONE ? j->sass : j->ptx], e->cubin, e->cubin_size, err);
	int rc = j->sass != NONE ? fb_image_check(FB_KIND_ELF, &tg[j->sass], e->cubin, e->cubin_size, err) : 0;
	if (!rc && j->ptx != NONE)
		rc = fb_image_check(FB_KIND_PTX, &tg[j->ptx], e->ptx, e->ptx_size, err);
	return rc;
}

/* Whether p is below the toolkit's include/ directory. */
static int
in_toolkit(const struct run *r, const char *p)
{
	size_t n = strlen(r->home);
	return n && strncmp(p, r->home, n) == 0 && strncmp(p + n, "/include/", 9) == 0;
}

/* Whether source s needs the toolkit's include/ tree whole: one of its toolkit headers includes
 * a macro. */
static int
needs_tree(const struct run *r, const struct source *s)
{
	return s->computed[0] && in_toolkit(r, s->computed);
}

/* Whether job j stays here, and why (in j->where): an output that may depend on paths, an option
 * naming one, or a header of the client's that includes a macro (the scan cannot tell what it
 * reads). */
static int
stays_local(const struct run *r, struct job *j)
{
	const struct source *s = &r->src[j->src];
	const char *b = strrchr(s->computed, '/');
	if (s->exact)
		snprintf(j->where, sizeof(j->where), "local: its output may depend on paths (-G, -lineinfo or __FILE__)");
	else if (s->computed[0] && !needs_tree(r, s))
		snprintf(j->where, sizeof(j->where), "local: %.120s has an #include of a macro, which the scan cannot follow",
		         b ? b + 1 : s->computed);
	else {
		for (size_t k = 0; k < r->ncommon; k++)
			if (strncmp(r->common[k], "-I", 2) != 0 && strchr(r->common[k], '/')) {
				snprintf(j->where, sizeof(j->where), "local: an NVRTC option names a path");
				return 1;
			}
		return 0;
	}
	return 1;
}

/* ---- the child: one job at the executor ---- */

struct jobroot {
	struct fb_exec_input *in;
	int nin;
	char **names;               /* the root's paths, owned */
	char **texts;               /* the headers' bytes, owned */
	const char **argv;
	int argc;
	char **mapped;              /* the -I options, mapped */
};

static void
jobroot_free(struct jobroot *jr)
{
	for (int i = 0; i < jr->nin; i++) {
		free(jr->names[i]);
		free(jr->texts[i]);
	}
	for (int i = 0; i < jr->argc; i++)
		free(jr->mapped[i]);
	free(jr->in);
	free(jr->names);
	free(jr->texts);
	free(jr->argv);
	free(jr->mapped);
}

/* One input of the root at the mapped path of p (bytes given, or read from p). */
static int
add_input(const struct run *r, struct jobroot *jr, const char *p, const char *data, size_t size,
          struct fb_error *err)
{
	char path[2 * PATH_MAX + 16];
	if (fb_jobroot_path(r->cwd, p, path, sizeof(path)))
		return fb_seterr(err, FB_EINVAL, "%s: path too long", p);
	for (int i = 0; i < jr->nin; i++)
		if (strcmp(jr->names[i], path) == 0)
			return 0;
	char *text = NULL;
	if (!data) {
		int rc = fb_read_file(p, &text, &size, err);
		if (rc)
			return rc;
		data = text;
	}
	struct fb_exec_input *in = &jr->in[jr->nin];
	if (!(jr->names[jr->nin] = strdup(path))) {
		free(text);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	jr->texts[jr->nin] = text;
	*in = (struct fb_exec_input){jr->names[jr->nin], (const unsigned char *)data, size, 0, ""};
	jr->nin++;
	return 0;
}

/* The input root and argv of job j. */
static int
jobroot_make(const struct run *r, const struct job *j, struct fb_job_opts *jo, struct jobroot *jr,
             struct fb_error *err)
{
	const struct source *s = &r->src[j->src];
	size_t cap = s->deps.n + s->extra.n + 5;
	jr->in = calloc(cap, sizeof(*jr->in));
	jr->names = calloc(cap, sizeof(*jr->names));
	jr->texts = calloc(cap, sizeof(*jr->texts));
	jr->argv = calloc(jo->n + 8, sizeof(*jr->argv));
	jr->mapped = calloc(jo->n + 8, sizeof(*jr->mapped));
	if (!jr->in || !jr->names || !jr->texts || !jr->argv || !jr->mapped)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = add_input(r, jr, ".fatbuild-cwd", "\n", 1, err); /* the working directory exists for "-I../x" */
	if (!rc)
		rc = add_input(r, jr, s->path, s->text, s->size, err);
	int tree = needs_tree(r, s); /* then the toolkit's are there already */
	for (size_t k = 0; !rc && k < s->deps.n; k++)
		if (!tree || !in_toolkit(r, s->deps.v[k]))
			rc = add_input(r, jr, s->deps.v[k], NULL, 0, err);
	for (size_t k = 0; !rc && k < s->extra.n; k++)
		if (!tree || !in_toolkit(r, s->extra.v[k]))
			rc = add_input(r, jr, s->extra.v[k], NULL, 0, err);
	if (rc)
		return rc;
	const char *mode = j->lto ? "ltoir" : j->ptx != NONE && j->sass != NONE ? "ptx+cubin" : j->ptx != NONE ? "ptx" : "cubin";
	const char *head[] = {WORKER, TOOLKIT, jr->names[1], s->path, mode, "out"};
	for (size_t k = 0; k < 6; k++)
		jr->argv[jr->argc++] = head[k];
	for (size_t k = 0; k < jo->n; k++) {
		char path[2 * PATH_MAX + 16];
		if (strncmp(jo->v[k], "-I", 2) != 0) {
			jr->argv[jr->argc++] = jo->v[k];
			continue;
		}
		if (fb_jobroot_path(r->cwd, jo->v[k] + 2, path, sizeof(path)))
			return fb_seterr(err, FB_EINVAL, "%s: path too long", jo->v[k]);
		if (!(jr->mapped[k] = malloc(strlen(path) + 3)))
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		sprintf(jr->mapped[k], "-I%s", path);
		jr->argv[jr->argc++] = jr->mapped[k];
	}
	return 0;
}

/* Whether the header of NVRTC's 'FILE(LINE): catastrophic error: cannot open source file "NAME"'
 * (at miss, in log) is here where a compile here would look: beside FILE, in the source's
 * directory or an -I directory. Then the input root lacked it (the scan missed it); else the
 * source names a header that is nowhere, its own error. */
static int
header_here(const struct run *r, const struct source *s, const char *log, const char *miss)
{
	const char *q = strchr(miss, '"'), *e = q ? strchr(q + 1, '"') : NULL;
	if (!e || e == q + 1 || e - q > PATH_MAX / 2)
		return 0;
	char name[PATH_MAX], including[PATH_MAX], path[PATH_MAX];
	snprintf(name, sizeof(name), "%.*s", (int)(e - q - 1), q + 1);
	const char *bol = miss;
	while (bol > log && bol[-1] != '\n')
		bol--;
	const char *paren = strchr(bol, '(');
	int named = paren && paren < miss && paren - bol < (ptrdiff_t)sizeof(including);
	if (named)
		snprintf(including, sizeof(including), "%.*s", (int)(paren - bol), bol);
	size_t ndirs = 0;
	const char **dirs = fb_deps_dirs(s->dir, r->common, r->ncommon, &ndirs); /* the scan's lookup */
	if (!dirs)
		return 0;
	int found = fb_deps_find(name, named ? including : NULL, dirs, ndirs, path, sizeof(path));
	free(dirs);
	return found;
}

/* The executor's answer as a worker's: rc 0, the nvrtcResult, the log, PTX and cubin; a missing
 * result or an image that fails its check is the executor's failure (why). */
static int
answer_out(const struct run *r, const struct job *j, struct fb_exec_out *x, int fd, char *why, size_t wsize)
{
	enum { RESULT, LOG, PTX, CUBIN };
	char res[32] = "";
	if (x->exit_code != 0) {
		snprintf(why, wsize, "the worker exited with %d: %.300s", x->exit_code, x->err ? x->err : "");
		return 1;
	}
	if (!x->data[RESULT] || !x->data[LOG] || x->size[RESULT] >= sizeof(res)) {
		snprintf(why, wsize, "the worker gave no result");
		return 1;
	}
	memcpy(res, x->data[RESULT], x->size[RESULT]);
	int result = atoi(res);
	char *log = malloc(x->size[LOG] + 1);
	if (!log) {
		snprintf(why, wsize, "out of memory");
		return 1;
	}
	memcpy(log, x->data[LOG], x->size[LOG]);
	log[x->size[LOG]] = 0;
	fb_jobroot_log_unmap(r->cwd, log);
	const char *miss = result != 0 ? strstr(log, "cannot open source file") : NULL;
	if (miss && !needs_tree(r, &r->src[j->src]) && header_here(r, &r->src[j->src], log, miss)) {
		/* a header the scan did not find, which a compile here finds: not the source's fault */
		const char *eol = strchr(miss, '\n');
		snprintf(why, wsize, "the job's input root lacked a header the #include scan missed (%.*s)",
		         (int)(eol ? eol - miss < 300 ? eol - miss : 300 : 300), miss);
		free(log);
		return 1;
	}
	struct fb_cache_entry e = {.ptx = x->data[PTX], .ptx_size = x->size[PTX], .cubin = x->data[CUBIN],
	                           .cubin_size = x->size[CUBIN]};
	struct fb_error ce = {0};
	int bad = result == 0 ? fb_job_check(r, j, &e, &ce) : 0;
	if (bad) {
		snprintf(why, wsize, "its output for %s %.400s", j->arch,
		         bad == FB_ENOIMAGE ? "lacks an image" : ce.msg);
		free(log);
		return 1;
	}
	const char *note = x->cached ? "remote (the executor's cache)" : "remote";
	fb_answer_write(fd, 0, result, 0, log, note, x->data[PTX], x->size[PTX], x->data[CUBIN], x->size[CUBIN]);
	free(log);
	return 0;
}

/* Runs job j at the executor and answers; *why when the executor failed it. */
static void
run_remote(struct run *r, struct job *j, struct fb_job_opts *jo, int fd, char *why, size_t wsize)
{
	static const char *const outputs[] = {"out/result", "out/log", "out/ptx", "out/cubin"};
	static const char *const env[] = {"LC_ALL=C", "LD_LIBRARY_PATH=" TOOLKIT "/lib64"};
	const struct fb_compile_opts *o = r->o;
	struct fb_exec_opts xo = {o->remote.exec, o->remote.header, o->remote.exec_timeout_ms, o->remote.exec_props,
	                          o->remote.nexec_props, &r->stop, 1};
	struct jobroot jr = {0};
	struct fb_exec *x = NULL;
	struct fb_exec_out out = {0};
	struct fb_error e = {0};
	fb_run_job_options(r, j, jo);
	int rc = jobroot_make(r, j, jo, &jr, &e);
	struct fb_exec_input *all = rc ? NULL : calloc((size_t)jr.nin + 3 + r->ntk, sizeof(*all));
	if (!rc && !all)
		rc = fb_seterr(&e, FB_ENOMEM, "out of memory");
	int nall = 0;
	for (int i = 0; all && i < jr.nin; i++)
		all[nall++] = jr.in[i];
	for (int i = 0; all && i < 3; i++)
		all[nall++] = r->tc[i];
	for (size_t i = 0; all && needs_tree(r, &r->src[j->src]) && i < r->ntk; i++)
		all[nall++] = r->tk[i];
	struct fb_exec_cmd c = {jr.argv, jr.argc, env, 2, outputs, 4, all, nall};
	if (!rc)
		rc = fb_exec_open(&xo, &x, &e);
	if (!rc)
		rc = fb_exec_run(x, &c, &out, &e);
	if (rc)
		snprintf(why, wsize, "%.500s", e.msg);
	else
		answer_out(r, j, &out, fd, why, wsize);
	fb_exec_out_clear(&out);
	fb_exec_close(x);
	free(all);
	jobroot_free(&jr);
}

/* The thread of one unit: its jobs at the executor, one after the other, each answered on fd as
 * a local worker answers (child.c); the exit code. */
static int
unit_run(struct run *r, struct unit *u, int fd)
{
	struct fb_job_opts jo;
	char why[600] = "";
	int bad = 0;
	jo.v = calloc(r->ncommon + 6, sizeof(*jo.v));
	for (size_t k = 0; k < u->n && !bad; k++) {
		struct job *j = &r->jobs[u->jobs[k]];
		why[0] = 0;
		if (atomic_load(&r->stop))
			snprintf(why, sizeof(why), "stopped");
		else if (jo.v)
			run_remote(r, j, &jo, fd, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "out of memory");
		if (why[0])
			bad = fb_answer_write(fd, 0, FB_RESULT_FARM, 0, why, "", NULL, 0, NULL, 0) != 0;
	}
	free(jo.v);
	close(fd);
	return bad ? 3 : 0;
}

struct unit_arg {
	struct run *r;
	struct unit *u;
};

static void *
unit_main(void *p)
{
	struct unit_arg a = *(struct unit_arg *)p;
	free(p);
	a.u->exit = unit_run(a.r, a.u, a.u->wfd);
	return NULL;
}

int
fb_offload_start(struct run *r, struct unit *u, struct fb_error *err)
{
	int p[2];
	struct unit_arg *a = malloc(sizeof(*a));
	if (!a)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	if (pipe2(p, O_CLOEXEC) != 0) {
		free(a);
		return fb_seterr(err, FB_EIO, "pipe failed: %s", strerror(errno));
	}
	*a = (struct unit_arg){r, u};
	u->fd = p[0];
	u->wfd = p[1];
	/* Signals go to the main thread, whose poll they wake: the thread, and the gRPC threads
	 * it starts, block them all. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&u->thread, NULL, unit_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		free(a);
		close(p[0]);
		close(p[1]);
		u->fd = u->wfd = -1;
		return fb_seterr(err, FB_EIO, "cannot start a remote job's thread: %s", strerror(rc));
	}
	u->threaded = 1;
	return 0;
}

int
fb_offload_join(struct unit *u)
{
	pthread_join(u->thread, NULL);
	u->threaded = 0;
	return u->exit;
}

void
fb_offload_stop(struct run *r, struct unit *u)
{
	unsigned char buf[65536];
	atomic_store(&r->stop, 1);
	/* the thread may be writing an answer: read until it closes its end */
	for (;;) {
		ssize_t k = read(u->fd, buf, sizeof(buf));
		if (k == 0 || (k < 0 && errno != EINTR))
			break;
	}
	fb_offload_join(u);
}

/* ---- the parent: the shared files, the round ---- */

/* path mapped read-only as input i of the root named name; *why on failure. */
static int
tc_map(struct run *r, int i, const char *path, const char *name, int exec, const char *hex, char *why, size_t wsize)
{
	return fb_jobroot_map(path, name, exec, hex, &r->tc[i], &r->tc_map[i], &r->tc_mapsize[i], why, wsize);
}

/* The worker, NVRTC and its builtins, mapped, hashed (NVRTC's digest is the cache key's when
 * known) and sent to the executor's CAS where it lacks them. 0, or -1 with why. */
static int
toolchain(struct run *r, char *why, size_t wsize)
{
	static char names[2][64];
	const char *ident = fb_nvrtc_ident(r->nv); /* "nvrtc VERSION FILE SIZE MTIME" */
	char file[PATH_MAX] = "", bdir[PATH_MAX], builtins[PATH_MAX + 64];
	const char *f = strchr(ident + 6, ' '), *end = f ? strrchr(f + 1, ' ') : NULL;
	while (end && end > f + 1 && end[-1] != ' ')
		end--;
	if (f && end && end > f + 1)
		snprintf(file, sizeof(file), "%.*s", (int)(end - f - 2), f + 1);
	int ver = fb_nvrtc_version(r->nv);
	const char *hex = strncmp(r->nvrtc_key, "nvrtc ", 6) == 0 ? strrchr(r->nvrtc_key, ' ') + 1 : NULL;
	snprintf(bdir, sizeof(bdir), "%s", file);
	char *sl = strrchr(bdir, '/');
	if (!file[0] || !sl) {
		snprintf(why, wsize, "cannot tell which file NVRTC was loaded from");
		return -1;
	}
	*sl = 0;
	snprintf(builtins, sizeof(builtins), "%s/libnvrtc-builtins.so.%d.%d", bdir, ver / 1000, ver % 1000 / 10);
	snprintf(names[0], sizeof(names[0]), TOOLKIT "/lib64/libnvrtc.so.%d", ver / 1000);
	snprintf(names[1], sizeof(names[1]), TOOLKIT "/lib64/libnvrtc-builtins.so.%d.%d", ver / 1000, ver % 1000 / 10);
	if (!r->o->remote.worker || !*r->o->remote.worker) {
		snprintf(why, wsize, "no fatbuild-nvrtc-worker program to send");
		return -1;
	}
	char inc[PATH_MAX + 16];
	size_t cap = 0;
	int tree = 0; /* a pending job needs the toolkit's include/ tree whole */
	for (size_t i = 0; i < r->njobs && !tree; i++)
		tree = r->jobs[i].state == J_PENDING && needs_tree(r, &r->src[r->jobs[i].src]);
	snprintf(inc, sizeof(inc), "%s/include", r->home);
	if (tc_map(r, 0, r->o->remote.worker, WORKER, 1, NULL, why, wsize) ||
	    tc_map(r, 1, file, names[0], 0, hex, why, wsize) || tc_map(r, 2, builtins, names[1], 0, NULL, why, wsize) ||
	    (tree && fb_jobroot_tree(inc, &r->tk, &r->ntk, &cap, why, wsize)))
		return -1;
	const struct fb_compile_opts *o = r->o;
	struct fb_exec_opts xo = {o->remote.exec, o->remote.header, o->remote.exec_timeout_ms, o->remote.exec_props,
	                          o->remote.nexec_props, &r->stop, 0};
	struct fb_exec *x = NULL;
	struct fb_error e = {0};
	int lock = fb_jobroot_lock(o->remote.state, o->cancel); /* one build sends them once */
	if (lock >= 0 && fb_exec_state_seen(o->remote.state, why, wsize)) { /* it failed while we waited */
		close(lock);
		return -1;
	}
	int rc = fb_exec_open(&xo, &x, &e);
	if (!rc)
		rc = fb_exec_upload(x, r->tc, 3, &e);
	if (!rc && r->ntk)
		rc = fb_exec_upload(x, r->tk, (int)r->ntk, &e);
	if (lock >= 0)
		close(lock);
	if (rc) {
		fb_exec_close(x);
		snprintf(why, wsize, "%.500s", e.msg);
		return -1;
	}
	r->hold = x; /* gRPC stays up while the round's threads run; closed after them */
	return 0;
}

int
fb_offload_answered(struct run *r, struct job *j)
{
	if (j->result != FB_RESULT_FARM) {
		snprintf(j->where, sizeof(j->where), "%.190s", j->pch_note);
		j->pch_note[0] = 0;
		r->res->nexecuted++;
		return 0;
	}
	if (!r->exec_why[0])
		snprintf(r->exec_why, sizeof(r->exec_why), "%s", j->e.log ? j->e.log : "failed");
	r->remote_off = 1;
	fb_cache_entry_clear(&j->e);
	j->result = 0;
	j->state = J_PENDING; /* not counted done: the local round compiles it */
	return 1;
}

/* The round's units gone, so that the local round makes its own. */
static void
units_reset(struct run *r)
{
	for (size_t i = 0; i < r->nunits; i++)
		free(r->units[i].rx); /* a unit stopped by a failure keeps its read buffer */
	free(r->units);
	free(r->order);
	free(r->wjob);
	free(r->ujobs);
	r->units = NULL;
	r->order = r->wjob = r->ujobs = NULL;
	r->nunits = 0;
	for (size_t i = 0; i < r->njobs; i++)
		if (r->jobs[i].state == J_PENDING || r->jobs[i].state == J_HELD)
			r->jobs[i].unit = NONE;
}

int
fb_offload_begin(struct run *r)
{
	const struct fb_compile_opts *o = r->o;
	size_t n = 0;
	r->exec_quiet = 0;
	if (!o->remote.exec || !*o->remote.exec)
		return 0;
	for (size_t i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];
		if (j->state == J_PENDING && stays_local(r, j))
			j->state = J_HELD;
		n += j->state == J_PENDING;
	}
	r->exec_quiet = n && fb_exec_state_seen(o->remote.state, r->exec_why, sizeof(r->exec_why));
	if (r->exec_quiet || !n) /* another process of the build found it failing, and said so */
		return 0;
	if (!getcwd(r->cwd, sizeof(r->cwd)))
		snprintf(r->exec_why, sizeof(r->exec_why), "cannot tell the working directory");
	else if (toolchain(r, r->exec_why, sizeof(r->exec_why)) == 0)
		return r->remote = 1;
	else /* another edge of the build may have said it while this one sent */
		r->exec_quiet = fb_exec_state_seen(o->remote.state, r->exec_why, sizeof(r->exec_why));
	return 0;
}

int
fb_offload_end(struct run *r, int rc)
{
	const struct fb_compile_opts *o = r->o;
	if (!o->remote.exec || !*o->remote.exec)
		return rc;
	if (r->remote) {
		r->remote = 0;
		/* the local round forks next: wait for gRPC's threads to end. A failed or stopped
		 * round forks nothing, and the wait could last a call's whole deadline to a stalled
		 * server (SIGTERM took 59 s), so it does not wait. */
		if (rc || atomic_load(&r->stop))
			fb_exec_close_nowait(r->hold);
		else
			fb_exec_close(r->hold);
		r->hold = NULL;
	}
	int quiet = r->exec_quiet;
	units_reset(r);
	for (size_t i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];
		if (j->state == J_HELD)
			j->state = J_PENDING;
		else if (j->state == J_PENDING)
			snprintf(j->where, sizeof(j->where), "local: the executor failed (%s)",
			         quiet ? "earlier in this build" : "the warning says how");
	}
	fb_text_oneline(r->exec_why);
	if (r->exec_why[0] && !quiet && fb_exec_state_claim(o->remote.state, r->exec_why))
		snprintf(r->res->exec_note, sizeof(r->res->exec_note), "%s", r->exec_why);
	return rc;
}

void
fb_offload_free(struct run *r)
{
	fb_exec_close(r->hold);
	r->hold = NULL;
	for (int i = 0; i < 3; i++)
		if (r->tc_map[i])
			munmap(r->tc_map[i], r->tc_mapsize[i]);
	for (size_t i = 0; i < r->ntk; i++) {
		free((char *)r->tk[i].path);
		free((unsigned char *)r->tk[i].data);
	}
	free(r->tk);
}
