/* stepcache.h: a cicc or ptxas step of nvcc's plan as an entry of the compile cache
 * (stepcache.c; docs/launcher.md "The cache"). Private to libfatbuild. */
#ifndef FB_LAUNCH_STEPCACHE_H
#define FB_LAUNCH_STEPCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

/* What the key saw of a step before it ran: which of its words name a temporary (temp[i]),
 * and which of those existed then (before[i]: its inputs). A cicc or ptxas step also has a
 * based key (based, based_key) when the project's root or the run's module id (root, modid:
 * the caller's) let two checkouts share it. */
struct fb_step_seen {
	bool *temp, *before;
	bool based;
	char based_key[65];
	const char *root, *modid;
};
void fb_step_seen_free(struct fb_step_seen *v);

/* The key (64 hex digits) of step s of p: its tool's digest, its words with every temporary
 * spelled @T, the content of each temporary it reads, the plan's NVVMIR_LIBRARY_DIR; and for a
 * cicc or ptxas step given the project's root (or NULL) and the run's module id (the content
 * of cicc's --module_id_file_name, or NULL), the based key too, unless the step asks for debug
 * information or its words or inputs spell the root or the module id's path hash other than
 * as the based key spells them (stepcache.c). 0; -1 when the step is not one to cache (a
 * temporary inside a longer word, an input that cannot be read, the tool not hashable, OOM).
 * seen is filled for fb_step_pack. */
int fb_step_key(const struct fb_plan *p, const struct fb_step *s, const struct fb_config *cfg, const char *root,
                const char *modid, char key[65], struct fb_step_seen *seen);

/* The files step s made (its temporaries that were not there before it ran) in one blob, each
 * with the places where it spells one of the step's temporaries (a stub's #include and its #
 * line) kept as references to the word, not the text, so a hit in another run's temp dir
 * writes that run's names. With based (seen->based), for the based key: also the places where
 * a line marker spells the root and where the module id stands, as references; -1 when a file
 * spells the root anywhere else, or the module id's path hash outside it. 0
 * (*blob malloc'd); -1 when it made none, or one that names the temp dir in any other way
 * (then the step is not kept). */
int fb_step_pack(const struct fb_plan *p, const struct fb_step *s, const struct fb_step_seen *seen, bool based,
                 unsigned char **blob, size_t *size);

/* The blob kept under a based key when the step's output depends on the checkout: "look
 * under the exact key". */
#define FB_STEP_EXACT "fatbuild-launch-exact 1\n"
bool fb_step_is_exact(const unsigned char *blob, size_t size);

/* Checks a blob against step s (write false), or writes its files (write true); references
 * to the root and the module id need seen->based and them. The marker (FB_STEP_EXACT) passes the check and writes
 * nothing. 0, or FB_EFORMAT (a damaged or foreign blob) / FB_EIO with err. */
int fb_step_unpack(const struct fb_step *s, const struct fb_step_seen *seen, const unsigned char *blob, size_t size,
                   bool write, struct fb_error *err);

#endif
