/* cmd_edge.c: `fatbuild edge`, one host or nvcc compile of a build served from the compile
 * cache or the remote cache when it can be, else run and remembered (fb_edge_run). build.ninja
 * puts it before those edges' commands. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/config.h"
#include "base/strbuf.h"
#include "plumbing.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild edge -o OBJ --depfile DEP [--base DIR]... [--tool PROG]... [--deps-of D]...\n"
	        "                     [--quiet-dir Q]... [--unkeyed WORD]... [--remote-exec URL]\n"
	        "                     [--remote-exec-property K=V]...\n"
	        "                     [--remote-exec-timeout S] [--remote-cmd WORDS] -- COMMAND...\n"
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
	        "Each WORD is left out of the key where COMMAND holds it as a word: a setting of the\n"
	        "compiler's own that cannot change the object (fatbuild build gives gcc's collector heap,\n"
	        "docs/pytorch.md \"gcc's collector\").\n"
	        "\n"
	        "Remote execution (docs/remote-cache.md §9 \"Host and nvcc edges\"): on a miss the compile\n"
	        "runs at a REAPI executor as an Action whose input root holds the source and the headers it\n"
	        "reads (the last compile's list, else the compiler's -M run here), its paths moved below\n"
	        "_fb/r/; the worker brings the compiler, nvcc and /usr's headers. Its object and depfile\n"
	        "are checked and cached as a local compile's; its compile error is shown as one; any\n"
	        "failure of the executor compiles here, with one warning per build.\n"
	        "  --remote-exec URL            grpc://HOST:PORT[/INSTANCE] (FATBUILD_REMOTE_EXECUTOR)\n"
	        "  --remote-exec-property K=V   a platform property the worker must offer (repeatable),\n"
	        "                               besides OSFamily=linux and ISA=x86-64: the one naming\n"
	        "                               a toolchain like yours\n"
	        "  --remote-exec-timeout S      seconds the Action may queue and run (default 600)\n"
	        "  --remote-cmd WORDS           the compile alone, as shell words, when COMMAND is a\n"
	        "                               shell line around it (fatbuild build gives it)\n"
	        "\n"
	        "Environment: FATBUILD_CACHE_DIR; FATBUILD_REMOTE_CACHE, _MODE, _HEADER, _TIMEOUT as for\n"
	        "'fatbuild compile'; FATBUILD_EDGE_LOG: a file that gets one line per edge (hit local,\n"
	        "hit remote, remote (the executor ran it), remote cached (its action cache) or ran, then\n"
	        "OBJ). With an executor and FATBUILD_COMPILE_VERBOSE=1 (set by 'fatbuild build -v' when\n"
	        "it runs a compile server), one line on stderr says where the edge ran: 'edge OBJ\n"
	        "(remote)', '(remote (the executor's cache))', '(cached)', '(local: why)'.\n"
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

/* The lists of repeatable options, each with room for every argument. */
struct lists {
	const char **tools, **more, **bases, **quiet, **props, **unkeyed;
	size_t nprops;
	const char *rexec, *rtimeout;
};

/* The options before "--": those taking a value, in slot_of's order, then the help's. */
static const char *const edge_opts[] = {
	"-o", "--depfile", "--base", "--tool", "--deps-of", "--quiet-dir", "--unkeyed", "--remote-exec-property",
	"--remote-exec", "--remote-exec-timeout", "--remote-cmd", "-h", "--help", NULL,
};

/* The slot option a takes its value into, or NULL for an unknown option. */
static const char **
slot_of(const char *a, struct fb_edge_opts *o, struct lists *l)
{
	const char **slots[] = {
		&o->output, &o->depfile, &l->bases[o->nbases], &l->tools[o->ntools], &l->more[o->nmore_deps],
		&l->quiet[o->nquiet], &l->unkeyed[o->nunkeyed], &l->props[l->nprops], &l->rexec, &l->rtimeout,
		&o->remote_cmd,
	};
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		if (strcmp(a, edge_opts[i]) == 0)
			return slots[i];
	return NULL;
}

/* The options before "--" into o and l: the index of "--", -1 for --help, -2 for a usage error
 * (said in its one line). */
static int
parse(int argc, char **argv, struct fb_edge_opts *o, struct lists *l)
{
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			return -1;
		const char **slot = slot_of(a, o, l);
		if (!slot || i + 1 >= argc) {
			cli_bad_option("edge", a, slot ? CLI_NEEDS_VALUE : CLI_UNKNOWN, edge_opts);
			return -2;
		}
		*slot = argv[++i];
		o->ntools += slot == &l->tools[o->ntools];
		o->nmore_deps += slot == &l->more[o->nmore_deps];
		o->nbases += slot == &l->bases[o->nbases];
		o->nquiet += slot == &l->quiet[o->nquiet];
		o->nunkeyed += slot == &l->unkeyed[o->nunkeyed];
		if (slot == &l->props[l->nprops] && cli_rexec_prop_check(*slot, "edge"))
			return -2;
		l->nprops += slot == &l->props[l->nprops];
	}
	return i;
}

/* The remote cache and executor: the options over the environment, resolved once. 0, or a
 * usage error said. */
static int
remote_opts(struct fb_edge_opts *o, const struct lists *l, const struct fb_config *cfg)
{
	struct cli_remote_flags f = {.exec = l->rexec, .props = l->props, .nprops = l->nprops};
	cli_remote_resolve(cfg, &f, &o->remote);
	if (o->remote.exec && !*o->remote.exec)
		o->remote.exec = NULL;
	if (cli_rexec_url_check(o->remote.exec, "edge"))
		return AP_EXIT_USAGE;
	if (l->rtimeout) {
		char *end = NULL;
		long s = strtol(l->rtimeout, &end, 10);
		if (end == l->rtimeout || *end || s < 1 || s > 86400) {
			warn("edge: invalid --remote-exec-timeout '%s' (seconds, 1 to 86400)", l->rtimeout);
			return AP_EXIT_USAGE;
		}
		o->remote.exec_timeout_ms = s * 1000L;
	}
	return cli_remote_mode_env(cfg, cfg->remote_cache_mode, "edge");
}

/* What the edge did, for FATBUILD_EDGE_LOG. */
static const char *
what_ran(const struct fb_edge_result *r)
{
	return r->hit == FB_EDGE_LOCAL         ? "hit local"
	       : r->hit == FB_EDGE_REMOTE      ? "hit remote"
	       : r->hit == FB_EDGE_EXEC        ? "remote"
	       : r->hit == FB_EDGE_EXEC_CACHED ? "remote cached"
	                                       : "ran";
}

/* The edge's outcome told: the remote compile's stderr as the compiler's own, the executor's
 * failure once, cache trouble; the log line. */
static void
report(const struct fb_edge_opts *o, const struct fb_edge_result *r, const struct fb_config *cfg)
{
	if (r->log)
		fputs(r->log, stderr);
	if (r->exec_note[0]) {
		char shown[512];
		fb_remote_url_redact(o->remote.exec, shown, sizeof(shown));
		warn("remote-exec: %s: %s; compiling here", shown, r->exec_note);
	}
	if (r->note[0])
		warn("warning: %s", r->note);
	log_edge(cfg->edge_log, what_ran(r), o->output);
	if (o->remote.exec && *o->remote.exec) /* for `fatbuild build -v`'s summary */
		fb_exec_tally_add(o->remote.state, 1, r->hit == FB_EDGE_EXEC || r->hit == FB_EDGE_EXEC_CACHED,
		                  r->hit == FB_EDGE_LOCAL || r->hit == FB_EDGE_REMOTE, 1);
	/* `fatbuild build -v`: where each edge ran and why, as compile's jobs say it */
	if (o->remote.exec && cfg->compile_verbose && strcmp(cfg->compile_verbose, "1") == 0) {
		const char *name = strrchr(o->output, '/') ? strrchr(o->output, '/') + 1 : o->output;
		bool hit = r->hit == FB_EDGE_LOCAL || r->hit == FB_EDGE_REMOTE;
		fprintf(stderr, "edge %s (%s)\n", name, hit ? "cached" : r->where[0] ? r->where : "local");
	}
}

int
cmd_edge(int argc, char **argv)
{
	struct fb_edge_opts o = {0};
	struct fb_config cfg; /* an edge is a process of its own: the environment, read once here */
	fb_config_read(&cfg);
	const char **v = xcalloc(6 * (size_t)argc, sizeof(*v));
	struct lists l = {v, v + argc, v + 2 * argc, v + 3 * argc, v + 4 * argc, v + 5 * argc, 0, NULL, NULL};
	int i = parse(argc, argv, &o, &l), rc = 0;
	if (i == -1)
		usage(stdout);
	else if (i > 0 && (i + 1 >= argc || !o.output || !o.depfile))
		warn("edge: -o OBJ, --depfile DEP and -- COMMAND are required");
	if (i == -1 || i < 0 || i + 1 >= argc || !o.output || !o.depfile) {
		if (i > 0)
			usage(stderr);
		free(v);
		return i == -1 ? AP_EXIT_OK : AP_EXIT_USAGE;
	}
	rc = check_output("edge", "-o", o.output, NULL, 0);
	if (!rc)
		rc = check_output("edge", "--depfile", o.depfile, NULL, 0);
	if (!rc)
		rc = remote_opts(&o, &l, &cfg);
	if (rc) {
		free(v);
		return rc;
	}
	o.argv = (const char *const *)argv + i + 1;
	o.tools = l.tools;
	o.more_deps = l.more;
	o.bases = l.bases;
	o.quiet = l.quiet;
	o.unkeyed = l.unkeyed;
	o.cancel = cli_cancel_flag();
	o.config = &cfg;
	struct fb_edge_result r;
	struct fb_error err = {0};
	rc = fb_edge_run(&o, &r, &err);
	free(v);
	if (rc)
		return fail_fb(&err);
	report(&o, &r, &cfg);
	free(r.log);
	return r.status;
}
