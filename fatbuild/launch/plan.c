/* plan.c: nvcc's own plan for one compile. `nvcc --dryrun` prints every command it would run
 * as a line "#$ COMMAND" on stderr, after lines "#$ NAME=VALUE" that set what the commands
 * expect in their environment (_HERE_, CICC_PATH, NVVMIR_LIBRARY_DIR, PATH, LD_LIBRARY_PATH,
 * ...). Those lines are shell: words split at blanks, "..." and '...' quoted, $NAME and
 * ${NAME} expanded from the assignments above them (fb_words_shell reads them). A line that
 * needs more of the shell (a pipe, a redirection, a glob, a name never assigned) or names a
 * tool the launcher does not know is not taken, and nvcc then runs as it is.
 *
 * The plan's temporaries are named TMP/tmpxft_PID_N-K_NAME after the dry run's nvcc, a process
 * that has ended: its pid may be anyone's by the time the steps run. So every TMP/tmpxft_
 * moves into a fresh directory of this run's (mkdtemp, 0700); names without a directory
 * (cudafe++'s --stub_file_name, cicc's --include_file_name, which end up in #include lines)
 * stay as they are and resolve beside the file that includes them, in that same directory. */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/config.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "base/words.h"
#include "plan.h"

extern char **environ;

/* ---- running a command with its output kept ---- */

/* Reads and removes the capture file fd/name. NULL on OOM or a read error. */
static char *
take_capture(int fd, const char *name, size_t *n)
{
	char *data = NULL;
	lseek(fd, 0, SEEK_SET);
	if (fb_read_fd(fd, name, &data, n, NULL) != 0)
		data = NULL;
	unlink(name);
	return data;
}

int
fb_launch_run(const char *prog, char *const *argv, char *const *env, const char *dir,
              const volatile sig_atomic_t *cancel, struct fb_launch_out *o, struct fb_error *err)
{
	char tmp[2][PATH_MAX], target[PATH_MAX];
	int fd[2] = {-1, -1}, rc = 0;
	memset(o, 0, sizeof(*o));
	o->status = -1;
	snprintf(target, sizeof(target), "%s/out", dir);
	for (int i = 0; i < 2 && !rc; i++)
		rc = fb_tmp_open(target, 0600, tmp[i], sizeof(tmp[i]), &fd[i], err);
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	if (!rc) {
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fd[0], 1);
		posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
		int e = posix_spawn(&pid, prog, &fa, NULL, argv, env);
		posix_spawn_file_actions_destroy(&fa);
		if (e)
			rc = fb_seterr(err, FB_EIO, "cannot run %s: %s", prog, strerror(e));
	}
	int st = 0;
	while (!rc && waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			rc = fb_seterr(err, FB_EIO, "waiting for %s: %s", prog, strerror(errno));
		else if (cancel && *cancel)
			kill(pid, (int)*cancel); /* the stopping signal, if the process group's has not reached it */
	}
	if (!rc)
		o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	for (int i = 0; i < 2; i++) {
		if (fd[i] < 0)
			continue;
		char *d = take_capture(fd[i], tmp[i], i ? &o->err_size : &o->out_size);
		if (!d && !rc)
			rc = fb_seterr(err, FB_EIO, "cannot read what %s printed", prog);
		*(i ? &o->err : &o->out) = d; /* fb_read_fd closed fd */
	}
	return rc;
}

void
fb_launch_out_clear(struct fb_launch_out *o)
{
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof(*o));
}

/* ---- the plan ---- */

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static bool
has_word(char *const *argv, const char *prefix)
{
	for (size_t i = 0; argv[i]; i++)
		if (strncmp(argv[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* The kind of a step; -1 for a tool the launcher does not run (nvlink, or one it never saw). */
static int
step_kind(char *const *argv)
{
	static const char *const others[] = {"cudafe++", "fatbinary", "rm", "gcc", "g++", "cc", "c++", "clang",
	                                     "clang++", NULL};
	const char *b = base_name(argv[0]);
	if (strcmp(b, "cicc") == 0)
		return FB_STEP_CICC;
	if (strcmp(b, "ptxas") == 0)
		return FB_STEP_PTXAS;
	bool host = false;
	for (size_t i = 0; others[i]; i++)
		host |= strcmp(b, others[i]) == 0;
	if (!host && strncmp(b, "gcc-", 4) != 0 && strncmp(b, "g++-", 4) != 0 && strncmp(b, "clang", 5) != 0 &&
	    !(strlen(b) > 4 && (strcmp(b + strlen(b) - 4, "-gcc") == 0 || strcmp(b + strlen(b) - 4, "-g++") == 0)))
		return -1;
	return has_word(argv, "-E") && has_word(argv, "-D__CUDA_ARCH__=") ? FB_STEP_DEVPP : FB_STEP_OTHER;
}

/* Every "DIR/tmpxft_" in w becomes "TMPDIR/tmpxft_" (DIR: the plan's temp dir, *from, found
 * in the first word that names one). false when w names a temporary in another directory. */
static bool
move_temps(char **w, char *from, size_t fsize, const char *to)
{
	char *at = strstr(*w, "/tmpxft_");
	if (!at)
		return true;
	if (!from[0]) {
		const char *start = at;
		while (start > *w && start[-1] != '=' && start[-1] != ',')
			start--;
		if (start == at || (size_t)(at - start) >= fsize)
			return false;
		memcpy(from, start, (size_t)(at - start));
		from[at - start] = 0;
	}
	struct fb_buf b = {0};
	size_t fl = strlen(from);
	for (const char *p = *w; *p;) {
		const char *t = strstr(p, "/tmpxft_");
		if (!t) {
			fb_buf_puts(&b, p);
			break;
		}
		if ((size_t)(t - p) < fl || strncmp(t - fl, from, fl) != 0) {
			free(b.s);
			return false;
		}
		fb_buf_put(&b, p, (size_t)(t - fl - p));
		fb_buf_puts(&b, to);
		fb_buf_put(&b, t, 8);
		p = t + 8;
	}
	if (b.oom || !b.s) {
		free(b.s);
		return false;
	}
	free(*w);
	*w = b.s;
	return true;
}

/* Adds the step of words l to p. 0, or -1 with why. */
static int
add_step(struct fb_plan *p, struct fb_strlist *l, const char *path, char *from, size_t fsize, char *why,
         size_t size)
{
	int kind = l->n ? step_kind(l->v) : -1;
	if (kind < 0) {
		snprintf(why, size, "a step it does not know (%.100s)", l->n ? l->v[0] : "an empty line");
		return -1;
	}
	struct fb_step *s = realloc(p->steps, (p->n + 1) * sizeof(*s));
	if (!s) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	p->steps = s;
	s = &p->steps[p->n];
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < l->n; i++)
		if (!move_temps(&l->v[i], from, fsize, p->tmpdir)) {
			snprintf(why, size, "a temporary outside nvcc's temp dir (%.100s)", l->v[i]);
			return -1;
		}
	const char *pos = path;
	if (strchr(l->v[0], '/'))
		snprintf(s->prog, sizeof(s->prog), "%s", l->v[0]);
	else if (!fb_path_next(&pos, l->v[0], s->prog, sizeof(s->prog))) {
		snprintf(why, size, "%.100s is not on the plan's PATH", l->v[0]);
		return -1;
	}
	s->kind = kind;
	s->argc = (int)l->n;
	s->argv = l->v;
	memset(l, 0, sizeof(*l));
	p->n++;
	return 0;
}

/* One "#$ " line: an assignment into vars, or a step. 0, or -1 with why. */
static int
plan_line(struct fb_plan *p, const char *line, struct fb_strlist *vars, char *from, size_t fsize, char *why,
          size_t size)
{
	size_t n = fb_words_name(line);
	struct fb_strlist l = {0};
	if (fb_words_shell(n && line[n] == '=' ? line + n + 1 : line, vars, false, &l, NULL) != 0) {
		fb_strlist_free(&l);
		snprintf(why, size, "a line of the plan it cannot read (%.100s)", line);
		return -1;
	}
	if (!(n && line[n] == '=')) {
		const char *path = fb_words_var(vars, "PATH", 4);
		int rc = add_step(p, &l, path, from, fsize, why, size);
		fb_strlist_free(&l);
		return rc;
	}
	struct fb_buf b = {0};
	fb_buf_put(&b, line, n + 1);
	for (size_t i = 0; i < l.n; i++)
		fb_buf_printf(&b, "%s%s", i ? " " : "", l.v[i]);
	fb_strlist_free(&l);
	int rc = b.oom ? -1 : fb_strlist_add(vars, b.s);
	free(b.s);
	if (rc)
		snprintf(why, size, "out of memory");
	return rc ? -1 : 0;
}

/* The steps' environment: this process's, each name the plan assigns set to its last value. */
static char **
step_env(const struct fb_strlist *vars)
{
	struct fb_strlist l = {0};
	for (size_t i = 0; environ && environ[i]; i++) {
		const char *eq = strchr(environ[i], '=');
		if (!eq || !fb_words_var(vars, environ[i], (size_t)(eq - environ[i])))
			fb_strlist_add(&l, environ[i]);
	}
	for (size_t i = 0; i < vars->n; i++) {
		size_t n = strcspn(vars->v[i], "=");
		bool last = true;
		for (size_t k = i + 1; k < vars->n; k++)
			last &= !(strncmp(vars->v[k], vars->v[i], n + 1) == 0);
		if (last)
			fb_strlist_add(&l, vars->v[i]);
	}
	if (l.oom) {
		fb_strlist_free(&l);
		return NULL;
	}
	if (!l.v)
		l.v = calloc(1, sizeof(char *));
	return l.v;
}

/* The dry run's stderr, line by line: the plan into p, the rest into p->msgs. 0, or
 * FB_EFORMAT with why. */
static int
parse(struct fb_plan *p, const char *text, char *why, size_t size)
{
	struct fb_strlist vars = {0};
	struct fb_buf msgs = {0};
	char from[PATH_MAX] = "";
	int rc = 0;
	for (const char *s = text; *s && !rc;) {
		size_t n = strcspn(s, "\n");
		char *line = strndup(s, n);
		if (!line)
			rc = -1;
		else if (strncmp(line, "#$ ", 3) == 0)
			rc = plan_line(p, line + 3, &vars, from, sizeof(from), why, size);
		else
			fb_buf_printf(&msgs, "%s\n", line);
		free(line);
		s += n + (s[n] == '\n');
	}
	if (!rc && !(p->env = step_env(&vars)))
		rc = -1;
	if (!rc && !p->n) {
		snprintf(why, size, "an empty plan");
		rc = -1;
	}
	fb_strlist_free(&vars);
	p->msgs = msgs.s;
	if (rc && !why[0])
		snprintf(why, size, "out of memory");
	return rc ? FB_EFORMAT : 0;
}

int
fb_plan_make(const char *nvcc, char *const *words, const struct fb_config *cfg, const volatile sig_atomic_t *cancel,
             struct fb_plan *p, char *why, size_t size, struct fb_error *err)
{
	memset(p, 0, sizeof(*p));
	why[0] = 0;
	const char *tmp = cfg->tmpdir && cfg->tmpdir[0] == '/' ? cfg->tmpdir : "/tmp";
	if ((size_t)snprintf(p->tmpdir, sizeof(p->tmpdir), "%s/fatbuild-launch-XXXXXX", tmp) >= sizeof(p->tmpdir) - 200)
		return fb_seterr(err, FB_EINVAL, "temp dir %s: too long", tmp);
	if (!mkdtemp(p->tmpdir)) { /* mode 0700, a fresh name */
		int e = errno;
		p->tmpdir[0] = 0;
		return fb_seterr(err, FB_EIO, "cannot make a temp dir in %s: %s", tmp, strerror(e));
	}
	struct fb_strlist argv = {0};
	fb_strlist_add(&argv, nvcc);
	fb_strlist_add(&argv, "--dryrun");
	for (size_t i = 0; words[i]; i++)
		fb_strlist_add(&argv, words[i]);
	if (argv.oom) {
		fb_strlist_free(&argv);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	struct fb_launch_out o;
	int rc = fb_launch_run(nvcc, argv.v, environ, p->tmpdir, cancel, &o, err);
	fb_strlist_free(&argv);
	if (!rc && (o.status != 0 || o.out_size)) {
		snprintf(why, size, "nvcc --dryrun %s", o.status ? "failed" : "printed on stdout");
		rc = FB_EFORMAT;
	}
	if (!rc)
		rc = parse(p, o.err ? o.err : "", why, size);
	fb_launch_out_clear(&o);
	return rc;
}

void
fb_plan_free(struct fb_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		fb_words_free(p->steps[i].argv);
	free(p->steps);
	fb_words_free(p->env);
	free(p->msgs);
	if (p->tmpdir[0])
		fb_dir_remove(p->tmpdir, 1);
	memset(p, 0, sizeof(*p));
}
