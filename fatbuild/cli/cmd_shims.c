/* cmd_shims.c: the launcher's masquerade directory (docs/launcher.md "One word"), both ends:
 * `fatbuild shims DIR` makes DIR with links named after the compilers (nvcc, gcc, g++, cc, c++,
 * clang, clang++) to this fatbuild, and fatbuild run through one of them (argv[0]'s last part is
 * the name) runs `fatbuild NAME ARGS` with the real NAME, the first on PATH that is not fatbuild:
 * ccache's habit, for tools that take one word for a compiler (torch's CXX, a Makefile's CC). */
#define _GNU_SOURCE /* realpath, and basename: string.h's, which leaves its argument as it is */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "base/config.h"
#include "base/words.h"

/* The links' names, in the order they are made and listed. */
static const char *const names[] = {"nvcc", "gcc", "g++", "cc", "c++", "clang", "clang++", NULL};

bool
shim_is_name(const char *argv0)
{
	for (size_t i = 0; names[i]; i++)
		if (strcmp(basename(argv0), names[i]) == 0)
			return true;
	return false;
}

/* This program's file: /proc/self/exe read as a link, then stat'ed (a stat of /proc/self/exe
 * itself would be the runner's file under valgrind, which answers the readlink with its
 * client's path). 0, or -1 with st zeroed. */
static int
self_stat(struct stat *st)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		if (stat(self, st) == 0)
			return 0;
	}
	memset(st, 0, sizeof(*st));
	return -1;
}

/* Whether path leads to a fatbuild: this very program (the same file, links followed: a link
 * of DIR, a hard link, a copy run as itself), or any file named fatbuild (another install's
 * links, which would hand the command back here for ever). */
static bool
leads_to_fatbuild(const char *path)
{
	struct stat self, st;
	char real[PATH_MAX];
	if (stat(path, &st) != 0)
		return false;
	if (self_stat(&self) == 0 && st.st_dev == self.st_dev && st.st_ino == self.st_ino)
		return true;
	return realpath(path, real) && strcmp(basename(real), "fatbuild") == 0;
}

int
cmd_shim_run(int argc, char **argv)
{
	struct fb_config cfg;
	fb_config_read(&cfg);
	const char *name = basename(argv[0]);
	char real[PATH_MAX];
	for (const char *pos = cfg.path; fb_path_next(&pos, name, real, sizeof(real));)
		if (!leads_to_fatbuild(real)) {
			argv[0] = real;
			return cmd_launch(argc, argv);
		}
	warn("%s: not found on PATH other than as a link to fatbuild (PATH=%s)", name, cfg.path ? cfg.path : "");
	return 127; /* a shell's "command not found" */
}

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild shims DIR\n"
	        "\n"
	        "Makes DIR (with its parents) holding links named nvcc, gcc, g++, cc, c++, clang and\n"
	        "clang++, each to this fatbuild: ccache's masquerade directory, for tools that take one\n"
	        "word for a compiler (torch's CXX, a Makefile's CC). With DIR first on PATH, a compile by\n"
	        "one of those names runs as 'fatbuild NAME ARGS' does (docs/launcher.md): fatbuild, run\n"
	        "through a link, runs the first NAME on PATH that is not fatbuild, so the links never\n"
	        "call themselves; when there is none it says so and exits 127, as a shell would.\n"
	        "A link of DIR that leads to this fatbuild already is kept; when anything else holds one\n"
	        "of the names, nothing is made.\n"
	        "\n"
	        "Example:\n"
	        "  fatbuild shims ~/.cache/fatbuild/shims && export PATH=~/.cache/fatbuild/shims:$PATH\n"
	        "\n"
	        "Exit codes: %d done, %d DIR or a link could not be made (a name taken), %d usage.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

/* mkdir -p, each made directory 0777 less the umask (an output dir, HACKING.md). 0, or -1 with
 * the message said. */
static int
make_dirs(const char *dir)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
		warn("shims: %s: the path is too long", dir);
		return -1;
	}
	for (char *s = p + 1;; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = 0;
		struct stat st;
		if (mkdir(p, 0777) != 0 && (errno != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
			warn("shims: cannot make %s: %s", p, errno == EEXIST ? "not a directory" : strerror(errno));
			return -1;
		}
		*s = c;
		if (!c)
			return 0;
	}
}

/* DIR/NAME of names[i] into p (PATH_MAX bytes); false when it does not fit. */
static bool
link_path(char *p, const char *dir, size_t i)
{
	int n = snprintf(p, PATH_MAX, "%s/%s", dir, names[i]);
	return n > 0 && n < PATH_MAX;
}

/* Each name in dir: true when it is free or leads to this fatbuild (*ours); false, said, when
 * something else holds it. */
static bool
names_free(const char *dir, bool ours[])
{
	bool ok = true;
	struct stat self, st;
	self_stat(&self);
	for (size_t i = 0; names[i]; i++) {
		char p[PATH_MAX];
		ours[i] = false;
		if (!link_path(p, dir, i)) {
			warn("shims: %s/%s: the path is too long", dir, names[i]);
			return false;
		}
		if (lstat(p, &st) != 0) {
			if (errno == ENOENT)
				continue;
			warn("shims: %s: %s", p, strerror(errno));
			ok = false;
			continue;
		}
		ours[i] = S_ISLNK(st.st_mode) && stat(p, &st) == 0 && st.st_dev == self.st_dev && st.st_ino == self.st_ino;
		if (!ours[i]) {
			warn("shims: %s is there already and is not a link to this fatbuild: left as it is", p);
			ok = false;
		}
	}
	return ok;
}

int
cmd_shims(int argc, char **argv)
{
	int first = 1; /* the first word that is not an option; a "--" ends them */
	for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
		if (strcmp(argv[first], "--") == 0) {
			first++;
			break;
		}
		if (strcmp(argv[first], "-h") == 0 || strcmp(argv[first], "--help") == 0) {
			usage(stdout);
			return AP_EXIT_OK;
		}
		static const char *const known[] = {"-h", "--help", NULL};
		cli_bad_option("shims", argv[first], CLI_UNKNOWN, known);
		return AP_EXIT_USAGE;
	}
	if (argc - first != 1 || !argv[first][0]) {
		warn("shims: %s", argc - first > 1 ? "one directory only" : "which directory? (fatbuild shims DIR)");
		return AP_EXIT_USAGE;
	}
	argv[1] = argv[first];
	char self[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		warn("shims: cannot tell where this fatbuild is (/proc/self/exe): %s", strerror(errno));
		return AP_EXIT_FAIL;
	}
	self[n] = 0;
	bool ours[sizeof(names) / sizeof(names[0])];
	if (make_dirs(argv[1]) != 0)
		return AP_EXIT_FAIL;
	if (!realpath(argv[1], dir)) {
		warn("shims: %s: %s", argv[1], strerror(errno));
		return AP_EXIT_FAIL;
	}
	if (!names_free(dir, ours))
		return AP_EXIT_FAIL;
	for (size_t i = 0; names[i]; i++) {
		char p[PATH_MAX];
		if (!ours[i] && (!link_path(p, dir, i) || symlink(self, p) != 0)) {
			warn("shims: cannot make the link %s: %s", p, strerror(errno));
			return AP_EXIT_FAIL;
		}
	}
	printf("%s:", dir);
	for (size_t i = 0; names[i]; i++)
		printf(" %s", names[i]);
	printf(" -> %s\nput it first on PATH: export PATH=\"%s:$PATH\"\n", self, dir);
	return fflush(stdout) == 0 ? AP_EXIT_OK : AP_EXIT_FAIL;
}
