/* opt_common.c: the options `fatbuild build` and `fatbuild compile` share, read in one place:
 * -o, -I, -D, -j, -v, --arch-list, --rdc, --lto and the remote cache and remote execution
 * options (docs/remote-cache.md §5, §9). Each command's table lists CLI_SHARED_LONGOPTS and
 * its own options after them; its switch hands every option to cli_shared_opt first. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
push(const char ***v, size_t *n, const char *x)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = x;
}

int
cli_remote_mode_check(const char *mode, const char *cmd)
{
	static const char *const modes[] = {"read", "readwrite", NULL};
	if (strcmp(mode, "read") == 0 || strcmp(mode, "readwrite") == 0)
		return 0;
	cli_bad_value(cmd, "--remote-cache-mode", mode, modes);
	return -1;
}

/* --remote-jobs N or --remote-exec-timeout S (what, as the message names it): a whole number
 * from 1 to hi into *out; 0, or -1 with "CMD: invalid WHAT 'V' (want 1..HI[UNIT])" said. */
static int
count(const struct cli_shared *s, const char *what, const char *v, long hi, const char *unit, long *out)
{
	char *end;
	long n = strtol(v, &end, 10);
	bool sign = v[0] == '-' || (v[0] == '+' && !s->spec->plus_ok);
	if (!*v || *end || sign || n < 1 || n > hi) {
		warn("%s: invalid %s '%s' (want 1..%ld%s)", s->spec->cmd, what, v, hi, unit);
		return -1;
	}
	*out = n;
	return 0;
}

/* The remote execution options (docs/remote-cache.md §9) into s->remote. */
static int
rexec_opt(struct cli_shared *s, int c, const char *v)
{
	long n;
	switch (c) {
	case CLI_OPT_REXEC: s->remote.exec = v; return 0;
	case CLI_OPT_REXEC_PROP:
		if (cli_rexec_prop_check(v, s->spec->cmd))
			return -1;
		push(&s->props, &s->remote.nprops, v);
		s->remote.props = s->props;
		return 0;
	case CLI_OPT_REXEC_JOBS:
		if (count(s, "--remote-jobs", v, FB_JOBS_MAX, "", &n))
			return -1;
		s->remote.jobs = (int)n;
		return 0;
	default:
		if (count(s, "--remote-exec-timeout", v, 86400, s->spec->timeout_unit, &n))
			return -1;
		s->remote.exec_timeout_ms = n * 1000L;
		return 0;
	}
}

int
cli_shared_opt(struct cli_shared *s, int c, const char *v)
{
	switch (c) {
	case 'o': s->output = v; break;
	case 'I': push(&s->incs, &s->nincs, v); break;
	case 'D': push(&s->defs, &s->ndefs, v); break;
	case 'j': return parse_jobs(s->spec->cmd, v, s->spec->jobs_min, &s->jobs) ? -1 : 1;
	case 'v': s->verbose = true; break;
	case CLI_OPT_ARCH: s->arch_list = v; break;
	case CLI_OPT_RDC: s->rdc = true; break;
	case CLI_OPT_LTO: s->lto = true; break;
	case CLI_OPT_REMOTE: s->remote.cache = v; break;
	case CLI_OPT_REMOTE_MODE:
		if (!s->spec->mode_later && cli_remote_mode_check(v, s->spec->cmd))
			return -1;
		s->remote.mode = v;
		break;
	case CLI_OPT_REXEC:
	case CLI_OPT_REXEC_PROP:
	case CLI_OPT_REXEC_JOBS:
	case CLI_OPT_REXEC_TIMEOUT: return rexec_opt(s, c, v) ? -1 : 1;
	default: return 0;
	}
	return 1;
}

void
cli_shared_free(struct cli_shared *s)
{
	free(s->incs);
	free(s->defs);
	free(s->props);
}
