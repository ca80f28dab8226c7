/* walk.c: the regular files below a directory (docs/check-environment.md §1). Every step is
 * relative to an open directory (openat, fstatat with AT_SYMLINK_NOFOLLOW, O_NOFOLLOW): a
 * symbolic link is counted and never followed, so neither a link out of the tree nor a loop of
 * links is ever entered; FIFOs, sockets and devices are counted and never opened; a directory
 * is entered only if it is still the one fstatat saw, not one of its ancestors (bind-mount
 * loops), and at most MAX_DEPTH deep, one descriptor per level. The files are read later, each
 * opened again below the root the same way (fb_chk_open_below). A NAME.dist-info directory's
 * METADATA and RECORD are read as they are met (distinfo.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "base/safefs.h"

#define MAX_DEPTH 64
#define META_MAX ((off_t)64 << 20)

struct anc {
	dev_t dev;
	ino_t ino;
};

static void walk_error(struct fb_chk_walk *w, size_t input, const char *rel, const char *fmt, const char *detail)
	__attribute__((format(printf, 4, 0)));

static void
walk_error(struct fb_chk_walk *w, size_t input, const char *rel, const char *fmt, const char *detail)
{
	struct fb_check_file *f = fb_chk_add_file(&w->errors, rel);
	if (!f) {
		w->oom = 1;
		return;
	}
	f->input = input;
	snprintf(f->error, sizeof(f->error), fmt, rel[0] ? rel : ".", detail);
}

static int
add_item(struct fb_chk_walk *w, size_t input, const char *rel, const struct stat *st)
{
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 256;
		struct fb_chk_item *ni = realloc(w->items, nc * sizeof(*ni));
		if (!ni)
			return w->oom = 1;
		w->items = ni;
		w->cap = nc;
	}
	char *r = strdup(rel);
	if (!r)
		return w->oom = 1;
	w->items[w->n++] = (struct fb_chk_item){input, r, (uint64_t)st->st_size, st->st_dev, st->st_ino, st->st_nlink > 1};
	return 0;
}

/* A file of the dist-info directory open on dfd, whole, when it is a regular file of sane size. */
static char *
read_meta(int dfd, const char *name, size_t *n)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > META_MAX) {
		close(fd);
		return NULL;
	}
	char *data = NULL;
	return fb_read_fd(fd, name, &data, n, NULL) == 0 ? data : NULL;
}

struct record_ctx {
	struct fb_chk_walk *w;
	const char *base;
	size_t input, dist;
};

static int
take_record(const char *path, size_t len, void *ctx)
{
	struct record_ctx *rc = ctx;
	struct fb_chk_walk *w = rc->w;
	char norm[4096];
	if (fb_path_join(rc->base, path, len, norm, sizeof(norm)) != 0 || !norm[0])
		return 0; /* outside the walked tree (../../../bin/x), or unusable */
	if (w->nrec == w->rcap) {
		size_t nc = w->rcap ? w->rcap * 2 : 1024;
		struct fb_chk_owner *nr = realloc(w->rec, nc * sizeof(*nr));
		if (!nr)
			return w->oom = 1;
		w->rec = nr;
		w->rcap = nc;
	}
	char *p = strdup(norm);
	if (!p)
		return w->oom = 1;
	w->rec[w->nrec++] = (struct fb_chk_owner){rc->input, rc->dist, p};
	return 0;
}

/* The distribution of the dist-info directory rel (open on dfd), its files from RECORD. */
static void
take_distinfo(struct fb_chk_walk *w, int dfd, size_t input, const char *rel)
{
	size_t mn = 0, rn = 0;
	char *meta = read_meta(dfd, "METADATA", &mn), *rec = read_meta(dfd, "RECORD", &rn);
	char *name = NULL, *version = NULL;
	if (!meta || fb_dist_metadata(meta, mn, &name, &version) != 0) {
		const char *b = strrchr(rel, '/');
		if (fb_dist_from_filename(b ? b + 1 : rel, &name, &version) == FB_ENOMEM)
			w->oom = 1;
	}
	char *where = strdup(rel), *base = strdup(rel);
	if (w->nd == w->dcap) {
		size_t nc = w->dcap ? w->dcap * 2 : 32;
		struct fb_chk_dist *nd = realloc(w->dists, nc * sizeof(*nd));
		if (nd)
			w->dists = nd, w->dcap = nc;
	}
	if (!name || !version || !where || !base || w->nd == w->dcap) {
		w->oom = 1;
		free(name), free(version), free(where), free(base), free(meta), free(rec);
		return;
	}
	char *slash = strrchr(base, '/');
	if (slash)
		*slash = 0;
	else
		base[0] = 0;
	w->dists[w->nd] = (struct fb_chk_dist){name, version, where, input};
	struct record_ctx rc = {w, base, input, w->nd};
	w->nd++;
	if (rec)
		fb_dist_record(rec, rn, take_record, &rc);
	free(base);
	free(meta);
	free(rec);
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

static void walk_dir(struct fb_chk_walk *w, int dfd, size_t input, const char *rel, struct anc *anc, int depth);

/* One name of the directory open on dfd. */
static void
walk_entry(struct fb_chk_walk *w, int dfd, size_t input, const char *rel, const char *name, struct anc *anc, int depth)
{
	char child[4096];
	int k = snprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", name);
	if (k < 0 || (size_t)k >= sizeof(child)) {
		walk_error(w, input, rel, "%.300s: a name inside is too long (%.100s)", name);
		return;
	}
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		walk_error(w, input, child, "cannot stat %.300s: %s", strerror(errno));
	} else if (S_ISLNK(st.st_mode)) {
		w->links++;
	} else if (S_ISREG(st.st_mode)) {
		add_item(w, input, child, &st);
	} else if (!S_ISDIR(st.st_mode)) {
		w->special++;
	} else if (depth >= MAX_DEPTH) {
		walk_error(w, input, child, "%.300s: more than %s directories deep: not read", "64");
	} else {
		for (int i = 0; i <= depth; i++)
			if (anc[i].dev == st.st_dev && anc[i].ino == st.st_ino) {
				walk_error(w, input, child, "%.300s: %s", "the directory is one of its own ancestors (a bind mount loop): not read again");
				return;
			}
		int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat cst;
		if (cfd < 0 || fstat(cfd, &cst) != 0 || cst.st_dev != st.st_dev || cst.st_ino != st.st_ino) {
			walk_error(w, input, child, "cannot open directory %.300s: %s", cfd < 0 ? strerror(errno) : "it changed while read");
			if (cfd >= 0)
				close(cfd);
			return;
		}
		anc[depth + 1] = (struct anc){st.st_dev, st.st_ino};
		walk_dir(w, cfd, input, child, anc, depth + 1);
	}
}

/* The directory open on dfd (closed here), rel below the root. */
static void
walk_dir(struct fb_chk_walk *w, int dfd, size_t input, const char *rel, struct anc *anc, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		walk_error(w, input, rel, "cannot read directory %.300s: %s", strerror(errno));
		close(dfd);
		return;
	}
	if (ends_with(rel, ".dist-info"))
		take_distinfo(w, dirfd(d), input, rel);
	struct dirent *de;
	errno = 0;
	while (!w->oom && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			walk_entry(w, dirfd(d), input, rel, de->d_name, anc, depth);
		errno = 0;
	}
	if (errno)
		walk_error(w, input, rel, "cannot read directory %.300s: %s", strerror(errno));
	closedir(d);
}

int
fb_chk_walk(struct fb_chk_walk *w, int rootfd, size_t input)
{
	struct stat st;
	struct anc anc[MAX_DEPTH + 2];
	if (fstat(rootfd, &st) != 0) {
		close(rootfd);
		return FB_EIO;
	}
	anc[0] = (struct anc){st.st_dev, st.st_ino};
	walk_dir(w, rootfd, input, "", anc, 0);
	return w->oom ? FB_ENOMEM : FB_OK;
}

int
fb_chk_open_below(int rootfd, const char *rel)
{
	char buf[4096];
	int k = snprintf(buf, sizeof(buf), "%s", rel);
	if (k < 0 || (size_t)k >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int dfd = rootfd;
	char *comp = buf;
	for (char *slash; (slash = strchr(comp, '/'));) {
		*slash = 0;
		int nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (dfd != rootfd)
			close(dfd);
		if (nfd < 0) {
			errno = e;
			return -1;
		}
		dfd = nfd;
		comp = slash + 1;
	}
	int fd = openat(dfd, comp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int e = errno;
	if (dfd != rootfd)
		close(dfd);
	errno = e;
	return fd;
}

void
fb_chk_walk_free(struct fb_chk_walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->items[i].rel);
	for (size_t i = 0; i < w->nd; i++) {
		free(w->dists[i].name);
		free(w->dists[i].version);
		free(w->dists[i].where);
	}
	for (size_t i = 0; i < w->nrec; i++)
		free(w->rec[i].path);
	free(w->items);
	free(w->dists);
	free(w->rec);
	fb_chk_result_free(&w->errors);
	memset(w, 0, sizeof(*w));
}
