/* cmd_edge.c: `fatbuild edge`, one host or nvcc compile of a build served from the compile
 * cache or the remote cache when it can be, else run and remembered (fb_edge_run). build.ninja
 * puts it before those edges' commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/config.h"
#include "plumbing.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild edge -o OBJ --depfile DEP [--base DIR]... [--tool PROG]... [--deps-of D]...\n"
	        "                     [--quiet-dir Q]... -- COMMAND...\n"
	        "\n"
	        "Runs COMMAND, a compile that writes OBJ and the gcc-style depfile DEP, unless the compile\n"
	        "cache or the remote cache has its object already. The key is the command (each DIR\n"
	        "spelled @Bn: the build dir, FATBUILD_CACHE_BASEDIR, torch's and the PCH's dirs, which\n"
	        "the command maps with -ffile-prefix-map), each PROG's path, size and mtime, and\n"
	        "the content of every file the last such compile read (ccache's direct mode), those each\n"
	        "depfile D names (a precompiled header's) included. A hit writes OBJ and DEP and runs\n"
	        "nothing; a miss runs COMMAND and stores what it made. 'fatbuild build' uses it for host\n"
	        "and nvcc edges (--no-edge-cache turns that off). The files below each Q are left out of\n"
	        "DEP (still in the key): torch's headers, whose own files the build makes the edge's inputs.\n"
	        "\n"
	        "Environment: FATBUILD_CACHE_DIR; FATBUILD_REMOTE_CACHE, _MODE, _HEADER, _TIMEOUT as for\n"
	        "'fatbuild compile'; FATBUILD_EDGE_LOG: a file that gets one line per edge (hit local,\n"
	        "hit remote or ran, then OBJ).\n"
	        "\n"
	        "Exit codes: COMMAND's on a miss, %d on a hit, %d when COMMAND could not start, %d usage.\n",
	        AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE);
}

/* Appends "WHAT OBJ" to path, $FATBUILD_EDGE_LOG (best effort), one line per edge whatever
 * OBJ's name holds (control bytes as '?'). */
static void
log_edge(const char *path, const char *what, const char *obj)
{
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (f) {
		fprintf(f, "%s ", what);
		for (const char *c = obj; *c; c++)
			fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, f);
		fputc('\n', f);
		fclose(f);
	}
}

int
cmd_edge(int argc, char **argv)
{
	struct fb_edge_opts o = {0};
	struct fb_config cfg; /* an edge is a process of its own: the environment, read once here */
	fb_config_read(&cfg);
	/* one array for the four lists, each room for every argument */
	const char **lists = xcalloc(4 * (size_t)argc, sizeof(*lists));
	const char **tools = lists, **more = lists + argc, **bases = lists + 2 * argc, **quiet = lists + 3 * argc;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			free(lists);
			return AP_EXIT_OK;
		}
		const char **slot = strcmp(a, "-o") == 0 ? &o.output : strcmp(a, "--depfile") == 0 ? &o.depfile
		                    : strcmp(a, "--base") == 0                                     ? &bases[o.nbases]
		                    : strcmp(a, "--tool") == 0                                     ? &tools[o.ntools]
		                    : strcmp(a, "--deps-of") == 0                                  ? &more[o.nmore_deps]
		                    : strcmp(a, "--quiet-dir") == 0 ? &quiet[o.nquiet] : NULL;
		if (!slot || i + 1 >= argc) {
			warn(slot ? "edge: %s needs a value" : "edge: unknown option '%s'", a);
			usage(stderr);
			free(lists);
			return AP_EXIT_USAGE;
		}
		*slot = argv[++i];
		if (slot == &tools[o.ntools])
			o.ntools++;
		else if (slot == &more[o.nmore_deps])
			o.nmore_deps++;
		else if (slot == &bases[o.nbases])
			o.nbases++;
		else if (slot == &quiet[o.nquiet])
			o.nquiet++;
	}
	if (i + 1 >= argc || !o.output || !o.depfile) {
		warn("edge: -o OBJ, --depfile DEP and -- COMMAND are required");
		usage(stderr);
		free(lists);
		return AP_EXIT_USAGE;
	}
	int rc = check_output("edge", "-o", o.output, NULL, 0);
	if (!rc)
		rc = check_output("edge", "--depfile", o.depfile, NULL, 0);
	if (rc) {
		free(lists);
		return rc;
	}
	o.argv = (const char *const *)argv + i + 1;
	o.tools = tools;
	o.more_deps = more;
	o.bases = bases;
	o.quiet = quiet;
	o.remote_cache = cfg.remote_cache;
	o.remote_header = cfg.remote_cache_header;
	const char *mode = cfg.remote_cache_mode, *tmo = cfg.remote_cache_timeout;
	if (cli_remote_mode_env(&cfg, mode, "edge")) {
		free(lists);
		return AP_EXIT_USAGE;
	}
	o.remote_read_only = mode && strcmp(mode, "read") == 0;
	o.remote_timeout_ms = tmo && *tmo ? (long)(strtod(tmo, NULL) * 1000) : 0;
	o.remote_state = cfg.remote_cache_state; /* set by fatbuild build */
	o.remote_tmpdir = cfg.tmpdir;
	o.cancel = cli_cancel_flag();
	o.config = &cfg;
	struct fb_edge_result r;
	struct fb_error err = {0};
	rc = fb_edge_run(&o, &r, &err);
	free(lists);
	if (rc)
		return fail_fb(&err);
	if (r.note[0])
		warn("warning: %s", r.note);
	log_edge(cfg.edge_log, r.hit == FB_EDGE_LOCAL ? "hit local" : r.hit == FB_EDGE_REMOTE ? "hit remote" : "ran",
	         o.output);
	return r.status;
}
