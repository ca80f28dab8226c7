/* tiers.c: one run's cache behind one get and one put (cache.h), the order and failure rules
 * of docs/remote-cache.md §5 in one place for every caller (fb_compile's jobs, the build's host
 * and nvcc edges):
 *
 *   get  the local store (store.c); on a miss, or an entry that fails, the remote (remote.c,
 *        over HTTP or REAPI); a remote hit passes the caller's check too and is then kept in
 *        the local store.
 *   put  the local store, then the remote (not in read-only mode, not once it failed).
 *
 * Every entry is checked for what it claims before it is used or kept, whichever tier it came
 * from (the caller's check; the blobs' sizes and digests are remote.c's): a local one that
 * fails is removed, a remote one is not taken (counted as damaged, not as a hit), and either
 * is told once. A remote that fails is off for the rest of the build (its state file), and
 * only the build's first process to see it tells. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "remote.h"
#include "store.h"
#include "base/config.h"
#include "base/error.h"

struct fb_cache {
	char *dir;                 /* the local store; NULL: none */
	unsigned dflags;           /* its directory checks (fb_cache_flags) */
	struct fb_remote *remote;  /* NULL: none */
	uint64_t local_hits, remote_hits, local_corrupt;
};

static void
note(const struct fb_cache_hooks *h, enum fb_cache_event ev, const char *msg)
{
	if (h && h->note)
		h->note(h->ctx, ev, msg);
}

int
fb_cache_local_dir(const struct fb_config *cfg, const char *dir, char *buf, size_t size, struct fb_error *err)
{
	bool named = dir && *dir;
	int rc = named ? 0 : fb_cache_dir_config(cfg, buf, size, err);
	if (named && snprintf(buf, size, "%s", dir) >= (int)size)
		rc = fb_seterr(err, FB_EINVAL, "cache directory path too long");
	return rc ? rc : fb_cache_check(buf, named, fb_cache_flags(cfg), err);
}

int
fb_cache_open(const struct fb_cache_opts *o, const struct fb_cache_hooks *h, struct fb_cache **out,
              struct fb_error *err)
{
	*out = NULL;
	struct fb_cache *c = calloc(1, sizeof(*c));
	if (!c || (o->dir && !(c->dir = strdup(o->dir)))) {
		free(c);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	struct fb_config local;
	c->dflags = fb_cache_flags(fb_config_or_read(o->config, &local));
	const struct fb_remote_opts *r = o->remote;
	if (r && r->cache && *r->cache) {
		struct fb_remote_open_opts ro = {.url = r->cache,
		                                 .header = r->header,
		                                 .writable = !r->read_only,
		                                 .timeout_ms = r->timeout_ms,
		                                 .state = r->state,
		                                 .tmpdir = r->tmpdir};
		struct fb_error e = {0};
		if (fb_remote_open(&ro, &c->remote, &e) != 0)
			note(h, FB_CACHE_REMOTE_OFF, e.msg);
	}
	*out = c;
	return 0;
}

void
fb_cache_close(struct fb_cache *c)
{
	if (!c)
		return;
	fb_remote_close(c->remote);
	free(c->dir);
	free(c);
}

bool
fb_cache_on(const struct fb_cache *c)
{
	return c && (c->dir || c->remote);
}

void
fb_cache_idle(struct fb_cache *c)
{
	if (c)
		fb_remote_idle(c->remote);
}

/* The caller's verdict on e (no check: every entry fits). */
static int
check(const struct fb_cache_hooks *h, const struct fb_cache_entry *e, struct fb_error *err)
{
	return h && h->check ? h->check(h->ctx, e, err) : 0;
}

/* A local entry under key that passes the check into *out; one that fails it is removed. */
static bool
local_get(struct fb_cache *c, const char *key, const struct fb_cache_hooks *h, struct fb_cache_entry *out)
{
	struct fb_error e = {0};
	int rc = fb_store_get(c->dir, c->dflags, key, out, &e);
	if (rc == FB_EFORMAT) { /* size or checksum: store.c removed it */
		c->local_corrupt++;
		note(h, FB_CACHE_LOCAL_DAMAGED, e.msg);
	}
	if (rc)
		return false;
	if ((rc = check(h, out, &e)) == 0)
		return true;
	if (rc != FB_ENOIMAGE) {
		char why[sizeof(e.msg) + 100];
		snprintf(why, sizeof(why), "cache entry %s: %s", key, e.msg);
		fb_store_remove(c->dir, c->dflags, key);
		c->local_corrupt++;
		note(h, FB_CACHE_LOCAL_DAMAGED, why);
	}
	fb_cache_entry_clear(out);
	return false;
}

/* A remote entry under key that passes the check into *out, then kept locally (best effort);
 * one that fails it is not taken. */
static bool
remote_get(struct fb_cache *c, const char *key, const struct fb_cache_hooks *h, struct fb_cache_entry *out)
{
	if (!c->remote || fb_remote_broken(c->remote, NULL))
		return false;
	struct fb_error e = {0};
	int rc = fb_remote_get(c->remote, key, out, &e);
	if (rc == FB_EFORMAT)
		note(h, FB_CACHE_REMOTE_DAMAGED, e.msg);
	else if (rc == FB_EIO && !fb_remote_quiet(c->remote))
		note(h, FB_CACHE_REMOTE_FAILED, e.msg);
	if (rc)
		return false;
	if ((rc = check(h, out, &e)) == 0) {
		if (c->dir)
			fb_store_put(c->dir, c->dflags, key, out, NULL);
		return true;
	}
	if (rc != FB_ENOIMAGE) {
		char why[sizeof(e.msg) + 100];
		snprintf(why, sizeof(why), "remote action record ac/%s: %s", key, e.msg);
		fb_remote_reject(c->remote);
		note(h, FB_CACHE_REMOTE_DAMAGED, why);
	}
	fb_cache_entry_clear(out);
	return false;
}

int
fb_cache_get(struct fb_cache *c, const char *key, const struct fb_cache_hooks *h, struct fb_cache_entry *out)
{
	memset(out, 0, sizeof(*out));
	if (!c)
		return FB_CACHE_MISS;
	if (c->dir && local_get(c, key, h, out)) {
		c->local_hits++;
		return FB_CACHE_LOCAL;
	}
	if (remote_get(c, key, h, out)) {
		c->remote_hits++;
		return FB_CACHE_REMOTE;
	}
	return FB_CACHE_MISS;
}

void
fb_cache_put(struct fb_cache *c, const char *key, const struct fb_cache_entry *e, const struct fb_cache_hooks *h)
{
	struct fb_error er = {0};
	if (!c)
		return;
	if (c->dir && fb_store_put(c->dir, c->dflags, key, e, &er) != 0)
		note(h, FB_CACHE_LOCAL_UNKEPT, er.msg);
	if (c->remote && !fb_remote_broken(c->remote, NULL) && fb_remote_put(c->remote, key, e, &er) == FB_EIO &&
	    !fb_remote_quiet(c->remote))
		note(h, FB_CACHE_UPLOAD_FAILED, er.msg);
}

int
fb_cache_record(struct fb_cache *c, uint64_t misses, const struct fb_cache_by_kind *kinds, struct fb_error *err)
{
	if (!c || !c->dir)
		return 0;
	struct fb_cache_counters n = {0};
	n.local_hits = c->local_hits;
	n.remote_hits = c->remote_hits;
	n.misses = misses;
	n.local_corrupt = c->local_corrupt;
	if (kinds) {
		n.cicc_hits = kinds->hits[FB_CACHE_KIND_CICC];
		n.cicc_misses = kinds->misses[FB_CACHE_KIND_CICC];
		n.ptxas_hits = kinds->hits[FB_CACHE_KIND_PTXAS];
		n.ptxas_misses = kinds->misses[FB_CACHE_KIND_PTXAS];
		n.host_hits = kinds->hits[FB_CACHE_KIND_HOST];
		n.host_misses = kinds->misses[FB_CACHE_KIND_HOST];
	}
	if (c->remote) {
		const struct fb_remote_counts *r = fb_remote_counts(c->remote);
		n.remote_misses = r->misses;
		n.remote_errors = r->errors;
		n.remote_corrupt = r->corrupt;
		n.uploads = r->uploads;
		n.bytes_down = r->bytes_down;
		n.bytes_up = r->bytes_up;
	}
	return fb_cache_count(c->dir, c->dflags, &n, err);
}
