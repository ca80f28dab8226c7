/* client.c: fb_compile's side of the build's compile server (run.h): the socket checked,
 * the pending jobs sent with the options a local worker would use, the answers decoded into
 * the jobs exactly as schedule.c decodes a local worker's. A job whose answer is not a clean
 * success (a compile error included) stays pending and is compiled here, so the server
 * decides no outcome and every message is the local one. */
#define _GNU_SOURCE /* SO_PEERCRED, struct ucred */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "base/bytes.h"
#include "base/proc.h"

struct out {
	unsigned char *p;
	size_t n, cap;
	int oom;
};

static void
put(struct out *o, const void *p, size_t n)
{
	if (o->oom)
		return;
	if (o->cap - o->n < n) {
		size_t cap = o->cap ? o->cap : 65536;
		while (cap - o->n < n)
			cap *= 2;
		unsigned char *q = realloc(o->p, cap);
		if (!q) {
			o->oom = 1;
			return;
		}
		o->p = q;
		o->cap = cap;
	}
	memcpy(o->p + o->n, p, n);
	o->n += n;
}

static void
put64(struct out *o, uint64_t v)
{
	unsigned char b[8];
	fb_wr64(b, v);
	put(o, b, 8);
}

static void
put_str(struct out *o, const char *s)
{
	put64(o, strlen(s) + 1);
	put(o, s, strlen(s) + 1);
}

/* Why sock must not be used, or "" : a socket of ours, no access for group or others, in a
 * directory (not a link) of ours with none either. */
static void
check_socket(const char *sock, char *why, size_t size)
{
	struct stat st;
	char dir[PATH_MAX];
	why[0] = 0;
	snprintf(dir, sizeof(dir), "%s", sock);
	char *sl = strrchr(dir, '/');
	if (sock[0] != '/' || !sl || strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(why, size, "%.300s is not an absolute socket path that fits", sock);
		return;
	}
	*sl = 0;
	if (lstat(dir[0] ? dir : "/", &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		snprintf(why, size, "its directory %.300s is not a private directory of ours", dir);
	else if (lstat(sock, &st) != 0)
		snprintf(why, size, "%.300s: %s", sock, strerror(errno));
	else if (!S_ISSOCK(st.st_mode))
		snprintf(why, size, "%.300s is not a socket", sock);
	else if (st.st_uid != getuid())
		snprintf(why, size, "%.300s belongs to uid %ld, not to us", sock, (long)st.st_uid);
	else if (st.st_mode & 077)
		snprintf(why, size, "%.300s has mode %03o: other users could reach it", sock, (unsigned)(st.st_mode & 0777));
}

static int
connect_to(const char *sock, char *why, size_t size)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		snprintf(why, size, "cannot connect to %.300s: %s", sock, strerror(errno));
	} else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.uid != getuid()) {
		snprintf(why, size, "%.300s is served by another user", sock);
	} else
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The request for r's pending jobs; idx[k] is the k-th job sent. */
static int
request(struct run *r, const char *home, struct out *o, size_t *idx, size_t *n)
{
	struct fb_job_opts jo;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)) || !(jo.v = calloc(r->ncommon + 6, sizeof(*jo.v))))
		return -1;
	*n = 0;
	for (size_t i = 0; i < r->njobs; i++)
		if (r->jobs[i].state == J_PENDING)
			idx[(*n)++] = i;
	put(o, FB_SERVER_MAGIC, 8);
	put64(o, *n);
	for (size_t k = 0; k < *n; k++) {
		const struct job *j = &r->jobs[idx[k]];
		const struct source *s = &r->src[j->src];
		fb_run_job_options(r, j, &jo);
		struct out b = {0};
		uint64_t want = j->lto ? FB_NVRTC_LTOIR : j->sass != NONE;
		put64(&b, (uint64_t)(j->ptx != NONE && !j->lto) | want << 1 | (uint64_t)!r->o->no_pch << 3);
		put_str(&b, home);
		put_str(&b, fb_nvrtc_path(r->nv));
		put_str(&b, cwd);
		put_str(&b, s->path);
		put_str(&b, s->text);
		put64(&b, jo.n);
		for (size_t m = 0; m < jo.n; m++)
			put_str(&b, jo.v[m]);
		put64(o, b.n);
		put(o, b.p, b.n);
		o->oom |= b.oom;
		free(b.p);
	}
	free(jo.v);
	return o->oom ? -1 : 0;
}

/* One answer for job j: done when it is a clean success, else j is left pending. */
static void
take(struct run *r, struct job *j, const unsigned char *a, size_t n, double t0)
{
	struct fb_error e = {0};
	if (fb_answer_decode(r, j, a, n, &e) != 0 || j->result != 0) {
		fb_cache_entry_clear(&j->e);
		j->result = 0;
		j->pch_note[0] = 0;
		return;
	}
	size_t l = strlen(j->pch_note);
	snprintf(j->pch_note + l, sizeof(j->pch_note) - l, "%s", l ? ", via the build's compile server"
	                                                            : "compiled by the build's compile server");
	j->state = J_DONE;
	j->secs = fb_run_now() - t0;
	fb_run_job_done(r, j);
}

/* Sends the request and reads every answer; "" in note, or why it stopped. */
static void
exchange(struct run *r, int fd, const struct out *o, const size_t *idx, size_t n, char *note, size_t size)
{
	unsigned char *rx = NULL;
	size_t rxn = 0, rxcap = 0, left = n, sent = 0;
	double t0 = fb_run_now();
	while (left && !(r->o->cancel && *r->o->cancel)) {
		struct pollfd pf = {fd, (short)(POLLIN | (sent < o->n ? POLLOUT : 0)), 0};
		if (poll(&pf, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(note, size, "poll: %s", strerror(errno));
			break;
		}
		if (pf.revents & POLLOUT) {
			ssize_t k = send(fd, o->p + sent, o->n - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k > 0)
				sent += (size_t)k;
			else if (k < 0 && errno != EAGAIN && errno != EINTR) {
				snprintf(note, size, "the server went away: %s", strerror(errno));
				break;
			}
		}
		if (!(pf.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (rxcap - rxn < 65536) {
			unsigned char *b = realloc(rx, rxcap ? 2 * rxcap : 262144);
			if (!b) {
				snprintf(note, size, "out of memory");
				break;
			}
			rx = b;
			rxcap = rxcap ? 2 * rxcap : 262144;
		}
		ssize_t k = recv(fd, rx + rxn, rxcap - rxn, MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k <= 0) {
			snprintf(note, size, "the server ended before answering every job");
			break;
		}
		rxn += (size_t)k;
		size_t sz;
		while (left && rxn >= 8 && (sz = fb_answer_size(rx + 8, rxn - 8)) != 0) {
			uint64_t i = fb_rd64(rx);
			if (sz == (size_t)-1 || i >= n || r->jobs[idx[i]].state != J_PENDING) {
				snprintf(note, size, "a malformed answer from the server");
				left = 0;
				break;
			}
			take(r, &r->jobs[idx[i]], rx + 8, sz, t0);
			memmove(rx, rx + 8 + sz, rxn - 8 - sz);
			rxn -= 8 + sz;
			left--;
		}
	}
	free(rx);
}

void
fb_server_run(struct run *r, const char *home, const char *sock, char *note, size_t size)
{
	char why[512] = "";
	size_t n = 0, *idx = calloc(r->njobs ? r->njobs : 1, sizeof(*idx));
	struct out o = {0};
	note[0] = 0;
	check_socket(sock, why, sizeof(why));
	int fd = -1;
	if (!why[0])
		fd = connect_to(sock, why, sizeof(why));
	if (!why[0] && (!idx || request(r, home, &o, idx, &n) != 0))
		snprintf(why, sizeof(why), "out of memory");
	if (!why[0] && n)
		exchange(r, fd, &o, idx, n, why, sizeof(why));
	if (fd >= 0)
		close(fd);
	free(o.p);
	free(idx);
	if (why[0])
		snprintf(note, size, "compile server not used (%.400s); compiled here", why);
}
