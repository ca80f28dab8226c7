/* fatbuild: the CLI. Dispatches to the subcommands in cmd_*.c from one table, which also
 * generates the help text. With no subcommand: sources given → build, else → flags. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char cli_prog[] = "fatbuild";

struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary; /* NULL: hidden, run by fatbuild itself and not listed in --help */
};

static const struct command commands[] = {
	{"flags",   cmd_flags,   "print gencode flags for an arch list (nvcc, torch, cmake, clang, nvrtc, bazel, json)"},
	{"build",   cmd_build,   "build a loadable extension (.so) from kernels and host sources"},
	{"compile", cmd_compile, "compile kernels with NVRTC for every arch into a fatbin"},
	{"pack",    cmd_pack,    "pack cubins and PTX into a fatbinary container"},
	{"inspect", cmd_inspect, "list the containers and images in a .fatbin, .cubin, .o, .a, .so"},
	{"check",   cmd_check,   "will files, wheels, directories or a Python env run on given GPUs, and why not"},
	{"extract", cmd_extract, "write one image of a fatbinary, decompressed"},
	{"size",    cmd_size,    "bytes of device code per kind and arch; what a prune would save"},
	{"prune",   cmd_prune,   "keep only the images an arch list's GPUs use, in any binary"},
	{"diff",    cmd_diff,    "tell two device-code files apart entry by entry (why two builds differ)"},
	{"embed",   cmd_embed,   "wrap a fatbin into a relocatable ELF object"},
	{"dlink",   cmd_dlink,   "device-link relocatable cubins or LTO-IR for one target (nvJitLink)"},
	{"edge",    cmd_edge,    "run one host or nvcc compile through the compile and remote cache"},
	{"shims",   cmd_shims,   "make a directory of links named nvcc, gcc, cc, ... that run fatbuild"},
	{"cache",   cmd_cache,   "show or clear the compile cache (stats|clear|dir)"},
	{"env",     cmd_env,     "print the toolkit, compilers and ninja the build will use"},
	{"__compile-server", cmd_compile_server, NULL}, /* the build's, execed by fb_compile_server_start */
};

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild COMMAND [OPTIONS] ...\n"
	        "       fatbuild --arch-list LIST [--format F]      (same as 'fatbuild flags')\n"
	        "       fatbuild [--arch-list LIST] -o OUT.so SOURCES...   (same as 'fatbuild build')\n"
	        "       fatbuild nvcc|/path/to/nvcc|gcc|g++|cc|c++|clang|clang++ ARGS...\n"
	        "                (a compiler launcher: nvcc's per-arch steps cached; docs/launcher.md;\n"
	        "                the same through a link of 'fatbuild shims DIR' named after one)\n"
	        "\n"
	        "Builds CUDA code for every GPU you ship to: turns an arch list into compiler flags,\n"
	        "compiles kernels with NVRTC for every arch, builds loadable extensions, and writes,\n"
	        "inspects and prunes fatbinaries, saying before run time which GPUs they will load on.\n"
	        "\n"
	        "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].summary)
			fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
	        "\n"
	        "Run 'fatbuild COMMAND --help' or 'man fatbuild-COMMAND' for a command's options.\n"
	        "\n"
	        "Options:\n"
	        "  --nvrtc PATH   any command, before a '--': use this NVRTC (a libnvrtc.so.* file, or a\n"
	        "                 folder holding one, e.g. a pip wheel's site-packages/nvidia/cu13/lib);\n"
	        "                 the same as FATBUILD_NVRTC=PATH, which is how a build's compiles get it\n"
	        "  --version      print the version\n"
	        "  -h, --help     this text\n"
	        "\n"
	        "Examples:\n"
	        "  fatbuild --arch-list \"8.0 8.6+PTX\" -o libsaxpy.so saxpy.cu saxpy_host.c\n"
	        "  fatbuild inspect libsaxpy.so\n"
	        "  fatbuild check --arch 8.9 libsaxpy.so\n"
	        "\n");
	cli_exit_codes(f);
}

/* A source file makes an argument list a build rather than a flags query. */
static int
has_sources(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		if (i > 1 && argv[i - 1][0] == '-' && argv[i - 1][1] != '-' && strlen(argv[i - 1]) == 2)
			continue; /* value of a short option: -o x.so */
		if (fb_source_kind(argv[i]) != FB_SOURCE_NONE)
			return 1;
	}
	return 0;
}

/* Takes --nvrtc PATH / --nvrtc=PATH out of argv (up to a "--"), the last one's path made
 * absolute into var ("FATBUILD_NVRTC=PATH", size bytes; "" when there is none). Returns the
 * new argc, or -1 (reported). */
static int
take_nvrtc(int argc, char **argv, char *var, size_t size)
{
	int w = 1;
	var[0] = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[w++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--nvrtc") == 0) {
			if (i + 1 >= argc) {
				warn("option '--nvrtc' needs a value (a libnvrtc.so.* file or a folder with one)");
				return -1;
			}
			v = argv[++i];
		} else if (strncmp(argv[i], "--nvrtc=", 8) == 0)
			v = argv[i] + 8;
		if (!v) {
			argv[w++] = argv[i];
			continue;
		}
		char abs[PATH_MAX];
		if (!realpath(v, abs)) {
			warn("--nvrtc %s: %s", v, strerror(errno));
			return -1;
		}
		snprintf(var, size, "FATBUILD_NVRTC=%s", abs);
	}
	argv[w] = NULL;
	return w;
}

/* --nvrtc is FATBUILD_NVRTC for the whole command: the program runs again, without the option,
 * with the variable in its environment, where every configuration read of its own and every
 * process it starts (the compiles ninja runs elsewhere, the compile server) find it. Returns
 * only when that cannot be done (reported). */
static void
run_with_nvrtc(char **argv, const char *var)
{
	const char *set[] = {var};
	char **envp = fb_config_child_env(set, 1);
	if (envp)
		execve("/proc/self/exe", argv, envp);
	warn("--nvrtc: cannot run fatbuild again with %s: %s", var, envp ? strerror(errno) : "out of memory");
	free(envp);
}

/* "unknown command 'W'", with the listed command it likely meant. */
static int
unknown_command(const char *w)
{
	const char *names[sizeof(commands) / sizeof(commands[0]) + 1] = {0};
	char pick[32], hint[64] = "";
	size_t n = 0;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].summary)
			names[n++] = commands[i].name;
	if (cli_suggest(w, names, pick, sizeof(pick)))
		snprintf(hint, sizeof(hint), " (did you mean '%s'?)", pick);
	warn("unknown command '%s'%s; see 'fatbuild --help'", w, hint);
	return AP_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	/* A launcher's words are the compiler's: none of them is fatbuild's (not even --nvrtc). Run
	 * through a link named after a compiler (fatbuild shims), argv[0] is that compiler. */
	if (argc >= 1 && shim_is_name(argv[0]))
		return cmd_shim_run(argc, argv);
	if (argc >= 2 && launch_is_compiler(argv[1]))
		return cmd_launch(argc - 1, argv + 1);
	char nvrtc[PATH_MAX + 16];
	if ((argc = take_nvrtc(argc, argv, nvrtc, sizeof(nvrtc))) < 0)
		return AP_EXIT_USAGE;
	if (nvrtc[0]) {
		run_with_nvrtc(argv, nvrtc);
		return AP_EXIT_FAIL;
	}
	if (argc < 2) {
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return AP_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)
		return cmd_version(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	if (argv[1][0] == '-') {
		/* No subcommand: options only. argv[0] stands in as the command name. */
		argv[0] = has_sources(argc, argv) ? "build" : "flags";
		return has_sources(argc, argv) ? cmd_build(argc, argv) : cmd_flags(argc, argv);
	}
	if (has_sources(argc, argv)) {
		argv[0] = "build";
		return cmd_build(argc, argv);
	}
	return unknown_command(argv[1]);
}
