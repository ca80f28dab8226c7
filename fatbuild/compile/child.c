/* child.c: the forked worker of one unit, which calls NVRTC once per job, and the answers it
 * streams back through its pipe: status, log, PCH note, PTX and cubin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "base/bytes.h"
#include "base/proc.h"

void
fb_run_job_options(const struct run *r, const struct job *j, struct fb_job_opts *jo)
{
	const struct source *s = &r->src[j->src];
	jo->n = 0;
	snprintf(jo->arch, sizeof(jo->arch), "-arch=%s", j->arch);
	snprintf(jo->inc, sizeof(jo->inc), "-I%s", s->dir);
	jo->v[jo->n++] = jo->arch;
	jo->v[jo->n++] = jo->inc;
	for (size_t m = 0; m < r->ncommon; m++)
		jo->v[jo->n++] = r->common[m];
	if (j->seed[0]) {
		snprintf(jo->seed, sizeof(jo->seed), "--frandom-seed=%s", j->seed);
		jo->v[jo->n++] = jo->seed;
	}
	if (j->lto && !r->o->lto)
		jo->v[jo->n++] = "-dlto";
}

int
fb_worker_compile(const struct fb_nvrtc *nv, const struct fb_worker_job *wj, struct fb_pch_state *ps, int pch,
                  const char *wdir, const char *first_note, int fd, int *rcout)
{
	struct fb_nvrtc_out out = {0};
	struct fb_error e = {0};
	char note[256] = "", pchopt[PATH_MAX + 16];
	int verdict = 0;
	size_t heap = 0, nopts = wj->nopts;
	const char **opts = wj->opts;
	int rc;
	pch = pch && !ps->off;
	if (pch && fb_pch_options(wdir, pchopt, sizeof(pchopt), opts + nopts) == 0)
		nopts += 2;
	else
		pch = 0;
	if (pch && ps->heap) {
		fb_nvrtc_pch_heap(nv, NULL, ps->heap);
		ps->heap = 0;
	}
	if (pch)
		fb_nvrtc_pch_heap(nv, &heap, 0);
	rc = fb_nvrtc_compile(nv, wj->text, wj->name, opts, (int)nopts, wj->want_ptx, wj->want_cubin, &out, &e);
	if (pch && (rc || out.result != 0)) {
		/* never let the PCH fail a job: the same compile without it decides */
		fb_nvrtc_out_clear(&out);
		rc = fb_nvrtc_compile(nv, wj->text, wj->name, opts, (int)nopts - 2, wj->want_ptx, wj->want_cubin, &out, &e);
		if (!rc && out.result == 0) {
			ps->off = 1;
			verdict = FB_PCH_REFUSED;
			snprintf(note, sizeof(note), "PCH refused: the compile failed with it and passed without; "
			                             "plain compiles from here");
		}
		pch = 0;
	}
	if (first_note && first_note[0]) {
		verdict = FB_PCH_REFUSED;
		snprintf(note, sizeof(note), "PCH refused: %.200s", first_note);
	}
	if (!rc && pch) {
		int used = 0;
		if (out.log)
			fb_pch_log_strip(out.log, &used);
		verdict = fb_pch_verdict(ps, out.pch_status, out.pch_heap_required, used, heap, note, sizeof(note));
	}
	const char *log = rc ? e.msg : out.log ? out.log : "";
	int bad = fb_answer_write(fd, rc, out.result, verdict, log, note, out.ptx, rc ? 0 : out.ptx_size, out.cubin,
	                          rc ? 0 : out.cubin_size);
	fb_nvrtc_out_clear(&out);
	*rcout = rc;
	return bad ? -1 : 0;
}

int
fb_answer_write(int fd, int rc, int result, int pch, const char *log, const char *note, const unsigned char *ptx,
                size_t nptx, const unsigned char *cubin, size_t ncubin)
{
	unsigned char hdr[ANSWER];
	fb_wr64(hdr, (uint64_t)rc);
	fb_wr64(hdr + 8, (uint64_t)(int64_t)result);
	fb_wr64(hdr + 16, strlen(log));
	fb_wr64(hdr + 24, strlen(note));
	fb_wr64(hdr + 32, nptx);
	fb_wr64(hdr + 40, ncubin);
	fb_wr64(hdr + 48, (uint64_t)pch);
	int bad = fb_write_all(fd, hdr, sizeof(hdr)) || fb_write_all(fd, log, strlen(log)) ||
	          fb_write_all(fd, note, strlen(note));
	if (!bad && nptx)
		bad = fb_write_all(fd, ptx, nptx);
	if (!bad && ncubin)
		bad = fb_write_all(fd, cubin, ncubin);
	return bad ? -1 : 0;
}

/* The child: a worker running the jobs of one unit in order, each one NVRTC compile; each
 * answer is 56 bytes (status, nvrtcResult, four sizes, the PCH verdict's flags) then log, PCH
 * note, PTX and cubin.
 * With u->pch the jobs share one option set and NVRTC's automatic PCH (worker.c): the first
 * parses the headers and keeps them in the PCH heap, the others reuse them. Returns the exit
 * code for _exit. (Not _Noreturn: a noreturn function need not preserve the caller's
 * registers, and memory checkers that follow the fork would then see the parent's blocks as
 * lost.) */
int
fb_run_child(struct run *r, struct unit *u, int fd)
{
	struct fb_job_opts jo;
	char wdir[PATH_MAX], why[PATH_MAX + 64] = "";
	struct fb_pch_state ps = {0};
	int bad = 0;
	jo.v = calloc(r->ncommon + 6, sizeof(*jo.v));
	if (u->pch) {
		fb_child_init(r->parent);
		if (fb_pch_worker_dir(r->pch_dir, (size_t)(u - r->units), wdir, sizeof(wdir), why, sizeof(why)) != 0)
			ps.off = 1; /* said in the first job's note */
	}
	for (size_t k = 0; k < u->n && !bad; k++) {
		struct job *j = &r->jobs[u->jobs[k]];
		struct source *s = &r->src[j->src];
		int rc = FB_ENOMEM;
		if (!jo.v) {
			struct fb_error e = {0};
			fb_seterr(&e, FB_ENOMEM, "out of memory");
			unsigned char hdr[ANSWER] = {0};
			fb_wr64(hdr, (uint64_t)FB_ENOMEM);
			fb_wr64(hdr + 16, strlen(e.msg));
			bad = fb_write_all(fd, hdr, sizeof(hdr)) || fb_write_all(fd, e.msg, strlen(e.msg));
			break;
		}
		fb_run_job_options(r, j, &jo);
		struct fb_worker_job wj = {s->text, s->path, jo.v, jo.n, j->ptx != NONE && !j->lto,
		                           j->lto ? FB_NVRTC_LTOIR : j->sass != NONE};
		bad = fb_worker_compile(r->nv, &wj, &ps, u->pch, wdir, k == 0 ? why : NULL, fd, &rc) != 0;
		if (rc)
			break; /* NVRTC could not be driven: the parent stops the run */
	}
	free(jo.v);
	close(fd);
	return bad ? 3 : 0;
}

/* The size of the complete answer at the start of p[0..n), or 0 while it is incomplete. */
size_t
fb_answer_size(const unsigned char *p, size_t n)
{
	if (n < ANSWER)
		return 0;
	uint64_t t = ANSWER;
	for (int i = 2; i < 6; i++) {
		uint64_t v = fb_rd64(p + 8 * i);
		if (v > ((uint64_t)1 << 40))
			return (size_t)-1; /* garbage: caught by fb_answer_decode */
		t += v;
	}
	return t <= n ? (size_t)t : 0;
}

/* Parses one answer p[0..n) into j->e / j->result / j->pch_note. */
int
fb_answer_decode(struct run *r, struct job *j, const unsigned char *p, size_t n, struct fb_error *err)
{
	const char *src = r->src[j->src].path;
	uint64_t rc = fb_rd64(p), res = fb_rd64(p + 8), nl = fb_rd64(p + 16), nn = fb_rd64(p + 24), np = fb_rd64(p + 32),
	         nc = fb_rd64(p + 40);
	if (n < ANSWER || nl > n || nn > n || np > n || nc > n || ANSWER + nl + nn + np + nc != n)
		return fb_seterr(err, FB_ECOMPILE, "%s: the NVRTC process for %s gave a malformed answer", src, j->arch);
	p += ANSWER;
	if (rc != 0)
		return fb_seterr(err, (int)rc, "%s: %s: %.*s", src, j->arch, (int)nl, (const char *)p);
	j->result = (int)(int64_t)res;
	j->pch = (int)(fb_rd64(p - ANSWER + 48) & (FB_PCH_MADE | FB_PCH_USED | FB_PCH_REFUSED));
	j->e.log = (char *)fb_dup_bytes(p, nl);
	snprintf(j->pch_note, sizeof(j->pch_note), "%.*s", (int)nn, (const char *)p + nl);
	p += nl + nn;
	if (np)
		j->e.ptx = fb_dup_bytes(p, np);
	if (nc)
		j->e.cubin = fb_dup_bytes(p + np, nc);
	j->e.ptx_size = np;
	j->e.cubin_size = nc;
	if (!j->e.log || (np && !j->e.ptx) || (nc && !j->e.cubin))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	if (j->result == 0 && j->lto && !nc)
		return fb_seterr(err, FB_ECOMPILE, "%s: NVRTC returned no LTO-IR for %s", src, j->arch);
	if (j->result == 0 && !j->lto && ((j->ptx != NONE && !np) || (j->sass != NONE && !nc)))
		return fb_seterr(err, FB_ECOMPILE, "%s: NVRTC returned no %s for %s", src, nc ? "PTX" : "cubin", j->arch);
	return 0;
}
