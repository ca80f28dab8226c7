/* remote.h: the shared cache: over Bazel's HTTP cache protocol (remote.c, docs/remote-cache.md),
 * or REAPI v2 on gRPC (reapi.h, §8), whose channel remote execution shares (rexec.h, §9): this
 * header is what the tiers (tiers.c) and remote execution include of the remote side, so it
 * brings reapi.h along. Below the tiers, which alone of the other parts' callers reach it
 * (cache.h). Private to libfatbuild. */
#ifndef FB_CACHE_REMOTE_H
#define FB_CACHE_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "entry.h"
#include "reapi.h"
#include "remote_opts.h"

struct fb_remote;

struct fb_remote_counts {
	uint64_t hits, misses, uploads, errors, corrupt, bytes_down, bytes_up;
};

/* FB_ENOTOOL when libcurl does not load (err->msg says so), FB_EINVAL for a bad URL. */
int fb_remote_open(const struct fb_remote_open_opts *o, struct fb_remote **out, struct fb_error *err);
void fb_remote_close(struct fb_remote *r);
/* Before the run forks its jobs: a transport with threads of its own (gRPC, reapi.c) stops
 * them, so that no child inherits a lock one of them held; the next call starts them again.
 * NULL is fine. */
void fb_remote_idle(struct fb_remote *r);
/* 0 and *out filled on a verified hit (every blob's size and SHA-256 checked); FB_ENOIMAGE on
 * a miss; FB_EFORMAT for a damaged record or blob; FB_EIO once the server failed (then for
 * every later call: see fb_remote_broken). */
int fb_remote_get(struct fb_remote *r, const char *key, struct fb_cache_entry *out, struct fb_error *err);
/* Uploads the blobs, then the action record; 0 without a PUT when not writable. */
int fb_remote_put(struct fb_remote *r, const char *key, const struct fb_cache_entry *e, struct fb_error *err);
/* 1 after the first transport failure; *why: its message. */
int fb_remote_broken(const struct fb_remote *r, const char **why);
/* A build's state file (docs/remote-cache.md §5; §9 for the executor's): read, 1 when path is a
 * regular file of the user's (why: its first line, "" for none); claim, leaves why there under a
 * private name, then linked into place (a reader never sees half of it, of two writers exactly
 * one wins): 1 when this process was first or path is NULL, 0 when another process was. */
int fb_remote_state_read(const char *path, char *why, size_t size);
int fb_remote_state_claim(const char *path, const char *why);
/* 1 when the failure was reported by another process of the build (the state file): say
 * nothing about it. */
int fb_remote_quiet(const struct fb_remote *r);
/* A hit the caller found not to be what its key claims: counted as damaged, not as a hit. */
void fb_remote_reject(struct fb_remote *r);
const struct fb_remote_counts *fb_remote_counts(const struct fb_remote *r);

#endif
