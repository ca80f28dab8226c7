/* build.c: extension builds. Generates build.ninja in the build directory and runs ninja:
 *   kernel .cu  --fatbuild compile (NVRTC), one edge per (file, target)-->  obj/K.sm_86.fatbin
 *               --fatbuild embed --merge-->  obj/K.fatbin  (one container per kernel source)
 *   all K.fatbin --fatbuild embed --hidden --symbol fbrt_fatbin-->  obj/fatbin.o
 *   host .c/.cpp --$CC/$CXX -fPIC -MD-->  obj/H.o;  --backend nvcc: .cu --nvcc -c gencode-->  obj/K.o
 *   link: objects + libfatbuild_runtime.a --$CXX -shared-->  OUT.tmp, renamed to OUT
 * With rdc/lto (relocatable device code) the kernels are compiled --rdc/--lto and device-linked
 * before the embed, per target (dlink.c): obj/K.sm_86.fatbin of every kernel --fatbuild dlink-->
 * obj/dlink.sm_86.fatbin, all targets --embed --merge--> obj/dlink.fatbin; with nvcc the -rdc=true
 * objects --nvcc -dlink--> obj/dlink.o, and the link adds -lcudadevrt.
 * Every edge carries its own command ($cmd), so ninja rebuilds exactly the edges whose command
 * changed (a flag, the arch list) or whose inputs did (depfiles for headers).
 * This file is the driver: sources, tools (tools.c), the inputs resolved into struct gen (gen.h),
 * the graph (graph.c), ninja (ninja_run.c), publishing. */
#define _GNU_SOURCE /* realpath */
#include <ctype.h>
#include <errno.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "fatbuild.h"
#include "plumbing.h"
#include "base/dlload.h"
#include "base/config.h"
#include "base/cpus.h"
#include "base/error.h"
#include "base/safefs.h"
#include "base/words.h"
#include "builddir.h"
#include "cache/cache.h"
#include "compile/depfile.h"
#include "gen.h"
#include "graph.h"
#include "ninja.h"
#include "ninja_run.h"
#include "scan/backend.h"
#include "flags.h"
#include "tools.h"
#include "torch.h"

/* An absolute path for a file that may not exist yet: its directory must. */
static int
abs_output(const char *path, char *out, struct fb_error *err)
{
	char dir[PATHMAX], real[PATHMAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!base[0])
		return fb_seterr(err, FB_EINVAL, "output '%s' names a directory", path);
	if (slash) {
		size_t n = (size_t)(slash - path);
		if (n >= sizeof(dir))
			return fb_seterr(err, FB_EINVAL, "%s: path too long", path);
		memcpy(dir, path, n);
		dir[n] = 0;
		if (n == 0)
			strcpy(dir, "/");
	} else {
		strcpy(dir, ".");
	}
	if (!realpath(dir, real))
		return fb_seterr(err, FB_EIO, "output directory %s: %s", dir, strerror(errno));
	if (bfmt(out, PATHMAX, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base) < 0)
		return fb_seterr(err, FB_EINVAL, "%s: path too long", path);
	return 0;
}

enum fb_source_kind
fb_source_kind(const char *path)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (!dot || (slash && dot < slash))
		return FB_SOURCE_NONE;
	if (strcmp(dot, ".cu") == 0)
		return FB_SOURCE_CUDA;
	if (strcmp(dot, ".c") == 0)
		return FB_SOURCE_C;
	if (strcmp(dot, ".cc") == 0 || strcmp(dot, ".cpp") == 0 || strcmp(dot, ".cxx") == 0 || strcmp(dot, ".C") == 0)
		return FB_SOURCE_CXX;
	return FB_SOURCE_NONE;
}

static int
classify(const char *src, enum fb_backend backend, enum lang *out)
{
	switch (fb_source_kind(src)) {
	case FB_SOURCE_CUDA:
		*out = backend == FB_BACKEND_NVCC ? L_NVCC : L_KERNEL;
		return 0;
	case FB_SOURCE_C:
		*out = L_C;
		return 0;
	case FB_SOURCE_CXX:
		*out = L_CXX;
		return 0;
	default:
		return -1;
	}
}

static void
default_name(const char *output, char *out, size_t size)
{
	const char *base = strrchr(output, '/');
	base = base ? base + 1 : output;
	if (strncmp(base, "lib", 3) == 0 && base[3] && base[3] != '.')
		base += 3;
	size_t n = strcspn(base, ".");
	if (n == 0)
		n = strlen(base);
	bfmt(out, size, "%.*s", (int)n, base);
	for (char *p = out; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-'))
			*p = '_';
	if (!out[0])
		bfmt(out, size, "ext");
}

/* The first character of path that ninja (1.11) cannot read back from a gcc-style depfile, or
 * 0. Its depfile lexer takes [A-Za-z0-9+,/_:.~()}{%=@[]!-] and bytes >= 0x80 as they are, and
 * space, '#', '$' and '\\' in the escaped forms gcc and fb_depfile_write use; anything else
 * makes it drop the deps log entry, and the edge reruns on every build. */
static char
depfile_unsafe(const char *path)
{
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		if (!(isalnum(*c) || *c >= 0x80 || strchr("+,/_:.~(){}%=@[]!- #$\\", *c)))
			return (char)*c;
	return 0;
}

/* Appends one line to a result's notes or warnings buffer. */
static void
note(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
note(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 2 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len - 1, fmt, ap);
	va_end(ap);
	fb_text_oneline(buf + len); /* paths from the command line: one line each, as the caller splits */
	len = strlen(buf);
	buf[len] = '\n';
	buf[len + 1] = 0;
}

/* Says so, once, when a path the depfiles name holds such a character: the build is right, only
 * not incremental. */
static void
note_depfile_paths(const struct fb_build_opts *o, const char *dir, struct fb_build_result *result)
{
	char abs[PATHMAX];
	const char *bad = NULL;
	char c = 0;
	if ((c = depfile_unsafe(dir)))
		bad = dir;
	for (size_t i = 0; !bad && i < o->nsources; i++)
		if (realpath(o->sources[i], abs) && (c = depfile_unsafe(abs)))
			bad = abs;
	for (size_t i = 0; !bad && i < o->ninclude_dirs; i++)
		if (realpath(o->include_dirs[i], abs) && (c = depfile_unsafe(abs)))
			bad = abs;
	if (!bad || !result)
		return;
	char what[32];
	if ((unsigned char)c < 0x20 || c == 0x7f)
		snprintf(what, sizeof(what), "a control character (0x%02x)", (unsigned char)c);
	else
		snprintf(what, sizeof(what), "%c", c);
	note(result->warnings, sizeof(result->warnings),
	     "%.300s: ninja cannot read a path containing %s back from dependency files, so the compile "
	     "steps rerun on every build; paths without ' \" ; & * ? ` < > ^ keep builds incremental",
	     bad, what);
}

/* Whether output names a directory: a trailing '/' or an existing one. */
static bool
output_is_dir(const char *output)
{
	struct stat st;
	size_t n = strlen(output);
	return (n && output[n - 1] == '/') || (stat(output, &st) == 0 && S_ISDIR(st.st_mode));
}

/* What the sources need: nvcc, a kernel compile (nvrtc: by NVRTC), $CC, $CXX. */
struct needs {
	bool nvcc, kernel, nvrtc, c, cxx;
};

/* Source i's language into g->langs[i]; --backend auto decides with the build's one scan *sc
 * (made on first use) and notes why. */
static int
take_source(struct gen *g, size_t i, struct fb_backend_scan **sc, struct fb_build_result *result, struct needs *nd,
            struct fb_error *err)
{
	const struct fb_build_opts *o = g->o;
	enum lang l;
	if (!o->sources[i] || classify(o->sources[i], o->backend, &l) != 0)
		return fb_seterr(err, FB_EINVAL, "build: %s: unknown source type (kernels: .cu; host code: .c .cc .cpp .cxx .C)",
		                 o->sources[i] ? o->sources[i] : "(null)");
	if (access(o->sources[i], R_OK) != 0)
		return fb_seterr(err, FB_EIO, "build: %s: %s", o->sources[i], strerror(errno));
	int fd; /* the scans below and the compilers would wait on a FIFO for ever */
	struct fb_error oe = {0};
	if (fb_open_regular(o->sources[i], 0, &fd, NULL, &oe) != 0)
		return fb_seterr(err, oe.code, "build: %s", oe.msg);
	close(fd);
	if (l == L_KERNEL && o->backend == FB_BACKEND_AUTO) {
		char why[700];
		if (!*sc) {
			char home[PATHMAX]; /* the toolkit fatbuild compile's NVRTC comes from */
			fb_dl_home(NULL, ap_cuda_home, home, sizeof(home));
			if (!(*sc = fb_backend_scan_new(o->include_dirs, o->ninclude_dirs, home)))
				return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		l = fb_backend_scan_needs_nvcc(*sc, o->sources[i], why, sizeof(why)) ? L_NVCC : L_KERNEL;
		if (result)
			note(result->notes, sizeof(result->notes), "backend %s: %s", l == L_NVCC ? "nvcc" : "nvrtc", why);
	}
	g->langs[i] = l;
	g->any_cxx |= l == L_CXX;
	g->any_nvcc |= l == L_NVCC;
	nd->nvcc |= l == L_NVCC;
	nd->c |= l == L_C;
	nd->cxx |= l == L_CXX || l == L_NVCC;
	nd->kernel |= l == L_KERNEL || l == L_NVCC;
	nd->nvrtc |= l == L_KERNEL;
	return 0;
}

/* Each source's language into g->langs. */
static int
take_sources(struct gen *g, struct fb_build_result *result, struct needs *nd, struct fb_error *err)
{
	if (!(g->langs = calloc(g->o->nsources, sizeof(*g->langs))))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	struct fb_backend_scan *sc = NULL;
	int rc = 0;
	for (size_t i = 0; !rc && i < g->o->nsources; i++)
		rc = take_source(g, i, &sc, result, nd, err);
	fb_backend_scan_free(sc);
	g->any_cu = nd->kernel;
	return rc;
}

/* The tools, then CUDA_HOME for --torch's include dirs even without nvcc (none: left empty). */
static int
find_tools(struct gen *g, const struct needs *nd, struct fb_error *err)
{
	int rc = fb_build_find_tools(g->cfg, g->o, nd->nvcc, &g->t, err);
	if (!rc && (nd->c || !nd->cxx))
		rc = fb_build_check_compiler(g->cfg->path, "CC", g->t.cc, err);
	if (!rc && nd->cxx)
		rc = fb_build_check_compiler(g->cfg->path, "CXX", g->t.cxx, err);
	if (!rc && g->o->torch && !g->t.cuda_home[0])
		fb_dl_home(NULL, ap_cuda_home, g->t.cuda_home, sizeof(g->t.cuda_home));
	return rc;
}

/* The -I dirs of flags (one of the --cflags-like strings; NULL: none), "-IDIR" or "-I DIR",
 * into dirs. */
static void
flag_dirs(const char *flags, struct fb_strlist *dirs)
{
	char **w = NULL;
	if (!flags || fb_words_split(flags, &w, NULL, NULL) != 0)
		return;
	for (size_t i = 0; w[i]; i++)
		if (strncmp(w[i], "-I", 2) == 0 && (w[i][2] || w[i + 1]))
			fb_strlist_add(dirs, w[i][2] ? w[i] + 2 : w[++i]);
	fb_words_free(w);
}

/* Refuses an output that is a header some source includes, by name or as the same file: the
 * build would replace a file it reads (fb_output_check has the sources). The headers are those
 * fb_deps_scan finds, as the NVRTC edges' scan does: transitively, #if branches too, beside
 * the including file, then in the -I dirs (-I, and those of the flags); an output that does
 * not exist yet is no header. A header the scan cannot read is left to the compilers. */
static int
check_output_headers(const struct gen *g, const char *what, const char *out, struct fb_error *err)
{
	const struct fb_build_opts *o = g->o;
	struct stat os, hs;
	if (stat(out, &os) != 0)
		return 0;
	struct fb_strlist dirs = {0}, deps = {0};
	for (size_t i = 0; i < o->ninclude_dirs; i++)
		fb_strlist_add(&dirs, o->include_dirs[i]);
	const char *const flags[] = {o->cflags, o->cxxflags, o->cuda_flags, o->nvcc_flags};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		flag_dirs(flags[i], &dirs);
	int rc = dirs.oom ? fb_seterr(err, FB_ENOMEM, "out of memory") : 0;
	for (size_t i = 0; !rc && i < o->nsources; i++) {
		size_t from = deps.n;
		if (fb_deps_scan(o->sources[i], (const char *const *)dirs.v, dirs.n, &deps, NULL) == FB_ENOMEM || deps.oom)
			rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		for (size_t k = from; !rc && k < deps.n; k++)
			if (stat(deps.v[k], &hs) == 0 && hs.st_dev == os.st_dev && hs.st_ino == os.st_ino)
				rc = fb_seterr(err, FB_EINVAL,
				               "%s %s is the header %s, which %s includes: the output would replace it; "
				               "write it elsewhere",
				               what, out, deps.v[k], o->sources[i]);
	}
	fb_strlist_free(&dirs);
	fb_strlist_free(&deps);
	return rc;
}

/* The compile cache the build's edges would use, checked as `fatbuild compile` checks it
 * (fb_cache_local_dir): one others can write into is refused here, before the build dir and
 * ninja, where the NVRTC edges would each fail on it and the host edges only warn. A build that
 * uses no cache (no NVRTC edge, and host edges without the edge cache) does not look. */
static int
check_cache(const struct gen *g, const struct needs *nd, struct fb_error *err)
{
	if (g->o->emit_ninja_only || !(nd->nvrtc || ((nd->c || nd->cxx) && fb_gen_edge_cache_on(g))))
		return 0;
	char dir[PATHMAX];
	struct fb_error ce = {0};
	int rc = fb_cache_local_dir(g->cfg, NULL, dir, sizeof(dir), &ce);
	return rc == FB_EUNSAFE ? fb_seterr(err, rc, "%s", ce.msg) : 0; /* else: as the edges, without a cache */
}

/* The absolute output (unless it is a directory --torch fills later), the extension's name and
 * the build dir. */
static int
prepare_dir(struct gen *g, bool out_dir, struct fb_build_result *result, struct fb_error *err)
{
	const struct fb_build_opts *o = g->o;
	int rc;
	if (!out_dir && (rc = abs_output(o->output, g->out, err)))
		return rc;
	default_name(o->name && o->name[0] ? o->name : g->out, g->name, sizeof(g->name));
	char dir[PATHMAX];
	if ((rc = fb_builddir_prepare(g->cfg, o->build_dir, g->name, dir, sizeof(dir), err)))
		return rc;
	if (!realpath(dir, g->dir))
		return fb_seterr(err, FB_EIO, "build dir %s: %s", dir, strerror(errno));
	note_depfile_paths(o, g->dir, result);
	return 0;
}

/* --torch: what torch says, noted; -o DIR becomes DIR/NAME.so (or the module's suffix). */
static int
query_torch(struct gen *g, bool out_dir, struct fb_build_result *result, struct fb_error *err)
{
	const struct fb_build_opts *o = g->o;
	if (!(g->torch = calloc(1, sizeof(*g->torch))))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = fb_torch_query(g->cfg, o->python, g->dir, g->torch, err);
	if (rc)
		return rc;
	const struct fb_torch *t = g->torch;
	if (result)
		note(result->notes, sizeof(result->notes), "torch %s (CUDA %s, %s, %s ABI) from %s%s", t->version,
		     t->cuda[0] ? t->cuda : "none", t->std, t->cxx11_abi ? "cxx11" : "pre-cxx11", t->python,
		     t->cached ? " (cached)" : "");
	if (result && g->any_cu && !t->cuda[0])
		note(result->warnings, sizeof(result->warnings),
		     "--torch: torch %s is a CPU-only build: its CUDA libraries are not linked", t->version);
	if (!out_dir)
		return 0;
	if ((rc = fb_dir_make_output(o->output, err)))
		return rc;
	char file[PATHMAX];
	if (bfmt(file, sizeof(file), "%s/%s%s", o->output, g->name, o->python_module ? t->ext_suffix : ".so") < 0)
		return fb_seterr(err, FB_EINVAL, "%s: path too long", o->output);
	return abs_output(file, g->out, err);
}

/* The arch list (--arch-list, else TORCH_CUDA_ARCH_LIST, else auto), its warnings noted. */
static int
resolve_archs(struct gen *g, struct fb_build_result *result, struct fb_error *err)
{
	const char *text = g->o->arch_list;
	if (!text)
		text = g->cfg->torch_cuda_arch_list;
	struct ap_resolve_opts ro = {0};
	ro.toolkit = g->o->toolkit;
	ro.config = g->cfg;
	struct ap_error ae = {0};
	if (ap_archlist_resolve(text, &ro, &g->archs, &ae) != 0)
		return fb_error_from_ap(err, FB_EARCH, &ae);
	for (size_t i = 0; result && i < ap_archlist_nwarnings(g->archs); i++)
		note(result->warnings, sizeof(result->warnings), "%s", ap_archlist_warning(g->archs, i));
	if (ap_archlist_count(g->archs) == 0)
		return fb_seterr(err, FB_EARCH, "the arch list '%s' resolves to no target", text ? text : "auto");
	if (g->torch && result) {
		const struct ap_toolkit *tk = ap_archlist_toolkit(g->archs);
		char w[1024];
		fb_torch_cuda_check(g->torch, tk ? tk->version : 0, g->t.cuda_home, w, sizeof(w));
		if (w[0])
			note(result->warnings, sizeof(result->warnings), "%s", w);
	}
	return 0;
}

/* Where the build dir and build.ninja are, whether it changed, and the targets. */
static void
fill_result(const struct gen *g, const char *ninja_file, bool changed, struct fb_build_result *result)
{
	bfmt(result->build_dir, sizeof(result->build_dir), "%s", g->dir);
	bfmt(result->ninja_file, sizeof(result->ninja_file), "%s", ninja_file);
	result->ninja_changed = changed;
	result->ntargets = g->archs ? ap_archlist_count(g->archs) : 0;
	size_t off = 0;
	for (size_t i = 0; g->archs && i < result->ntargets && off + 20 < sizeof(result->targets); i++) {
		char t[32];
		ap_target_name(ap_archlist_get(g->archs, i), t, sizeof(t));
		off += (size_t)snprintf(result->targets + off, sizeof(result->targets) - off, "%s%s", i ? " " : "", t);
	}
}

/* Runs ninja on the graph written and publishes the output. */
static int
run_and_publish(const struct gen *g, const struct graph *gr, struct fb_build_result *result, struct fb_error *err)
{
	bool copied = false;
	char staged[PATHMAX + 16];
	fb_gen_staged_path(g, staged, sizeof(staged));
	fb_builddir_unstage_stale(staged, g->out);
	struct ninja_result ran = {0};
	int rc = fb_build_run_ninja(g, &gr->pch_bg, &gr->shown, &ran, err);
	if (result && ran.tallied) { /* -v: where the build's compiles ran (docs/remote-cache.md §9) */
		char shown[512];
		const struct fb_exec_tally *k = &ran.tally[0], *e = &ran.tally[1];
		char nv[128] = "", ed[128] = "";
		fb_remote_url_redact(g->rexec, shown, sizeof(shown));
		if (k->total || !e->total)
			bfmt(nv, sizeof(nv), "%zu of %zu NVRTC jobs ran there (%zu cached)", k->ran, k->total, k->cached);
		if (e->total)
			bfmt(ed, sizeof(ed), "%zu of %zu host and nvcc edges%s (%zu cached)", e->ran, e->total,
			     nv[0] ? "" : " ran there", e->cached);
		note(result->notes, sizeof(result->notes), "remote-exec %s: %s%s%s", shown, nv, nv[0] && ed[0] ? ", " : "", ed);
	}
	if (!rc)
		rc = fb_builddir_publish(staged, g->out, &copied, err);
	if (result)
		result->up_to_date = !rc && ran.no_work && !copied;
	return rc;
}

/* Writes build.ninja, then (unless emit_ninja_only) runs ninja and publishes the output. The
 * graph is kept until ninja is done: its holds on PCH dirs, the commands output.c shows. */
static int
generate_and_run(const struct gen *g, struct fb_build_result *result, struct fb_error *err)
{
	struct graph gr = {0};
	int rc = fb_graph_start(&gr, g, err);
	if (rc) {
		fb_graph_free(&gr);
		return rc;
	}
	rc = fb_build_generate(&gr, err);
	char ninja_file[PATHMAX + 16];
	bfmt(ninja_file, sizeof(ninja_file), "%s/build.ninja", g->dir);
	bool changed = false;
	if (!rc)
		rc = fb_ninja_write(gr.nj, ninja_file, &changed, err);
	if (result)
		fill_result(g, ninja_file, changed, result);
	if (!rc && !g->o->emit_ninja_only)
		rc = run_and_publish(g, &gr, result, err);
	fb_graph_free(&gr);
	return rc;
}

int
fb_build(const struct fb_build_opts *o, struct fb_build_result *result, struct fb_error *err)
{
	if (result)
		memset(result, 0, sizeof(*result));
	if (!o || !o->output || !o->output[0])
		return fb_seterr(err, FB_EINVAL, "build: -o OUTPUT is required");
	if (o->nsources == 0)
		return fb_seterr(err, FB_EINVAL, "build: no source files given (kernels .cu, host .c .cc .cpp .cxx)");
	bool out_dir = o->torch && output_is_dir(o->output);
	if (out_dir && !(o->name && o->name[0]))
		return fb_seterr(err, FB_EINVAL, "build: -o %s is a directory: --name NAME says what to call the module in it",
		                 o->output);
	struct gen g = {0};
	struct fb_config local;
	fb_gen_start(&g, o, fb_config_or_read(o->config, &local));
	struct needs nd = {0};
	/* never one of the sources, never a device or a FIFO */
	int rc = out_dir ? 0 : fb_output_check("build: -o", o->output, o->sources, o->nsources, err);
	if (!rc)
		rc = take_sources(&g, result, &nd, err);
	if (!rc && !out_dir)
		rc = check_output_headers(&g, "build: -o", o->output, err);
	if (!rc)
		rc = find_tools(&g, &nd, err);
	if (!rc)
		rc = check_cache(&g, &nd, err);
	if (!rc)
		rc = prepare_dir(&g, out_dir, result, err);
	if (!rc && o->torch)
		rc = query_torch(&g, out_dir, result, err);
	if (!rc && out_dir) /* known now */
		rc = fb_output_check("build: output", g.out, o->sources, o->nsources, err);
	if (!rc && out_dir)
		rc = check_output_headers(&g, "build: output", g.out, err);
	if (!rc && result)
		bfmt(result->output, sizeof(result->output), "%s", g.out);
	/* nvcc flags that name the arches replace the arch list on nvcc's line (torch's rule) */
	g.project_archs = fb_flags_name_archs(o->nvcc_flags) || fb_flags_name_archs(o->cuda_flags);
	if (!rc && (nd.nvrtc || (nd.nvcc && (!g.project_archs || o->rdc || o->lto))))
		rc = resolve_archs(&g, result, err);
	else if (!rc && nd.nvcc && result)
		note(result->notes, sizeof(result->notes), "arches: nvcc builds those its flags name (the arch list is not used)");
	if (!rc)
		rc = generate_and_run(&g, result, err);
	fb_gen_free(&g);
	return rc;
}

int
fb_load(const struct fb_build_opts *o, void **handle, struct fb_error *err)
{
	if (!handle)
		return fb_seterr(err, FB_EINVAL, "fb_load: NULL handle");
	*handle = NULL;
	if (o && o->executable)
		return fb_seterr(err, FB_EINVAL, "fb_load: cannot dlopen a program (executable is set)");
	struct fb_build_result *res = malloc(sizeof(*res));
	if (!res)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int rc = fb_build(o, res, err);
	char out[PATHMAX];
	bfmt(out, sizeof(out), "%s", res->output);
	free(res);
	if (rc)
		return rc;
	void *h = dlopen(out, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		return fb_seterr(err, FB_EIO, "dlopen %s: %s", out, why ? why : "unknown error");
	}
	*handle = h;
	return 0;
}
