/* gen.c: the build's resolved inputs (gen.h): what the configuration says for them, read once,
 * and what the steps ask of them alone: where the link's output and the failure marker lie,
 * whether compiles go through the edge cache, torch's CUDA and install dir. */
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/config.h"
#include "base/cpus.h"
#include "gen.h"
#include "torch.h"

void
fb_gen_start(struct gen *g, const struct fb_build_opts *o, const struct fb_config *cfg)
{
	g->o = o;
	g->cfg = cfg;
	g->launcher = o->launcher ? o->launcher : cfg->launcher;
	struct fb_jobs_info ji;
	fb_jobs_default(NULL, NULL, 0, cfg->max_jobs, FB_JOBS_MAX, &ji);
	g->jobs_default = ji.jobs;
	g->jobs = o->jobs > 0 ? (o->jobs > FB_JOBS_MAX ? FB_JOBS_MAX : o->jobs) : ji.jobs;
	g->cpus = ji.quota > 0 && ji.quota < ji.cpus ? ji.quota : ji.cpus;
	g->max_jobs_capped = ji.capped;
	const char *rx = o->remote.exec ? o->remote.exec : cfg->remote_executor;
	g->rexec = rx && *rx ? rx : NULL;
	g->rexec_off = !g->rexec && cfg->remote_executor && *cfg->remote_executor;
	long rj = o->remote.jobs > 0 ? o->remote.jobs : 4L * g->jobs;
	g->ninja_jobs = !g->rexec ? g->jobs : rj > FB_JOBS_MAX ? FB_JOBS_MAX : (int)rj;
	g->reloc = o->rdc || o->lto;
}

void
fb_gen_free(struct gen *g)
{
	ap_archlist_free(g->archs);
	free(g->torch);
	free(g->langs);
}

void
fb_gen_staged_path(const struct gen *g, char *buf, size_t size)
{
	bfmt(buf, size, "%s/out/%s", g->dir, strrchr(g->out, '/') + 1);
}

void
fb_gen_failed_path(const struct gen *g, char *buf, size_t size)
{
	bfmt(buf, size, "%s/.fatbuild.failed", g->dir);
}

/* Whether the first word of a $CC-style command is a compiler launcher. */
static bool
launcher_word(const char *cmd)
{
	static const char *const names[] = {"ccache", "sccache", "distcc", "icecc"};
	const char *p = cmd ? cmd + strspn(cmd, " \t\n") : "";
	size_t n = strcspn(p, " \t\n");
	const char *base = p;
	for (const char *q = p; q < p + n; q++)
		if (*q == '/')
			base = q + 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((size_t)(p + n - base) == strlen(names[i]) && strncmp(base, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

/* Whether host and nvcc edges go through `fatbuild edge`: not with --no-edge-cache or
 * FATBUILD_EDGE_CACHE=0, nor with a launcher (--launcher, or ccache, sccache, distcc as
 * $CC's or $CXX's first word: those do their own caching or compile elsewhere). */
bool
fb_gen_edge_cache_on(const struct gen *g)
{
	return !g->o->no_edge_cache && !(g->launcher && *g->launcher) && g->cfg->edge_cache != 0 &&
	       !launcher_word(g->t.cc) && !launcher_word(g->t.cxx);
}

/* Whether torch's CUDA headers and libraries are used: --with-cuda, or .cu sources without
 * --no-cuda (torch's with_cuda). */
bool
fb_gen_torch_cuda(const struct gen *g)
{
	return g->o->torch_cuda > 0 || (g->o->torch_cuda == 0 && g->any_cu);
}

/* The directory torch is installed in (its lib dir's parent) into out; "" without --torch. */
void
fb_gen_torch_dir(const struct gen *g, char *out, size_t size)
{
	out[0] = 0;
	if (!g->torch)
		return;
	bfmt(out, size, "%s", g->torch->lib_dir);
	char *slash = strrchr(out, '/');
	if (slash && slash != out)
		*slash = 0;
}
