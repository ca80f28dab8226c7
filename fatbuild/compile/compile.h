/* compile.h: the driver's header (compile.c, prepare.c), which the extension part
 * (extension/repro.c) and the tests include: it brings the NVRTC loader, #include scanning and
 * the cache's interface (cache/cache.h: entries, digests, keys, the tiers) and declares
 * prepare.c's steps. Not installed; the public API is SECTION compile of fatbuild.h. */
#ifndef FB_COMPILE_H
#define FB_COMPILE_H

#include "fatbuild.h"
#include "depfile.h"
#include "nvrtc.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "cache/cache.h"

struct run; /* run.h */

/* prepare.c: the NVRTC options every job shares; each source read, its headers found and
 * keyed; one job per (source, target slot), keyed and seeded. */
int fb_run_options(struct run *r, const char *home, struct fb_error *err);
int fb_run_load_sources(struct run *r, struct fb_error *err);
int fb_run_make_jobs(struct run *r, struct fb_error *err);

#endif
