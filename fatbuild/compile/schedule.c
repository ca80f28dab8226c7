/* schedule.c: running a compile's jobs: splitting the pending jobs into units (one worker
 * process each; in a remote round one thread each, offload.c), starting at most `jobs` of them
 * at a time, longest first, reading their answers as they come, and on the first failure
 * killing the rest. */
#define _GNU_SOURCE /* prctl */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "base/proc.h"

double
fb_run_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void
fb_run_job_done(struct run *r, struct job *j)
{
	r->done++;
	if (!r->o->progress)
		return;
	struct fb_compile_progress p = {
		.done = r->done, .total = r->njobs, .source = r->src[j->src].path, .target = j->arch,
		.seconds = j->cached ? 0 : j->secs, .cached = j->cached != 0, .remote = j->cached == 2,
		.pch = j->pch_note[0] ? j->pch_note : NULL, .where = j->where[0] ? j->where : NULL,
	};
	r->o->progress(r->o->progress_ctx, &p);
}

static void
kill_all(struct run *r)
{
	for (size_t i = 0; i < r->nunits; i++) {
		struct unit *u = &r->units[i];
		if (u->state != J_RUNNING)
			continue;
		if (u->threaded) {
			fb_offload_stop(r, u);
		} else {
			kill(u->pid, SIGKILL);
			while (waitpid(u->pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		close(u->fd);
		u->fd = -1;
		u->state = J_DONE;
	}
}

static int
start(struct run *r, struct unit *u, struct fb_error *err)
{
	pid_t parent, pid;
	int fd;
	if (r->remote) { /* a thread, never a forked child: gRPC does not cross a fork */
		int rc = fb_offload_start(r, u, err);
		if (rc)
			return rc;
		goto started;
	}
	int rc = fb_fork_piped(&parent, &pid, &fd, err);
	if (rc)
		return rc;
	if (pid == 0) {
		/* A job dies with its parent, even a SIGKILLed one, and of a stopping signal: it has
		 * nothing to clean up, and the caller's handlers are the caller's. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(3);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		_exit(fb_run_child(r, u, fd));
	}
	u->pid = pid;
	u->fd = fd;
started:
	u->state = J_RUNNING;
	u->t0 = fb_run_now();
	for (size_t k = 0; k < u->n; k++)
		r->jobs[u->jobs[k]].state = J_RUNNING;
	return 0;
}

/* A job's expected cost: the headers its source reads; SASS costs more than PTX alone. */
static size_t
weight(const struct run *r, size_t i)
{
	const struct job *j = &r->jobs[i];
	return 2 * (r->src[j->src].deps.n + 1) + (j->sass != NONE);
}

/* Sorts idx[0..n) by key descending, stably (insertion sort: short lists). */
static void
sort_desc(size_t *idx, size_t n, const size_t *key)
{
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && key[idx[k]] > key[idx[k - 1]]; k--) {
			size_t t = idx[k];
			idx[k] = idx[k - 1];
			idx[k - 1] = t;
		}
}

int
fb_run_same_options(const struct run *r, const struct job *a, const struct job *b)
{
	return strcmp(a->arch, b->arch) == 0 && strcmp(r->src[a->src].dir, r->src[b->src].dir) == 0;
}

/* Splits the pending jobs into units, each run by one process: without PCH one job each;
 * with it the jobs of one option set (arch, include path) together, and the largest of those
 * split in two while a slot would otherwise stay idle. Longest first throughout: a source
 * that reads more headers (CUB) starts before small ones, which then fill the gaps. Stable,
 * so the launch order is deterministic. */
static int
make_units(struct run *r, int slots, struct fb_error *err)
{
	size_t *w = r->wjob = calloc(r->njobs ? r->njobs : 1, sizeof(*w));
	size_t *order = r->order = calloc(r->njobs ? r->njobs : 1, sizeof(*order));
	size_t *all = r->ujobs = calloc(r->njobs ? r->njobs : 1, sizeof(*all));
	r->units = calloc(r->njobs ? r->njobs : 1, sizeof(*r->units));
	if (!w || !order || !all || !r->units)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	size_t np = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		w[i] = weight(r, i);
		if (r->jobs[i].state == J_PENDING)
			order[np++] = i;
	}
	sort_desc(order, np, w);
	/* group: jobs of one option set are contiguous in all[], longest first within */
	size_t na = 0;
	r->nunits = 0;
	for (size_t i = 0; i < np; i++) {
		struct job *j = &r->jobs[order[i]];
		if (j->unit != NONE)
			continue;
		struct unit *u = &r->units[r->nunits];
		u->jobs = all + na;
		u->fd = -1;
		for (size_t k = i; k < np; k++) {
			struct job *m = &r->jobs[order[k]];
			if (m->unit != NONE || (k != i && !(r->pch && fb_run_same_options(r, j, m))))
				continue;
			m->unit = r->nunits;
			all[na++] = order[k];
			u->n++;
			u->weight += w[order[k]];
		}
		r->nunits++;
	}
	/* idle slots: halve the largest unit */
	while (r->pch && r->nunits < (size_t)slots) {
		size_t big = NONE;
		for (size_t i = 0; i < r->nunits; i++)
			if (r->units[i].n >= 2 && (big == NONE || r->units[i].n > r->units[big].n))
				big = i;
		if (big == NONE)
			break;
		struct unit *a = &r->units[big], *b = &r->units[r->nunits];
		size_t half = a->n / 2;
		/* alternate, so that both halves get long and short jobs */
		size_t *tmp = calloc(a->n, sizeof(*tmp));
		if (!tmp)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		size_t ka = 0, kb = 0;
		for (size_t k = 0; k < a->n; k++)
			if (k % 2 == 0)
				tmp[ka++] = a->jobs[k];
			else
				tmp[a->n - half + kb++] = a->jobs[k];
		memcpy(a->jobs, tmp, a->n * sizeof(*tmp));
		free(tmp);
		*b = (struct unit){.jobs = a->jobs + (a->n - half), .n = half, .fd = -1};
		a->n -= half;
		a->weight = b->weight = 0;
		for (size_t k = 0; k < a->n; k++)
			a->weight += w[a->jobs[k]];
		for (size_t k = 0; k < b->n; k++) {
			b->weight += w[b->jobs[k]];
			r->jobs[b->jobs[k]].unit = r->nunits;
		}
		r->nunits++;
	}
	for (size_t i = 0; i < r->nunits; i++)
		r->units[i].pch = r->pch && r->units[i].n >= 2;
	return 0;
}

/* Decodes every complete answer in u's buffer: its job is done. A failed job is *failed and
 * FB_ECOMPILE. */
static int
take_answers(struct run *r, struct unit *u, struct job **failed, struct fb_error *err)
{
	int rc = 0;
	size_t sz;
	while (!rc && u->done < u->n && (sz = fb_answer_size(u->rx, u->rxn)) != 0) {
		struct job *j = &r->jobs[u->jobs[u->done++]];
		double t = fb_run_now();
		j->state = J_DONE;
		j->secs = t - (u->tlast > 0 ? u->tlast : u->t0);
		u->tlast = t;
		rc = fb_answer_decode(r, j, u->rx, sz == (size_t)-1 ? u->rxn : sz, err);
		if (sz == (size_t)-1)
			sz = u->rxn;
		memmove(u->rx, u->rx + sz, u->rxn - sz);
		u->rxn -= sz;
		if (!rc && r->remote && fb_offload_answered(r, j))
			continue;
		if (!rc && j->result != 0) {
			*failed = j;
			rc = FB_ECOMPILE;
		}
		if (!rc)
			fb_run_job_done(r, j);
	}
	return rc;
}

/* After EOF (or a read error) on u's pipe: reaps the worker; a job it left without an answer
 * fails the run. */
static int
reap_unit(struct run *r, struct unit *u, struct fb_error *err)
{
	close(u->fd);
	u->fd = -1;
	int status = 0, threaded = u->threaded, exit = threaded ? fb_offload_join(u) : 0;
	while (!threaded && waitpid(u->pid, &status, 0) < 0 && errno == EINTR)
		;
	u->state = J_DONE;
	free(u->rx);
	u->rx = NULL;
	u->rxn = u->rxcap = 0;
	/* A complete answer counts even with a nonzero exit (a memory checker following
	 * the fork may set one); a missing one is a failure. */
	if (u->done >= u->n)
		return 0;
	struct job *j = &r->jobs[u->jobs[u->done]];
	if (threaded)
		return fb_seterr(err, FB_ECOMPILE, "%s: the remote job for %s ended without an answer (exit %d)",
		                 r->src[j->src].path, j->arch, exit);
	if (WIFSIGNALED(status))
		return fb_seterr(err, FB_ECOMPILE, "%s: NVRTC died with signal %d compiling for %s",
		                 r->src[j->src].path, WTERMSIG(status), j->arch);
	return fb_seterr(err, FB_ECOMPILE, "%s: the NVRTC process for %s ended without an answer (exit %d)",
	                 r->src[j->src].path, j->arch, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Reads what unit u's pipe has and takes its complete answers; at EOF reaps it (*running less). */
static int
read_unit(struct run *r, struct unit *u, size_t *running, struct job **failed, struct fb_error *err)
{
	if (u->rxcap - u->rxn < 65536) {
		size_t cap = u->rxcap ? 2 * u->rxcap : 262144;
		unsigned char *b = realloc(u->rx, cap);
		if (!b)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		u->rx = b;
		u->rxcap = cap;
	}
	ssize_t k = read(u->fd, u->rx + u->rxn, u->rxcap - u->rxn);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (k > 0)
		u->rxn += (size_t)k;
	int rc = take_answers(r, u, failed, err);
	if (rc || k > 0)
		return rc;
	(*running)--;
	return reap_unit(r, u, err);
}

/* The pipes of the running units into pfd (their units in pu); returns their number. */
static size_t
poll_set(struct run *r, struct pollfd *pfd, struct unit **pu)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nunits; i++)
		if (r->units[i].state == J_RUNNING) {
			pfd[n].fd = r->units[i].fd;
			pfd[n].events = POLLIN;
			pu[n++] = &r->units[i];
		}
	return n;
}

/* Runs the units, at most maxjobs at a time, longest first; on the first failure kills the
 * rest. *failed: that job. */
int
fb_run_jobs(struct run *r, int maxjobs, struct job **failed, struct fb_error *err)
{
	size_t next = 0, running = 0;
	int rc = make_units(r, maxjobs, err);
	*failed = NULL;
	if (rc)
		return rc;
	struct pollfd *pfd = r->pfd = calloc(r->nunits ? r->nunits : 1, sizeof(*pfd));
	struct unit **pu = r->pu = calloc(r->nunits ? r->nunits : 1, sizeof(*pu));
	size_t *uorder = r->uorder = calloc(r->nunits ? r->nunits : 1, sizeof(*uorder));
	size_t *uw = r->uw = calloc(r->nunits ? r->nunits : 1, sizeof(*uw));
	if (!pfd || !pu || !uorder || !uw) {
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r->nunits; i++) {
		uorder[i] = i;
		uw[i] = r->units[i].weight;
	}
	sort_desc(uorder, r->nunits, uw);
	for (;;) {
		if (!rc && r->o->cancel && *r->o->cancel)
			rc = fb_seterr(err, FB_ECANCELED, "compile stopped");
		while (!rc && !(r->remote && r->remote_off) && running < (size_t)maxjobs && next < r->nunits) {
			if ((rc = start(r, &r->units[uorder[next++]], err)))
				break;
			running++;
		}
		if (rc || running == 0)
			break;
		size_t n = poll_set(r, pfd, pu);
		/* a remote round's threads block signals, but gRPC's may not: the stop flag is looked at
		 * every quarter second too */
		if (poll(pfd, n, r->remote ? 250 : -1) < 0) {
			if (errno == EINTR)
				continue; /* the loop's top looks at the stop flag */
			rc = fb_seterr(err, FB_EIO, "poll failed: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < n && !rc; i++)
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				rc = read_unit(r, pu[i], &running, failed, err);
		if (rc)
			break;
	}
	if (rc)
		kill_all(r);
out:
	free(pfd);
	free(pu);
	free(uorder);
	free(uw);
	r->pfd = NULL;
	r->pu = NULL;
	r->uorder = NULL;
	r->uw = NULL;
	return rc;
}
