/* error.c: status texts and the status → exit code map shared by both CLIs. */
#include <stdarg.h>
#include <stdio.h>

#include "archprobe.h"
#include "error_int.h"

static const char *const texts[AP_NSTATUS] = {
	[AP_OK] = "success",
	[AP_EPARSE] = "unparseable arch list",
	[AP_EUNSUPPORTED] = "arch not supported by the CUDA toolkit",
	[AP_ENOMEM] = "out of memory",
	[AP_EIO] = "I/O error",
	[AP_ENOTOOLKIT] = "no CUDA toolkit found",
	[AP_ENODEVICE] = "no CUDA device visible",
	[AP_ENODRIVER] = "no CUDA driver",
	[AP_ESTUB] = "the CUDA driver is NVIDIA's stub library",
	[AP_EDRIVER] = "CUDA driver error",
	[AP_ETIMEOUT] = "device probe timed out",
	[AP_ECRASH] = "device probe crashed",
	[AP_EINVAL] = "invalid argument",
};

const char *
ap_strerror(int code)
{
	if (code < 0 || code >= AP_NSTATUS || !texts[code])
		return "unknown error";
	return texts[code];
}

int
ap_exit_code(int code)
{
	switch (code) {
	case AP_OK: return AP_EXIT_OK;
	case AP_EPARSE:
	case AP_EUNSUPPORTED:
	case AP_EINVAL: return AP_EXIT_USAGE;
	case AP_ENODRIVER: return AP_EXIT_NODRIVER;
	case AP_ESTUB: return AP_EXIT_STUB;
	case AP_EDRIVER: return AP_EXIT_DRIVER;
	case AP_ETIMEOUT:
	case AP_ECRASH: return AP_EXIT_TIMEOUT;
	default: return AP_EXIT_FAIL;
	}
}

void
ap_seterr(struct ap_error *err, int code, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	for (char *c = err->msg; *c; c++) /* items come from env vars: no control bytes on a terminal */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}
