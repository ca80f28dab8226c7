/* arch.h: private to libarchprobe's arch-list modules (arch.c, toolkit.c, format.c).
 * Functions here are library-internal (hidden in the shared library). */
#ifndef AP_ARCH_H
#define AP_ARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "archprobe.h"

#define AP_MAX_WARNINGS 64

/* A resolved list. targets are sorted (sm, variant, kind) and unique. */
struct ap_archlist {
	struct ap_target *targets;
	size_t n;
	char **warnings;
	size_t nwarnings;
	const char *source;           /* static string: "input", "devices", "fallback", "override" */
	struct ap_toolkit toolkit;    /* what the list was validated against */
};

/* ap_toolkit_detect with the configuration already read (toolkit.c; arch.c passes its own). */
int ap_toolkit_detect_config(const struct fb_config *cfg, const char *cuda_home, struct ap_toolkit *out,
                             struct ap_error *err);
/* Whether any CUDA release with a built-in table accepts the variant for sm. */
bool ap_tk_variant_exists(int sm, enum ap_variant v);
/* Writes a hint for an sm (or sm+variant) missing from the release `version` ("sm_70 was
 * removed in CUDA 13.0", "10.1 became 11.0 in CUDA 13.0"); returns false when there is none. */
bool ap_tk_hint(int sm, enum ap_variant v, int version, char *buf, size_t size);
/* The arches that have the variant in some release, "90 100 103 …", into buf. */
void ap_tk_variant_list(enum ap_variant v, char *buf, size_t size);
/* Whether tk lists sm as a real arch / accepts the variant of sm. */
bool ap_tk_has(const struct ap_toolkit *tk, int sm, enum ap_variant v);
/* The newest release with a built-in table (13050). */
int ap_tk_newest_release(void);
/* "13.0" for 13000 into buf; returns buf. */
char *ap_tk_version_str(int version, char *buf, size_t size);

#endif
