/* remote.h: the shared cache: over Bazel's HTTP cache protocol (remote.c, docs/remote-cache.md),
 * or REAPI v2 on gRPC (reapi.c, §8), whose channel remote execution shares (rexec.h, §9); the
 * action record both store (record.c, §2). Below the tiers (tiers.c), which alone of the other
 * parts' callers reach it (cache.h). Private to libfatbuild. */
#ifndef FB_CACHE_REMOTE_H
#define FB_CACHE_REMOTE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "entry.h"
#include "hash.h"

/* ---- remote.c: the shared cache over Bazel's HTTP cache protocol (docs/remote-cache.md) ---- */

struct fb_remote;

struct fb_remote_open_opts {
	const char *url;         /* http(s)://, the root that holds ac/ and cas/; or grpc(s)://HOST:PORT[/INSTANCE] */
	const char *header;      /* one extra request header ("Authorization: Bearer T"), or NULL */
	int writable;            /* 0: never PUT */
	long timeout_ms;         /* per request; <= 0: 10 s */
	/* The processes of one build share the remote's failure through this file (NULL: none):
	 * the first to fail writes it and reports; a remote opened while it exists is broken from
	 * the start and quiet (docs/remote-cache.md §5). */
	const char *state;
	const char *tmpdir;      /* where downloads are staged; NULL: /tmp */
	/* For a process that runs calls on several threads at once (compile/offload.c), each with
	 * an fb_reapi of its own (grpc:// only): stop, once another thread sets it, cancels the
	 * call under way within STOP_POLL_MS and answers every later call CANCELLED; shared: the
	 * other threads keep gRPC running, so idle and close do not wait for gRPC's threads to end
	 * (the caller keeps one fb_reapi opened without shared and closes it last, which waits). */
	const atomic_int *stop;
	int shared;
};

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

/* ---- record.c: the action record ---- */

/* The action record (docs/remote-cache.md §2), a serialized Bazel ActionResult: the digests
 * (hex) and sizes of cubin, PTX, log; an empty output has size 0 and the empty blob's digest. */
enum { FB_REMOTE_RECORD_MAX = 65536, FB_REMOTE_RECORD_ENCODED_MAX = 512 };
struct fb_remote_record {
	char hex[3][65];
	uint64_t size[3];
	char key[65];            /* the key the record names for itself; "" for none */
};
/* Parses a record (unknown fields skipped); 0, or FB_EFORMAT with err->msg naming the message,
 * field and what is wrong. */
int fb_remote_record_decode(const char *text, size_t n, struct fb_remote_record *out, struct fb_error *err);
/* The record's protobuf encoding into buf (FB_REMOTE_RECORD_ENCODED_MAX bytes); returns its
 * length, 0 if it does not fit. */
size_t fb_remote_record_encode(const struct fb_remote_record *rec, char *buf, size_t size);

/* ---- remote.c: the staging of downloads ---- */

/* A blob being downloaded: its bytes go to a nameless private file under tmpdir, never into
 * memory, hashed as they come; at most max of them (one more sets over and stops the
 * transfer). */
struct fb_remote_sink {
	int fd;                  /* -1: none */
	struct fb_sha256 h;
	uint64_t n, max;
	int over, failed;        /* past max; a write failed */
};
/* 0, or the error of fb_tmp_open (s->fd is then -1). */
int fb_remote_sink_open(struct fb_remote_sink *s, const char *tmpdir, uint64_t max, struct fb_error *err);
/* 0, or -1 once past max or a write failed: stop the transfer. */
int fb_remote_sink_write(struct fb_remote_sink *s, const void *p, size_t n);
void fb_remote_sink_close(struct fb_remote_sink *s);

/* ---- reapi.c: the shared cache over REAPI v2 on gRPC (docs/remote-cache.md §8) ---- */

struct fb_reapi;

/* google.rpc.Code values the cache decides on. */
enum { FB_RPC_OK = 0, FB_RPC_NOT_FOUND = 5, FB_RPC_UNIMPLEMENTED = 12 };

/* One blob of a batch: its digest; put: its bytes for an upload (force: even when
 * FindMissingBlobs does not name it); got (malloc'd, the caller
 * frees) and got_size after a read that found it, unverified; status: a google.rpc.Code the
 * server gave it (5 NOT_FOUND: a miss); missing: FindMissingBlobs named it; why: a failed
 * upload's message. */
struct fb_reapi_blob {
	char hex[65];
	uint64_t size;
	const unsigned char *put;
	unsigned char *got;
	size_t got_size;
	int status;
	int missing;
	int force;               /* upload even when the server has it (its copy failed a check) */
	char why[200];
	/* A read through ByteStream streams into sink (opened there under tmpdir; the caller
	 * closes it) and sets streamed instead of got. */
	const char *tmpdir;
	struct fb_remote_sink sink;
	int streamed;
};

/* FB_EINVAL for a bad URL or header, FB_ENOTOOL for a fatbuild built without gRPC. No
 * connection is made until the first call. */
int fb_reapi_open(const struct fb_remote_open_opts *o, struct fb_reapi **out, struct fb_error *err);
void fb_reapi_close(struct fb_reapi *g);
/* fb_reapi_close without waiting for gRPC's threads to end (as a shared one): for a caller that
 * forks nothing next, such as a stopped or failed round, whose wait could last the whole
 * deadline of a call to a server that stopped answering. */
void fb_reapi_close_nowait(struct fb_reapi *g);
/* Stops gRPC's threads until the next call (see fb_remote_idle); NULL is fine. */
void fb_reapi_idle(struct fb_reapi *g);
/* GetActionResult for the compile key: 0 with the ActionResult's bytes in *rec (malloc'd),
 * FB_ENOIMAGE for NOT_FOUND, FB_EFORMAT for an answer over FB_REMOTE_RECORD_MAX, FB_EIO for
 * any other status or no answer (err names the call and the status). */
int fb_reapi_get_action(struct fb_reapi *g, const char *key, unsigned char **rec, size_t *n, struct fb_error *err);
/* UpdateActionResult: 0 or FB_EIO. */
int fb_reapi_put_action(struct fb_reapi *g, const char *key, const unsigned char *rec, size_t n, struct fb_error *err);
/* Fetches b[0..n) (BatchReadBlobs, ByteStream.Read past the batch limit, which the first
 * transfer asks of GetCapabilities): 0 with got or status
 * set per blob; FB_EIO for a failed call; FB_EFORMAT for a malformed answer. */
int fb_reapi_read_blobs(struct fb_reapi *g, struct fb_reapi_blob *b, int n, struct fb_error *err);
/* Uploads those of b[0..n) the server lacks (FindMissingBlobs, then BatchUpdateBlobs or
 * ByteStream.Write); *sent: the bytes sent. 0 or FB_EIO. */
int fb_reapi_write_blobs(struct fb_reapi *g, struct fb_reapi_blob *b, int n, uint64_t *sent, struct fb_error *err);
/* For the channel's other users (rexec/action.c and rexec/exec.c, remote execution): one call of method
 * ("/package.Service/Method") with the one request req[0..n), each answer message handed to
 * on_msg (nonzero, err filled, cancels the call), with the deadline timeout_ms (0: the
 * channel's). The call's gRPC status code (why: its text), or -1 when on_msg refused an
 * answer or (without gRPC, FB_ENOTOOL) no call could be made; err filled then. */
typedef int (*fb_reapi_msg_fn)(void *ctx, const unsigned char *p, size_t n, struct fb_error *err);
int fb_reapi_call(struct fb_reapi *g, const char *method, const unsigned char *req, size_t n, long timeout_ms,
                  fb_reapi_msg_fn on_msg, void *ctx, char *why, size_t wsize, struct fb_error *err);
/* The instance_name of every request of g ("" for none); "" for NULL. */
const char *fb_reapi_instance(const struct fb_reapi *g);

/* ---- reapi_msg.c: the URL, the answers, the status names ---- */

/* 1 for a grpc:// or grpcs:// URL. */
int fb_reapi_url(const char *url);
/* grpc[s]://HOST[:PORT][/INSTANCE] (HOST may be a bracketed IPv6 address) into target
 * "HOST:PORT" (port 80, or 443 for grpcs, when none is given), instance (trailing '/'
 * dropped; "" when none) and *tls; 0, or -1 for a URL that is not one or does not fit. */
int fb_reapi_url_parse(const char *url, char *target, size_t tsize, char *instance, size_t isize, int *tls);
/* The answers' decoders (fuzz_reapi): FindMissingBlobsResponse sets b[i].missing;
 * BatchReadBlobsResponse sets got/got_size or status; BatchUpdateBlobsResponse sets status and
 * why; a ByteStream ReadResponse's data (a view into p). 0, FB_EFORMAT (a malformed field, a
 * digest not asked about, one answered twice) or FB_ENOMEM. */
int fb_reapi_decode_missing(const unsigned char *p, size_t n, struct fb_reapi_blob *b, int nb, struct fb_error *err);
int fb_reapi_decode_read(const unsigned char *p, size_t n, struct fb_reapi_blob *b, int nb, struct fb_error *err);
int fb_reapi_decode_update(const unsigned char *p, size_t n, struct fb_reapi_blob *b, int nb, struct fb_error *err);
int fb_reapi_decode_bytestream(const unsigned char *p, size_t n, const unsigned char **data, size_t *size,
                               struct fb_error *err);
/* ServerCapabilities: *max_batch its cache_capabilities.max_batch_total_size_bytes (0 when it
 * names none: no limit); 0 or FB_EFORMAT (a malformed field, a negative limit). */
int fb_reapi_decode_capabilities(const unsigned char *p, size_t n, uint64_t *max_batch, struct fb_error *err);
/* A google.rpc.Code's name ("UNAVAILABLE"). */
const char *fb_reapi_code_name(int c);

#endif
