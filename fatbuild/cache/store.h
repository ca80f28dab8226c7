/* store.h: the local store: where the cache dir is and how its directories are reached
 * (cacheroot.c), the content-addressed entries (store.c) and the counters and size kept beside
 * them (stats.c); the walks, size limit and trim (trim.c) are public (fatbuild.h). Below the
 * tiers (tiers.c), which alone of the other parts' callers reach it (cache.h). Private to
 * libfatbuild. */
#ifndef FB_CACHE_STORE_H
#define FB_CACHE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "entry.h"

struct fb_config;

/* ---- cacheroot.c: the cache dir, its root and shards ---- */

/* Before a compile uses the cache dir: 0 when it is missing (created 0700 on the first put) or
 * passes fb_dir_check; else FB_EUNSAFE/FB_EIO with the message. A group-writable one passes
 * only as an opted-in team cache, whoever named it (explicit is kept for the callers' sake). */
int fb_cache_check(const char *dir, bool explicit, unsigned dflags, struct fb_error *err);
/* FB_DIR_SHARED when FATBUILD_CACHE_SHARED=1 (a team cache), else 0: the fb_dir_check flags
 * of the cache dir, its shards and files (dflags below). */
unsigned fb_cache_flags(const struct fb_config *cfg);
/* The cache dir the configuration names (fb_cache_dir's answer), into buf. */
int fb_cache_dir_config(const struct fb_config *cfg, char *buf, size_t size, struct fb_error *err);
/* The checked cache root, open (fb_dir_open); create: made first where missing. */
int fb_cache_root_open(const char *dir, unsigned dflags, bool create, int *fd, struct fb_error *err);
/* The same for the readers and removers (stats, clear, trim), never creating: a cache dir that
 * does not exist yet is an empty cache, 0 with *fd = -1. */
int fb_cache_root_open_existing(const char *dir, unsigned dflags, int *fd, struct fb_error *err);
/* The shard of name (its first two characters) inside root, checked, never through a link;
 * create: made first (0700; in a team cache with its root's mode bits, setgid and sticky too). */
int fb_cache_shard_open(int root, const char *dir, unsigned dflags, const char *name, bool create, int *fd,
                        struct fb_error *err);
/* An entry's name: 64 lowercase hex digits. A temporary's: that, ".tmp.", ten characters. */
bool fb_cache_is_key(const char *name);
bool fb_cache_is_tmp(const char *name);
/* *dir, or when it is NULL fb_cache_dir() written into buf (then *dir = buf). */
int fb_cache_dir_default(const struct fb_config *cfg, const char **dir, char *buf, size_t size,
                         struct fb_error *err);

/* ---- store.c: the content-addressed entries ---- */

/* 0 and *out filled on a verified hit; FB_ENOIMAGE on a miss; FB_EFORMAT for an entry that
 * failed its size or checksum check (it is removed; err->msg names it); other codes for real
 * I/O trouble. */
int fb_store_get(const char *dir, unsigned dflags, const char *key, struct fb_cache_entry *out, struct fb_error *err);
int fb_store_put(const char *dir, unsigned dflags, const char *key, const struct fb_cache_entry *e,
                 struct fb_error *err);
/* Deletes the entry under key (one that passed its checksum but is not what its key claims);
 * only in a shard that passes the directory checks. */
void fb_store_remove(const char *dir, unsigned dflags, const char *key);
/* The entry file's bytes, both ways (fuzz_cache checks that they agree and that any damage is
 * caught). decode: 0, FB_EFORMAT (size or checksum mismatch) or FB_ENOMEM; encode: 0 or
 * FB_ENOMEM, *out malloc'd. */
int fb_store_decode(const unsigned char *data, size_t n, struct fb_cache_entry *out);
int fb_store_encode(const struct fb_cache_entry *e, unsigned char **out, size_t *size);

/* ---- stats.c: hit and miss counters kept in the cache directory ---- */

/* Adds d to the counters in dir/stats under a lock (dir/stats.lock), written atomically. */
int fb_cache_count(const char *dir, unsigned dflags, const struct fb_cache_counters *d, struct fb_error *err);
/* The "size" of the stats file (entries' bytes on disk, what trim's trigger reads): grown by
 * each put (best effort; unknown stays unknown), set by a trim or clear that measured it (with
 * the evictions it made); read: 0, or -1 when unknown. */
void fb_cache_size_add(int root, unsigned dflags, uint64_t bytes);
int fb_cache_size_set(int root, const char *dir, unsigned dflags, uint64_t size, uint64_t evictions,
                      uint64_t evicted, struct fb_error *err);
int fb_cache_size_get(int root, const char *dir, uint64_t *size);

#endif
