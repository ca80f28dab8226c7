/* reapi.h: the shared cache over REAPI v2 on gRPC (reapi.c, docs/remote-cache.md §8), whose
 * channel remote execution shares (rexec.h, §9); the messages it reads are reapi_msg.h's.
 * Private to libfatbuild. */
#ifndef FB_CACHE_REAPI_H
#define FB_CACHE_REAPI_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "reapi_msg.h"
#include "remote_opts.h"

struct fb_reapi;

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

#endif
