/* report.c: the report from the files read (docs/check-environment.md §4): each file goes to
 * the distribution whose RECORD names it, else to its archive, else to its folder (the first
 * directory below the input, or the input itself); distributions come first, by name, then the
 * folders and archives; files by path within them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"

struct gkey {
	int kind;                /* 0 distribution (a: its index), 1 folder (a: input, s), 2 archive (a: item) */
	size_t a;
	char *s;
};

struct groups {
	struct fb_check_group *g;
	struct gkey *key;
	size_t n, cap;
	size_t last;
	int oom;
};

static char *
dup_or(struct groups *gs, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		gs->oom = 1;
	return d;
}

/* The group of key (kind, a, s), made with name and version when new. */
static size_t
group(struct groups *gs, int kind, size_t a, const char *s, size_t input, const char *name, const char *version,
      const char *where, bool dist)
{
	if (gs->last < gs->n && gs->key[gs->last].kind == kind && gs->key[gs->last].a == a &&
	    strcmp(gs->key[gs->last].s, s) == 0)
		return gs->last;
	for (size_t i = 0; i < gs->n; i++)
		if (gs->key[i].kind == kind && gs->key[i].a == a && strcmp(gs->key[i].s, s) == 0)
			return gs->last = i;
	if (gs->n == gs->cap) {
		size_t nc = gs->cap ? gs->cap * 2 : 32;
		struct fb_check_group *ng = realloc(gs->g, nc * sizeof(*ng));
		if (ng)
			gs->g = ng;
		struct gkey *nk = realloc(gs->key, nc * sizeof(*nk));
		if (nk)
			gs->key = nk;
		if (!ng || !nk) {
			gs->oom = 1;
			return 0;
		}
		gs->cap = nc;
	}
	struct fb_check_group *g = &gs->g[gs->n];
	*g = (struct fb_check_group){dup_or(gs, name), dup_or(gs, version), dup_or(gs, where), dist, kind == 2, input, 0, 0};
	gs->key[gs->n] = (struct gkey){kind, a, dup_or(gs, s)};
	return gs->last = gs->n++;
}

/* The folder group of rel below input: its first directory, else the input (a file input: the
 * directory it is in). */
static size_t
folder(struct groups *gs, char **inputs, size_t input, const char *rel)
{
	char first[4096], name[4096];
	const char *slash = strchr(rel, '/');
	if (slash) {
		snprintf(first, sizeof(first), "%.*s", (int)(slash - rel), rel);
		snprintf(name, sizeof(name), "%s/%s", inputs[input], first);
	} else if (rel[0]) {
		first[0] = 0;
		snprintf(name, sizeof(name), "%s", inputs[input]);
	} else {
		snprintf(first, sizeof(first), "%s", "");
		const char *in = inputs[input], *sl = strrchr(in, '/');
		if (!sl)
			snprintf(name, sizeof(name), ".");
		else
			snprintf(name, sizeof(name), "%.*s", sl == in ? 1 : (int)(sl - in), in);
	}
	return group(gs, 1, input, first, input, name, "", first[0] ? first : name, false);
}


static int
cmp_owner(const void *a, const void *b)
{
	const struct fb_chk_owner *x = a, *y = b;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The distribution whose RECORD names rel below input (owners sorted), or -1. */
static long
owner(const struct fb_chk_walk *w, size_t input, const char *rel)
{
	struct fb_chk_owner key = {input, 0, (char *)rel};
	const struct fb_chk_owner *o = w->nrec ? bsearch(&key, w->rec, w->nrec, sizeof(*w->rec), cmp_owner) : NULL;
	return o ? (long)o->dist : -1;
}

/* Moves r's files to out, each in group g. */
static int
take_files(struct fb_check_report *out, size_t *cap, struct fb_chk_result *r, size_t g, struct fb_check_group *grp)
{
	if (out->nfiles + r->n > *cap) {
		size_t nc = (*cap + r->n) * 2;
		struct fb_check_file *nf = realloc(out->files, nc * sizeof(*nf));
		if (!nf)
			return FB_ENOMEM;
		out->files = nf;
		*cap = nc;
	}
	for (size_t i = 0; i < r->n; i++) {
		r->files[i].group = g;
		grp->with_code += !r->files[i].error[0];
		out->files[out->nfiles++] = r->files[i];
	}
	free(r->files);
	r->files = NULL;
	r->n = r->cap = 0;
	return FB_OK;
}

/* Sorting groups and files: rank[g] is group g's place. */
struct order {
	const struct fb_check_group *g;
	size_t i;
};

static int
cmp_group(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	const struct fb_check_group *p = x->g, *q = y->g;
	if (p->dist != q->dist)
		return p->dist ? -1 : 1;
	int c = strcasecmp(p->name, q->name);
	if (!c)
		c = strcmp(p->version, q->version);
	if (!c)
		c = strcmp(p->where, q->where);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int
cmp_file(const void *a, const void *b)
{
	const struct fb_check_file *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Groups in their order, files renumbered and sorted. */
static int
sort_all(struct groups *gs, struct fb_check_report *out)
{
	struct order *ord = malloc((gs->n ? gs->n : 1) * sizeof(*ord));
	size_t *rank = malloc((gs->n ? gs->n : 1) * sizeof(*rank));
	struct fb_check_group *ng = malloc((gs->n ? gs->n : 1) * sizeof(*ng));
	if (!ord || !rank || !ng) {
		free(ord), free(rank), free(ng);
		return FB_ENOMEM;
	}
	for (size_t i = 0; i < gs->n; i++)
		ord[i] = (struct order){&gs->g[i], i};
	qsort(ord, gs->n, sizeof(*ord), cmp_group);
	for (size_t i = 0; i < gs->n; i++) {
		rank[ord[i].i] = i;
		ng[i] = gs->g[ord[i].i];
	}
	for (size_t i = 0; i < out->nfiles; i++)
		out->files[i].group = rank[out->files[i].group];
	if (out->nfiles)
		qsort(out->files, out->nfiles, sizeof(*out->files), cmp_file);
	free(gs->g);
	gs->g = NULL;
	out->groups = ng;
	out->ngroups = gs->n;
	free(ord);
	free(rank);
	return FB_OK;
}

/* The group of item k: its archive, its distribution, or its folder. */
static size_t
item_group(struct groups *gs, const struct fb_chk_walk *w, char **inputs, size_t k, const struct fb_chk_result *r)
{
	const struct fb_chk_item *it = &w->items[k];
	if (r->archive) {
		const char *show = it->rel[0] ? it->rel : inputs[it->input];
		char *name = NULL, *version = NULL;
		bool named = r->dist_name != NULL;
		if (!named)
			named = fb_dist_from_filename(show, &name, &version) == 0;
		char key[32];
		snprintf(key, sizeof(key), "%zu", k);
		size_t g = group(gs, 2, k, key, it->input, r->dist_name ? r->dist_name : name ? name : show,
		                 r->dist_version ? r->dist_version : version ? version : "", show, named);
		free(name);
		free(version);
		return g;
	}
	long d = owner(w, it->input, it->rel);
	for (size_t i = 0; d < 0 && i < w->nd; i++) { /* the dist-info's own files (METADATA, ...) */
		size_t wl = strlen(w->dists[i].where);
		if (w->dists[i].input == it->input && strncmp(it->rel, w->dists[i].where, wl) == 0 && it->rel[wl] == '/')
			d = (long)i;
	}
	if (d >= 0) {
		const struct fb_chk_dist *di = &w->dists[d];
		return group(gs, 0, (size_t)d, "", di->input, di->name, di->version, di->where, true);
	}
	return folder(gs, inputs, it->input, it->rel);
}

static void
count(struct fb_check_report *out, const struct fb_chk_result *r)
{
	out->read += r->read;
	out->without_code += r->without_code;
	out->elf_without_code += r->elf_without_code;
	out->links += r->links;
	out->special += r->special;
	out->nested += r->nested;
}

int
fb_chk_report(struct fb_chk_walk *w, struct fb_chk_result *res, const bool *skip, char **inputs, size_t ninputs,
              struct fb_check_report *out)
{
	struct groups gs = {0};
	size_t fcap = 0;
	int rc = FB_OK;
	out->inputs = inputs;
	out->ninputs = ninputs;
	if (w->nrec)
		qsort(w->rec, w->nrec, sizeof(*w->rec), cmp_owner);
	for (size_t d = 0; d < w->nd; d++)
		group(&gs, 0, d, "", w->dists[d].input, w->dists[d].name, w->dists[d].version, w->dists[d].where, true);
	for (size_t k = 0; k < w->n && !rc && !gs.oom; k++) {
		if (skip[k])
			continue;
		size_t g = item_group(&gs, w, inputs, k, &res[k]);
		if (gs.oom)
			break;
		gs.g[g].files += res[k].read;
		out->bytes += w->items[k].size;
		count(out, &res[k]);
		rc = take_files(out, &fcap, &res[k], g, &gs.g[g]);
	}
	for (size_t i = 0; i < w->errors.n && !rc && !gs.oom; i++) {
		struct fb_check_file *f = &w->errors.files[i];
		struct fb_chk_result one = {0};
		size_t g = folder(&gs, inputs, f->input, f->path);
		struct fb_check_file *c = gs.oom ? NULL : fb_chk_add_file(&one, f->path);
		if (!c) {
			rc = FB_ENOMEM;
			break;
		}
		char *path = c->path;
		*c = *f;
		c->path = path;
		rc = take_files(out, &fcap, &one, g, &gs.g[g]);
	}
	out->links += w->links;
	out->special += w->special;
	if (!rc && !gs.oom)
		rc = sort_all(&gs, out);
	for (size_t i = 0; i < gs.n; i++)
		free(gs.key[i].s);
	free(gs.key);
	if (rc || gs.oom) {
		for (size_t i = 0; gs.g && i < gs.n; i++) {
			free(gs.g[i].name);
			free(gs.g[i].version);
			free(gs.g[i].where);
		}
		free(gs.g);
		return FB_ENOMEM;
	}
	return FB_OK;
}

void
fb_check_report_free(struct fb_check_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ninputs; i++)
		free(r->inputs[i]);
	free(r->inputs);
	for (size_t i = 0; i < r->ngroups; i++) {
		free(r->groups[i].name);
		free(r->groups[i].version);
		free(r->groups[i].where);
	}
	free(r->groups);
	fb_chk_files_free(r->files, r->nfiles);
	memset(r, 0, sizeof(*r));
}
