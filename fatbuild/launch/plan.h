/* plan.h: nvcc's words as the launcher reads them, and the plan `nvcc --dryrun` prints for
 * them, parsed into steps (splitwords.c, plan.c; docs/launcher.md "What is split"). Private to libfatbuild. */
#ifndef FB_LAUNCH_PLAN_H
#define FB_LAUNCH_PLAN_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>

#include "fatbuild.h"
#include "base/error.h"
#include "base/words.h"

struct fb_config;

/* What a step of the plan is: a device preprocess (gcc -E with __CUDA_ARCH__), cicc (one
 * virtual arch to PTX), ptxas (PTX to one real arch's cubin), or anything else (the host
 * preprocess, cudafe++, fatbinary, rm, the host compile, the depfile's nvcc -M). */
enum fb_step_kind { FB_STEP_OTHER, FB_STEP_DEVPP, FB_STEP_CICC, FB_STEP_PTXAS };

struct fb_step {
	char **argv;            /* NULL-terminated, malloc'd; temp files named below fb_plan.tmpdir */
	int argc;
	int kind;               /* enum fb_step_kind */
	char prog[PATH_MAX];    /* argv[0] found on the plan's PATH */
};

/* A parsed plan. env: what every step runs with (this process's environment with the plan's
 * assignments over it), NULL-terminated. msgs: the lines of the dry run that are not the plan
 * (nvcc's own warnings), printed before the steps' own. tmpdir: a fresh 0700 directory that
 * holds every temporary file of the plan, removed by fb_plan_free. */
struct fb_plan {
	char **env;
	struct fb_step *steps;
	size_t n;
	char *msgs;
	char tmpdir[PATH_MAX];
};

/* The words (nvcc's arguments, argv[0] not among them) the split takes: one input, -c, and
 * options it knows. 1 when it takes them, with *threads the value of --threads/-t (-1 when
 * absent), *plan the words to ask nvcc's plan for (less --threads and the depfile's options)
 * and *dep (or NULL) the words of the `nvcc -M` that writes the depfile -MD/-MMD ask for,
 * both malloc'd (fb_words_free); 0 with why saying what it does not take ("-E (preprocess
 * only)", "an option the split does not know (--x)"). */
int fb_launch_words_ok(char *const *words, int *threads, char ***plan, char ***dep, char *why, size_t size);

/* Runs `nvcc --dryrun WORDS` (fb_launch_words_ok's plan words) and parses what it prints into p, the
 * temporaries moved into p->tmpdir (under tmp; NULL: /tmp). 0; FB_EFORMAT with why saying what
 * it did not take (a line it cannot read, a tool it does not know: the caller runs nvcc as it
 * is); FB_EIO or FB_ENOMEM with err. cancel: as fb_launch_run's. */
int fb_plan_make(const char *nvcc, char *const *words, const struct fb_config *cfg,
                 const volatile sig_atomic_t *cancel, struct fb_plan *p, char *why, size_t size, struct fb_error *err);
void fb_plan_free(struct fb_plan *p);

/* What a command did: its exit status (128+N for signal N) and what it printed. */
struct fb_launch_out {
	int status;
	char *out, *err;        /* NUL-terminated, malloc'd */
	size_t out_size, err_size;
};
/* Runs prog (argv, env) with stdout and stderr caught in files of dir, waits for it; when a
 * wait is interrupted and *cancel (NULL: never) holds a stopping signal, sends it that signal
 * and waits on. 0 once it ran (o filled, whatever its status: 128+N when signal N ended it);
 * FB_EIO with err when it could not be run or read. */
int fb_launch_run(const char *prog, char *const *argv, char *const *env, const char *dir,
                  const volatile sig_atomic_t *cancel, struct fb_launch_out *o, struct fb_error *err);
void fb_launch_out_clear(struct fb_launch_out *o);

#endif
