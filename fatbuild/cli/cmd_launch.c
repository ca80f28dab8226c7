/* cmd_launch.c: fatbuild as a compiler launcher (docs/launcher.md): `fatbuild nvcc ARGS`,
 * `fatbuild /path/to/nvcc ARGS` (CMake's CMAKE_CUDA_COMPILER_LAUNCHER) and `fatbuild gcc ARGS`
 * (CC="fatbuild gcc"). An nvcc compile the split takes runs as nvcc's steps with each arch
 * cached (fb_launch_nvcc); anything else, and any compile whose split fails, is the plain
 * command exec'd as it is, so its output and exit status are the compiler's own. A split runs
 * under stop.c's supervisor: SIGINT, SIGTERM or SIGHUP stop its steps, its temp dir is removed,
 * and it exits 128+signal without running nvcc again. */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/words.h"
#include "cli.h"
#include "plumbing.h"

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* b is name, with a target's prefix (x86_64-linux-gnu-gcc), a version (gcc-13, clang-18), or
 * both. */
static bool
named(const char *b, const char *name)
{
	size_t len = strlen(b), n = strlen(name);
	const char *dash = strrchr(b, '-');
	if (dash && dash[1] && strspn(dash + 1, "0123456789.") == strlen(dash + 1))
		len = (size_t)(dash - b); /* a version */
	if (len < n || strncmp(b + len - n, name, n) != 0)
		return false;
	return len == n || b[len - n - 1] == '-';
}

bool
launch_is_compiler(const char *w)
{
	static const char *const names[] = {"nvcc", "gcc", "g++", "c++", "cc", "clang", "clang++", NULL};
	const char *b = base_name(w);
	for (size_t i = 0; names[i]; i++)
		if (named(b, names[i]))
			return true;
	return false;
}

/* One line for FATBUILD_LAUNCH_LOG: "VERDICT INPUT: DETAIL", control bytes as '?', appended
 * in one write so that the lines of concurrent compiles do not mix. A log that cannot be
 * opened or written (a missing folder, a directory, a FIFO nobody reads: O_NONBLOCK, never a
 * hang) is one line on stderr naming it and why; the compile goes on as if there were no log. */
static void
log_line(const char *path, const char *verdict, char **argv, const char *detail)
{
	if (!path || !*path)
		return;
	static const char *const exts[] = {".cu", ".c", ".cc", ".cpp", ".cxx", ".C", NULL};
	const char *input = "-";
	for (int i = 1; argv[i]; i++) {
		const char *dot = strrchr(argv[i], '.');
		for (size_t k = 0; argv[i][0] != '-' && dot && exts[k]; k++)
			if (strcmp(dot, exts[k]) == 0)
				input = argv[i];
	}
	struct fb_buf b = {0};
	fb_buf_printf(&b, "%s %s %s: %s", verdict, base_name(argv[0]), input, detail);
	for (size_t i = 0; b.s && i < b.len; i++)
		if ((unsigned char)b.s[i] < 0x20 || b.s[i] == 0x7f)
			b.s[i] = '?';
	fb_buf_puts(&b, "\n");
	if (b.oom) {
		free(b.s);
		return;
	}
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
	ssize_t n = fd < 0 ? -1 : write(fd, b.s, b.len);
	if (n != (ssize_t)b.len) /* warn() prints the path's control bytes as '?' */
		warn("FATBUILD_LAUNCH_LOG %s: cannot %s: %s; this compile is not logged", path, fd < 0 ? "open" : "write",
		     n < 0 ? strerror(errno) : "a short write");
	if (fd >= 0)
		close(fd);
	free(b.s);
}

/* Runs the command as it is; returns only when it cannot. */
static int
exec_plain(const char *prog, char **argv)
{
	fflush(stdout);
	if (strchr(prog, '/'))
		execv(prog, argv);
	else
		execvp(prog, argv);
	warn("cannot run %s: %s", prog, strerror(errno));
	return 127;
}

/* The nvcc `fatbuild nvcc` means: the toolkit's (CUDA_HOME, else the nvcc on PATH), as
 * `fatbuild build` finds it; a path is itself. 0, or -1 with the message said. */
static int
find_nvcc(const char *word, const struct fb_config *cfg, char *out, size_t size)
{
	if (strchr(word, '/')) {
		snprintf(out, size, "%s", word);
		return 0;
	}
	char home[PATH_MAX];
	struct ap_error ae = {0};
	if (ap_cuda_home(home, sizeof(home), &ae) == 0 && (size_t)snprintf(out, size, "%s/bin/%s", home, word) < size &&
	    access(out, X_OK) == 0)
		return 0;
	const char *pos = cfg->path;
	if (fb_path_next(&pos, word, out, size))
		return 0;
	warn("nvcc not found: %s (set CUDA_HOME, or put nvcc on PATH)", ae.msg[0] ? ae.msg : "no toolkit");
	return -1;
}

/* Whether path is this very program (a launcher that would call itself for ever). */
static bool
is_self(const char *path)
{
	char a[PATH_MAX], b[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", a, sizeof(a) - 1);
	if (n <= 0 || !realpath(path, b))
		return false;
	a[n] = 0;
	return strcmp(a, b) == 0;
}

/* The cache's settings from the environment, as `fatbuild edge` takes them (no flags: the
 * launcher's words are the compiler's). */
static int
cache_opts(struct fb_launch_opts *o, const struct fb_config *cfg)
{
	if (cli_remote_mode_env(cfg, cfg->remote_cache_mode, "nvcc"))
		return -1;
	cli_remote_resolve(cfg, &(struct cli_remote_flags){0}, &o->remote);
	o->remote.exec = NULL; /* cicc and ptxas run here (per-arch remote steps are not built yet) */
	return 0;
}

int
cmd_launch(int argc, char **argv)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	(void)argc;
	if (!named(base_name(argv[0]), "nvcc")) {
		log_line(cfg.launch_log, "pass", argv, "a host compiler: run as it is");
		return exec_plain(argv[0], argv);
	}
	char nvcc[PATH_MAX];
	if (find_nvcc(argv[0], &cfg, nvcc, sizeof(nvcc)) != 0)
		return 127;
	if (is_self(nvcc)) {
		warn("%s is fatbuild itself: name the real nvcc", nvcc);
		return AP_EXIT_USAGE;
	}
	struct fb_launch_opts o = {.nvcc = nvcc, .words = argv + 1, .config = &cfg};
	if (cache_opts(&o, &cfg) != 0)
		return AP_EXIT_USAGE;
	if (fb_launch_splits(argv + 1)) {
		cli_supervise(); /* from here on a signal stops the steps, and the plan's temp dir goes */
		o.cancel = cli_cancel_flag();
	}
	struct fb_launch_result r;
	struct fb_error err = {0};
	if (fb_launch_nvcc(&o, &r, &err) != 0)
		snprintf(r.why, sizeof(r.why), "%.200s", err.msg);
	cli_stop_release(); /* a signal from here on is the plain nvcc's, or ends this process */
	if (cli_stopped()) {
		log_line(cfg.launch_log, "stop", argv, cli_stop_name());
		fb_launch_result_clear(&r);
		warn("nvcc: interrupted by %s; stopped its steps, removed their temporary files", cli_stop_name());
		return 128 + cli_stopped();
	}
	if (!r.split) {
		log_line(cfg.launch_log, "pass", argv, r.why);
		fb_launch_result_clear(&r);
		return exec_plain(nvcc, argv);
	}
	fwrite(r.out, 1, r.out_size, stdout);
	fwrite(r.err, 1, r.err_size, stderr);
	char detail[1024];
	snprintf(detail, sizeof(detail), "%s%s%s", r.steps && r.steps[0] ? r.steps : "no cicc or ptxas step",
	         r.note[0] ? "; cache: " : "", r.note);
	log_line(cfg.launch_log, "split", argv, detail);
	fb_launch_result_clear(&r);
	return fflush(stdout) == 0 ? AP_EXIT_OK : AP_EXIT_FAIL;
}
