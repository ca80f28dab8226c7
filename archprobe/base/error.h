/* error.h: the one error of both libraries and its one setter. Private; symbols are hidden.
 *
 * struct ap_error (archprobe.h) and struct fb_error (fatbuild.h) are one layout under the names
 * their APIs promise: struct fb_errlayout, which archprobe/apstatus.c and fatbuild/fbstatus.c hold
 * each of them to, field by field, at compile time. base includes neither public header (it
 * stands below both libraries): its calls take the error by the name fatbuild's parts pass,
 * declared here and never defined, and fill it through the layout. So one setter serves both
 * libraries, and an archprobe error becomes a fatbuild one without a cut. */
#ifndef FB_BASE_ERROR_H
#define FB_BASE_ERROR_H

struct ap_error;
struct fb_error;

struct fb_errlayout {
	int code;       /* the library's status */
	char msg[1024]; /* one line a user can act on */
	int ap_code;    /* fatbuild's FB_EARCH: the archprobe status behind it; else 0 */
};

/* The statuses base's calls return. They are fatbuild's numbers (fatbuild/fbstatus.c pins each to
 * its FB_E* name), so a fatbuild caller passes one on as it is; archprobe's callers only ever
 * test for nonzero. */
enum fb_base_status {
	FB_BASE_OK = 0,
	FB_BASE_EINVAL = 1,
	FB_BASE_ENOMEM = 2,
	FB_BASE_EIO = 3,
	FB_BASE_ETOOBIG = 5,
	FB_BASE_EUNSAFE = 13,
};

/* Fill err (if any) with code, ap_code 0, and a formatted message made one line (fb_text_oneline:
 * names and fields from the input or the environment may carry control bytes); return code. */
int fb_seterr(struct fb_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ap_seterr(struct ap_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An archprobe error carried into a fatbuild one: code, from's message whole (the same size)
 * and from's status as ap_code, so that fb_error_exit_code exits as archprobe would. Returns
 * code; err may be NULL. */
int fb_error_from_ap(struct fb_error *err, int code, const struct ap_error *from);
/* Makes s one printable line in place: every control byte (below 0x20, and 0x7f: a newline, a
 * tab, a terminal escape) becomes '?'. For every text built from input for people to read: the
 * setters' messages, notes and warnings, the lines of a result's notes buffer, the CLIs' lines. */
void fb_text_oneline(char *s);

#endif
