/* check.c: fb_check: the inputs (paths, an interpreter's site-packages), the walk, and the files
 * read in parallel (docs/check-environment.md §1, §6). Threads, not processes: each file is
 * read by one worker on its own mapping and buffers, and the results are put together in order
 * afterwards (report.c), so the report does not depend on which worker finished first. The
 * biggest files go first, so that a 500 MB library does not start last. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"
#include "base/cpus.h"
#include "plumbing.h"

#define MAX_JOBS 64

struct run {
	struct fb_chk c;
	char **inputs;
	size_t ninputs;
	int *rootfd;                 /* an input directory's descriptor, -1 for a file */
	size_t nroots;
	struct fb_chk_walk w;
	struct fb_chk_result *res;   /* one per item */
	bool *skip;                  /* another name of a file read under an earlier one */
	size_t *order;               /* the items, biggest first */
	size_t next, done;
	uint64_t bytes_done, bytes_total;
	size_t nitems;               /* items to read (not skipped) */
};

static void
entry_error(struct fb_chk_result *r, const char *path, const char *fmt, const char *a, const char *b)
	__attribute__((format(printf, 3, 0)));

static void
entry_error(struct fb_chk_result *r, const char *path, const char *fmt, const char *a, const char *b)
{
	struct fb_check_file *f = fb_chk_add_file(r, path);
	if (f)
		snprintf(f->error, sizeof(f->error), fmt, a, b);
}

/* One mapped file that may hold device code. */
static void
read_mapped(struct run *run, int fd, uint64_t size, const char *show, bool text, struct fb_chk_result *r)
{
	if (size == 0) {
		r->without_code++;
		return;
	}
	void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		entry_error(r, show, "cannot mmap %s: %s", show, strerror(errno));
		return;
	}
	fb_chk_analyse(&run->c, m, (size_t)size, show, text, true, r);
	munmap(m, (size_t)size);
}

/* Opens, sniffs and reads item k into run->res[k]. */
static void
read_item(struct run *run, size_t k)
{
	const struct fb_chk_item *it = &run->w.items[k];
	struct fb_chk_result *r = &run->res[k];
	const char *show = it->rel[0] ? it->rel : run->inputs[it->input];
	int fd = it->rel[0] ? fb_chk_open_below(run->rootfd[it->input], it->rel)
	                    : open(show, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			r->links++; /* it became a link since the walk: not followed */
		else
			entry_error(r, show, "cannot open %s: %s", show, strerror(errno));
		return;
	}
	struct stat st;
	unsigned char head[FB_SNIFF_BYTES];
	ssize_t hn;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		r->special++;
	} else if ((hn = pread(fd, head, sizeof(head), 0)) < 0) {
		entry_error(r, show, "cannot read %s: %s", show, strerror(errno));
	} else {
		enum fb_sniff kind = fb_sniff(head, (size_t)hn);
		if (kind == FB_SNIFF_ARCHIVE) {
			fb_chk_archive(&run->c, fd, show, it->rel[0] != 0, r);
			if (!r->archive)
				r->read++;
		} else {
			r->read++;
			if (kind == FB_SNIFF_PLAIN || kind == FB_SNIFF_ELF_OTHER) {
				r->without_code++;
				r->elf_without_code += kind == FB_SNIFF_ELF_OTHER;
			} else {
				read_mapped(run, fd, (uint64_t)st.st_size, show, kind == FB_SNIFF_PTX, r);
			}
		}
	}
	close(fd);
	for (size_t i = 0; i < r->n; i++) {
		r->files[i].input = it->input;
		if (!r->files[i].path[0]) { /* the archive itself */
			char *p = strdup(show);
			if (p) {
				free(r->files[i].path);
				r->files[i].path = p;
			}
		}
	}
}

static void *
worker(void *arg)
{
	struct run *run = arg;
	const struct fb_check_opts *o = run->c.o;
	for (;;) {
		pthread_mutex_lock(&run->c.lock);
		size_t i = run->next < run->nitems ? run->next++ : SIZE_MAX;
		pthread_mutex_unlock(&run->c.lock);
		if (i == SIZE_MAX)
			return NULL;
		size_t k = run->order[i];
		read_item(run, k);
		pthread_mutex_lock(&run->c.lock);
		run->done++;
		run->bytes_done += run->w.items[k].size;
		if (o->progress) {
			const struct fb_chk_item *it = &run->w.items[k];
			struct fb_check_progress p = {run->done, run->nitems, run->bytes_done, run->bytes_total,
			                              it->rel[0] ? it->rel : run->inputs[it->input]};
			o->progress(&p, o->progress_ctx);
		}
		pthread_mutex_unlock(&run->c.lock);
	}
}

static int
cmp_item(const void *a, const void *b)
{
	const struct fb_chk_item *x = a, *y = b;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

/* A file by identity, for the hard-link search. */
struct ident {
	dev_t dev;
	ino_t ino;
	size_t k;
};

static int
cmp_ident(const void *a, const void *b)
{
	const struct ident *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* Hard links: the first name (in path order) of a file is read, the others counted. */
static int
mark_links(struct run *run, size_t *hardlinks)
{
	size_t n = run->w.n, nl = 0;
	struct ident *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		return FB_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (run->w.items[i].linked)
			ids[nl++] = (struct ident){run->w.items[i].dev, run->w.items[i].ino, i};
	qsort(ids, nl, sizeof(*ids), cmp_ident);
	for (size_t i = 1; i < nl; i++)
		if (ids[i].dev == ids[i - 1].dev && ids[i].ino == ids[i - 1].ino) {
			run->skip[ids[i].k] = true;
			(*hardlinks)++;
		}
	free(ids);
	return FB_OK;
}

struct bysize {
	uint64_t size;
	size_t k;
};

static int
cmp_size(const void *a, const void *b)
{
	const struct bysize *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* The items to read, biggest first, into run->order. */
static int
make_order(struct run *run)
{
	struct bysize *bs = malloc((run->w.n ? run->w.n : 1) * sizeof(*bs));
	run->order = malloc((run->w.n ? run->w.n : 1) * sizeof(*run->order));
	if (!bs || !run->order) {
		free(bs);
		return FB_ENOMEM;
	}
	size_t n = 0;
	for (size_t k = 0; k < run->w.n; k++)
		if (!run->skip[k]) {
			bs[n++] = (struct bysize){run->w.items[k].size, k};
			run->bytes_total += run->w.items[k].size;
		}
	qsort(bs, n, sizeof(*bs), cmp_size);
	for (size_t i = 0; i < n; i++)
		run->order[i] = bs[i].k;
	run->nitems = n;
	free(bs);
	return FB_OK;
}

/* The inputs: opts->paths, then the interpreter's site-packages. */
static int
take_inputs(struct run *run, const struct fb_check_opts *o, struct fb_error *err)
{
	char *py[2] = {NULL, NULL};
	size_t npy = 0;
	if (o->python) {
		struct fb_config local;
		const struct fb_config *cfg = fb_config_or_read(o->config, &local);
		int rc = fb_python_site_dirs(cfg->path, o->python, py, &npy, err);
		if (rc)
			return rc;
	}
	run->inputs = calloc(o->npaths + npy + 1, sizeof(*run->inputs));
	run->rootfd = malloc((o->npaths + npy + 1) * sizeof(*run->rootfd));
	if (!run->inputs || !run->rootfd) {
		free(py[0]);
		free(py[1]);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < o->npaths + npy; i++)
		run->rootfd[i] = -1;
	run->nroots = o->npaths + npy;
	for (size_t i = 0; i < o->npaths; i++) {
		char *p = strdup(o->paths[i]);
		if (!p)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		for (size_t l = strlen(p); l > 1 && p[l - 1] == '/'; l--)
			p[l - 1] = 0; /* "site/" names its folders "site/x", not "site//x" */
		run->inputs[run->ninputs++] = p;
	}
	for (size_t i = 0; i < npy; i++)
		run->inputs[run->ninputs++] = py[i];
	return FB_OK;
}

/* Each input: a directory is walked, a regular file is one item; anything else fails the run. */
static int
walk_inputs(struct run *run, struct fb_error *err)
{
	for (size_t i = 0; i < run->ninputs; i++) {
		const char *path = run->inputs[i];
		struct stat st;
		if (stat(path, &st) != 0)
			return fb_seterr(err, FB_EIO, "cannot read %s: %s", path, strerror(errno));
		if (S_ISREG(st.st_mode)) {
			struct fb_chk_walk *w = &run->w;
			if (w->n == w->cap) {
				size_t nc = w->cap ? w->cap * 2 : 64;
				struct fb_chk_item *ni = realloc(w->items, nc * sizeof(*ni));
				if (!ni)
					return fb_seterr(err, FB_ENOMEM, "out of memory");
				w->items = ni;
				w->cap = nc;
			}
			char *rel = strdup("");
			if (!rel)
				return fb_seterr(err, FB_ENOMEM, "out of memory");
			w->items[w->n++] = (struct fb_chk_item){i, rel, (uint64_t)st.st_size, st.st_dev, st.st_ino, false};
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			return fb_seterr(err, FB_EIO, "%s: not a regular file (%s): never opened", path,
			                 fb_file_kind(st.st_mode));
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || (run->rootfd[i] = dup(fd)) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return fb_seterr(err, FB_EIO, "cannot open directory %s: %s", path, strerror(e));
		}
		if (fb_chk_walk(&run->w, fd, i) != 0)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (run->w.n)
		qsort(run->w.items, run->w.n, sizeof(*run->w.items), cmp_item);
	return FB_OK;
}

/* The workers: jobs threads (this one among them) over run->order. */
static int
read_all(struct run *run, int jobs)
{
	if (jobs <= 0) {
		struct fb_jobs_info ji;
		fb_jobs_default(NULL, NULL, 0, NULL, FB_JOBS_MAX, &ji);
		jobs = ji.jobs;
	}
	if ((size_t)jobs > run->nitems)
		jobs = (int)run->nitems;
	if (jobs > MAX_JOBS)
		jobs = MAX_JOBS;
	pthread_t th[MAX_JOBS];
	int started = 0;
	for (int i = 1; i < jobs; i++) {
		if (pthread_create(&th[started], NULL, worker, run) != 0)
			break; /* fewer threads: the others take the work */
		started++;
	}
	worker(run);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return FB_OK;
}

static void
run_free(struct run *run)
{
	for (size_t i = 0; i < run->nroots; i++)
		if (run->rootfd[i] >= 0)
			close(run->rootfd[i]);
	if (run->res)
		for (size_t k = 0; k < run->w.n; k++)
			fb_chk_result_free(&run->res[k]);
	free(run->res);
	free(run->skip);
	free(run->order);
	free(run->rootfd);
	fb_chk_walk_free(&run->w);
	if (run->c.la_state > 0)
		fb_la_unload(&run->c.la);
	pthread_mutex_destroy(&run->c.lock);
}

int
fb_check(const struct fb_check_opts *o, struct fb_check_report *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!o || !o->ndevices || (!o->npaths && !o->python))
		return fb_seterr(err, FB_EINVAL, "fb_check: no device or no path");
	struct run run = {0};
	run.c.o = o;
	pthread_mutex_init(&run.c.lock, NULL);
	size_t hardlinks = 0;
	int rc = take_inputs(&run, o, err);
	if (!rc)
		rc = walk_inputs(&run, err);
	if (!rc) {
		run.res = calloc(run.w.n ? run.w.n : 1, sizeof(*run.res));
		run.skip = calloc(run.w.n ? run.w.n : 1, sizeof(*run.skip));
		if (!run.res || !run.skip || mark_links(&run, &hardlinks) || make_order(&run))
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = read_all(&run, o->jobs);
	if (!rc) {
		rc = fb_chk_report(&run.w, run.res, run.skip, run.inputs, run.ninputs, out);
		out->hardlinks = hardlinks;
		if (rc) {
			out->inputs = NULL;
			out->ninputs = 0;
			fb_check_report_free(out);
			fb_seterr(err, FB_ENOMEM, "out of memory");
		} else {
			run.inputs = NULL; /* the report owns them now */
			run.ninputs = 0;
		}
	}
	for (size_t i = 0; i < run.ninputs; i++)
		free(run.inputs[i]);
	free(run.inputs);
	run_free(&run);
	return rc;
}
