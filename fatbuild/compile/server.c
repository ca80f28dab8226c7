/* server.c: the build's compile server (wire format: run.h; docs/compile-server.md).
 *
 * NVRTC's automatic PCH lives in the heap of the process that made it, so a `fatbuild compile`
 * edge, one process per (kernel, target), could never reuse one. The server outlives the edges:
 * it keeps forked workers keyed by NVRTC option set (everything but the per-job seed: the arch,
 * the include path, the defines, the NVRTC library and the working directory), each compiling
 * one job at a time, and no more than `jobs` of them compiling at once. Up to
 * FB_SERVER_IDLE_SETS more stay alive idle, with their PCH: ninja runs a kernel's targets one
 * after another, so with one slot per compile every target's worker would be replaced before
 * the next kernel needed it. A job goes to an idle worker of its option set, else to a new
 * worker while a slot is free, else the least recently used idle worker of another set is
 * replaced, else it waits. The server only
 * forwards: the client decodes and checks every answer, and anything odd there means a local
 * compile, so the server never decides a build's outcome. */
#define _GNU_SOURCE /* SO_PEERCRED, struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "base/bytes.h"
#include "base/config.h"
#include "base/proc.h"
#include "base/safefs.h"
#include "plumbing.h"

static const char fix[] = "make it yours and private (chmod 700)";

/* ---- the job's bytes ------------------------------------------------------------------ */

static int
rd_str(const unsigned char **p, const unsigned char *end, const char **s)
{
	if (end - *p < 8)
		return -1;
	uint64_t n = fb_rd64(*p);
	*p += 8;
	if (n == 0 || n > (uint64_t)(end - *p) || (*p)[n - 1] != 0)
		return -1;
	*s = (const char *)*p;
	*p += n;
	return 0;
}

int
fb_server_job_parse(const unsigned char *p, size_t n, struct fb_server_job *j)
{
	const unsigned char *end = p + n;
	memset(j, 0, sizeof(*j));
	if (n < 8)
		return -1;
	j->flags = fb_rd64(p);
	p += 8;
	if (rd_str(&p, end, &j->home) || rd_str(&p, end, &j->nvrtc) || rd_str(&p, end, &j->cwd) ||
	    rd_str(&p, end, &j->name) || rd_str(&p, end, &j->text) || end - p < 8)
		return -1;
	uint64_t no = fb_rd64(p);
	p += 8;
	if (no > (uint64_t)(end - p) / 9)
		return -1;
	if (!(j->opts = calloc((size_t)no + 2, sizeof(*j->opts))))
		return -1;
	for (j->nopts = 0; j->nopts < no; j->nopts++)
		if (rd_str(&p, end, &j->opts[j->nopts])) {
			free(j->opts);
			j->opts = NULL;
			return -1;
		}
	if (p != end) { /* trailing bytes: not a job this client wrote */
		free(j->opts);
		j->opts = NULL;
		return -1;
	}
	return 0;
}

/* What decides whether two jobs can share a worker's PCH: all but the name, text and seed. */
static char *
job_key(const struct fb_server_job *j)
{
	size_t n = strlen(j->home) + strlen(j->nvrtc) + strlen(j->cwd) + 32;
	for (size_t i = 0; i < j->nopts; i++)
		n += strlen(j->opts[i]) + 1;
	char *k = malloc(n), *w = k;
	if (!k)
		return NULL;
	w += sprintf(w, "%llx\n%s\n%s\n%s", (unsigned long long)(j->flags & 8), j->home, j->nvrtc, j->cwd);
	for (size_t i = 0; i < j->nopts; i++)
		if (strncmp(j->opts[i], "--frandom-seed=", 15) != 0)
			w += sprintf(w, "\n%s", j->opts[i]);
	return k;
}

/* ---- the worker ----------------------------------------------------------------------- */

static void
answer_error(int fd, int code, const char *msg)
{
	unsigned char hdr[ANSWER] = {0};
	fb_wr64(hdr, (uint64_t)code);
	fb_wr64(hdr + 16, strlen(msg));
	if (fb_write_all(fd, hdr, sizeof(hdr)) == 0)
		fb_write_all(fd, msg, strlen(msg));
}

/* A worker: one option set, jobs one at a time from fd, answers back; NVRTC loaded at the
 * first job, and checked to be the library the client loaded. Returns the exit code. */
static int
worker_main(int fd, const char *pch_root, unsigned id)
{
	struct fb_nvrtc *nv = NULL;
	struct fb_pch_state ps = {0};
	char wdir[PATH_MAX], why[PATH_MAX + 64] = "";
	int first = 1;
	if (!pch_root[0]) {
		snprintf(why, sizeof(why), "the compile server has no PCH directory");
		ps.off = 1;
	} else if (fb_pch_worker_dir(pch_root, id, wdir, sizeof(wdir), why, sizeof(why)) != 0)
		ps.off = 1;
	for (;;) {
		unsigned char h[8];
		if (fb_read_all(fd, h, 8) != 0)
			break;
		uint64_t n = fb_rd64(h);
		unsigned char *b = n <= FB_SERVER_MAX_JOB ? malloc(n ? n : 1) : NULL;
		struct fb_server_job j;
		if (!b || fb_read_all(fd, b, n) != 0 || fb_server_job_parse(b, n, &j) != 0) {
			free(b);
			break;
		}
		struct fb_error e = {0};
		int rc = 0;
		if (!nv && fb_nvrtc_open(j.home, &nv, &e) != 0) {
			answer_error(fd, FB_ENOTOOL, e.msg);
		} else if (strcmp(fb_nvrtc_path(nv), j.nvrtc) != 0) {
			snprintf(e.msg, sizeof(e.msg), "the compile server loaded %.400s, not %.400s", fb_nvrtc_path(nv), j.nvrtc);
			answer_error(fd, FB_ENOTOOL, e.msg);
		} else if (chdir(j.cwd) != 0) {
			snprintf(e.msg, sizeof(e.msg), "the compile server cannot enter %.400s: %s", j.cwd, strerror(errno));
			answer_error(fd, FB_EIO, e.msg);
		} else {
			int pch = (j.flags & 8) && fb_nvrtc_has_pch(nv);
			struct fb_worker_job wj = {j.text, j.name, j.opts, j.nopts, (int)(j.flags & 1), (int)((j.flags >> 1) & 3)};
			if (fb_worker_compile(nv, &wj, &ps, pch, wdir, first && pch ? why : NULL, fd, &rc) != 0)
				rc = -1;
			first = 0;
		}
		free(j.opts);
		free(b);
		if (rc == -1)
			break;
	}
	fb_nvrtc_close(nv);
	close(fd);
	return 0;
}

/* ---- the server ----------------------------------------------------------------------- */

struct buf {
	unsigned char *p;
	size_t n, off, cap;
};

static int
buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->cap - b->n < n) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap - b->n < n)
			cap *= 2;
		unsigned char *q = realloc(b->p, cap);
		if (!q)
			return -1;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

static void
buf_drop(struct buf *b, size_t n)
{
	memmove(b->p, b->p + n, b->n - n);
	b->n -= n;
}

struct conn {
	int fd;                     /* -1: free slot */
	unsigned long gen;          /* tells a reused slot from the connection a job came on */
	int header;
	uint64_t njobs, got;
	struct buf rx, tx;
};

struct pend {
	size_t conn;
	unsigned long gen;
	uint64_t idx;
	unsigned char *job;         /* u64 size + the job's bytes, as the worker reads them */
	size_t len;
	char *key;
};

struct wk {
	pid_t pid;                  /* 0: free slot */
	int fd;
	char *key;
	int busy;
	size_t conn;
	unsigned long gen;
	uint64_t idx;
	unsigned long last;         /* when it last finished, for replacing the least recently used */
	struct buf rx;
};

struct srv {
	const char *dir;
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char pch[PATH_MAX];
	int lfd, jobs, nw;          /* compiles at once; worker slots (jobs + FB_SERVER_IDLE_SETS) */
	struct conn *c;
	size_t nc;
	struct pend *q;
	size_t nq, capq;
	struct wk *w;
	unsigned long gen, clock;
	unsigned ids;
};

static volatile sig_atomic_t stop;

static void
on_stop(int sig)
{
	stop = sig;
}

static void
conn_close(struct srv *s, size_t i)
{
	struct conn *c = &s->c[i];
	close(c->fd);
	c->fd = -1;
	free(c->rx.p);
	free(c->tx.p);
	memset(&c->rx, 0, sizeof(c->rx));
	memset(&c->tx, 0, sizeof(c->tx));
	for (size_t k = 0; k < s->nq;) /* its queued jobs go; a running one's answer is dropped */
		if (s->q[k].conn == i && s->q[k].gen == c->gen) {
			free(s->q[k].job);
			free(s->q[k].key);
			memmove(&s->q[k], &s->q[k + 1], (s->nq - k - 1) * sizeof(*s->q));
			s->nq--;
		} else
			k++;
}

static void
worker_end(struct wk *w)
{
	kill(w->pid, SIGKILL);
	close(w->fd);
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(w->key);
	free(w->rx.p);
	memset(w, 0, sizeof(*w));
}

static int
worker_start(struct srv *s, struct wk *w, const char *key)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	unsigned id = s->ids++;
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		fb_child_init(parent);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(sv[0]);
		close(s->lfd);
		for (size_t i = 0; i < s->nc; i++)
			if (s->c[i].fd >= 0)
				close(s->c[i].fd);
		for (int i = 0; i < s->nw; i++)
			if (s->w[i].pid)
				close(s->w[i].fd);
		_exit(worker_main(sv[1], s->pch, id));
	}
	close(sv[1]);
	*w = (struct wk){.pid = pid, .fd = sv[0], .key = strdup(key)};
	if (!w->key) {
		worker_end(w);
		return -1;
	}
	return 0;
}

/* A job's answer for its connection, if that is still open. */
static void
deliver(struct srv *s, size_t conn, unsigned long gen, uint64_t idx, const unsigned char *a, size_t n)
{
	struct conn *c = &s->c[conn];
	unsigned char h[8];
	if (c->fd < 0 || c->gen != gen)
		return;
	fb_wr64(h, idx);
	if (buf_add(&c->tx, h, 8) || buf_add(&c->tx, a, n))
		conn_close(s, conn);
}

static void
deliver_error(struct srv *s, size_t conn, unsigned long gen, uint64_t idx, const char *msg)
{
	unsigned char a[ANSWER + 256] = {0};
	size_t n = strlen(msg) < 256 ? strlen(msg) : 255;
	fb_wr64(a, (uint64_t)FB_EIO);
	fb_wr64(a + 16, n);
	memcpy(a + ANSWER, msg, n);
	deliver(s, conn, gen, idx, a, ANSWER + n);
}

/* Hands queued jobs to workers, in queue order where it can. */
static void
dispatch(struct srv *s)
{
	int busy = 0;
	for (int i = 0; i < s->nw; i++)
		busy += s->w[i].pid && s->w[i].busy;
	for (size_t k = 0; k < s->nq && busy < s->jobs;) {
		struct pend *p = &s->q[k];
		struct wk *w = NULL, *idle = NULL, *free_slot = NULL;
		for (int i = 0; i < s->nw; i++) {
			struct wk *x = &s->w[i];
			if (!x->pid) {
				free_slot = free_slot ? free_slot : x;
			} else if (!x->busy) {
				if (strcmp(x->key, p->key) == 0)
					w = w ? w : x;
				else if (!idle || x->last < idle->last)
					idle = x;
			}
		}
		if (!w && !free_slot && idle) {
			worker_end(idle);
			free_slot = idle;
		}
		int failed = 0;
		if (!w && free_slot) {
			if (worker_start(s, free_slot, p->key) == 0)
				w = free_slot;
			else
				failed = 1;
		}
		if (!w && !failed) {
			k++;
			continue;
		}
		if (failed) {
			deliver_error(s, p->conn, p->gen, p->idx, "the compile server could not start a worker");
		} else if (fb_write_all(w->fd, p->job, p->len) != 0) {
			deliver_error(s, p->conn, p->gen, p->idx, "the compile server could not reach its worker");
			worker_end(w);
		} else {
			w->busy = 1;
			busy++;
			w->conn = p->conn;
			w->gen = p->gen;
			w->idx = p->idx;
		}
		free(p->job);
		free(p->key);
		memmove(p, p + 1, (s->nq - k - 1) * sizeof(*p));
		s->nq--;
	}
}

/* Complete jobs in c's bytes go to the queue; -1 for garbage (the connection is dropped). */
static int
take_jobs(struct srv *s, size_t i)
{
	struct conn *c = &s->c[i];
	if (!c->header) {
		if (c->rx.n < 16)
			return 0;
		if (memcmp(c->rx.p, FB_SERVER_MAGIC, 8) != 0)
			return -1;
		c->njobs = fb_rd64(c->rx.p + 8);
		c->header = 1;
		buf_drop(&c->rx, 16);
	}
	while (c->got < c->njobs && c->rx.n >= 8) {
		uint64_t n = fb_rd64(c->rx.p);
		if (n > FB_SERVER_MAX_JOB)
			return -1;
		if (c->rx.n - 8 < n)
			return 0;
		struct fb_server_job j;
		if (fb_server_job_parse(c->rx.p + 8, (size_t)n, &j) != 0)
			return -1;
		char *key = job_key(&j);
		free(j.opts);
		if (s->nq == s->capq) {
			size_t cap = s->capq ? 2 * s->capq : 64;
			struct pend *q = realloc(s->q, cap * sizeof(*q));
			if (!q) {
				free(key);
				return -1;
			}
			s->q = q;
			s->capq = cap;
		}
		unsigned char *copy = malloc((size_t)n + 8);
		if (!key || !copy) {
			free(key);
			free(copy);
			return -1;
		}
		memcpy(copy, c->rx.p, (size_t)n + 8);
		s->q[s->nq++] = (struct pend){i, c->gen, c->got++, copy, (size_t)n + 8, key};
		buf_drop(&c->rx, (size_t)n + 8);
	}
	return 0;
}

/* Only the user who runs the build may ask it for compiles. */
static void
accept_one(struct srv *s)
{
	int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.uid != getuid()) {
		close(fd);
		return;
	}
	size_t i = 0;
	while (i < s->nc && s->c[i].fd >= 0)
		i++;
	if (i == s->nc) {
		struct conn *c = realloc(s->c, (s->nc + 1) * sizeof(*c));
		if (!c) {
			close(fd);
			return;
		}
		s->c = c;
		s->nc++;
	}
	s->c[i] = (struct conn){.fd = fd, .gen = ++s->gen};
}

static void
conn_io(struct srv *s, size_t i, short re)
{
	struct conn *c = &s->c[i];
	if (re & POLLOUT && c->tx.n) {
		ssize_t k = write(c->fd, c->tx.p, c->tx.n);
		if (k > 0)
			buf_drop(&c->tx, (size_t)k);
		else if (k < 0 && errno != EAGAIN && errno != EINTR) {
			conn_close(s, i);
			return;
		}
	}
	if (!(re & (POLLIN | POLLHUP | POLLERR)))
		return;
	unsigned char b[65536];
	ssize_t k = read(c->fd, b, sizeof(b));
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0 || buf_add(&c->rx, b, (size_t)k) != 0 || take_jobs(s, i) != 0)
		conn_close(s, i);
}

static void
worker_io(struct srv *s, struct wk *w)
{
	unsigned char b[65536];
	ssize_t k = read(w->fd, b, sizeof(b));
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0 || buf_add(&w->rx, b, (size_t)k) != 0 || !w->busy) {
		if (w->busy)
			deliver_error(s, w->conn, w->gen, w->idx, "the compile server's worker died");
		worker_end(w);
		return;
	}
	size_t n = fb_answer_size(w->rx.p, w->rx.n);
	if (n == (size_t)-1) {
		deliver_error(s, w->conn, w->gen, w->idx, "the compile server's worker gave a malformed answer");
		worker_end(w);
	} else if (n) {
		deliver(s, w->conn, w->gen, w->idx, w->rx.p, n);
		buf_drop(&w->rx, n);
		w->busy = 0;
		w->last = ++s->clock;
	}
}

static int
serve(struct srv *s, struct fb_error *err)
{
	size_t cap = 0;
	struct pollfd *pf = NULL;
	while (!stop) {
		dispatch(s);
		size_t need = 1 + s->nc + (size_t)s->nw, n = 0;
		if (need > cap) {
			struct pollfd *q = realloc(pf, need * sizeof(*q));
			if (!q) {
				free(pf);
				return fb_seterr(err, FB_ENOMEM, "out of memory");
			}
			pf = q;
			cap = need;
		}
		pf[n++] = (struct pollfd){s->lfd, POLLIN, 0};
		for (size_t i = 0; i < s->nc; i++)
			pf[n++] = (struct pollfd){s->c[i].fd, (short)(POLLIN | (s->c[i].tx.n ? POLLOUT : 0)), 0};
		for (int i = 0; i < s->nw; i++)
			pf[n++] = (struct pollfd){s->w[i].pid ? s->w[i].fd : -1, POLLIN, 0};
		sigset_t none;
		sigemptyset(&none);
		if (ppoll(pf, n, NULL, &none) < 0) { /* the stop signals are blocked but here */
			if (errno == EINTR)
				continue;
			free(pf);
			return fb_seterr(err, FB_EIO, "compile server: poll: %s", strerror(errno));
		}
		size_t nc = s->nc; /* accept_one may grow the table; new ones are polled next round */
		for (size_t i = 0; i < nc; i++)
			if (pf[1 + i].revents && s->c[i].fd >= 0 && s->c[i].fd == pf[1 + i].fd)
				conn_io(s, i, pf[1 + i].revents);
		for (int i = 0; i < s->nw; i++)
			if (pf[1 + nc + (size_t)i].revents && s->w[i].pid)
				worker_io(s, &s->w[i]);
		if (pf[0].revents & POLLIN)
			accept_one(s);
	}
	free(pf);
	return 0;
}

static int
listen_on(struct srv *s, struct fb_error *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s/tmp", s->dir) >= (int)sizeof(tmp))
		return fb_seterr(err, FB_EINVAL, "%s: path too long", s->dir);
	int rc = fb_dir_check(tmp, "build dir", fix, 0, err);
	if (rc)
		return rc;
	if (snprintf(s->sock, sizeof(s->sock), "%s/%s", tmp, FB_SERVER_SOCKET) >= (int)sizeof(s->sock))
		return fb_seterr(err, FB_EINVAL, "%s/%s: too long for a socket name", tmp, FB_SERVER_SOCKET);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", s->sock);
	if ((s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return fb_seterr(err, FB_EIO, "compile server: socket: %s", strerror(errno));
	unlink(s->sock); /* a stale one of an earlier build: the directory is ours alone */
	mode_t um = umask(077);
	int b = bind(s->lfd, (struct sockaddr *)&a, sizeof(a));
	umask(um);
	if (b != 0 || chmod(s->sock, 0600) != 0 || listen(s->lfd, 64) != 0)
		return fb_seterr(err, FB_EIO, "compile server: %s: %s", s->sock, strerror(errno));
	/* the PCH files of this server's workers; an earlier server's, killed outright, go first */
	if (snprintf(s->pch, sizeof(s->pch), "%s/compile-pch", tmp) >= (int)sizeof(s->pch))
		return fb_seterr(err, FB_EINVAL, "%s: path too long", tmp);
	fb_pch_dir_remove(s->pch);
	char why[PATH_MAX + 64];
	if ((mkdir(s->pch, 0700) != 0 && errno != EEXIST) || fb_pch_dir_check(s->pch, why, sizeof(why)) != 0)
		s->pch[0] = 0; /* the workers then say "PCH refused" */
	return 0;
}

/* The compiles at once the open-file limit lets the server poll (docs/compile-server.md §3):
 * a descriptor per worker slot and per connection (an edge waiting on it, at most one per job),
 * and room for the few others (the listener, stdio, a fork's pipe). poll(2) fails with EINVAL
 * beyond RLIMIT_NOFILE, so the soft limit is raised towards the hard one first, and jobs only
 * lowered where that is not enough. */
static int
fit_jobs(int jobs)
{
	if (jobs > FB_JOBS_MAX)
		jobs = FB_JOBS_MAX;
	rlim_t need = 2 * (rlim_t)jobs + FB_SERVER_IDLE_SETS + 32;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return jobs;
	rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
	if (want > rl.rlim_cur) {
		struct rlimit nl = {want, rl.rlim_max};
		if (setrlimit(RLIMIT_NOFILE, &nl) == 0)
			rl.rlim_cur = want;
	}
	if (rl.rlim_cur >= need)
		return jobs;
	long fit = ((long)rl.rlim_cur - FB_SERVER_IDLE_SETS - 32) / 2;
	return fit < 1 ? 1 : (int)fit;
}

int
fb_compile_server_main(const char *build_dir, int jobs, int ready_fd, struct fb_error *err)
{
	struct srv s = {.dir = build_dir, .lfd = -1, .jobs = fit_jobs(jobs > 0 ? jobs : 1)};
	s.nw = s.jobs + FB_SERVER_IDLE_SETS;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_SETMASK, &block, NULL);
	int rc = listen_on(&s, err);
	if (!rc && !(s.w = calloc((size_t)s.nw, sizeof(*s.w))))
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	if (ready_fd >= 0) {
		if (!rc)
			fb_write_all(ready_fd, "1", 1);
		close(ready_fd);
	}
	if (!rc)
		rc = serve(&s, err);
	for (int i = 0; s.w && i < s.nw; i++)
		if (s.w[i].pid)
			worker_end(&s.w[i]);
	for (size_t i = 0; i < s.nc; i++)
		if (s.c[i].fd >= 0)
			conn_close(&s, i);
	for (size_t i = 0; i < s.nq; i++) {
		free(s.q[i].job);
		free(s.q[i].key);
	}
	if (s.lfd >= 0) {
		unlink(s.sock);
		close(s.lfd);
	}
	if (s.pch[0])
		fb_pch_dir_remove(s.pch);
	free(s.q);
	free(s.c);
	free(s.w);
	return rc;
}

int
fb_compile_server_start(const char *program, const char *build_dir, int jobs, pid_t *pid, char *sock, size_t size,
                        struct fb_error *err)
{
	char jobs_s[32], fd_s[32], tmpdir[PATH_MAX + 16];
	int p[2];
	*pid = -1;
	/* NVRTC's front end writes its temporaries to TMPDIR: the build's private one, as the edges
	 * ninja runs get, never the user's shared /tmp. */
	if (snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s/tmp", build_dir) >= (int)sizeof(tmpdir))
		return fb_seterr(err, FB_EINVAL, "%s: path too long", build_dir);
	if (snprintf(sock, size, "%s/tmp/%s", build_dir, FB_SERVER_SOCKET) >= (int)size ||
	    strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return fb_seterr(err, FB_EINVAL, "%s/tmp/%s: too long for a socket name", build_dir, FB_SERVER_SOCKET);
	/* nor a compile server the caller's environment names: it serves, it is no client */
	const char *set[] = {tmpdir, "FATBUILD_COMPILE_SOCKET", "FATBUILD_COMPILE_VERBOSE"};
	char **envp = fb_config_child_env(set, sizeof(set) / sizeof(set[0]));
	if (!envp)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	if (pipe(p) != 0) {
		free(envp);
		return fb_seterr(err, FB_EIO, "pipe failed: %s", strerror(errno));
	}
	snprintf(jobs_s, sizeof(jobs_s), "%d", jobs);
	snprintf(fd_s, sizeof(fd_s), "%d", p[1]);
	pid_t parent = getpid(), c = fork();
	if (c < 0) {
		close(p[0]);
		close(p[1]);
		free(envp);
		return fb_seterr(err, FB_EIO, "fork failed: %s", strerror(errno));
	}
	if (c == 0) {
		close(p[0]);
		fb_child_init(parent); /* the death signal survives the exec */
		signal(SIGINT, SIG_DFL);      /* exec keeps an ignored signal ignored */
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		char *argv[] = {(char *)program, "__compile-server", (char *)build_dir, jobs_s, fd_s, NULL};
		execve(program, argv, envp);
		_exit(127);
	}
	free(envp);
	close(p[1]);
	char b = 0;
	struct pollfd pf = {p[0], POLLIN, 0};
	int ready = 0;
	while (poll(&pf, 1, 10000) < 0 && errno == EINTR)
		;
	if (pf.revents & (POLLIN | POLLHUP))
		ready = read(p[0], &b, 1) == 1;
	close(p[0]);
	if (!ready) {
		fb_compile_server_stop(c, build_dir);
		return fb_seterr(err, FB_EIO, "the compile server did not start");
	}
	*pid = c;
	return 0;
}

void
fb_compile_server_stop(pid_t pid, const char *build_dir)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* what a server killed outright leaves behind */
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s/tmp/%s", build_dir, FB_SERVER_SOCKET) < (int)sizeof(p))
		unlink(p);
	if (snprintf(p, sizeof(p), "%s/tmp/compile-pch", build_dir) < (int)sizeof(p))
		fb_pch_dir_remove(p);
}
