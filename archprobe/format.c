/* format.c: renders a resolved arch list for each consumer (docs/archlist.md §6).
 * For `8.0 8.6+PTX`:
 *   nvcc   -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_86,code=compute_86
 *   torch  8.0 8.6+PTX                       (PTX without SASS cannot be written: error)
 *   cmake  80-real;86                        (86-virtual for PTX only)
 *   clang  --offload-arch=sm_80 --offload-arch=sm_86 --no-cuda-include-ptx=all --cuda-include-ptx=sm_86
 *          (PTX only: error; ap_archlist_format_clang for one clang version's spelling)
 *   nvrtc  -arch=sm_80 / -arch=sm_86 / -arch=compute_86, one compile job per line
 *   bazel  sm_80;compute_86:sm_86,compute_86 (rules_cuda specs)
 *   json   {"targets": [...], "source", "warnings", "toolkit"}
 *   list   80;86 (the arches that get SASS)
 * The list is sorted (sm, variant, kind), so the SASS and PTX of one arch are adjacent. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "base/error.h"
#include "base/strbuf.h"

static const char *const format_names[] = {
	[AP_FMT_NVCC] = "nvcc", [AP_FMT_TORCH] = "torch", [AP_FMT_CMAKE] = "cmake", [AP_FMT_CLANG] = "clang",
	[AP_FMT_NVRTC] = "nvrtc", [AP_FMT_BAZEL] = "bazel", [AP_FMT_JSON] = "json", [AP_FMT_LIST] = "list",
};

int
ap_format_parse(const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcmp(name, format_names[i]) == 0)
			return (int)i;
	return -1;
}

static const char suffix_str[][2] = {"", "a", "f"};

static const char *
sfx(const struct ap_target *t)
{
	return (t->variant >= AP_PLAIN && t->variant <= AP_FAMILY) ? suffix_str[t->variant] : "";
}

/* One arch of the list: its SASS and/or PTX. */
struct group {
	const struct ap_target *t; /* the first target of the group */
	bool sass, ptx;
};

/* Collects the (sm, variant) groups; returns their number. */
static size_t
groups_of(const struct ap_archlist *l, struct group *g)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct ap_target *t = &l->targets[i];
		if (!n || g[n - 1].t->sm != t->sm || g[n - 1].t->variant != t->variant)
			g[n++] = (struct group){t, false, false};
		if (t->kind == AP_SASS)
			g[n - 1].sass = true;
		else
			g[n - 1].ptx = true;
	}
	return n;
}

static void
json(const struct ap_archlist *l, struct fb_buf *s)
{
	static const char *const variants[] = {"plain", "a", "f"};
	char v[16], name[32];
	fb_buf_printf(s, "{\n  \"targets\": [");
	for (size_t i = 0; i < l->n; i++) {
		const struct ap_target *t = &l->targets[i];
		fb_buf_printf(s, "%s\n    {\"name\": \"%s\", \"sm\": %d, \"variant\": \"%s\", \"kind\": \"%s\", \"origin\": %d, "
		          "\"from\": \"%s\"}",
		       i ? "," : "", ap_target_name(t, name, sizeof(name)), t->sm,
		       variants[t->variant >= AP_PLAIN && t->variant <= AP_FAMILY ? t->variant : 0],
		       t->kind == AP_PTX ? "ptx" : "sass", t->origin, t->origin > 0 ? "input" : l->source);
	}
	fb_buf_printf(s, "\n  ],\n  \"source\": ");
	fb_buf_json(s, l->source, strlen(l->source));
	fb_buf_printf(s, ",\n  \"warnings\": [");
	for (size_t i = 0; i < l->nwarnings; i++) {
		fb_buf_printf(s, "%s\n    ", i ? "," : "");
		fb_buf_json(s, l->warnings[i], strlen(l->warnings[i]));
	}
	fb_buf_printf(s, "%s],\n  \"toolkit\": {\"version\": \"%s\", \"source\": ", l->nwarnings ? "\n  " : "",
	       ap_tk_version_str(l->toolkit.version, v, sizeof(v)));
	fb_buf_json(s, l->toolkit.source, strlen(l->toolkit.source));
	const int *arr[3] = {l->toolkit.sm, l->toolkit.a, l->toolkit.f};
	const int cnt[3] = {l->toolkit.nsm, l->toolkit.na, l->toolkit.nf};
	static const char *const keys[3] = {"sm", "a", "f"};
	for (int k = 0; k < 3; k++) {
		fb_buf_printf(s, ", \"%s\": [", keys[k]);
		for (int i = 0; i < cnt[k]; i++)
			fb_buf_printf(s, "%s%d", i ? ", " : "", arr[k][i]);
		fb_buf_printf(s, "]");
	}
	fb_buf_printf(s, "}\n}\n");
}

/* The start of a rendering by fn: checks the arguments, clears *out and collects l's groups into
 * *g (malloc'd, *ng of them). */
static int
begin(const char *fn, const struct ap_archlist *l, char **out, struct group **g, size_t *ng, struct ap_error *err)
{
	if (!out || !l) {
		ap_seterr(err, AP_EINVAL, "%s: NULL argument", fn);
		return AP_EINVAL;
	}
	*out = NULL;
	if (!(*g = malloc((l->n ? l->n : 1) * sizeof(**g)))) {
		ap_seterr(err, AP_ENOMEM, "out of memory");
		return AP_ENOMEM;
	}
	*ng = groups_of(l, *g);
	return AP_OK;
}

/* The error for a PTX-only arch, which `syntax` cannot express. */
static void
ptx_only(struct ap_error *err, const struct ap_target *t, const char *syntax)
{
	ap_seterr(err, AP_EUNSUPPORTED,
	          "compute_%d%s (PTX without SASS) cannot be written in %s syntax; use --format nvcc, cmake "
	          "(%d%s-virtual) or nvrtc, or add SASS for it",
	          t->sm, sfx(t), syntax, t->sm, sfx(t));
}

/* Hands s's text to *out, or frees it and fails with its status. */
static int
finish(struct fb_buf *s, char **out, struct ap_error *err)
{
	if (s->oom) {
		free(s->s);
		return ap_seterr(err, AP_ENOMEM, "out of memory");
	}
	*out = s->s;
	return AP_OK;
}

/* Writes l in fmt (neither clang nor json) into s; returns the index of the first PTX-only group
 * the format cannot express, or -1. */
static int
render(const struct ap_archlist *l, enum ap_format fmt, const struct group *g, size_t ng, struct fb_buf *s)
{
	const char *sep = "";
	int bad = -1;
	switch (fmt) {
	case AP_FMT_NVCC:
		for (size_t i = 0; i < l->n; i++) {
			const struct ap_target *t = &l->targets[i];
			fb_buf_printf(s, "%s-gencode=arch=compute_%d%s,code=%s_%d%s", i ? " " : "", t->sm, sfx(t),
			       t->kind == AP_PTX ? "compute" : "sm", t->sm, sfx(t));
		}
		break;
	case AP_FMT_TORCH:
		for (size_t i = 0; i < ng && bad < 0; i++) {
			if (!g[i].sass)
				bad = (int)i;
			fb_buf_printf(s, "%s%d.%d%s%s", i ? " " : "", g[i].t->sm / 10, g[i].t->sm % 10, sfx(g[i].t),
			       g[i].ptx ? "+PTX" : "");
		}
		break;
	case AP_FMT_CMAKE:
		for (size_t i = 0; i < ng; i++)
			fb_buf_printf(s, "%s%d%s%s", i ? ";" : "", g[i].t->sm, sfx(g[i].t),
			       !g[i].ptx ? "-real" : !g[i].sass ? "-virtual" : "");
		break;
	case AP_FMT_NVRTC:
		for (size_t i = 0; i < l->n; i++) {
			const struct ap_target *t = &l->targets[i];
			fb_buf_printf(s, "-arch=%s_%d%s\n", t->kind == AP_PTX ? "compute" : "sm", t->sm, sfx(t));
		}
		break;
	case AP_FMT_BAZEL:
		for (size_t i = 0; i < ng; i++) {
			const struct ap_target *t = g[i].t;
			if (g[i].sass && g[i].ptx)
				fb_buf_printf(s, "%scompute_%d%s:sm_%d%s,compute_%d%s", sep, t->sm, sfx(t), t->sm, sfx(t), t->sm, sfx(t));
			else
				fb_buf_printf(s, "%s%s_%d%s", sep, g[i].sass ? "sm" : "compute", t->sm, sfx(t));
			sep = ";";
		}
		break;
	case AP_FMT_LIST:
		for (size_t i = 0; i < ng; i++)
			if (g[i].sass) {
				fb_buf_printf(s, "%s%d%s", sep, g[i].t->sm, sfx(g[i].t));
				sep = ";";
			}
		break;
	default:
		assert(!"render: format without a renderer");
	}
	return bad;
}

int
ap_archlist_format(const struct ap_archlist *l, enum ap_format fmt, char **out, struct ap_error *err)
{
	struct group *g;
	size_t ng;
	int rc = begin("ap_archlist_format", l, out, &g, &ng, err);
	if (rc)
		return rc;
	if (fmt == AP_FMT_CLANG) {
		free(g);
		return ap_archlist_format_clang(l, 0, out, err);
	}
	if ((unsigned)fmt >= sizeof(format_names) / sizeof(format_names[0])) {
		free(g);
		ap_seterr(err, AP_EINVAL, "unknown format %d", (int)fmt);
		return AP_EINVAL;
	}
	struct fb_buf s = {0};
	fb_buf_put(&s, "", 0); /* an empty rendering is "", not NULL */
	int bad = -1; /* index of a PTX-only group a format cannot express */
	if (fmt == AP_FMT_JSON)
		json(l, &s);
	else
		bad = render(l, fmt, g, ng, &s);
	if (bad >= 0) {
		ptx_only(err, g[bad].t, "TORCH_CUDA_ARCH_LIST");
		free(g);
		free(s.s);
		return AP_EUNSUPPORTED;
	}
	free(g);
	return finish(&s, out, err);
}

/* ---- clang ------------------------------------------------------------------------------------
 * clang 22 uses its new offload driver for CUDA by default, which embeds PTX only for the
 * arches named by --cuda-include-ptx; clang before it (the old driver) embeds PTX for every
 * --offload-arch unless --no-cuda-include-ptx names it. clang reads the two options in order,
 * the last one that names an arch (or 'all') winning, so "--no-cuda-include-ptx=all" followed
 * by one --cuda-include-ptx per PTX arch means the same to both (docs/clang.md has the
 * compiles this was read from). */

/* The CUDA arches a clang release compiles, found by compiling a kernel with it
 * (--cuda-device-only -S --offload-arch=sm_X): only the releases measured are listed. */
static const struct {
	int major;
	const char *arches; /* " 75 80 90a " … */
	const char *note;   /* why some arch of CUDA 13 is missing */
} clang_arches[] = {
	{14, " 30 32 35 37 50 52 53 60 61 62 70 72 75 80 86 ", "clang 14 knows CUDA up to 11.5"},
	{22,
	 " 30 32 35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a 100 100a 101 101a 103 103a 120 120a 121 121a ",
	 "clang 22 has no family-specific 'f' arches and no sm_107; sm_88 and sm_110 need PTX ISA 9.0, which "
	 "clang 22 does not emit"},
};

int
ap_archlist_format_clang(const struct ap_archlist *l, int clang_major, char **out, struct ap_error *err)
{
	struct group *g;
	size_t ng;
	int rc = begin("ap_archlist_format_clang", l, out, &g, &ng, err);
	if (rc)
		return rc;
	const char *known = NULL, *note = "";
	for (size_t i = 0; i < sizeof(clang_arches) / sizeof(clang_arches[0]); i++)
		if (clang_arches[i].major == clang_major) {
			known = clang_arches[i].arches;
			note = clang_arches[i].note;
		}
	for (size_t i = 0; i < ng && !rc; i++) {
		const struct ap_target *t = g[i].t;
		char word[24];
		snprintf(word, sizeof(word), " %d%s ", t->sm, sfx(t));
		if (!g[i].sass) {
			rc = AP_EUNSUPPORTED;
			ptx_only(err, t, "clang --offload-arch");
		} else if (known && !strstr(known, word)) {
			rc = AP_EUNSUPPORTED;
			ap_seterr(err, rc,
			          "clang %d cannot compile CUDA for sm_%d%s (%s); use nvcc or fatbuild compile for it, "
			          "or drop it from the list",
			          clang_major, t->sm, sfx(t), note);
		}
	}
	struct fb_buf s = {0};
	fb_buf_put(&s, "", 0); /* an empty rendering is "", not NULL */
	for (size_t i = 0; i < ng && !rc; i++)
		fb_buf_printf(&s, "%s--offload-arch=sm_%d%s", i ? " " : "", g[i].t->sm, sfx(g[i].t));
	bool new_driver = clang_major >= 22, any = clang_major == 0;
	if (any)
		fb_buf_printf(&s, " --no-cuda-include-ptx=all");
	for (size_t i = 0; i < ng && !rc; i++) {
		if (g[i].ptx && (any || new_driver))
			fb_buf_printf(&s, " --cuda-include-ptx=sm_%d%s", g[i].t->sm, sfx(g[i].t));
		else if (!g[i].ptx && !any && !new_driver)
			fb_buf_printf(&s, " --no-cuda-include-ptx=sm_%d%s", g[i].t->sm, sfx(g[i].t));
	}
	free(g);
	if (rc) {
		free(s.s);
		return rc;
	}
	return finish(&s, out, err);
}
