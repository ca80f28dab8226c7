/* graph.c: the ninja graph of a build (the edges build.c's header describes): its rules and
 * the NVRTC pool, one edge per source (the NVRTC kernel edges and their merge here, the host
 * and nvcc compiles in graph_host.c), the device link, the embed and the link. One command per
 * edge, built as a command line of cmdline.h, added to the graph being written (graph_edge.c). */
#define _GNU_SOURCE /* strtok_r, realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "cmdline.h"
#include "dlink_edges.h"
#include "gen.h"
#include "graph.h"
#include "graph_edge.h"
#include "graph_host.h"
#include "graph_words.h"
#include "torch.h"

/* An absolute, normalised path for an existing file. */
static int
abs_existing(const char *path, char *out, struct fb_error *err)
{
	if (!realpath(path, out))
		return fb_seterr(err, FB_EIO, "%s: %s", path, strerror(errno));
	return 0;
}

/* fatbuild embed --merge of parts into one container, merged, which the embed then takes. */
static int
gen_merge(struct graph *gr, const char *merged, const struct fb_strlist *parts, struct fb_error *err)
{
	const struct gen *g = gr->g;
	struct cmd c = {.err = err};
	arg(&c, g->t.fatbuild);
	swords(&c, "embed --merge -o");
	arg(&c, merged);
	for (size_t i = 0; i < parts->n; i++)
		arg(&c, parts->v[i]);
	if (parts->oom)
		cmd_oom(&c);
	int rc = cmd_end(&c);
	char desc[512];
	describe(desc, sizeof(desc), "MERGE %s", strrchr(merged, '/') + 1);
	if (!rc)
		rc = fb_graph_edge(gr, "merge", merged, (const char *const *)parts->v, parts->n, NULL, 0, c.b.s, desc, NULL,
		                   err);
	free(c.b.s);
	fb_strlist_add(&gr->fatbins, merged);
	return rc;
}

static int
gen_kernel(struct graph *gr, size_t idx, const char *src, struct fb_error *err)
{
	const struct gen *g = gr->g;
	char st[256], merged[PATHMAX + 300];
	fb_graph_stem(idx, src, st, sizeof(st));
	bfmt(merged, sizeof(merged), "%s/obj/%s.fatbin", g->dir, st);
	struct fb_strlist parts = {0};
	int rc = 0;
	size_t n = ap_archlist_count(g->archs);
	for (size_t i = 0; !rc && i < n; i++) {
		char tname[32], out[PATHMAX + 400], dep[PATHMAX + 400], desc[512];
		ap_target_name(ap_archlist_get(g->archs, i), tname, sizeof(tname));
		bfmt(out, sizeof(out), "%s/obj/%s.%s.fatbin", g->dir, st, tname);
		bfmt(dep, sizeof(dep), "%s.d", out);
		/* exec: ninja then waits for fatbuild itself, not for a shell that a stopping signal
		 * kills at once while the compile is still cleaning up */
		struct cmd c = {.err = err};
		raw(&c, "exec ");
		arg(&c, g->t.fatbuild);
		arg(&c, "compile");
		if (g->reloc)
			arg(&c, g->o->lto ? "--lto" : "--rdc");
		arg(&c, "--arch-list");
		arg(&c, tname);
		fb_graph_includes(g, &c);
		words(&c, g->o->cuda_flags, "-Xnvrtc"); /* fatbuild compile hands each to NVRTC */
		fb_graph_rexec_words(g, &c);
		arg(&c, "--depfile");
		arg(&c, dep);
		arg(&c, "-o");
		arg(&c, out);
		arg(&c, src);
		describe(desc, sizeof(desc), "NVRTC %s %s", tname, strrchr(src, '/') ? strrchr(src, '/') + 1 : src);
		rc = cmd_end(&c);
		/* In the nvrtc pool: -j may be sized for host compiles a launcher farms out. */
		const char *vars[8] = {"cmd", c.b.s, "desc", desc, "dep", dep, "pool", "nvrtc"};
		struct fb_ninja_edge ke = {"kernel", (const char *const[]){out}, 1, &src, 1, NULL, 0, NULL, 0, vars, 4};
		if (!rc)
			rc = fb_ninja_edge(gr->nj, &ke, err);
		free(c.b.s);
		fb_strlist_add(&parts, out);
		if (g->reloc)
			fb_strlist_add(&gr->tparts[i], out);
	}
	if (g->reloc) {
		fb_strlist_free(&parts);
		return rc; /* linked per target by gen_dlink */
	}
	if (!rc)
		rc = gen_merge(gr, merged, &parts, err);
	fb_strlist_free(&parts);
	return rc;
}

/* The device link of relocatable code: per target with fatbuild dlink (nvrtc), merged into one
 * container for the embed; or one nvcc -dlink object (nvcc). */
static int
gen_dlink(struct graph *gr, struct fb_error *err)
{
	const struct gen *g = gr->g;
	int rc = 0;
	size_t n = gr->ntparts;
	struct fb_strlist linked = {0};
	for (size_t i = 0; !rc && i < n; i++) {
		const struct ap_target *t = ap_archlist_get(g->archs, i);
		char tname[32], out[PATHMAX + 64], desc[96];
		ap_target_name(t, tname, sizeof(tname));
		if (!gr->tparts[i].n)
			continue;
		bfmt(out, sizeof(out), "%s/obj/dlink.%s.fatbin", g->dir, tname);
		struct fb_dlink_edge e = {(const char *const *)gr->tparts[i].v, gr->tparts[i].n, out, g->o->lto,
		                          t->kind == AP_SASS};
		char *cmd = NULL;
		rc = fb_dlink_nvrtc_cmd(g->t.fatbuild, tname, &e, &cmd, err);
		describe(desc, sizeof(desc), "DLINK %s", tname);
		if (!rc)
			rc = fb_graph_edge(gr, "dlink", out, e.inputs, e.ninputs, NULL, 0, cmd, desc, NULL, err);
		free(cmd);
		fb_strlist_add(&linked, out);
	}
	if (!rc && linked.n) {
		char merged[PATHMAX + 32];
		bfmt(merged, sizeof(merged), "%s/obj/dlink.fatbin", g->dir);
		rc = gen_merge(gr, merged, &linked, err);
	}
	fb_strlist_free(&linked);
	if (!rc && gr->nvcc_objs.n && g->o->lto)
		rc = fb_dlink_nvcc_lto_check(g->t.cuda_home, err);
	if (!rc && gr->nvcc_objs.n) {
		char out[PATHMAX + 32];
		bfmt(out, sizeof(out), "%s/obj/dlink.o", g->dir);
		char *gencode = NULL, *cmd = NULL;
		struct ap_error ae = {0};
		if (ap_archlist_format(g->archs, AP_FMT_NVCC, &gencode, &ae) != 0)
			return fb_seterr(err, FB_EARCH, "%s", ae.msg);
		struct fb_dlink_edge e = {(const char *const *)gr->nvcc_objs.v, gr->nvcc_objs.n, out, g->o->lto, true};
		rc = fb_dlink_nvcc_cmd(g->t.cuda_home, gencode, g->t.cxx, &e, &cmd, err);
		free(gencode);
		if (!rc)
			rc = fb_graph_edge(gr, "dlink", out, e.inputs, e.ninputs, NULL, 0, cmd, "NVCC -dlink", NULL, err);
		free(cmd);
		fb_strlist_add(&gr->objects, out);
	}
	if (!rc && gr->nvcc_objs.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	return rc;
}

/* obj/fatbin.o: every kernel source's container, embedded as the runtime's fbrt_fatbin. */
static int
gen_embed(struct graph *gr, struct fb_error *err)
{
	const struct gen *g = gr->g;
	char obj[PATHMAX + 32];
	bfmt(obj, sizeof(obj), "%s/obj/fatbin.o", g->dir);
	struct cmd c = {.err = err};
	arg(&c, g->t.fatbuild);
	swords(&c, "embed --hidden --symbol fbrt_fatbin -o");
	arg(&c, obj);
	for (size_t i = 0; i < gr->fatbins.n; i++)
		arg(&c, gr->fatbins.v[i]);
	int rc = cmd_end(&c);
	if (!rc)
		rc = fb_graph_edge(gr, "embed", obj, (const char *const *)gr->fatbins.v, gr->fatbins.n, NULL, 0, c.b.s,
		                   "EMBED fatbin.o", NULL, err);
	free(c.b.s);
	fb_strlist_add(&gr->objects, obj);
	return rc;
}

static int
gen_link(struct graph *gr, struct fb_error *err)
{
	const struct gen *g = gr->g;
	int rc = gr->fatbins.n ? gen_embed(gr, err) : 0;
	if (rc)
		return rc;
	/* Linked inside the build dir (private), then copied to OUT by fb_builddir_publish. */
	char staged[PATHMAX + 16], tmp[PATHMAX + 32];
	fb_gen_staged_path(g, staged, sizeof(staged));
	bfmt(tmp, sizeof(tmp), "%s.tmp.fb", staged);
	struct cmd c = {.err = err};
	swords(&c, g->any_cxx || g->any_nvcc ? g->t.cxx : g->t.cc);
	if (!g->o->executable)
		arg(&c, "-shared");
	arg(&c, "-o");
	arg(&c, tmp);
	for (size_t i = 0; i < gr->objects.n; i++)
		arg(&c, gr->objects.v[i]);
	arg(&c, g->t.runtime);
	if (g->torch && !g->o->torch_no_flags) {
		/* torch's libraries; cudart shared, the one torch itself loaded. */
		svec(&c, fb_torch_link_words(g->torch, g->t.cuda_home, fb_gen_torch_cuda(g) && g->torch->cuda[0],
		                             g->o->executable));
	} else if (g->torch) {
		/* the caller's ldflags name torch's libraries */
	} else if (g->any_nvcc) {
		char lib[PATHMAX + 16];
		bfmt(lib, sizeof(lib), "-L%s/lib64", g->t.cuda_home);
		arg(&c, lib);
		if (g->reloc)
			arg(&c, "-lcudadevrt");
		swords(&c, "-lcudart_static -lrt");
	}
	swords(&c, "-ldl -lpthread");
	swords(&c, g->o->ldflags);
	/* Atomic replacement: link to a temporary name, rename on success, remove on failure. */
	raw(&c, " && mv -f");
	arg(&c, tmp);
	arg(&c, staged);
	raw(&c, " || { rm -f");
	arg(&c, tmp);
	raw(&c, "; exit 1; }");
	if (gr->objects.oom)
		cmd_oom(&c);
	rc = cmd_end(&c);
	const char *implicit[1] = {g->t.runtime};
	char desc[PATHMAX + 8];
	describe(desc, sizeof(desc), "LINK %s", strrchr(g->out, '/') + 1);
	if (!rc)
		rc = fb_graph_edge(gr, "link", staged, (const char *const *)gr->objects.v, gr->objects.n, implicit, 1, c.b.s,
		                   desc, NULL, err);
	free(c.b.s);
	return rc;
}

int
fb_build_generate(struct graph *gr, struct fb_error *err)
{
	const struct gen *g = gr->g;
	/* Every rule runs its edge's own $cmd; the compiles also read back a gcc-style depfile. */
	static const struct {
		const char *name;
		bool deps;
	} rules[] = {{"kernel", true}, {"merge", false}, {"cc", true}, {"embed", false}, {"link", false}, {"pch", false},
	             {"dlink", false}};
	size_t nrules = sizeof(rules) / sizeof(rules[0]) - (g->reloc ? 0 : 1); /* dlink: relocatable code only */
	int rc = fb_ninja_var(gr->nj, "builddir", g->dir, err);
	for (size_t i = 0; !rc && i < nrules; i++)
		rc = fb_ninja_rule(gr->nj, rules[i].name, "$cmd", "$desc", rules[i].deps ? "$dep" : NULL,
		                   rules[i].deps ? "gcc" : NULL, err);
	/* NVRTC jobs run here whatever -j says: at most one per CPU (MAX_JOBS), and no more than -j;
	 * at an executor, as many as ninja runs (the remote jobs), the rest in the local pool. */
	int depth = g->jobs_default;
	if (g->o->jobs > 0 && g->jobs < depth)
		depth = g->jobs;
	if (g->rexec)
		depth = g->ninja_jobs;
	if (!rc)
		rc = fb_ninja_pool(gr->nj, "nvrtc", depth, err);
	if (!rc && g->rexec)
		rc = fb_ninja_pool(gr->nj, "local", g->jobs, err);
	for (size_t i = 0; !rc && i < g->o->nsources; i++) {
		char src[PATHMAX];
		enum lang lang = g->langs[i];
		rc = abs_existing(g->o->sources[i], src, err);
		if (!rc)
			rc = lang == L_KERNEL ? gen_kernel(gr, i, src, err) : fb_graph_host_edge(gr, i, src, lang, err);
	}
	if (!rc && gr->fatbins.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	if (!rc && g->reloc)
		rc = gen_dlink(gr, err);
	if (!rc)
		rc = gen_link(gr, err);
	return rc;
}

