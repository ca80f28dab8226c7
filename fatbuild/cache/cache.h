/* cache.h: THE CACHE as the other parts see it (compile/, extension/): the one header of cache/
 * they include. One run's cache is a get and a put over two tiers, the local store (store.c)
 * and the shared remote over HTTP or REAPI (remote.c, reapi.c; docs/remote-cache.md), which
 * this interface hides (tiers.c); with it come the entries (entry.h), the digests keys are made
 * of (hash.h) and how paths and the NVRTC build enter a key (key.h). Private to libfatbuild;
 * the cache's public face (stats, clear, trim, counters) is fatbuild.h's. */
#ifndef FB_CACHE_CACHE_H
#define FB_CACHE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "entry.h"
#include "hash.h"
#include "key.h"

struct fb_config;

/* The local store's directory for a run: dir (NULL or "": the one cfg names, fb_cache_dir())
 * into buf, checked before use (a missing one is fine: the first put makes it 0700;
 * docs/security.md). 0, or
 * FB_EINVAL (no directory: HOME unset, a path too long), FB_EUNSAFE (others could write into
 * it) or FB_EIO, with err->msg saying what to do. */
int fb_cache_local_dir(const struct fb_config *cfg, const char *dir, char *buf, size_t size, struct fb_error *err);

/* What the cache tells its caller, each once where it happens, msg saying what and where:
 *   FB_CACHE_REMOTE_OFF     the remote could not be opened (a bad URL, no libcurl or gRPC)
 *   FB_CACHE_REMOTE_FAILED  the remote failed during a get: off for the rest of the build,
 *                           and told only by the build's first process to see it (§5)
 *   FB_CACHE_UPLOAD_FAILED  the same during a put
 *   FB_CACHE_LOCAL_DAMAGED  a local entry failed its checksum or its check: removed
 *   FB_CACHE_REMOTE_DAMAGED a remote record or blob was damaged, or the entry failed its
 *                           check: not taken, not kept
 *   FB_CACHE_LOCAL_UNKEPT   a put to the local store failed */
enum fb_cache_event {
	FB_CACHE_REMOTE_OFF,
	FB_CACHE_REMOTE_FAILED,
	FB_CACHE_UPLOAD_FAILED,
	FB_CACHE_LOCAL_DAMAGED,
	FB_CACHE_REMOTE_DAMAGED,
	FB_CACHE_LOCAL_UNKEPT,
};

/* The caller's side of a get or put. check (get only) says whether an entry found under the
 * key is what the key claims, whichever tier it came from: 0 when it is; FB_ENOIMAGE when it
 * lacks what this caller needs (a plain miss: nothing removed or said); any other code, with
 * err->msg saying what is wrong, for a damaged entry. note (may be NULL) hears the events. */
struct fb_cache_hooks {
	int (*check)(void *ctx, const struct fb_cache_entry *e, struct fb_error *err);
	void (*note)(void *ctx, enum fb_cache_event ev, const char *msg);
	void *ctx;
};

struct fb_cache_opts {
	const char *dir;               /* the local store, as fb_cache_local_dir gave it; NULL: none */
	/* remote->cache: http(s):// or grpc(s):// (docs/remote-cache.md), with its header, mode,
	 * timeout, the build's state file of a failed remote (§5) and staging dir; NULL, or a cache
	 * NULL or "": none */
	const struct fb_remote_opts *remote;
	const struct fb_config *config;/* FATBUILD_CACHE_SHARED (the store's checks); NULL: read here */
};

/* One run's cache: its tiers and what they served. */
struct fb_cache;
enum fb_cache_tier { FB_CACHE_MISS = 0, FB_CACHE_LOCAL = 1, FB_CACHE_REMOTE = 2 };

/* Opens the tiers o names; a remote that cannot be opened is off (FB_CACHE_REMOTE_OFF to
 * h->note; h may be NULL). 0, or FB_ENOMEM (*out NULL). */
int fb_cache_open(const struct fb_cache_opts *o, const struct fb_cache_hooks *h, struct fb_cache **out,
                  struct fb_error *err);
void fb_cache_close(struct fb_cache *c);
/* Whether c has a tier to ask (false for NULL). */
bool fb_cache_on(const struct fb_cache *c);
/* Before the caller forks or runs a command: the remote's own threads (gRPC) stop until its
 * next call, so that no child inherits a lock one of them held. NULL is fine. */
void fb_cache_idle(struct fb_cache *c);
/* The entry under key that passes h->check: from the local store, else from the remote (its
 * blobs' sizes and digests checked as they come, then h->check), a remote hit then kept in
 * the local store. FB_CACHE_LOCAL or FB_CACHE_REMOTE with *out filled (the caller clears it),
 * or FB_CACHE_MISS with *out empty. c NULL: a miss. */
int fb_cache_get(struct fb_cache *c, const char *key, const struct fb_cache_hooks *h, struct fb_cache_entry *out);
/* Keeps e under key in the local store and uploads it (not in read-only mode, not once the
 * remote failed). Trouble is told to h->note, never returned: a cache never fails a build. */
void fb_cache_put(struct fb_cache *c, const char *key, const struct fb_cache_entry *e, const struct fb_cache_hooks *h);
/* What a run's entries are, for the counters by kind (fb_cache_record; docs/remote-cache.md
 * §4): the compiler launcher's steps, cicc and ptxas, and its host compiles. */
enum fb_cache_kind { FB_CACHE_KIND_CICC, FB_CACHE_KIND_PTXAS, FB_CACHE_KIND_HOST, FB_CACHE_KINDS };
struct fb_cache_by_kind {
	uint64_t hits[FB_CACHE_KINDS], misses[FB_CACHE_KINDS]; /* misses: run */
};
/* Adds what c served this run (local and remote hits, damaged entries, the remote's misses,
 * errors, uploads and traffic), misses (the jobs compiled) and, when kinds is not NULL, the
 * run's hits and misses by kind to the local store's counters (dir/stats, docs/remote-cache.md
 * §4). Without a local store, or c NULL, nothing. */
int fb_cache_record(struct fb_cache *c, uint64_t misses, const struct fb_cache_by_kind *kinds, struct fb_error *err);

#endif
