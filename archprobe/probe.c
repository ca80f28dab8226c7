/* probe.c: placeholder until the probe module lands: reports that no prober is available. */
#include <stdio.h>
#include <string.h>

#include "archprobe.h"

int
ap_probe(const struct ap_probe_opts *opts, struct ap_probe_result *out, struct ap_error *err)
{
	(void)opts;
	(void)err;
	memset(out, 0, sizeof(*out));
	out->status = AP_PROBE_NO_DRIVER;
	snprintf(out->reason, sizeof(out->reason), "no device prober is available in this build");
	return AP_OK;
}
