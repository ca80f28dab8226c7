/* prepare.c: what fb_compile settles before anything runs: the NVRTC options every job
 * shares; each source read, every header it reads found (depfile.c) and digested; one job per
 * (source, SASS target) and per (source, PTX target without a SASS sibling), each keyed by
 * SHA-256 over everything that decides its output and seeded by its content. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile.h"
#include "depfile.h"
#include "run.h"

static int
add_opt(struct run *r, const char *fmt, ...)
{
	char buf[PATH_MAX + 64];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof(buf))
		return FB_EINVAL;
	char **v = realloc(r->common, (r->ncommon + 1) * sizeof(*v));
	if (!v)
		return FB_ENOMEM;
	r->common = v;
	if (!(v[r->ncommon] = strdup(buf)))
		return FB_ENOMEM;
	r->ncommon++;
	return 0;
}

static int
is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The -std= values NVRTC 13.0 takes (it refuses c++98, c++0x, c++23 and the gnu++ spellings). */
bool
fb_compile_std_ok(const char *std)
{
	static const char *const ok[] = {"c++03", "c++11", "c++14", "c++17", "c++20"};
	if (!std)
		return false;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(std, ok[i]) == 0)
			return true;
	return false;
}

/* The NVRTC options every job shares. */
int
fb_run_options(struct run *r, const char *home, struct fb_error *err)
{
	const struct fb_compile_opts *o = r->o;
	int rc = 0;
	const char *std = o->std && *o->std ? o->std : "c++17";
	if (!fb_compile_std_ok(std))
		return fb_seterr(err, FB_EINVAL, "unsupported --std '%s' (use c++17 or c++20)", std);
	rc |= add_opt(r, "-std=%s", std);
	for (size_t i = 0; i < o->ninclude_dirs; i++)
		rc |= add_opt(r, "-I%s", o->include_dirs[i]);
	if (home && *home) {
		char d[PATH_MAX];
		snprintf(d, sizeof(d), "%s/include/cccl", home);
		if (is_dir(d))
			rc |= add_opt(r, "-I%s", d);
		snprintf(d, sizeof(d), "%s/include", home);
		if (is_dir(d))
			rc |= add_opt(r, "-I%s", d);
	}
	for (size_t i = 0; i < o->ndefines; i++)
		rc |= add_opt(r, "-D%s", o->defines[i]);
	if (o->fast_math)
		rc |= add_opt(r, "--use_fast_math");
	if (o->device_debug)
		rc |= add_opt(r, "--device-debug");
	if (o->lineinfo)
		rc |= add_opt(r, "--generate-line-info");
	if (o->maxrregcount > 0)
		rc |= add_opt(r, "--maxrregcount=%d", o->maxrregcount);
	if (o->rdc || o->lto)
		rc |= add_opt(r, "-rdc=true");
	if (o->lto)
		rc |= add_opt(r, "-dlto");
	for (size_t i = 0; i < o->nnvrtc_opts; i++)
		rc |= add_opt(r, "%s", o->nvrtc_opts[i]);
	if (rc)
		return fb_seterr(err, FB_ENOMEM, "out of memory building options");
	return 0;
}

/* Content digest of a header, computed once per run. */
static int
file_digest(struct run *r, const char *path, unsigned char d[32], int *names_file, struct fb_error *err)
{
	for (size_t i = 0; i < r->ndig; i++)
		if (strcmp(r->dig[i].path, path) == 0) {
			memcpy(d, r->dig[i].d, 32);
			*names_file = r->dig[i].names_file;
			return 0;
		}
	char *text;
	size_t size;
	int rc = fb_read_file(path, &text, &size, err);
	if (rc)
		return rc;
	fb_sha256_buf(text, size, d);
	*names_file = fb_key_names_file(text, size);
	free(text);
	if (r->ndig == r->capdig) {
		size_t cap = r->capdig ? 2 * r->capdig : 64;
		struct digest *v = realloc(r->dig, cap * sizeof(*v));
		if (!v)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		r->dig = v;
		r->capdig = cap;
	}
	if (!(r->dig[r->ndig].path = strdup(path)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	r->dig[r->ndig].names_file = *names_file;
	memcpy(r->dig[r->ndig++].d, d, 32);
	return 0;
}

/* What the output can depend on, without the paths: the source's base name (NVRTC builds
 * internal names from it), its text and the text of every header it reads, in discovery
 * order. The seed of every job is derived from it, so that two checkouts in two places give
 * the same bytes; called after every header of s has its digest. */
static void
content_digest(struct run *r, struct source *s)
{
	struct fb_sha256 h;
	unsigned char d[32];
	int names;
	const char *base = strrchr(s->path, '/');
	fb_sha256_init(&h);
	fb_sha256_str(&h, base ? base + 1 : s->path);
	fb_sha256_update(&h, s->text, s->size);
	for (size_t k = 0; k < s->deps.n; k++)
		if (file_digest(r, s->deps.v[k], d, &names, NULL) == 0)
			fb_sha256_update(&h, d, 32);
	fb_sha256_final(&h, s->content);
}

/* The caller chose a seed of its own (-Xnvrtc --frandom-seed=...). */
static int
user_seed(const struct run *r)
{
	for (size_t k = 0; k < r->ncommon; k++)
		if (strncmp(r->common[k], "--frandom-seed", 14) == 0 || strncmp(r->common[k], "-frandom-seed", 13) == 0)
			return 1;
	return 0;
}

/* Hashes a path (or "-I<path>") as the key spells it: relative to the source's base unless the
 * output may depend on it (key.c). */
static void
key_path(struct fb_sha256 *h, const struct source *s, const char *str)
{
	char buf[PATH_MAX + 8];
	int inc = strncmp(str, "-I", 2) == 0;
	if (s->exact || fb_key_path(s->base, str + (inc ? 2 : 0), buf + inc, sizeof(buf) - 2) != 0) {
		fb_sha256_str(h, str);
		return;
	}
	if (inc)
		memcpy(buf, "-I", 2);
	fb_sha256_str(h, buf);
}

int
fb_run_load_sources(struct run *r, struct fb_error *err)
{
	for (size_t i = 0; i < r->nsrc; i++) {
		struct source *s = &r->src[i];
		s->path = r->srcpaths[i];
		int rc = fb_read_file(s->path, &s->text, &s->size, err);
		if (rc)
			return rc;
		if (memchr(s->text, 0, s->size))
			return fb_seterr(err, FB_EINVAL, "%s: contains a NUL byte; not a CUDA source", s->path);
		const char *slash = strrchr(s->path, '/');
		if (!slash)
			snprintf(s->dir, sizeof(s->dir), ".");
		else if (slash == s->path)
			snprintf(s->dir, sizeof(s->dir), "/");
		else
			snprintf(s->dir, sizeof(s->dir), "%.*s", (int)(slash - s->path), s->path);
		size_t ndirs = 0;
		const char **dirs = fb_deps_dirs(s->dir, r->common, r->ncommon, &ndirs);
		if (!dirs)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		if (r->o->remote.exec && *r->o->remote.exec) /* the jobs' input roots (offload.c) */
			rc = fb_deps_scan_root(s->path, dirs, ndirs, &s->deps, &s->extra, s->computed, sizeof(s->computed), err);
		else
			rc = fb_deps_scan(s->path, dirs, ndirs, &s->deps, err);
		free(dirs);
		if (rc)
			return rc;
		snprintf(s->base, sizeof(s->base), "%s", r->basedir[0] ? r->basedir : s->dir);
		char rel[PATH_MAX + 8];
		s->exact = r->o->device_debug || r->o->lineinfo || fb_key_names_file(s->text, s->size);
		for (size_t k = 0; k < s->deps.n && !s->exact; k++) {
			unsigned char d[32];
			int names = 0;
			if ((rc = file_digest(r, s->deps.v[k], d, &names, err)))
				return rc;
			s->exact = names && fb_key_path(s->base, s->deps.v[k], rel, sizeof(rel)) == 0 && rel[0] == '@';
		}
		struct fb_sha256 h;
		unsigned char d[32];
		int names;
		fb_sha256_init(&h);
		fb_sha256_str(&h, s->exact ? "paths exact" : "paths below base relative");
		key_path(&h, s, s->path);
		fb_sha256_update(&h, s->text, s->size);
		for (size_t k = 0; k < s->deps.n; k++) {
			if ((rc = file_digest(r, s->deps.v[k], d, &names, err)))
				return rc;
			key_path(&h, s, s->deps.v[k]);
			fb_sha256_update(&h, d, 32);
		}
		fb_sha256_final(&h, s->key);
		content_digest(r, s);
	}
	return 0;
}

static int
same_slot(const struct ap_target *a, const struct ap_target *b)
{
	return a->sm == b->sm && a->variant == b->variant;
}

int
fb_run_make_jobs(struct run *r, struct fb_error *err)
{
	const struct fb_compile_opts *o = r->o;
	r->jobs = calloc(r->nsrc * o->ntargets, sizeof(*r->jobs));
	if (!r->jobs)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (size_t s = 0; s < r->nsrc; s++)
		for (size_t t = 0; t < o->ntargets; t++) {
			const struct ap_target *tg = &o->targets[t];
			struct job *j = &r->jobs[r->njobs];
			j->src = s;
			j->sass = j->ptx = j->unit = NONE;
			/* Relocatable code: a PTX target is LTO-IR of its own (fb_dlink makes it one
			 * linked PTX), so it never rides on its SASS sibling. */
			int reloc = o->rdc || o->lto;
			j->lto = o->lto || (reloc && tg->kind == AP_PTX);
			if (tg->kind == AP_SASS) {
				j->sass = t;
				for (size_t u = 0; !reloc && u < o->ntargets; u++)
					if (o->targets[u].kind == AP_PTX && same_slot(tg, &o->targets[u]))
						j->ptx = u;
			} else {
				int sibling = 0;
				for (size_t u = 0; !reloc && u < o->ntargets; u++)
					if (o->targets[u].kind == AP_SASS && same_slot(tg, &o->targets[u]))
						sibling = 1;
				if (sibling)
					continue;
				j->ptx = t;
			}
			ap_target_name(tg, j->arch, sizeof(j->arch));
			/* key: everything that decides the output */
			struct fb_sha256 h;
			unsigned char d[32];
			char ver[32];
			fb_sha256_init(&h);
			fb_sha256_str(&h, "fatbuild-compile-v2"); /* v2: seeded */
			snprintf(ver, sizeof(ver), "nvrtc %d", fb_nvrtc_version(r->nv));
			fb_sha256_str(&h, ver);
			/* the library itself (patch releases), by content so that machines share keys */
			fb_sha256_str(&h, r->nvrtc_key[0] ? r->nvrtc_key : fb_nvrtc_ident(r->nv));
			fb_sha256_str(&h, j->arch);
			fb_sha256_str(&h, j->ptx != NONE ? "ptx" : "-");
			fb_sha256_str(&h, j->sass != NONE ? "cubin" : "-");
			if (j->lto)
				fb_sha256_str(&h, "ltoir");
			key_path(&h, &r->src[s], r->src[s].dir);
			for (size_t k = 0; k < r->ncommon; k++)
				key_path(&h, &r->src[s], r->common[k]);
			fb_sha256_update(&h, r->src[s].key, 32);
			fb_sha256_final(&h, d);
			fb_sha256_hex(d, j->key);
			/* seed: the same for the same content, options and target wherever it lies;
			 * different across translation units (internal names stay unique). */
			char hex[65];
			fb_sha256_init(&h);
			fb_sha256_str(&h, "fatbuild-seed-v1");
			fb_sha256_str(&h, ver);
			fb_sha256_str(&h, j->arch);
			fb_sha256_str(&h, j->ptx != NONE ? "ptx" : "-");
			fb_sha256_str(&h, j->sass != NONE ? "cubin" : "-");
			for (size_t k = 0; k < r->ncommon; k++)
				if (strncmp(r->common[k], "-I", 2) != 0)
					fb_sha256_str(&h, r->common[k]);
			fb_sha256_update(&h, r->src[s].content, 32);
			fb_sha256_final(&h, d);
			fb_sha256_hex(d, hex);
			if (!user_seed(r))
				memcpy(j->seed, hex, 16);
			r->njobs++;
		}
	return 0;
}
