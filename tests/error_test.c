/* error_test.c: the one error of both libraries (base/error.c): either setter keeps a message
 * whole up to the one size and makes it one line, and an archprobe error carried into a
 * fatbuild one keeps its message whole and its exit code. */
#include <string.h>

#include "archprobe.h"
#include "check.h"
#include "fatbuild.h"
#include "base/error.h"

int
main(void)
{
	char long_text[901];
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = 0;

	/* one size for both: a 900-byte detail is kept whole by either setter */
	struct ap_error ae;
	memset(&ae, 0x55, sizeof(ae));
	CHECK(ap_seterr(&ae, AP_ETIMEOUT, "probe: %s", long_text) == AP_ETIMEOUT);
	CHECK(ae.code == AP_ETIMEOUT && ae.ap_code == 0);
	CHECK(strlen(ae.msg) == strlen("probe: ") + 900);
	struct fb_error fe;
	memset(&fe, 0x55, sizeof(fe));
	CHECK(fb_seterr(&fe, FB_EIO, "read: %s", long_text) == FB_EIO);
	CHECK(fe.code == FB_EIO && fe.ap_code == 0 && strlen(fe.msg) == strlen("read: ") + 900);

	/* control bytes from input become '?' in both */
	ap_seterr(&ae, AP_EPARSE, "item '%s'", "a\nb\033[2J\x7f");
	CHECK_STR(ae.msg, "item 'a?b?[2J?'");
	fb_seterr(&fe, FB_EINVAL, "file '%s'", "a\tb\r");
	CHECK_STR(fe.msg, "file 'a?b?'");

	/* a message longer than the buffer is cut, terminated */
	char huge[3000];
	memset(huge, 'y', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = 0;
	fb_seterr(&fe, FB_EIO, "%s", huge);
	CHECK(strlen(fe.msg) == sizeof(fe.msg) - 1);

	/* archprobe's error into fatbuild's: whole, with archprobe's exit code */
	ap_seterr(&ae, AP_ETIMEOUT, "the device probe timed out: %s", long_text);
	memset(&fe, 0, sizeof(fe));
	CHECK(fb_error_from_ap(&fe, FB_EARCH, &ae) == FB_EARCH);
	CHECK(fe.code == FB_EARCH && fe.ap_code == AP_ETIMEOUT);
	CHECK_STR(fe.msg, ae.msg);
	CHECK(fb_error_exit_code(&fe) == AP_EXIT_TIMEOUT);
	CHECK(fb_error_from_ap(NULL, FB_EARCH, &ae) == FB_EARCH);
	/* a later fatbuild error is fatbuild's own again */
	fb_seterr(&fe, FB_EIO, "x");
	CHECK(fe.ap_code == 0 && fb_error_exit_code(&fe) == AP_EXIT_FAIL);

	/* NULL errors are allowed everywhere */
	CHECK(fb_seterr(NULL, FB_EIO, "x") == FB_EIO && ap_seterr(NULL, AP_EIO, "x") == AP_EIO);
	return check_done();
}
