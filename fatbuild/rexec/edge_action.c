/* edge_action.c: a host or nvcc compile as a REAPI Action (docs/remote-cache.md §9 "Host and
 * nvcc edges"). The worker brings the toolchain (the compiler, nvcc and its CUDA home, /usr's
 * system headers); everything else the compile names (the source, the project's headers, the
 * object, the depfile, nvcc's keep dir, the dirs of -ffile-prefix-map) moves below
 * FB_EDGE_ROOT of the input root, spelled relative to it, since the root is `/` of a chroot with
 * the bubblewrap runner and a temporary directory with others, and the command runs in it. The
 * prefix maps are rewritten as their paths are, so the object names what a local one names
 * (the source as ./a.cu), and is byte-identical to it. What a path may mean besides a file (a
 * -D value) is left as it is. */
#define _GNU_SOURCE /* realpath */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "base/words.h"
#include "rexec.h"

/* /usr's directories a worker's system has as the client's does: the compiler, its headers and
 * libraries. /usr/local is not among them (a project's or fatbuild's headers may lie there). */
static const char *const sysdirs[] = {"/usr/include", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/bin",
                                      "/usr/sbin", "/usr/share", "/bin", "/lib", "/lib64", "/sbin", "/dev"};

static bool
under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n && strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

int
fb_edge_toolchain(const char *path, const char *const *dirs, size_t ndirs)
{
	for (size_t i = 0; i < sizeof(sysdirs) / sizeof(sysdirs[0]); i++)
		if (under(path, sysdirs[i]))
			return 1;
	for (size_t i = 0; i < ndirs; i++)
		if (dirs[i] && *dirs[i] && under(path, dirs[i]))
			return 1;
	return 0;
}

int
fb_edge_unquote(const char *s, struct fb_strlist *out, struct fb_error *err)
{
	return fb_words_shell(s, NULL, true, out, err);
}

/* ---- the words ---- */

struct act {
	const struct fb_edge_action_in *a;
	struct fb_edge_action *x;
	char *why;
	size_t wsize;
};

/* Appends path to b, rewritten below FB_EDGE_ROOT unless it is the toolchain's. */
static void
put_path(const struct act *t, struct fb_buf *b, const char *path, size_t n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%.*s", (int)n, path);
	if (p[0] == '/' && !fb_edge_toolchain(p, t->a->toolchain, t->a->ntoolchain)) {
		fb_buf_puts(b, FB_EDGE_ROOT);
		fb_buf_puts(b, p);
	} else {
		fb_buf_puts(b, p);
	}
}

/* The options whose value, glued or the next word, is a path. */
static const char *const path_opts[] = {"-I", "-L", "-o", "-MF", "-isystem", "-iquote", "-idirafter", "-include",
                                        "-imacros", "-keep-dir", "--keep-dir", "-odir", "--output-directory",
                                        "--output-file", "--include-path", "--system-include", "--pre-include"};
/* The options whose value starts with a path up to '=' (FROM=TO). */
static const char *const map_opts[] = {"-ffile-prefix-map=", "-fdebug-prefix-map=", "-fmacro-prefix-map=",
                                       "-fprofile-prefix-map="};

/* The length of the option of path_opts w starts with (w's path glued after it, or "=" and the
 * path), else 0. */
static size_t
path_opt(const char *w)
{
	for (size_t i = 0; i < sizeof(path_opts) / sizeof(path_opts[0]); i++) {
		size_t n = strlen(path_opts[i]);
		if (strncmp(w, path_opts[i], n) == 0 && (w[n] == '/' || (w[n] == '=' && w[n + 1] == '/')))
			return n + (w[n] == '=');
	}
	return 0;
}

/* One piece of a word (a word, or a piece of an -Xcompiler list) into b, rewritten. */
static void
put_piece(const struct act *t, struct fb_buf *b, const char *w, size_t n, bool is_path)
{
	if (is_path && w[0] == '/') {
		put_path(t, b, w, n);
		return;
	}
	for (size_t i = 0; i < sizeof(map_opts) / sizeof(map_opts[0]); i++) {
		size_t k = strlen(map_opts[i]);
		if (n > k && strncmp(w, map_opts[i], k) == 0 && w[k] == '/') {
			const char *eq = memchr(w + k, '=', n - k);
			size_t m = eq ? (size_t)(eq - w) : n;
			fb_buf_put(b, w, k);
			put_path(t, b, w + k, m - k);
			fb_buf_put(b, w + m, n - m);
			return;
		}
	}
	size_t k = path_opt(w);
	if (k && k < n) {
		fb_buf_put(b, w, k);
		put_path(t, b, w + k, n - k);
		return;
	}
	fb_buf_put(b, w, n);
}

/* Whether w asks for debug info that names the compile's working directory (DW_AT_comp_dir: the
 * worker's, which no prefix map of the client can spell): such a compile stays here. */
static bool
debug_word(const char *w)
{
	return (strncmp(w, "-g", 2) == 0 && strcmp(w, "-g0") != 0 && strncmp(w, "-gencode", 8) != 0 &&
	        strcmp(w, "-gpu-name") != 0) ||
	       strcmp(w, "-G") == 0 || strcmp(w, "--device-debug") == 0;
}

/* A word naming an existing file or directory relative to the working directory: the worker
 * would not find it (every path must be absolute to be moved below the root). */
static bool
relative_file(const char *w)
{
	struct stat st;
	const char *p = w[0] == '-' ? NULL : w;
	if (w[0] == '-' && (strncmp(w, "-I", 2) == 0 || strncmp(w, "-L", 2) == 0) && w[2] && w[2] != '/')
		p = w + 2;
	return p && p[0] != '/' && stat(p, &st) == 0;
}

/* The rewritten words into t->x->argv. */
static int
rewrite_words(struct act *t, struct fb_error *err)
{
	const char *const *w = t->a->words;
	size_t n = 0;
	while (w[n])
		n++;
	struct fb_edge_action *x = t->x;
	if (!(x->argv = calloc(n + 3, sizeof(*x->argv))))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	/* through env, so that a worker without the compiler says so by its status (127, 126: env's
	 * own), which no compiler exits with, where a sandbox's own failure to start it is 1, as an
	 * error in the source is (bwrap: "execvp c++: No such file or directory") */
	static const char *const run[] = {"env", "--"};
	for (size_t i = 0; i < 2; i++)
		if (!(x->argv[x->argc++] = strdup(run[i])))
			return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (debug_word(w[i]) || (i && relative_file(w[i]))) {
			snprintf(t->why, t->wsize, debug_word(w[i]) ? "its debug info would name the worker's directory (%.100s)"
			                                            : "a relative path in the command (%.100s)",
			         w[i]);
			return 1;
		}
		const char *prev = i ? w[i - 1] : "";
		bool tool = i == 0 || strcmp(prev, "-ccbin") == 0 || strcmp(prev, "--compiler-bindir") == 0;
		bool list = strcmp(prev, "-Xcompiler") == 0 || strcmp(prev, "--compiler-options") == 0;
		struct fb_buf b = {0};
		for (const char *p = w[i]; !tool;) {
			size_t k = list ? strcspn(p, ",") : strlen(p);
			put_piece(t, &b, p, k, true);
			if (!p[k])
				break;
			fb_buf_puts(&b, ",");
			p += k + 1;
		}
		if (tool)
			fb_buf_puts(&b, w[i]);
		if (b.oom || !b.s) {
			free(b.s);
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		x->argv[x->argc++] = b.s;
	}
	return 0;
}

/* ---- outputs and inputs ---- */

/* The rewritten spelling of file (absolute, or relative to the working directory) into out. */
static bool
moved(const struct act *t, const char *file, char *out, size_t size)
{
	char abs[PATH_MAX];
	if (file[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)) || snprintf(abs, sizeof(abs), "%s/%s", cwd, file) >= (int)sizeof(abs))
			return false;
	} else {
		snprintf(abs, sizeof(abs), "%s", file);
	}
	if (fb_edge_toolchain(abs, t->a->toolchain, t->a->ntoolchain))
		return false;
	return snprintf(out, size, "%s%s", FB_EDGE_ROOT, abs) < (int)size;
}

/* Whether the rewritten words name path (as a word, or glued to an option). */
static bool
named(const struct fb_edge_action *x, const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < x->argc; i++) {
		const char *hit = strstr(x->argv[i], path);
		if (hit && !hit[n] && (hit == x->argv[i] || hit[-1] == '=' || hit[-1] == 'o' || hit[-1] == 'F'))
			return true;
	}
	return false;
}

/* output_paths: the object, the depfile and a marker in nvcc's keep dir (REAPI has the worker
 * make the parents of output paths, so the dir nvcc writes into exists; the marker is never
 * written). */
static int
set_outputs(struct act *t, struct fb_error *err)
{
	struct fb_edge_action *x = t->x;
	char o[PATH_MAX], d[PATH_MAX];
	if (!moved(t, t->a->output, o, sizeof(o)) || !moved(t, t->a->depfile, d, sizeof(d)) || !named(x, o) ||
	    !named(x, d)) {
		snprintf(t->why, t->wsize, "the command does not name its object and depfile by absolute paths");
		return 1;
	}
	x->outputs[x->noutputs++] = strdup(o);
	x->outputs[x->noutputs++] = strdup(d);
	for (size_t i = 0; i + 1 < x->argc; i++)
		if (strcmp(x->argv[i], "-keep-dir") == 0 || strcmp(x->argv[i], "--keep-dir") == 0) {
			char m[PATH_MAX + 16];
			snprintf(m, sizeof(m), "%s/.fb-keep", x->argv[i + 1]);
			x->outputs[x->noutputs++] = strdup(m);
			break;
		}
	for (int i = 0; i < x->noutputs; i++)
		if (!x->outputs[i])
			return fb_seterr(err, FB_ENOMEM, "out of memory");
	return 0;
}

/* The files the compile reads that the worker lacks, read into the input root. */
static int
set_inputs(struct act *t, struct fb_error *err)
{
	struct fb_edge_action *x = t->x;
	if (!(x->in = calloc(t->a->nfiles + 1, sizeof(*x->in))))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (size_t i = 0; i < t->a->nfiles; i++) {
		const char *f = t->a->files[i];
		char p[PATH_MAX];
		if (f[0] != '/' || fb_edge_toolchain(f, t->a->toolchain, t->a->ntoolchain))
			continue;
		if (strstr(f, "/../") || strstr(f, "/./") || strstr(f, "//")) {
			/* the compile opens it through directories the root might not have */
			snprintf(t->why, t->wsize, "a header path with '..', '.' or '//' (%.200s)", f);
			return 1;
		}
		bool dup = false;
		snprintf(p, sizeof(p), "%s%s", FB_EDGE_ROOT, f);
		for (size_t k = 0; k < x->nin && !dup; k++)
			dup = strcmp(x->in[k].path, p) == 0;
		if (dup)
			continue;
		char *data = NULL;
		size_t size = 0;
		if (fb_read_file(f, &data, &size, NULL) != 0) {
			snprintf(t->why, t->wsize, "cannot read %.200s, which the compile reads", f);
			return 1;
		}
		struct stat st;
		int exe = stat(f, &st) == 0 && (st.st_mode & 0111);
		x->in[x->nin] = (struct fb_exec_input){strdup(p), (const unsigned char *)data, size, exe, ""};
		if (!x->in[x->nin++].path)
			return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	return 0;
}

/* The environment: the worker's PATH (its CUDA home's bin first), then a->env (SOURCE_DATE_EPOCH,
 * the locale, so that messages read as here). Nothing else: the command sees only the Command's
 * environment (§9). */
static void
set_env(struct act *t)
{
	struct fb_edge_action *x = t->x;
	const char *cuda = t->a->ntoolchain ? t->a->toolchain[0] : "/usr/local/cuda";
	snprintf(x->envbuf[0], sizeof(x->envbuf[0]), "PATH=%s/bin:/usr/local/bin:/usr/bin:/bin", cuda);
	x->env[x->nenv++] = x->envbuf[0];
	for (size_t i = 0; i < t->a->nenv && x->nenv < 6; i++) {
		snprintf(x->envbuf[x->nenv], sizeof(x->envbuf[0]), "%s", t->a->env[i]);
		x->env[x->nenv] = x->envbuf[x->nenv];
		x->nenv++;
	}
}

int
fb_edge_action_new(const struct fb_edge_action_in *a, struct fb_edge_action **out, char *why, size_t wsize,
                   struct fb_error *err)
{
	*out = NULL;
	struct fb_edge_action *x = calloc(1, sizeof(*x));
	if (!x)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	struct act t = {a, x, why, wsize};
	int rc = a->words && a->words[0] ? 0 : (snprintf(why, wsize, "no command"), 1);
	if (!rc)
		rc = rewrite_words(&t, err);
	if (!rc)
		rc = set_outputs(&t, err);
	if (!rc)
		rc = set_inputs(&t, err);
	if (!rc)
		set_env(&t);
	if (rc) {
		fb_edge_action_free(x);
		return rc;
	}
	*out = x;
	return 0;
}

void
fb_edge_action_free(struct fb_edge_action *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->argc; i++)
		free(x->argv[i]);
	free(x->argv);
	for (int i = 0; i < x->noutputs; i++)
		free((char *)x->outputs[i]);
	for (size_t i = 0; i < x->nin; i++) {
		free((char *)x->in[i].path);
		free((unsigned char *)x->in[i].data);
	}
	free(x->in);
	free(x);
}

void
fb_edge_log_back(char *log)
{
	static const char root[] = FB_EDGE_ROOT "/";
	size_t n = sizeof(root) - 1;
	char *w = log;
	for (const char *r = log; *r;) {
		char prev = r == log ? ' ' : r[-1];
		bool name = (prev >= 'a' && prev <= 'z') || (prev >= 'A' && prev <= 'Z') || (prev >= '0' && prev <= '9') ||
		            strchr("_.-/", prev);
		if (!name && strncmp(r, root, n) == 0) {
			*w++ = '/';
			r += n;
			continue;
		}
		*w++ = *r++;
	}
	*w = 0;
}
