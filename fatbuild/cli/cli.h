/* cli.h: private to the fatbuild CLI (fatbuild.c and cmd_*.c). Not part of libfatbuild. Messages
 * and allocation come from base/cliutil.h, which both CLIs share. */
#ifndef FB_CLI_H
#define FB_CLI_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "fatbuild.h"
#include "base/cliutil.h"
#include "base/config.h"

/* The subcommands; each returns an enum ap_exit code. argv[0] is the subcommand name. */
int cmd_flags(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_cache(int argc, char **argv);
/* FATBUILD_CACHE_MAX_SIZE, else FB_CACHE_DEFAULT_MAX_SIZE (0: no limit): 0, or AP_EXIT_USAGE
 * with the one-line message said. */
int cli_cache_limit(const struct fb_config *cfg, uint64_t *max);
/* What a build or compile runs as it ends: trims the cache when it is over max (verbose: one
 * line when something was evicted); trouble only costs the trim. */
void cli_cache_trim_after(uint64_t max, bool verbose);
int cmd_build(int argc, char **argv);
/* The build's compile server, a hidden command (cmd_compile_server.c). */
int cmd_compile_server(int argc, char **argv);
int cmd_embed(int argc, char **argv);
int cmd_dlink(int argc, char **argv);
int cmd_edge(int argc, char **argv);
/* The launcher (cmd_launch.c): argv[0] is the compiler ("nvcc", "/usr/bin/gcc"). */
int cmd_launch(int argc, char **argv);
/* Whether w names a compiler the launcher takes (nvcc, gcc, g++, c++, cc, clang, clang++, one
 * of them with a target's prefix or a version, x86_64-linux-gnu-g++-12; a path to one). */
bool launch_is_compiler(const char *w);
/* The masquerade directory (cmd_shims.c): `fatbuild shims DIR` makes it; cmd_shim_run is
 * fatbuild run through one of its links, argv[0] naming it ("nvcc", "/dir/g++"), which
 * shim_is_name tells. */
int cmd_shims(int argc, char **argv);
int cmd_shim_run(int argc, char **argv);
bool shim_is_name(const char *argv0);
int cmd_env(int argc, char **argv);
int cmd_size(int argc, char **argv);
int cmd_prune(int argc, char **argv);
/* prune/size arch lists (cmd_prune.c): -arch/-gencode/--generate-code taken out of argv (names
 * appended; the new argc, or -1 with "CMD: option '-arch' needs a value" said, CMD = argv[0]);
 * then those names and --arch-list LIST (NULL: none) resolved (warnings printed) into *ts (free
 * it; *nt entries) and joined into text. With optional, no names at all is no targets (*ts NULL,
 * text ""), else an error. Returns 0 or the exit code. */
int prune_take_nvcc_args(int argc, char **argv, char *names, size_t n);
int prune_targets(char *names, size_t n, const char *list, bool optional, struct ap_target **ts, size_t *nt,
                  char *text, size_t tn);
int cmd_diff(int argc, char **argv);
/* Prints the version report (tool, NVRTC version and arches). */
int cmd_version(int argc, char **argv);

/* warn("warning: LINE") for each line of text (NULL: nothing). */
void warn_lines(const char *text);
/* warn("warning: W") for each warning of an arch list. */
void warn_archlist(const struct ap_archlist *l);
/* The targets of l in a new array (xcalloc, at least one slot); *n: how many. */
struct ap_target *targets_copy(const struct ap_archlist *l, size_t *n);
/* fb_output_check for command cmd: AP_EXIT_OK, or the exit code with "fatbuild: CMD: why" said. */
int check_output(const char *cmd, const char *what, const char *out, const char *const *in, size_t n);
/* -j N of command cmd into *jobs: a whole number from lo up; one above FB_JOBS_MAX is capped
 * with a note, as make and ninja take any -j. 0, or -1 with "CMD: invalid -j value 'V'" said. */
int parse_jobs(const char *cmd, const char *v, int lo, int *jobs);
/* A note when MAX_JOBS asks for more than FB_JOBS_MAX jobs (fb_build gives its edges
 * MAX_JOBS=FB_JOBS_MAX then, so that they say nothing). */
void note_max_jobs(const struct fb_config *cfg, const char *cmd);
/* 0, or AP_EXIT_USAGE after one line naming it when mode is FATBUILD_REMOTE_CACHE_MODE's own
 * value (cfg's pointer: no option replaced it) and neither read nor readwrite; cmd: the
 * subcommand for the message. Checked before anything runs (a build: before ninja). */
int cli_remote_mode_env(const struct fb_config *cfg, const char *mode, const char *cmd);
/* The remote options a command was given (NULL or 0: not given). */
struct cli_remote_flags {
	const char *cache, *mode, *exec;  /* --remote-cache, --remote-cache-mode, --remote-exec */
	const char *const *props;         /* --remote-exec-property, nprops of them */
	size_t nprops;
	int jobs;                         /* --remote-jobs */
	long exec_timeout_ms;             /* --remote-exec-timeout */
};
/* *r resolved once for the library: each flag over its variable (FATBUILD_REMOTE_CACHE, _MODE,
 * FATBUILD_REMOTE_EXECUTOR), the rest from the environment (FATBUILD_REMOTE_CACHE_HEADER,
 * _TIMEOUT in seconds, _STATE, TMPDIR). Strings point into f and cfg; nothing is checked here
 * (cli_remote_mode_env, cli_rexec_url_check). */
void cli_remote_resolve(const struct fb_config *cfg, const struct cli_remote_flags *f, struct fb_remote_opts *r);
/* 0, or -1 after one line naming it when url (--remote-exec or FATBUILD_REMOTE_EXECUTOR; NULL
 * or "": none) is not a grpc:// or grpcs:// URL: a mistake to say at once, not a farm that fails
 * each build. cmd: the subcommand for the message. */
int cli_rexec_url_check(const char *url, const char *cmd);
/* 0, or -1 after one line naming it when v (a --remote-exec-property) is not KEY=VALUE with a
 * KEY. cmd: the subcommand for the message. */
int cli_rexec_prop_check(const char *v, const char *cmd);

/* The options `fatbuild build` and `fatbuild compile` share (opt_common.c): -o, -I, -D, -j, -v,
 * -h, --arch-list, --rdc, --lto, --remote-cache, --remote-cache-mode, --remote-exec,
 * --remote-exec-property, --remote-jobs, --remote-exec-timeout. A command's getopt string
 * starts with CLI_SHARED_SHORTS and its table with CLI_SHARED_LONGOPTS (with <getopt.h>), its
 * own options after them numbered from CLI_OPT_OWN; cli_shared_opt reads each option first. */
enum {
	CLI_OPT_ARCH = 256, CLI_OPT_RDC, CLI_OPT_LTO, CLI_OPT_REMOTE, CLI_OPT_REMOTE_MODE, CLI_OPT_REXEC,
	CLI_OPT_REXEC_PROP, CLI_OPT_REXEC_JOBS, CLI_OPT_REXEC_TIMEOUT,
	CLI_OPT_OWN /* a command's own options from here */
};
#define CLI_SHARED_SHORTS "o:I:D:j:vh"
#define CLI_SHARED_LONGOPTS \
	{"arch-list", required_argument, NULL, CLI_OPT_ARCH}, {"rdc", no_argument, NULL, CLI_OPT_RDC}, \
	{"lto", no_argument, NULL, CLI_OPT_LTO}, {"remote-cache", required_argument, NULL, CLI_OPT_REMOTE}, \
	{"remote-cache-mode", required_argument, NULL, CLI_OPT_REMOTE_MODE}, \
	{"remote-exec", required_argument, NULL, CLI_OPT_REXEC}, \
	{"remote-exec-property", required_argument, NULL, CLI_OPT_REXEC_PROP}, \
	{"remote-jobs", required_argument, NULL, CLI_OPT_REXEC_JOBS}, \
	{"remote-exec-timeout", required_argument, NULL, CLI_OPT_REXEC_TIMEOUT}, \
	{"help", no_argument, NULL, 'h'}
/* How a command reads them, kept as each read them before they were shared. */
struct cli_shared_spec {
	const char *cmd;          /* "build", "compile": for the messages */
	int jobs_min;             /* the least -j N (parse_jobs' lo): build 0, compile 1 */
	bool mode_later;          /* --remote-cache-mode is kept as given, for the command to check
	                           * after the parse (cli_remote_mode_check); else checked here */
	bool plus_ok;             /* --remote-jobs +N and --remote-exec-timeout +S are taken */
	const char *timeout_unit; /* after the range in --remote-exec-timeout's message */
};
/* What they set (NULL, 0, false: not given). incs, defs and props are xreallocarray'd. */
struct cli_shared {
	const struct cli_shared_spec *spec;
	const char *arch_list, *output;
	const char **incs, **defs, **props;
	size_t nincs, ndefs;
	int jobs;
	bool verbose, rdc, lto;
	struct cli_remote_flags remote; /* its props: props */
};
/* Option c (cli_getopt's) with its value v into s: 1 when it is one of them ('h' is not: each
 * command has its own help), 0 when it is not, -1 for a bad value (said in one line). */
int cli_shared_opt(struct cli_shared *s, int c, const char *v);
void cli_shared_free(struct cli_shared *s);
/* 0, or -1 after one line naming it (cli_bad_value's) when mode is neither read nor readwrite.
 * cmd: the subcommand for the message. */
int cli_remote_mode_check(const char *mode, const char *cmd);
/* Prints "fatbuild: msg" for a library error and returns its exit code. */
int fail_fb(const struct fb_error *e);
int fail_ap(const struct ap_error *e);
/* fail_ap for the error of resolving list with ro (its toolkit, else the one in use): when the
 * list has an item that does not parse and a spelling of the toolkit's arches is close to it,
 * the line ends in " (did you mean '8.0'?)". */
int fail_archlist(const struct ap_error *e, const char *list, const struct ap_resolve_opts *ro);
/* That ending for code (an ap_status; only AP_EPARSE gets one) into buf, "" when there is none;
 * returns buf. check NULL: an item is checked by resolving it alone with ro; else check says
 * (cli_arch_suggest's). The candidates are the arches of ro's toolkit, else of the one in use,
 * else of CUDA 13.0's built-in table. */
const char *archlist_hint(int code, const char *list, const struct ap_resolve_opts *ro,
                          int (*check)(const char *item, void *ctx), char *buf, size_t size);
/* stop.c: splits the process into a supervisor, which never returns from this call (it waits
 * and exits with the worker's status), and the worker, which returns and runs the command in a
 * process group of its own. SIGINT, SIGTERM and SIGHUP then stop the worker's whole group. */
void cli_supervise(void);
/* The flag for fb_build_opts.cancel / fb_compile_opts.cancel: the stopping signal, or 0. */
const volatile sig_atomic_t *cli_cancel_flag(void);
int cli_stopped(void);
/* "fatbuild: WHAT: interrupted by SIGTERM; ..." and the exit code, 128+signal. */
int cli_stop_exit(const char *what);
/* The stopping signal's name ("SIGINT"; "a signal" before one). */
const char *cli_stop_name(void);
/* In the worker, before it execs another program in its place (the launcher's plain command):
 * the stopping signals get back what they had before cli_supervise (ignored, or the default),
 * so the program meets a signal as it would have without fatbuild; the caller then looks at
 * cli_stopped() once more, and a signal after that is the program's. */
void cli_stop_release(void);

#endif
