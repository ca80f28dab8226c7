/* error.c: status texts, the status → exit code map, and atomic file writes (safefs.c names the
 * temporary). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fatbuild.h"
#include "error.h"
#include "safefs.h"

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
fb_seterr(struct fb_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		err->ap_code = 0;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		fb_text_oneline(err->msg); /* names and fields come from the input: keep one line */
	}
	return code;
}

void
fb_text_oneline(char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

int
fb_error_exit_code(const struct fb_error *err)
{
	if (err->code == FB_EARCH && err->ap_code)
		return ap_exit_code(err->ap_code);
	return fb_exit_code(err->code);
}

int
fb_write_file_atomic(const char *path, const void *data, size_t size, int mode, struct fb_error *err)
{
	char tmp[PATH_MAX + 32];
	int fd;
	int rc = fb_tmp_open(path, mode ? mode : 0666, tmp, sizeof(tmp), &fd, err);
	if (rc)
		return rc;
	const unsigned char *p = data;
	size_t left = size;
	while (left > 0) {
		ssize_t n = write(fd, p, left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail_close;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) != 0) {
		fd = -1;
		goto fail_close;
	}
	if (rename(tmp, path) != 0)
		goto fail_unlink;
	return FB_OK;
fail_close:
	if (fd >= 0)
		close(fd);
fail_unlink:;
	int saved = errno;
	unlink(tmp);
	errno = saved;
	return fb_seterr(err, FB_EIO, "cannot write %s: %s", path, strerror(errno));
}
