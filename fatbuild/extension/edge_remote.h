/* edge_remote.h: a host or nvcc edge run at a REAPI executor (edge_remote.c, docs/remote-cache.md
 * §9 "Host and nvcc edges"), for the edge cache (edgecache.c) on a miss of both caches. */
#ifndef FB_BUILD_EDGE_REMOTE_H
#define FB_BUILD_EDGE_REMOTE_H

#include <stddef.h>

#include "base/strbuf.h"
#include "plumbing.h"

struct fb_config;

/* What the executor's run gave: the compile's exit status and stderr (log, malloc'd, may be
 * NULL); on status 0 the object (malloc'd, checked as a host object) and the files its depfile
 * names, spelled locally; cached: the executor's action cache answered. */
struct fb_edge_remote {
	int status;
	int cached;
	char *log;
	unsigned char *obj;
	size_t obj_size;
	struct fb_strlist deps;
};

/* Runs o's compile at o->remote.exec; known: the files it read last time (the edge cache's
 * manifest, local paths; NULL or empty: the last depfile, else the compiler's -M here). 1 when
 * it ran there (a compile error is a result too): r->status its exit, r->log its stderr, r->hit
 * FB_EDGE_EXEC or _EXEC_CACHED, and on success the object and the depfile written as a local
 * compile writes them; 0 when the edge is compiled here (r->where says why; r->exec_note the
 * executor's failure, once per build); < 0: minus an error code of ours (err). */
int fb_edge_remote_run(const struct fb_edge_opts *o, const struct fb_config *cfg, const struct fb_strlist *known,
                       struct fb_edge_result *r, struct fb_error *err);
void fb_edge_remote_clear(struct fb_edge_remote *res);

#endif
