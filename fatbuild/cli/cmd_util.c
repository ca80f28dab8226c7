/* cmd_util.c: the fatbuild CLI's own helpers: an arch list's warnings, -j and MAX_JOBS, output
 * checks, library errors as exit codes (the messages and allocation both CLIs share are
 * base/cliutil.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/cpus.h"
#include "base/config.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "plumbing.h"

void
warn_lines(const char *text)
{
	for (const char *w = text ? text : ""; *w;) {
		size_t n = strcspn(w, "\n");
		warn("warning: %.*s", (int)n, w);
		w += n + (w[n] == '\n');
	}
}

void
warn_archlist(const struct ap_archlist *l)
{
	for (size_t i = 0; i < ap_archlist_nwarnings(l); i++)
		warn("warning: %s", ap_archlist_warning(l, i));
}

struct ap_target *
targets_copy(const struct ap_archlist *l, size_t *n)
{
	*n = ap_archlist_count(l);
	struct ap_target *ts = xcalloc(*n ? *n : 1, sizeof(*ts));
	for (size_t i = 0; i < *n; i++)
		ts[i] = *ap_archlist_get(l, i);
	return ts;
}

int
parse_jobs(const char *cmd, const char *v, int lo, int *jobs)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || v[0] == '-' || v[0] == '+' || n < lo) {
		warn("%s: invalid -j value '%s' (a number of jobs, %d or more)", cmd, v, lo);
		return -1;
	}
	if (errno == ERANGE || n > FB_JOBS_MAX) {
		warn("%s: note: -j %s capped at %d, the most jobs fatbuild runs at once", cmd, v, FB_JOBS_MAX);
		n = FB_JOBS_MAX;
	}
	*jobs = (int)n;
	return 0;
}

void
note_max_jobs(const struct fb_config *cfg, const char *cmd)
{
	struct fb_jobs_info ji;
	const char *mj = cfg->max_jobs;
	fb_jobs_default(NULL, NULL, 0, mj, FB_JOBS_MAX, &ji);
	if (!ji.capped)
		return;
	warn("%s: note: MAX_JOBS=%s capped at %d, the most jobs fatbuild runs at once", cmd, mj, FB_JOBS_MAX);
}

int
check_output(const char *cmd, const char *what, const char *out, const char *const *in, size_t n)
{
	struct fb_error err = {0};
	if (fb_output_check(what, out, in, n, &err) == 0)
		return AP_EXIT_OK;
	warn("%s: %s", cmd, err.msg);
	return fb_exit_code(err.code);
}

int
fail_fb(const struct fb_error *e)
{
	warn("%s", e->msg[0] ? e->msg : fb_strerror(e->code));
	return fb_error_exit_code(e);
}

int
fail_ap(const struct ap_error *e)
{
	warn("%s", e->msg[0] ? e->msg : ap_strerror(e->code));
	return ap_exit_code(e->code);
}

const char *
archlist_hint(int code, const char *list, const struct ap_resolve_opts *ro,
              int (*check)(const char *item, void *ctx), char *buf, size_t size)
{
	struct ap_toolkit tk;
	struct ap_resolve_opts one = ro ? *ro : (struct ap_resolve_opts){0};
	char pick[64];
	buf[0] = 0;
	if (code != AP_EPARSE)
		return buf;
	/* The toolkit only gives the candidates: without one installed (check needs none), CUDA
	 * 13.0's built-in table gives them as well. */
	if (one.toolkit)
		tk = *one.toolkit;
	else if (ap_toolkit_detect(NULL, &tk, NULL) != 0 && ap_toolkit_builtin(13000, &tk, NULL) != 0)
		return buf;
	one.toolkit = &tk;
	one.no_probe = true; /* an item alone is checked, never a device asked */
	struct cli_arches ks = {tk.sm, tk.a, tk.f, tk.nsm, tk.na, tk.nf};
	struct cli_resolver r = {ap_archlist_resolve, ap_archlist_free, AP_EPARSE, &one};
	if (cli_arch_suggest(list, check ? check : cli_arch_item_check, check ? NULL : &r, &ks, pick, sizeof(pick)))
		snprintf(buf, size, " (did you mean '%s'?)", pick);
	return buf;
}

int
fail_archlist(const struct ap_error *e, const char *list, const struct ap_resolve_opts *ro)
{
	char hint[96];
	const char *msg = e->msg[0] ? e->msg : ap_strerror(e->code);
	warn("%s%s", msg, archlist_hint(e->code, list, ro, NULL, hint, sizeof(hint)));
	return ap_exit_code(e->code);
}

int
cli_remote_mode_env(const struct fb_config *cfg, const char *mode, const char *cmd)
{
	const char *env = cfg->remote_cache_mode;
	if (!mode || mode != env || !*mode || strcmp(mode, "read") == 0 || strcmp(mode, "readwrite") == 0)
		return 0;
	char shown[48];
	size_t i = 0;
	for (; mode[i] && i + 1 < sizeof(shown); i++) /* the value as one printable line */
		shown[i] = mode[i] >= 0x20 && mode[i] < 0x7f ? mode[i] : '?';
	shown[i] = 0;
	warn("%s: FATBUILD_REMOTE_CACHE_MODE='%s' is neither read nor readwrite: unset it, or set read (never "
	     "upload) or readwrite",
	     cmd, shown);
	return AP_EXIT_USAGE;
}

int
cli_rexec_url_check(const char *url, const char *cmd)
{
	if (!url || !*url || strncmp(url, "grpc://", 7) == 0 || strncmp(url, "grpcs://", 8) == 0)
		return 0;
	char shown[512];
	fb_remote_url_redact(url, shown, sizeof(shown));
	warn("%s: remote executor '%s' (--remote-exec or FATBUILD_REMOTE_EXECUTOR): not a grpc:// or grpcs:// URL "
	     "(docs/remote-cache.md §9)",
	     cmd, shown);
	return -1;
}

int
cli_rexec_prop_check(const char *v, const char *cmd)
{
	if (strchr(v, '=') && v[0] != '=')
		return 0;
	warn("%s: invalid --remote-exec-property '%s' (want KEY=VALUE)", cmd, v);
	return -1;
}

void
cli_remote_resolve(const struct fb_config *cfg, const struct cli_remote_flags *f, struct fb_remote_opts *r)
{
	const char *mode = f->mode ? f->mode : cfg->remote_cache_mode;
	const char *tmo = cfg->remote_cache_timeout;
	*r = (struct fb_remote_opts){0};
	r->cache = f->cache ? f->cache : cfg->remote_cache;
	r->header = cfg->remote_cache_header;
	r->read_only = mode && strcmp(mode, "read") == 0;
	/* to the nearest millisecond, so that fb_build's "S.mmm" for its edges reads back the same */
	r->timeout_ms = tmo && *tmo ? (long)(strtod(tmo, NULL) * 1000 + 0.5) : 0;
	r->state = cfg->remote_cache_state; /* fb_build names it for its edges */
	r->tmpdir = cfg->tmpdir;
	r->exec = f->exec ? f->exec : cfg->remote_executor;
	r->exec_props = f->props;
	r->nexec_props = f->nprops;
	r->jobs = f->jobs;
	r->exec_timeout_ms = f->exec_timeout_ms;
}
