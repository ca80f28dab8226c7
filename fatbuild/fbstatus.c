/* fbstatus.c: libfatbuild's statuses: their texts and the exit codes the CLIs give them. Also
 * where the foundation's error layout and status numbers are held to fatbuild.h's (base/error.h
 * says why they must agree). */
#include <stddef.h>

#include "fatbuild.h"
#include "base/error.h"

_Static_assert(sizeof(struct fb_error) == sizeof(struct fb_errlayout) &&
                   offsetof(struct fb_error, code) == offsetof(struct fb_errlayout, code) &&
                   offsetof(struct fb_error, msg) == offsetof(struct fb_errlayout, msg) &&
                   sizeof(((struct fb_error *)0)->msg) == sizeof(((struct fb_errlayout *)0)->msg) &&
                   offsetof(struct fb_error, ap_code) == offsetof(struct fb_errlayout, ap_code),
               "struct fb_error is not the layout base/error.h fills");
_Static_assert((int)FB_OK == (int)FB_BASE_OK && (int)FB_EINVAL == (int)FB_BASE_EINVAL && (int)FB_ENOMEM == (int)FB_BASE_ENOMEM &&
                   (int)FB_EIO == (int)FB_BASE_EIO && (int)FB_ETOOBIG == (int)FB_BASE_ETOOBIG && (int)FB_EUNSAFE == (int)FB_BASE_EUNSAFE,
               "a status base returns is not fatbuild's of that name");

static const char *const texts[FB_NSTATUS] = {
	[FB_OK] = "success",
	[FB_EINVAL] = "invalid argument",
	[FB_ENOMEM] = "out of memory",
	[FB_EIO] = "I/O error",
	[FB_EFORMAT] = "malformed input",
	[FB_ETOOBIG] = "input too large",
	[FB_EUNSUPPORTED] = "unsupported input",
	[FB_ECOMPILE] = "compilation failed",
	[FB_ENOTOOL] = "required tool not found",
	[FB_ENOIMAGE] = "no kernel image is available for the device",
	[FB_EARCH] = "bad arch list",
	[FB_ECANCELED] = "canceled",
	[FB_EDRIVER] = "CUDA driver error",
	[FB_EUNSAFE] = "directory not trusted",
};

const char *
fb_strerror(int code)
{
	if (code < 0 || code >= FB_NSTATUS || !texts[code])
		return "unknown error";
	return texts[code];
}

int
fb_exit_code(int code)
{
	switch (code) {
	case FB_OK: return AP_EXIT_OK;
	case FB_EINVAL:
	case FB_EARCH: return AP_EXIT_USAGE;
	case FB_EDRIVER: return AP_EXIT_DRIVER;
	case FB_EUNSAFE: return AP_EXIT_UNSAFE;
	default: return AP_EXIT_FAIL;
	}
}

int
fb_error_exit_code(const struct fb_error *err)
{
	if (err->code == FB_EARCH && err->ap_code)
		return ap_exit_code(err->ap_code);
	return fb_exit_code(err->code);
}
