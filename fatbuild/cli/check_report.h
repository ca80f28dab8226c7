/* check_report.h: fatbuild check's report: its words (check_text.c), as text (check_files.c,
 * check_env.c) and as JSON (check_json.c), for cmd_check.c. Private to the CLI. */
#ifndef FB_CHECK_REPORT_H
#define FB_CHECK_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "fatbuild.h"

struct check_view {
	const struct fb_check_report *r;
	const struct ap_target *devs;
	size_t ndev;
	bool quiet;
};

/* "9.0" for a real GPU (variant AP_ARCH), else the target's name ("sm_90"). */
void check_dev_name(const struct ap_target *d, char *buf, size_t n);
/* "sass", "jit", "none", "other", "link". */
const char *check_verdict_name(int verdict);
/* The device code found outside the runtime's sections, in words ("" when none). */
void check_other_text(const struct fb_check_file *f, char *buf, size_t n);
/* One file's verdict on one device, in words ("SASS sm_90a (entry 1)"); brief: without the
 * device code found outside .nv_fatbin, which the library's own line says. */
void check_verdict_text(const struct fb_check_file *f, const struct fb_check_arch *a, const char *dn, bool brief,
                        char *buf, size_t n);
/* Files given one by one: a line per file and device (failures on stderr). */
void check_print_files(const struct check_view *v);
/* Directories, archives, interpreters: the report by distribution. */
void check_print_env(const struct check_view *v);
/* One line per device: "12.0: N libraries with device code, M run on 12.0, ..."; then the counts. */
void check_print_summary(const struct check_view *v);
/* The report as one JSON document on stdout. */
void check_print_json(const struct check_view *v, int exit_code);
/* 1 when a file cannot run on some device or could not be read, else 0. */
int check_exit_code(const struct check_view *v);

#endif
