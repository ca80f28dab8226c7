/* edge_action.h: a host or nvcc compile edge as a REAPI Action (edge_action.c, docs/remote-cache.md
 * §9 "Host and nvcc edges"): the compile's words with every path that is not the worker's
 * toolchain rewritten below the input root, its inputs (the source and the headers it reads), its
 * outputs; and the run at the executor with its fallback (edge_remote.c). Private to the
 * extension builder. */
#ifndef FB_BUILD_EDGE_ACTION_H
#define FB_BUILD_EDGE_ACTION_H

#include <stddef.h>

#include "cache/cache.h"

/* Where the paths outside the toolchain lie in the input root: "/home/u/x/a.cu" is
 * "_fb/r/home/u/x/a.cu" (a directory of its own: a sandbox mounts its /usr, /bin, /lib over the
 * root's). */
#define FB_EDGE_ROOT "_fb/r"

struct fb_edge_action {
	char **argv;                  /* the compile, its paths rewritten; NULL-terminated */
	size_t argc;
	const char *outputs[3];       /* the object, the depfile, nvcc's keep dir's marker */
	int noutputs;
	struct fb_exec_input *in;     /* the files the compile reads (path and data malloc'd) */
	size_t nin;
	const char *env[6];           /* PATH; SOURCE_DATE_EPOCH and the locale's when set */
	int nenv;
	char envbuf[6][4200];
};

/* What the Action is made of. words: the compile alone (argv[0] the compiler: a name looked up
 * on the worker's PATH, or a path of the worker's toolchain); output, depfile: the files it
 * writes (absolute, or relative to the working directory); files: every file it reads, absolute
 * (a depfile's list); toolchain: directories the worker has too (the CUDA home), besides /usr's
 * system ones. */
struct fb_edge_action_in {
	const char *const *words;
	const char *output, *depfile;
	const char *const *files;
	size_t nfiles;
	const char *const *toolchain;
	size_t ntoolchain;
	const char *const *env;       /* "NAME=VALUE" to pass on (SOURCE_DATE_EPOCH, the locale) */
	size_t nenv;
};

/* The Action of a: 0; 1 when the compile cannot go as one (why says why: a relative path, a -g
 * object naming the worker's directory, a file that cannot be read); FB_ENOMEM. *out is freed
 * with fb_edge_action_free (NULL is fine). */
int fb_edge_action_new(const struct fb_edge_action_in *a, struct fb_edge_action **out, char *why, size_t wsize,
                       struct fb_error *err);
void fb_edge_action_free(struct fb_edge_action *x);
/* The shell words of s as fb_shell_quote writes them (plain words, '...' and \x) into *out: 0;
 * 1 when s holds other shell syntax; FB_ENOMEM. */
int fb_edge_unquote(const char *s, struct fb_strlist *out, struct fb_error *err);
/* The depfile text of a remote compile with FB_EDGE_ROOT/ spelled / again: the files it names,
 * absolute, into deps. */
int fb_edge_depfile_back(const char *text, struct fb_strlist *deps);
/* The remote compile's messages with FB_EDGE_ROOT/ at the start of a path spelled / again, in
 * place: they then name the files as a local compile does. */
void fb_edge_log_back(char *log);
/* Whether path lies in the worker's toolchain (dirs, and /usr's system directories). */
int fb_edge_toolchain(const char *path, const char *const *dirs, size_t ndirs);

#endif
