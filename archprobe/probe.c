/* probe.c: ap_probe: which CUDA devices are visible, asked in a child process with a timeout.
 *
 * Isolation: by default the driver is queried in a child (probe_spawn.c), so that a hanging
 * cuInit (seen in the wild) is bounded by the timeout, a crashing driver does not take the
 * caller down, and libcuda never enters the caller's process. The child replies in a line
 * protocol (probe_proto.c); the outcome becomes advice (probe_advice.c) and, opted in, is cached
 * (probe_cache.c).
 * The environment is never changed: CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER reach the driver
 * untouched and are reported verbatim (the driver's reading of them is authoritative). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"

#define SYSFS_PCI "/sys/bus/pci/devices"

static const char *const status_names[] = {
	[AP_PROBE_OK] = "ok",
	[AP_PROBE_NO_DEVICE] = "no_device",
	[AP_PROBE_NO_DRIVER] = "no_driver",
	[AP_PROBE_STUB] = "stub",
	[AP_PROBE_DRIVER_ERROR] = "driver_error",
	[AP_PROBE_TIMEOUT] = "timeout",
	[AP_PROBE_CRASHED] = "crashed",
};

const char *
ap_probe_status_name(enum ap_probe_status s)
{
	if ((unsigned)s >= sizeof(status_names) / sizeof(status_names[0]))
		return "unknown";
	return status_names[s];
}

/* ---- the entry point ------------------------------------------------------------------------ */

static int
probe_timeout(const struct ap_probe_opts *opts, const struct fb_config *cfg, double *out, struct ap_error *err)
{
	const char *v = cfg->archprobe_timeout;
	char *end;

	if (opts && opts->timeout > 0) {
		*out = opts->timeout;
		return 0;
	}
	*out = 10;
	if (!v || !*v)
		return 0;
	errno = 0;
	*out = strtod(v, &end);
	if (errno || *end || !(*out > 0) || *out > 1e6) {
		ap_seterr(err, AP_EINVAL, "ARCHPROBE_TIMEOUT='%s' is not a number of seconds (e.g. 10 or 0.5)", v);
		return AP_EINVAL;
	}
	return 0;
}

void
ap_probe_check_devices(struct ap_probe_result *r, struct ap_probe_detail *det)
{
	if (r->ndevices < 0 || r->ndevices > AP_MAX_DEVICES)
		r->ndevices = 0;
	int usable = 0, bad = -1;
	for (int i = 0; i < r->ndevices; i++) {
		struct ap_device *d = &r->devices[i];
		if (!d->error && !ap_cc_possible(d->major, d->minor)) {
			d->error = AP_DEVICE_BAD_CC;
			if (bad < 0)
				bad = i;
		}
		usable += !d->error;
	}
	/* like every device query failing: a driver error, not "no device" */
	if (r->status == AP_PROBE_OK && !usable && bad >= 0) {
		r->status = AP_PROBE_DRIVER_ERROR;
		r->cuda_error = 0;
		ap_probe_detail_set(det, AP_DETAIL_BAD_CC, "device %d reports compute capability %d.%d, which no GPU has",
		                    r->devices[bad].ordinal, r->devices[bad].major, r->devices[bad].minor);
	}
}

int
ap_probe(const struct ap_probe_opts *opts, struct ap_probe_result *out, struct ap_error *err)
{
	const char *libcuda = opts ? opts->libcuda : NULL, *v;
	struct fb_config local;
	const struct fb_config *cfg = fb_config_or_read(opts ? opts->config : NULL, &local);
	double timeout, t0 = ap_probe_now();
	char cache[PATH_MAX], key[PATH_MAX + 1024];
	struct ap_probe_detail detail = {AP_DETAIL_NONE, ""};
	bool cached;
	int rc;

	if (!out) {
		ap_seterr(err, AP_EINVAL, "ap_probe: no result buffer");
		return AP_EINVAL;
	}
	memset(out, 0, sizeof(*out));
	if ((rc = probe_timeout(opts, cfg, &timeout, err)) != 0)
		return rc;
	if (!libcuda && (v = cfg->archprobe_libcuda) && *v)
		libcuda = v;
	if ((v = cfg->cuda_visible_devices)) {
		out->cuda_visible_devices_set = true;
		snprintf(out->cuda_visible_devices, sizeof(out->cuda_visible_devices), "%s", v);
	}
	if ((v = cfg->cuda_device_order))
		snprintf(out->cuda_device_order, sizeof(out->cuda_device_order), "%s", v);
	if ((cached = ap_probe_cache_path(opts, cfg, cache, sizeof(cache)))) {
		char why[PATH_MAX + 160];
		if (!fb_file_trusted(cache, why, sizeof(why))) {
			ap_probe_trace(out, "cache not used (neither read nor written): %s", why);
			cached = false;
		}
	}
	if (cached) {
		ap_probe_cache_key(cfg, libcuda, key, sizeof(key));
		if (ap_probe_cache_lookup(cache, key, out)) {
			ap_probe_trace(out, "cache hit: %s", cache);
			ap_probe_check_devices(out, &detail);
			ap_probe_explain(out, &detail, libcuda, SYSFS_PCI);
			out->seconds = ap_probe_now() - t0;
			return 0;
		}
		ap_probe_trace(out, "cache miss: %s", cache);
	}
	if (opts && opts->no_subprocess) {
		ap_probe_trace(out, "probing in this process");
		ap_cuda_query(libcuda, out, &detail, -1);
	} else if ((rc = ap_probe_run_child(opts, cfg, libcuda, timeout, out, &detail, err)) != 0) {
		return rc;
	}
	ap_probe_check_devices(out, &detail);
	ap_probe_explain(out, &detail, libcuda, SYSFS_PCI);
	if (cached) {
		ap_probe_cache_store(cache, key, out);
		if (out->status == AP_PROBE_OK)
			ap_probe_trace(out, "cache stored: %s", cache);
	}
	out->seconds = ap_probe_now() - t0;
	return 0;
}
