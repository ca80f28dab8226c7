/* ninja_run.h: ninja run on a generated build dir (ninja_run.c). Private; symbols are hidden. */
#ifndef FB_BUILD_NINJA_RUN_H
#define FB_BUILD_NINJA_RUN_H

#include <stdbool.h>

#include "fatbuild.h"
#include "base/strbuf.h"
#include "rexec/rexec.h"
#include "gen.h"

/* What a run of ninja says besides its status. */
struct ninja_result {
	bool no_work;                  /* ninja found nothing to do */
	bool tallied;                  /* while remote: tally says where the jobs ran */
	struct fb_exec_tally tally[2]; /* the NVRTC jobs, the host and nvcc edges (rexec/rexec.h) */
};

/* Runs ninja in g->dir under the build lock, with the background maker of each PCH in pch_bg
 * (pch.sh paths) beside it, its output shown as output.c shows it (shown: per compile edge,
 * its command as ninja runs it and as it is shown); fills *res (zeroed by the caller). */
int fb_build_run_ninja(const struct gen *g, const struct fb_strlist *pch_bg, const struct fb_strlist *shown,
                       struct ninja_result *res, struct fb_error *err);

#endif
