/* graph_nvcc.c: an nvcc compile's words (graph_nvcc.h): the launcher and host compiler, the
 * arches, the seed and source name that keep its objects the same from run to run (repro.c),
 * --threads, torch's and the project's flags. */
#define _GNU_SOURCE /* strtok_r */
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/words.h"
#include "cmdline.h"
#include "dlink_edges.h"
#include "flags.h"
#include "gen.h"
#include "graph_nvcc.h"
#include "graph_words.h"
#include "repro.h"
#include "torch.h"

/* -Xcudafe --frandom-seed=SEED: nvcc's front end would otherwise put its process id into the
 * names of internal symbols (repro.c). gencode: the arch words (fatbuild's, or the project's
 * nvcc flags when they name the arches). */
static void
nvcc_seed(const struct gen *g, const char *src, const char *gencode, struct cmd *c)
{
	if (c->rc)
		return;
	char dir[PATHMAX], cudainc[PATHMAX + 16], seed[17];
	const char *dirs[66];
	size_t nd = 0;
	bfmt(dir, sizeof(dir), "%s", src);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	dirs[nd++] = dir;
	for (size_t i = 0; i < g->o->ninclude_dirs && nd < 64; i++)
		dirs[nd++] = g->o->include_dirs[i];
	bfmt(cudainc, sizeof(cudainc), "%s/include", g->t.cuda_home);
	dirs[nd++] = cudainc;
	struct fb_buf flags = {0};
	fb_buf_puts(&flags, gencode);
	fb_buf_puts(&flags, " | ");
	fb_buf_puts(&flags, g->o->cxxflags ? g->o->cxxflags : "");
	for (size_t i = 0; i < g->o->ndefines; i++) {
		fb_buf_puts(&flags, " -D");
		fb_buf_puts(&flags, g->o->defines[i]);
	}
	if (flags.oom) {
		free(flags.s);
		cmd_oom(c);
		return;
	}
	c->rc = fb_repro_seed(src, dirs, nd, flags.s, seed, c->err);
	free(flags.s);
	char a[64];
	bfmt(a, sizeof(a), "--frandom-seed=%s", seed);
	arg(c, "-Xcudafe");
	arg(c, a);
	/* Both front ends hash the absolute source path into internal names: give them the path
	 * below the sources' common directory instead. */
	char root[PATHMAX], name[PATHMAX + 32];
	fb_repro_root(g->o->sources, g->o->nsources, root, sizeof(root));
	size_t rl = strlen(root);
	const char *rel = strncmp(src, root, rl) == 0 && src[rl] == '/' ? src + rl + 1 : src;
	bfmt(name, sizeof(name), "--orig_src_path_name=%s", rel);
	arg(c, "-Xcudafe");
	arg(c, name);
	arg(c, "-Xcicc");
	arg(c, name);
}

/* Whether the blank-separated words of s hold nvcc's -t/--threads (the user's choice wins). */
static bool
has_threads(const char *s)
{
	for (const char *p = s; p && *p;) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t");
		if ((n >= 2 && strncmp(p, "-t", 2) == 0 && (n == 2 || (p[2] >= '0' && p[2] <= '9'))) ||
		    (n >= 9 && strncmp(p, "--threads", 9) == 0 && (n == 9 || p[9] == '=')))
			return true;
		p += n;
	}
	return false;
}

/* nvcc --threads N: the host pass and each target's cicc and ptxas run in parallel inside the
 * one nvcc process, so a file for N targets is not N arches in turn. One call keeps the images
 * those of a serial nvcc, byte for byte (__CUDA_ARCH_LIST__ stays the whole list, which CUB
 * names its namespace after; docs/fatbuild-build.md "Arches in parallel"). Sized to the slots
 * the other nvcc edges leave free, at least 2: ninja cannot count threads, and an edge that
 * runs alone at the end of the build then still uses two cores. 0: no --threads. */
long
fb_graph_nvcc_threads(const struct gen *g)
{
	if (g->o->no_nvcc_threads || has_threads(g->o->nvcc_flags) || has_threads(g->o->cuda_flags))
		return 0;
	/* nvcc 13.0 with --threads cannot open its own temporaries when TMPDIR (BUILD_DIR/tmp, ninja_run.c)
	 * holds a blank: "Could not open input file .../tmpxft_..._stdout". */
	if (strpbrk(g->dir, " \t"))
		return 0;
	size_t ntargets = g->project_archs ? fb_flags_ntargets(g->o->nvcc_flags) : ap_archlist_count(g->archs), nedges = 0,
	       nhost = 0;
	for (size_t i = 0; i < g->o->nsources; i++) {
		nedges += g->langs[i] == L_NVCC;
		nhost += g->langs[i] == L_C || g->langs[i] == L_CXX;
	}
	long jobs = g->jobs;
	/* Beside host compiles, only slots no edge takes from the start: when the edges fill every
	 * slot (a torch extension's .cpp and .cu files on 2 cores), a thread more only takes from
	 * them, nice or not (torch_cub cold on 2 cores: the nvcc files 41.3, 39.6, 28.7 s with
	 * --threads 2 against 24.4, 25.3, 26.1 s serial, the build 85.2 s against torch's 79.9 s at
	 * the same CPU; docs/pytorch.md "Speed"). */
	if (nhost && jobs <= (long)(nedges + nhost))
		return 0;
	long t = jobs - (long)(nedges + nhost) + 1;
	if (t < 2)
		t = 2;
	if (t > (long)ntargets + 1)
		t = (long)ntargets + 1;
	/* -j 1 asks for one process at a time; one target has nothing to run beside the host pass
	 * worth a thread (a 22 KB templated file for sm_80: 101.6 and 109.0 s with --threads 2,
	 * 105.9 and 104.9 s without, the same CPU), only cores to take from the host compiles */
	return jobs < 2 || ntargets < 2 ? 0 : t;
}

/* nvcc's host compiler: with --torch, as torch's builder, $CC when set (-ccbin $CC), else
 * nvcc's own default (none); else $CXX's: launchers (ccache) run nvcc itself, the compiler is
 * -ccbin, the options after it go to the host compiler ("ccache g++ -m64": ccache nvcc ...
 * -ccbin g++ -Xcompiler -m64). *pre: the launcher words to put before nvcc (NULL with --torch;
 * fb_words_free). */
static void
nvcc_host(const struct gen *g, struct cmd *c, char ***pre)
{
	*pre = NULL;
	if (g->torch) {
		if (g->t.cc_set) {
			arg(c, "-ccbin");
			swords(c, g->t.cc);
		}
		return;
	}
	char **w = NULL;
	size_t nw = 0, k = 0;
	if (!c->rc)
		c->rc = fb_words_split(g->t.cxx, &w, &nw, c->err);
	while (!c->rc && k < nw && w[k][0] != '-')
		k++;
	arg(c, "-ccbin");
	arg(c, k ? w[k - 1] : "c++");
	for (size_t i = k; !c->rc && i < nw; i++) {
		arg(c, "-Xcompiler");
		arg(c, w[i]);
	}
	/* the launcher words are w[0..k-2]: the rest is freed and the list ends there */
	for (size_t i = k ? k - 1 : 0; w && i < nw; i++) {
		free(w[i]);
		w[i] = NULL;
	}
	*pre = w;
}

/* The nvcc compile's words up to its own flags: launcher, nvcc, the arches (fatbuild's, unless
 * the project's nvcc flags name them, as torch's builder does), seed, where its intermediates go
 * (keep), host compiler. */
static int
nvcc_words(const struct gen *g, const char *src, const char *keep, struct cmd *c)
{
	char nvcc[PATHMAX + 16];
	bfmt(nvcc, sizeof(nvcc), "%s/bin/nvcc", g->t.cuda_home);
	char *gencode = NULL;
	struct ap_error ae = {0};
	if (!g->project_archs && ap_archlist_format(g->archs, AP_FMT_NVCC, &gencode, &ae) != 0)
		return fb_seterr(c->err, FB_EARCH, "%s", ae.msg);
	long threads = fb_graph_nvcc_threads(g);
	fb_graph_launcher(g, c);
	struct cmd host = {.err = c->err};
	char **pre = NULL;
	nvcc_host(g, &host, &pre);
	for (size_t i = 0; pre && pre[i]; i++)
		arg(c, pre[i]);
	fb_words_free(pre);
	arg(c, nvcc);
	arg(c, "-c");
	swords(c, fb_graph_host_opt(g, L_NVCC));
	if (!fb_flags_have_pic(g->o->nvcc_flags) && !fb_flags_have_pic(g->o->cuda_flags))
		swords(c, "-Xcompiler -fPIC");
	if (g->reloc)
		arg(c, "-rdc=true");
	if (g->o->lto && gencode) {
		char *lto = NULL;
		if (!c->rc)
			c->rc = fb_dlink_nvcc_lto_gencode(gencode, &lto, c->err);
		swords(c, lto);
		free(lto);
	} else {
		swords(c, gencode);
	}
	nvcc_seed(g, src, gencode ? gencode : g->o->nvcc_flags ? g->o->nvcc_flags : "", c);
	free(gencode);
	if (threads > 1) {
		char a[32];
		bfmt(a, sizeof(a), "%ld", threads);
		arg(c, "--threads");
		arg(c, a);
	}
	swords(c, "-keep -keep-dir");
	arg(c, keep);
	if (host.rc && !c->rc)
		c->rc = host.rc;
	raw(c, host.b.s && host.b.s[0] ? " " : "");
	raw(c, host.b.s ? host.b.s : "");
	free(host.b.s);
	return 0;
}

/* The nvcc compile's words (nvcc_words, torch's, the host flags, the CUDA and nvcc flags). */
int
fb_graph_nvcc_line(const struct gen *g, const char *src, const char *keep, struct cmd *c)
{
	int rc = nvcc_words(g, src, keep, c);
	if (rc)
		return rc;
	if (g->torch && !g->o->torch_no_flags) {
		struct fb_buf user = {0};
		fb_buf_puts(&user, g->o->nvcc_flags ? g->o->nvcc_flags : "");
		fb_buf_puts(&user, " ");
		fb_buf_puts(&user, g->o->cuda_flags ? g->o->cuda_flags : "");
		if (user.oom)
			cmd_oom(c);
		svec(c, fb_torch_nvcc_words(g->torch, g->o->executable ? NULL : g->name, g->t.cuda_home, user.s));
		free(user.s);
	}
	if (!g->torch) {
		/* Host-compiler flags through -Xcompiler; nvcc's own and the shared CUDA flags raw. With
		 * --torch, as with torch's builder, C++ flags are the C++ compiles' alone. */
		char *host = fb_nvcc_host_words(g->o->cxxflags);
		if (!host)
			cmd_oom(c);
		swords(c, host);
		free(host);
	}
	swords(c, g->o->cuda_flags);
	swords(c, g->o->nvcc_flags);
	return 0;
}
