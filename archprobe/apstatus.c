/* apstatus.c: libarchprobe's statuses: their texts and the exit codes the CLIs give them (the
 * map is shared by both CLIs). Also where struct ap_error is held to the foundation's error
 * layout (base/error.h says why it must be). */
#include <stddef.h>

#include "archprobe.h"
#include "base/error.h"

_Static_assert(sizeof(struct ap_error) == sizeof(struct fb_errlayout) &&
                   offsetof(struct ap_error, code) == offsetof(struct fb_errlayout, code) &&
                   offsetof(struct ap_error, msg) == offsetof(struct fb_errlayout, msg) &&
                   sizeof(((struct ap_error *)0)->msg) == sizeof(((struct fb_errlayout *)0)->msg) &&
                   offsetof(struct ap_error, ap_code) == offsetof(struct fb_errlayout, ap_code),
               "struct ap_error is not the layout base/error.h fills");

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
