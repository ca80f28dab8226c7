/* arch.c: the arch-list resolver (docs/archlist.md).
 *
 * The items (arch_parse.c) of a list are turned into targets here. Every target is checked
 * against a toolkit (struct ap_toolkit): the arch must be one of its real arches and the a/f
 * variant one it accepts. native/auto turn visible devices into targets (device rules in
 * resolve_devices). The result is sorted (sm, plain<a<f, SASS<PTX), unique. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch.h"
#include "arch_parse.h"
#include "probe.h"
#include "base/config.h"
#include "base/error.h"

#define ACCEPTED \
	"accepted: 8.6 9.0a 10.0f 8.6+PTX (PyTorch), 86 90a 86-real 86-virtual (CMake), sm_86 compute_86 " \
	"(nvcc), Turing Ampere Ampere+Tegra Ada Hopper Blackwell Blackwell+Tegra Rubin (PyTorch), Orin Lovelace Thor " \
	"Hopper(A) Blackwell(A) ... (meson) [+PTX], native auto all all-major"

/* ---- building the list ----------------------------------------------------------------------- */

struct builder {
	struct ap_archlist *l;
	size_t cap;
	const struct ap_toolkit *tk;
	bool drop;
	const char *what;  /* "item" or "--fallback item" … for messages */
	int status;        /* first allocation failure */
	const struct fb_config *cfg; /* the configuration, read once at the entry */
};

static void
add_target(struct builder *b, int sm, enum ap_variant var, enum ap_kind kind, int origin)
{
	struct ap_archlist *l = b->l;
	if (b->status)
		return;
	if (l->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		void *p = cap > ((size_t)-1) / sizeof(*l->targets) ? NULL : realloc(l->targets, cap * sizeof(*l->targets));
		if (!p) {
			b->status = AP_ENOMEM;
			return;
		}
		l->targets = p;
		b->cap = cap;
	}
	l->targets[l->n++] = (struct ap_target){sm, var, kind, origin};
}

static void
add_warning(struct builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add_warning(struct builder *b, const char *fmt, ...)
{
	struct ap_archlist *l = b->l;
	if (b->status || l->nwarnings >= AP_MAX_WARNINGS)
		return;
	if (!l->warnings) {
		l->warnings = calloc(AP_MAX_WARNINGS, sizeof(char *));
		if (!l->warnings) {
			b->status = AP_ENOMEM;
			return;
		}
	}
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (l->nwarnings == AP_MAX_WARNINGS - 1)
		snprintf(buf, sizeof(buf), "more warnings were left out");
	char *w = strdup(buf);
	if (!w) {
		b->status = AP_ENOMEM;
		return;
	}
	l->warnings[l->nwarnings++] = w;
}

/* "75 80 86 … (a: 90 100 …; f: 100 …)" */
static void
supported_set(const struct ap_toolkit *tk, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < tk->nsm && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%ssm_%d", i ? " " : "", tk->sm[i]);
	for (int v = 0; v < 2 && n < size; v++) {
		const int *arr = v ? tk->f : tk->a;
		int cnt = v ? tk->nf : tk->na;
		if (!cnt)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s %c:", v ? ";" : " (with", v ? 'f' : 'a');
		for (int i = 0; i < cnt && n < size; i++)
			n += (size_t)snprintf(buf + n, size - n, " %d", arr[i]);
	}
	if ((tk->na || tk->nf) && n < size)
		snprintf(buf + n, size - n, ")");
}

static const char *
variant_word(enum ap_variant v)
{
	return v == AP_ARCH ? "arch-specific 'a'" : "family-specific 'f'";
}

/* Checks one (sm, variant) of an item against the toolkit. Returns 0 (keep), 1 (dropped with
 * a warning) or an error code. */
static int
check_target(struct builder *b, int sm, enum ap_variant var, int pos, const char *item, size_t len,
             struct ap_error *err)
{
	const struct ap_toolkit *tk = b->tk;
	char v[16], hint[160], set[300], newest[16];
	int ilen = len > 40 ? 40 : (int)len;
	ap_tk_version_str(tk->version, v, sizeof(v));
	ap_tk_version_str(ap_tk_newest_release(), newest, sizeof(newest));
	if (ap_tk_has(tk, sm, var))
		return 0;
	bool known = ap_tk_variant_exists(sm, AP_PLAIN);
	if (var != AP_PLAIN && known && !ap_tk_variant_exists(sm, var)) {
		char with[120];
		ap_tk_variant_list(var, with, sizeof(with));
		ap_seterr(err, AP_EUNSUPPORTED,
		       "%s %d '%.*s': sm_%d has no %s variant in any CUDA release up to %s (%c exists for: %s)", b->what,
		       pos, ilen, item, sm, variant_word(var), newest, ap_suffix_char[var], with);
		return AP_EUNSUPPORTED;
	}
	char name[24];
	if (var != AP_PLAIN)
		snprintf(name, sizeof(name), "sm_%d%c", sm, ap_suffix_char[var]);
	else
		snprintf(name, sizeof(name), "sm_%d", sm);
	bool has_hint = ap_tk_hint(sm, var, tk->version, hint, sizeof(hint));
	if (!has_hint && !known)
		snprintf(hint, sizeof(hint), "no CUDA release up to %s has it", newest);
	if (b->drop) {
		add_warning(b, "%s %d '%.*s': dropped %s: CUDA %s does not support it (%s)", b->what, pos, ilen, item,
		            name, v, hint);
		return 1;
	}
	supported_set(tk, set, sizeof(set));
	if (var != AP_PLAIN && ap_tk_has(tk, sm, AP_PLAIN) && !has_hint)
		ap_seterr(err, AP_EUNSUPPORTED, "%s %d '%.*s': CUDA %s has no %s variant of sm_%d; it supports %s",
		       b->what, pos, ilen, item, v, variant_word(var), sm, set);
	else
		ap_seterr(err, AP_EUNSUPPORTED,
		       "%s %d '%.*s': %s is not supported by CUDA %s (%s); it supports %s; --drop-unsupported drops such items",
		       b->what, pos, ilen, item, name, v, hint, set);
	return AP_EUNSUPPORTED;
}

static int
add_checked(struct builder *b, const struct spec *s, int pos, const char *item, size_t len, struct ap_error *err)
{
	int rc = check_target(b, s->sm, s->var, pos, item, len, err);
	if (rc == 1)
		return 0;
	if (rc)
		return rc;
	if (s->sass)
		add_target(b, s->sm, s->var, AP_SASS, pos);
	if (s->ptx) {
		add_target(b, s->sm, s->var, AP_PTX, pos);
		if (s->var == AP_ARCH)
			add_warning(b,
			            "%s %d '%.*s': compute_%da PTX runs on compute capability %d.%d only (arch-specific "
			            "PTX is not forward compatible); add %d.%d+PTX for PTX that newer GPUs can JIT",
			            b->what, pos, len > 40 ? 40 : (int)len, item, s->sm, s->sm / 10, s->sm % 10,
			            s->sm / 10, s->sm % 10);
	}
	return 0;
}

/* all: every real arch; all-major: the oldest arch of each major. PTX for the newest. */
static void
add_all(struct builder *b, bool major_only, int origin)
{
	const struct ap_toolkit *tk = b->tk;
	int newest = 0;
	for (int i = 0; i < tk->nsm; i++) {
		int sm = tk->sm[i];
		if (major_only && i > 0 && tk->sm[i - 1] / 10 == sm / 10)
			continue;
		add_target(b, sm, AP_PLAIN, AP_SASS, origin);
		newest = sm;
	}
	if (newest)
		add_target(b, newest, AP_PLAIN, AP_PTX, origin);
}

/* Parses a whole list (no native/auto when allow_devices is false) into b. *dev gets the
 * position of the first native/auto item (kind in *devkind). */
static int
parse_list(struct builder *b, const char *text, bool allow_devices, int *devpos, enum item_kind *devkind,
           struct ap_error *err)
{
	size_t at = 0, len;
	const char *item;
	int pos = 0;
	while (ap_item_next(text, &at, &item, &len)) {
		struct parsed p;
		pos++;
		int ilen = len > 40 ? 40 : (int)len;
		if (!ap_item_parse(item, len, &p)) {
			if (ap_ieq(item, len, "off") || ap_ieq(item, len, "false") || ap_ieq(item, len, "none"))
				ap_seterr(err, AP_EPARSE,
				       "%s %d '%.*s': not an arch (CMake's OFF means 'no arch flags': leave the flags "
				       "out instead); " ACCEPTED, b->what, pos, ilen, item);
			else
				ap_seterr(err, AP_EPARSE, "%s %d '%.*s': not an arch; " ACCEPTED, b->what, pos, ilen, item);
			return AP_EPARSE;
		}
		switch (p.kind) {
		case IT_NATIVE:
		case IT_AUTO:
			if (!allow_devices) {
				ap_seterr(err, AP_EPARSE, "%s %d '%.*s': native/auto cannot appear here; give arches",
				       b->what, pos, ilen, item);
				return AP_EPARSE;
			}
			if (!*devpos || (p.kind == IT_NATIVE && *devkind == IT_AUTO)) {
				*devpos = pos;
				*devkind = p.kind;
			}
			break;
		case IT_ALL:
		case IT_ALLMAJOR:
			add_all(b, p.kind == IT_ALLMAJOR, pos);
			break;
		case IT_TARGETS: {
			/* a meson name's members: the ones the toolkit has; +PTX goes to the newest of
			 * those; none at all is checked (and refused) as the newest member */
			int have = -1;
			bool ptx = false;
			for (int k = 0; k < p.n; k++)
				if (p.s[k].some) {
					ptx = ptx || p.s[k].ptx;
					if (ap_tk_has(b->tk, p.s[k].sm, p.s[k].var))
						have = k;
				}
			for (int k = 0; k < p.n; k++) {
				struct spec sp = p.s[k];
				if (sp.some) {
					if (have >= 0 && !ap_tk_has(b->tk, sp.sm, sp.var))
						continue;
					if (have < 0 && k != p.n - 1)
						continue;
					sp.ptx = ptx && (have < 0 || k == have);
				}
				int rc = add_checked(b, &sp, pos, item, len, err);
				if (rc)
					return rc;
			}
			break;
		}
		}
		if (b->status) {
			ap_seterr(err, b->status, "out of memory");
			return b->status;
		}
	}
	return AP_OK;
}

static int
cmp_target(const void *pa, const void *pb)
{
	const struct ap_target *a = pa, *b = pb;
	if (a->sm != b->sm)
		return a->sm < b->sm ? -1 : 1;
	if (a->variant != b->variant)
		return a->variant < b->variant ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return (a->origin > b->origin) - (a->origin < b->origin);
}

/* ---- devices ----------------------------------------------------------------------------------- */

struct devcc {
	int sm;
	int ordinal;
	const char *name;
};

/* Parses ARCHPROBE_ARCHS ("8.6 9.0", "86;90", "sm_86") into ccs. */
static int
parse_override(const char *text, struct devcc *ccs, int *n, struct ap_error *err)
{
	size_t at = 0, len;
	const char *item;
	int pos = 0;
	*n = 0;
	while (ap_item_next(text, &at, &item, &len)) {
		pos++;
		size_t i = 0;
		int major, minor, sm = 0;
		if (len > 3 && strncmp(item, "sm_", 3) == 0) {
			i = 3;
			if (!ap_digits(item, len, &i, 2, 3, &sm))
				sm = 0;
		} else if (ap_digits(item, len, &i, 2, 3, &sm) && i == len) {
			/* "86", "120" */
		} else if ((i = 0, ap_digits(item, len, &i, 1, 2, &major)) && i < len && item[i] == '.') {
			i++;
			sm = ap_digits(item, len, &i, 1, 1, &minor) ? major * 10 + minor : 0;
		} else
			sm = 0;
		if (sm < 10 || i != len) {
			ap_seterr(err, AP_EPARSE, "ARCHPROBE_ARCHS item %d '%.*s': not a compute capability (write 8.6, 86 or sm_86)",
			       pos, len > 40 ? 40 : (int)len, item);
			return AP_EPARSE;
		}
		if (*n < AP_MAX_DEVICES)
			ccs[(*n)++] = (struct devcc){sm, pos - 1, NULL};
	}
	if (*n == 0) {
		ap_seterr(err, AP_EPARSE, "ARCHPROBE_ARCHS is set but names no compute capability");
		return AP_EPARSE;
	}
	return AP_OK;
}

static void
dev_label(const struct devcc *d, const char *source, char *buf, size_t size)
{
	if (d->name && d->name[0])
		snprintf(buf, size, "device %d (%.100s, compute capability %d.%d)", d->ordinal, d->name, d->sm / 10,
		         d->sm % 10);
	else if (strcmp(source, "override") == 0)
		snprintf(buf, size, "ARCHPROBE_ARCHS compute capability %d.%d", d->sm / 10, d->sm % 10);
	else
		snprintf(buf, size, "device %d (compute capability %d.%d)", d->ordinal, d->sm / 10, d->sm % 10);
}

/* Device rules: each distinct CC → its arch; one the toolkit lacks → the newest older arch as
 * PTX (+ SASS when of the same major); older than the oldest → error (native) / dropped (auto).
 * PTX on the numerically newest. Returns the number of device targets added or -code. */
static int
resolve_devices(struct builder *b, const struct devcc *ccs, int n, bool native, const char *source,
                struct ap_error *err)
{
	const struct ap_toolkit *tk = b->tk;
	char v[16], label[200];
	ap_tk_version_str(tk->version, v, sizeof(v));
	int seen[AP_MAX_DEVICES], nseen = 0, added = 0, newest = 0;
	for (int i = 0; i < n; i++) {
		int sm = ccs[i].sm;
		bool dup = false;
		for (int k = 0; k < nseen; k++)
			dup = dup || seen[k] == sm;
		if (dup)
			continue;
		seen[nseen++] = sm;
		dev_label(&ccs[i], source, label, sizeof(label));
		if (tk->nsm == 0 || sm < tk->sm[0]) {
			if (native) {
				ap_seterr(err, AP_EUNSUPPORTED,
				       "native: %s is older than the oldest arch CUDA %s supports (sm_%d); use an older "
				       "toolkit or leave the device out (CUDA_VISIBLE_DEVICES)",
				       label, v, tk->nsm ? tk->sm[0] : 0);
				return -AP_EUNSUPPORTED;
			}
			add_warning(b, "auto: %s is older than the oldest arch CUDA %s supports (sm_%d): left out", label, v,
			            tk->nsm ? tk->sm[0] : 0);
			continue;
		}
		int best = 0;
		for (int k = 0; k < tk->nsm; k++)
			if (tk->sm[k] <= sm)
				best = tk->sm[k];
		if (best == sm) {
			add_target(b, sm, AP_PLAIN, AP_SASS, 0);
			newest = sm > newest ? sm : newest;
			added++;
			continue;
		}
		bool same_major = best / 10 == sm / 10;
		add_target(b, best, AP_PLAIN, AP_PTX, 0);
		if (same_major)
			add_target(b, best, AP_PLAIN, AP_SASS, 0);
		newest = best > newest ? best : newest;
		added++;
		if (same_major)
			add_warning(b, "%s: CUDA %s has no sm_%d; using sm_%d SASS (runs on later %d.x GPUs) and compute_%d PTX",
			            label, v, sm, best, sm / 10, best);
		else
			add_warning(b, "%s: CUDA %s has no sm_%d (its newest is sm_%d); using compute_%d PTX, which the "
			               "driver JIT-compiles", label, v, sm, tk->sm[tk->nsm - 1], best);
	}
	if (newest)
		add_target(b, newest, AP_PLAIN, AP_PTX, 0);
	return added;
}

static void
probe_reason(const struct ap_probe_result *r, char *buf, size_t size)
{
	if (r->reason[0])
		snprintf(buf, size, "%s", r->reason);
	else
		snprintf(buf, size, "device probe status %d", (int)r->status);
}

static int
status_code(enum ap_probe_status s)
{
	switch (s) {
	case AP_PROBE_NO_DEVICE: return AP_ENODEVICE;
	case AP_PROBE_NO_DRIVER: return AP_ENODRIVER;
	case AP_PROBE_STUB: return AP_ESTUB;
	case AP_PROBE_DRIVER_ERROR: return AP_EDRIVER;
	case AP_PROBE_TIMEOUT: return AP_ETIMEOUT;
	case AP_PROBE_CRASHED: return AP_ECRASH;
	default: return AP_ENODEVICE;
	}
}

/* The auto fallback: opts->fallback, ARCHPROBE_FALLBACK, all-major. */
static int
use_fallback(struct builder *b, const struct ap_resolve_opts *opts, const char *why, struct ap_error *err)
{
	const char *fb = opts ? opts->fallback : NULL;
	const char *which = "--fallback";
	if (!fb || !*fb) {
		fb = b->cfg->archprobe_fallback;
		which = "ARCHPROBE_FALLBACK";
	}
	b->l->source = "fallback";
	if (!fb || !*fb) {
		add_warning(b, "auto: %s; building for all-major (the default fallback; set --fallback or "
		               "ARCHPROBE_FALLBACK to choose)", why);
		add_all(b, true, 0);
		return AP_OK;
	}
	add_warning(b, "auto: %s; building for the fallback list from %s: %.200s", why, which, fb);
	const char *saved = b->what;
	b->what = strcmp(which, "--fallback") == 0 ? "--fallback item" : "ARCHPROBE_FALLBACK item";
	size_t before = b->l->n;
	int devpos = 0;
	enum item_kind dk = IT_AUTO;
	int rc = parse_list(b, fb, false, &devpos, &dk, err);
	b->what = saved;
	if (rc)
		return rc;
	/* fallback targets carry origin 0 (not an input item) */
	for (size_t i = before; i < b->l->n; i++)
		b->l->targets[i].origin = 0;
	return AP_OK;
}

/* Runs the device probe into *pr (malloc'd; *r points at it when the probe ran). A failed probe
 * is an error for "native"; for "auto" it only says why in why. */
static int
probe_devices(const struct builder *b, const struct ap_resolve_opts *opts, bool native, struct ap_probe_result **pr,
              const struct ap_probe_result **r, char *why, size_t size, struct ap_error *err)
{
	*pr = malloc(sizeof(**pr));
	if (!*pr) {
		ap_seterr(err, AP_ENOMEM, "out of memory");
		return AP_ENOMEM;
	}
	struct ap_error perr = {0};
	struct ap_probe_opts po = {0};
	if (opts && opts->probe)
		po = *opts->probe;
	if (!po.config)
		po.config = b->cfg;
	int prc = ap_probe(&po, *pr, &perr);
	if (!prc) {
		*r = *pr;
		return AP_OK;
	}
	if (native) {
		ap_seterr(err, prc, "native: %s", perr.msg[0] ? perr.msg : ap_strerror(prc));
		free(*pr);
		*pr = NULL;
		return prc;
	}
	snprintf(why, size, "device probe failed: %.500s", perr.msg[0] ? perr.msg : ap_strerror(prc));
	return AP_OK;
}

/* The compute capabilities of r's usable devices into ccs; returns their number. */
static int
device_ccs(const struct ap_probe_result *r, struct devcc *ccs)
{
	int n = 0;
	for (int i = 0; i < r->ndevices && i < AP_MAX_DEVICES; i++) {
		/* A device whose query failed has no compute capability to build for. */
		const struct ap_device *d = &r->devices[i];
		if (d->error || !ap_cc_possible(d->major, d->minor))
			continue; /* (ap_probe marks impossible ones; opts->devices may not) */
		ccs[n++] = (struct devcc){d->major * 10 + d->minor, d->ordinal, d->name};
	}
	return n;
}

/* The error of "native" when no device can be built for (r: the probe's result, if any; why:
 * what it found); returns its code. */
static int
native_error(const struct ap_probe_result *r, const char *cvd, const char *why, struct ap_error *err)
{
	int code = r ? status_code(r->status) : AP_ENODEVICE;
	if (r && r->status == AP_PROBE_OK)
		code = AP_ENODEVICE;
	char note[120] = "";
	/* the probe's reason names the variable itself for a device list it left empty
	 * (probe_advice.c, AP_PROBE_NO_DEVICE): decided by the status, never by the text */
	bool named = r && r->status == AP_PROBE_NO_DEVICE && r->cuda_visible_devices_set;
	if (cvd && !named)
		snprintf(note, sizeof(note), " (CUDA_VISIBLE_DEVICES='%.60s' is set and may hide devices)", cvd);
	if (code == AP_ENODEVICE)
		ap_seterr(err, code, "native: %.300s%s; use auto or an explicit arch list to build without a GPU", why,
		       note);
	else
		ap_seterr(err, code, "native: cannot list the CUDA devices: %.300s%s", why, note);
	return code;
}

static int
add_devices(struct builder *b, const struct ap_resolve_opts *opts, bool native, struct ap_error *err)
{
	struct devcc ccs[AP_MAX_DEVICES];
	int n = 0;
	const char *source = "devices";
	const char *override = b->cfg->archprobe_archs;
	struct ap_probe_result *pr = NULL;
	const struct ap_probe_result *r = opts ? opts->devices : NULL;
	char why[600];
	why[0] = '\0';
	int rc = AP_OK;

	if (!r && override && *override) {
		source = "override";
		rc = parse_override(override, ccs, &n, err);
		if (rc)
			return rc;
	} else {
		if (!r && !(opts && opts->no_probe)) {
			rc = probe_devices(b, opts, native, &pr, &r, why, sizeof(why), err);
			if (rc)
				return rc;
		}
		if (r && r->status == AP_PROBE_OK) {
			n = device_ccs(r, ccs);
			if (n == 0)
				snprintf(why, sizeof(why), "no CUDA device is visible");
			else if (r == pr && r->reason[0])
				/* a device left out (its query failed, or its compute capability is impossible):
				 * say so, or a build for "native" silently misses a GPU. A caller that passed
				 * opts->devices has the same message in r->reason already. */
				add_warning(b, "%s: %s", native ? "native" : "auto", r->reason);
		} else if (r) {
			probe_reason(r, why, sizeof(why));
		} else if (!why[0]) {
			snprintf(why, sizeof(why), "device probing is disabled");
		}
		if (n == 0 && native) {
			rc = native_error(r, b->cfg->cuda_visible_devices, why, err);
			free(pr);
			return rc;
		}
	}
	b->l->source = source;
	int added = n ? resolve_devices(b, ccs, n, native, source, err) : 0;
	free(pr);
	if (added < 0)
		return -added;
	if (added == 0) {
		if (n)
			snprintf(why, sizeof(why), "no visible device is supported by the toolkit");
		return use_fallback(b, opts, why, err);
	}
	return AP_OK;
}

/* ---- resolve ------------------------------------------------------------------------------------- */

static const char *
origin_label(int origin, char *buf, size_t size)
{
	if (origin > 0)
		snprintf(buf, size, "item %d", origin);
	else
		snprintf(buf, size, "the devices/fallback");
	return buf;
}

/* Sorts l's targets (sm, variant, kind) and drops the repeated ones. */
static void
sort_unique(struct ap_archlist *l)
{
	qsort(l->targets, l->n, sizeof(*l->targets), cmp_target);
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (w && l->targets[w - 1].sm == l->targets[i].sm && l->targets[w - 1].variant == l->targets[i].variant &&
		    l->targets[w - 1].kind == l->targets[i].kind)
			continue;
		l->targets[w++] = l->targets[i];
	}
	l->n = w;
}

/* SASS of X and of Xf fill the same GPU code slot: nvcc refuses both. Returns AP_EUNSUPPORTED
 * (err filled) for the first such pair of the sorted list. */
static int
check_code_slots(const struct ap_archlist *l, struct ap_error *err)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct ap_target *p = &l->targets[i];
		if (p->variant != AP_PLAIN || p->kind != AP_SASS)
			continue;
		for (size_t j = i + 1; j < l->n && l->targets[j].sm == p->sm; j++) {
			const struct ap_target *f = &l->targets[j];
			if (f->variant != AP_FAMILY || f->kind != AP_SASS)
				continue;
			char o1[40], o2[40];
			ap_seterr(err, AP_EUNSUPPORTED,
			       "sm_%d (from %s) and sm_%df (from %s) together: nvcc refuses the same GPU code from a plain "
			       "and a family-specific arch; keep one (sm_%df also runs on later %d.x GPUs)",
			       p->sm, origin_label(p->origin, o1, sizeof(o1)), f->sm, origin_label(f->origin, o2, sizeof(o2)),
			       f->sm, f->sm / 10);
			return AP_EUNSUPPORTED;
		}
	}
	return AP_OK;
}

int
ap_archlist_resolve(const char *text, const struct ap_resolve_opts *opts, struct ap_archlist **out,
                    struct ap_error *err)
{
	if (!out) {
		ap_seterr(err, AP_EINVAL, "ap_archlist_resolve: out is NULL");
		return AP_EINVAL;
	}
	*out = NULL;
	struct ap_archlist *l = calloc(1, sizeof(*l));
	if (!l) {
		ap_seterr(err, AP_ENOMEM, "out of memory");
		return AP_ENOMEM;
	}
	l->source = "input";
	struct fb_config local;
	const struct fb_config *cfg = fb_config_or_read(opts ? opts->config : NULL, &local);
	if (opts && opts->toolkit)
		l->toolkit = *opts->toolkit;
	else {
		int rc = ap_toolkit_detect_config(cfg, NULL, &l->toolkit, err);
		if (rc) {
			ap_archlist_free(l);
			return rc;
		}
	}
	struct builder b = {l, 0, &l->toolkit, opts && opts->drop_unsupported, "item", 0, cfg};
	if (l->toolkit.version > ap_tk_newest_release()) {
		char v1[16], v2[16];
		add_warning(&b, "CUDA %s is newer than the newest built-in release table (CUDA %s): using the arches it "
		                "reports (%.200s)",
		            ap_tk_version_str(l->toolkit.version, v1, sizeof(v1)),
		            ap_tk_version_str(ap_tk_newest_release(), v2, sizeof(v2)), l->toolkit.source);
	}
	int devpos = 0;
	enum item_kind devkind = IT_AUTO;
	bool any = false;
	if (text) {
		size_t at = 0, len;
		const char *item;
		any = ap_item_next(text, &at, &item, &len);
	}
	int rc = any ? parse_list(&b, text, true, &devpos, &devkind, err) : AP_OK;
	if (!rc && (!any || devpos))
		rc = add_devices(&b, opts, any && devkind == IT_NATIVE, err);
	if (!rc && b.status) {
		rc = b.status;
		ap_seterr(err, rc, "out of memory");
	}
	if (rc) {
		ap_archlist_free(l);
		return rc;
	}
	if (l->n == 0) {
		ap_seterr(err, AP_EUNSUPPORTED, "no arch is left after dropping the unsupported ones (CUDA %d.%d)",
		       l->toolkit.version / 1000, (l->toolkit.version % 1000) / 10);
		ap_archlist_free(l);
		return AP_EUNSUPPORTED;
	}
	sort_unique(l);
	if ((rc = check_code_slots(l, err))) {
		ap_archlist_free(l);
		return rc;
	}
	*out = l;
	return AP_OK;
}

void
ap_archlist_free(struct ap_archlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nwarnings; i++)
		free(l->warnings[i]);
	free(l->warnings);
	free(l->targets);
	free(l);
}

size_t
ap_archlist_count(const struct ap_archlist *l)
{
	return l ? l->n : 0;
}

const struct ap_target *
ap_archlist_get(const struct ap_archlist *l, size_t i)
{
	return l && i < l->n ? &l->targets[i] : NULL;
}

size_t
ap_archlist_nwarnings(const struct ap_archlist *l)
{
	return l ? l->nwarnings : 0;
}

const char *
ap_archlist_warning(const struct ap_archlist *l, size_t i)
{
	return l && i < l->nwarnings ? l->warnings[i] : NULL;
}

const char *
ap_archlist_source(const struct ap_archlist *l)
{
	return l ? l->source : NULL;
}

const struct ap_toolkit *
ap_archlist_toolkit(const struct ap_archlist *l)
{
	return l ? &l->toolkit : NULL;
}
