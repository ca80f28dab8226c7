/* reapi.c: the shared compile cache over the Remote Execution API v2 on gRPC
 * (docs/remote-cache.md §8), the cache half only: the action record of §2 under the
 * ActionCache, its blobs in the ContentAddressableStorage.
 *
 *   ActionCache.GetActionResult       {instance_name, action_digest {key, 0}} -> ActionResult
 *   ActionCache.UpdateActionResult    {instance_name, action_digest, action_result}
 *   CAS.FindMissingBlobs              {instance_name, blob_digests} -> {missing_blob_digests}
 *   CAS.BatchReadBlobs                {instance_name, digests} -> {responses {digest, data, status}}
 *   CAS.BatchUpdateBlobs              {instance_name, requests {digest, data}} -> {responses}
 *   ByteStream.Read / Write           a blob past the batch limit, in chunks
 *   Capabilities.GetCapabilities      {instance_name} -> {cache_capabilities
 *                                     {max_batch_total_size_bytes}}: the batch limit
 *
 * Messages are written and read by hand (pb.c), as record.c does the ActionResult: the requests
 * here, the answers by reapi_msg.c, whose decoders fuzz_reapi runs. The transport is
 * gRPC's C core (libgrpc), linked when CMake finds it (FB_HAVE_GRPC, option FB_GRPC): its C
 * API passes structs with unions by value and its soname changes with every release, so a
 * dlopen'ed symbol table would have to copy one release's layouts (HACKING.md, "Binary formats
 * and protocols"). Without it grpc:// answers FB_ENOTOOL and the caller compiles locally.
 * This file only reports: verifying blobs, counting and the "broken" state are remote.c's, so
 * both protocols fail the same way (§5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef FB_HAVE_GRPC
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#endif

#include "pb.h"
#include "reapi.h"
#include "record.h"
#include "sink.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/proc.h"
#include "plumbing.h"

#ifdef FB_HAVE_GRPC
/* A batch of blobs goes in one message of at most the server's max_batch_total_size_bytes
 * (GetCapabilities) less HEADROOM for the instance name and tags, each blob counted with PER_BLOB
 * more for its digest and tags (a batch of 400 small headers was 4 KiB over BuildGrid's 4 MiB
 * without it); a server that names no limit (0) or has no Capabilities service gets
 * BATCH_MAX, below gRPC's default 4 MiB message limit. A limit is capped so that an answer fits
 * RECV_MAX. A blob past the limit goes through ByteStream in chunks of WRITE_CHUNK. */
enum {
	BATCH_MAX = 4 * 1024 * 1024 - 64 * 1024,
	HEADROOM = 4096,
	PER_BLOB = 128, /* a request's Digest (64 hex digits, a size), its data's tag and length */
	RECV_MAX = 64 << 20,
	WRITE_CHUNK = 1024 * 1024,
	WINDOW = 4 << 20,
	BACKOFF_MS = 100,
	IDLE_SLACK_MS = 1000,    /* fb_reapi_idle's wait beyond the connect deadline */
	DEADLINE_SLACK_MS = 2000, /* a batch's wait beyond its call's deadline */
	STOP_POLL_MS = 100       /* how often a wait looks at fb_remote_open_opts.stop */
};

/* The channel and gRPC's threads exist only between start() and stop(): gRPC keeps threads
 * (timers, reconnects) running while a channel lives, and a child forked while one of them
 * held a lock (an allocator's, say) could never take it; so the run stops them before it
 * forks its jobs (fb_reapi_idle) and the next call starts them again. A connection attempt
 * still going keeps gRPC alive past grpc_shutdown_blocking (to a server that never answers:
 * gRPC's 20 s connect deadline; to a closed port: its 1 s reconnect backoff), so the channel's
 * connect deadline is the call's timeout, its first backoff BACKOFF_MS, and fb_reapi_idle
 * waits for gRPC's last thread (docs/remote-cache.md §8). */
struct fb_reapi {
	grpc_channel *ch;
	grpc_completion_queue *cq;
	grpc_metadata md;
	int started;
	int threads0;            /* this process's threads before gRPC started (-1: unknown) */
	char url[512];
	char target[256];
	char instance[256];
	int tls;
	long timeout_ms;
	gpr_timespec dl;         /* the deadline of the call under way */
	char hkey[128];          /* the header's name, lowercased (gRPC's rule); "" for none */
	char *hval;
	uint64_t batch_max;      /* the batch limit; 0 until GetCapabilities was asked */
	const atomic_int *stop;  /* fb_remote_open_opts.stop and .shared */
	int shared;
};

/* The "authorization: Bearer T" metadata from a "Name: value" header line. */
static int
set_header(struct fb_reapi *g, const char *line, struct fb_error *err)
{
	const char *colon = line ? strchr(line, ':') : NULL;
	if (!line || !*line)
		return 0;
	if (!colon || colon == line || colon - line >= (long)sizeof(g->hkey))
		return fb_seterr(err, FB_EINVAL, "remote cache header '%.80s': not 'Name: value'", line);
	size_t k = (size_t)(colon - line);
	for (size_t i = 0; i < k; i++)
		g->hkey[i] = (char)(line[i] >= 'A' && line[i] <= 'Z' ? line[i] - 'A' + 'a' : line[i]);
	g->hkey[k] = 0;
	const char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (!(g->hval = strdup(v)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	return 0;
}

int
fb_reapi_open(const struct fb_remote_open_opts *o, struct fb_reapi **out, struct fb_error *err)
{
	*out = NULL;
	struct fb_reapi *g = calloc(1, sizeof(*g));
	if (!g)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	fb_remote_url_redact(o->url ? o->url : "", g->url, sizeof(g->url)); /* for messages */
	if (fb_reapi_url_parse(o->url, g->target, sizeof(g->target), g->instance, sizeof(g->instance), &g->tls)) {
		int rc = fb_seterr(err, FB_EINVAL, "remote cache URL '%.200s': not grpc://HOST[:PORT][/INSTANCE] or grpcs://...",
		                   g->url);
		free(g);
		return rc;
	}
	g->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	g->stop = o->stop;
	g->shared = o->shared;
	int rc = set_header(g, o->header, err);
	if (rc) {
		fb_reapi_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

/* gRPC, the channel (connecting on its first call) and the completion queue; 0 or FB_EIO. */
static int
start(struct fb_reapi *g, struct fb_error *err)
{
	if (g->started)
		return 0;
	g->threads0 = fb_thread_count();
	grpc_init();
	g->started = 1;
	if (g->hkey[0]) {
		g->md.key = grpc_slice_from_copied_string(g->hkey);
		g->md.value = grpc_slice_from_copied_string(g->hval);
	}
	grpc_channel_credentials *cr = g->tls ? grpc_ssl_credentials_create(NULL, NULL, NULL, NULL)
	                                      : grpc_insecure_credentials_create();
	/* Answers carry at most one batch or one ByteStream chunk, but servers pick their chunks.
	 * The flow-control window is fixed at WINDOW: the bandwidth-delay probe would let it grow,
	 * and gRPC buffer what a server pushes (a ByteStream without end held 70 MB more than a
	 * compile without the remote; with the window fixed, none; docs/remote-cache.md §8). */
	grpc_arg a[] = {{.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, .value.integer = RECV_MAX},
	                {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_HTTP2_BDP_PROBE, .value.integer = 0},
	                {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, .value.integer = WINDOW},
	                {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, .value.integer = (int)g->timeout_ms},
	                {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, .value.integer = BACKOFF_MS}};
	grpc_channel_args args = {sizeof(a) / sizeof(a[0]), a};
	g->ch = cr ? grpc_channel_create(g->target, cr, &args) : NULL;
	if (cr)
		grpc_channel_credentials_release(cr);
	g->cq = grpc_completion_queue_create_for_pluck(NULL);
	if (!g->ch || !g->cq) {
		fb_reapi_idle(g);
		return fb_seterr(err, FB_EIO, "remote cache %.200s: cannot make a gRPC channel", g->url);
	}
	return 0;
}

void
fb_reapi_idle(struct fb_reapi *g)
{
	if (!g || !g->started)
		return;
	if (g->ch)
		grpc_channel_destroy(g->ch);
	if (g->cq) {
		grpc_completion_queue_shutdown(g->cq);
		while (grpc_completion_queue_pluck(g->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
		       GRPC_QUEUE_SHUTDOWN)
			;
		grpc_completion_queue_destroy(g->cq);
	}
	if (g->hkey[0]) {
		grpc_slice_unref(g->md.key);
		grpc_slice_unref(g->md.value);
	}
	g->ch = NULL;
	g->cq = NULL;
	g->started = 0;
	grpc_shutdown_blocking(); /* gRPC's threads are gone now, unless a connection attempt lives */
	if (g->shared)
		return; /* other threads of this process keep gRPC running; their holder waits */
	/* ...then gRPC ends when that attempt does, by its deadline: waited for, with a bound in
	 * case the host program runs gRPC too. grpc_is_initialized() takes the lock gRPC's final
	 * shutdown holds while it joins its threads; the thread that ran it then exits. */
	struct timespec t0, now, nap = {0, 2 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (!grpc_is_initialized() && (g->threads0 < 0 || fb_thread_count() <= g->threads0))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > g->timeout_ms + IDLE_SLACK_MS)
			break;
		nanosleep(&nap, NULL);
	}
}

void
fb_reapi_close_nowait(struct fb_reapi *g)
{
	if (g)
		g->shared = 1;
	fb_reapi_close(g);
}

void
fb_reapi_close(struct fb_reapi *g)
{
	if (!g)
		return;
	fb_reapi_idle(g);
	free(g->hval);
	free(g);
}

static int
stopped(const struct fb_reapi *g)
{
	return g->stop && atomic_load(g->stop);
}

/* The event of the batch tag of call c. gRPC ends a call at its deadline. The wait is bounded
 * by this process's own clock too, as a backstop: DEADLINE_SLACK_MS after the deadline the call
 * is cancelled as gRPC would have, which completes the batch, and the status says so ("gRPC did
 * not end the call"; docs/remote-cache.md §8). With a stop flag the wait looks at it every
 * STOP_POLL_MS and cancels the call once it is set. */
static grpc_event
wait_tag(struct fb_reapi *g, grpc_call *c, void *tag)
{
	gpr_timespec until = gpr_time_add(g->dl, gpr_time_from_millis(DEADLINE_SLACK_MS, GPR_TIMESPAN));
	for (;;) {
		gpr_timespec t = until;
		if (g->stop) {
			gpr_timespec slice = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
			                                  gpr_time_from_millis(STOP_POLL_MS, GPR_TIMESPAN));
			if (gpr_time_cmp(slice, until) < 0)
				t = slice;
		}
		grpc_event ev = grpc_completion_queue_pluck(g->cq, tag, t, NULL);
		if (ev.type != GRPC_QUEUE_TIMEOUT)
			return ev;
		if (stopped(g)) {
			grpc_call_cancel_with_status(c, GRPC_STATUS_CANCELLED, "stopped", NULL);
			break;
		}
		if (gpr_time_cmp(gpr_now(GPR_CLOCK_REALTIME), until) >= 0) {
			grpc_call_cancel_with_status(c, GRPC_STATUS_DEADLINE_EXCEEDED,
			                             "Deadline Exceeded (gRPC did not end the call)", NULL);
			break;
		}
	}
	return grpc_completion_queue_pluck(g->cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
}

/* One batch of ops, waited for; 1 when it succeeded. The call's deadline bounds the wait. */
static int
batch(struct fb_reapi *g, grpc_call *c, grpc_op *ops, size_t n, void *tag)
{
	if (grpc_call_start_batch(c, ops, n, tag, NULL) != GRPC_CALL_OK)
		return 0;
	grpc_event ev = wait_tag(g, c, tag);
	return ev.type == GRPC_OP_COMPLETE && ev.success;
}

/* What a call hands each message it receives; nonzero (err filled) cancels the call. */
typedef int (*on_msg_fn)(void *ctx, const unsigned char *p, size_t n, struct fb_error *err);

static int
send_all(struct fb_reapi *g, grpc_call *c, const struct fb_pb_out *req, int nreq)
{
	grpc_op op[2];
	memset(op, 0, sizeof(op));
	op[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	op[0].data.send_initial_metadata.count = g->hkey[0] ? 1 : 0;
	op[0].data.send_initial_metadata.metadata = g->hkey[0] ? &g->md : NULL;
	if (!batch(g, c, op, 1, (void *)2))
		return 0;
	for (int i = 0; i < nreq; i++) {
		grpc_slice s = grpc_slice_from_copied_buffer((const char *)req[i].p, req[i].n);
		grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		memset(op, 0, sizeof(op));
		op[0].op = GRPC_OP_SEND_MESSAGE;
		op[0].data.send_message.send_message = bb;
		op[1].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
		int ok = batch(g, c, op, i == nreq - 1 ? 2 : 1, (void *)2);
		grpc_byte_buffer_destroy(bb);
		if (!ok)
			return 0;
	}
	return 1;
}

/* Receives until the server's end of stream, each message to on_msg; 0 (the caller reads the
 * status), or on_msg's code after cancelling the call. */
static int
recv_all(struct fb_reapi *g, grpc_call *c, grpc_metadata_array *init_md, on_msg_fn on_msg, void *ctx,
         struct fb_error *err)
{
	grpc_op op;
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_INITIAL_METADATA;
	op.data.recv_initial_metadata.recv_initial_metadata = init_md;
	if (!batch(g, c, &op, 1, (void *)3))
		return 0;
	for (;;) {
		grpc_byte_buffer *bb = NULL;
		memset(&op, 0, sizeof(op));
		op.op = GRPC_OP_RECV_MESSAGE;
		op.data.recv_message.recv_message = &bb;
		if (!batch(g, c, &op, 1, (void *)3) || !bb)
			return 0;
		grpc_byte_buffer_reader rd;
		int rc = FB_ENOMEM;
		if (grpc_byte_buffer_reader_init(&rd, bb)) {
			grpc_slice s = grpc_byte_buffer_reader_readall(&rd);
			rc = on_msg(ctx, GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s), err);
			grpc_slice_unref(s);
			grpc_byte_buffer_reader_destroy(&rd);
		} else {
			fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		grpc_byte_buffer_destroy(bb);
		if (rc) {
			grpc_call_cancel(c, NULL);
			return rc;
		}
	}
}

/* One call of method with the messages req[0..nreq), each answer to on_msg. Returns the call's
 * status code (>= 0; why[] its text), or -1 with err filled when on_msg refused an answer. The
 * status is asked for first, so that a send or receive the server cut short still ends with
 * the server's reason. */
static int
rpc(struct fb_reapi *g, const char *method, const struct fb_pb_out *req, int nreq, on_msg_fn on_msg, void *ctx,
    char *why, size_t wsize, struct fb_error *err)
{
	if (stopped(g)) {
		snprintf(why, wsize, "stopped");
		return 1; /* CANCELLED */
	}
	snprintf(why, wsize, "cannot make a gRPC channel");
	if (start(g, err))
		return 14; /* UNAVAILABLE */
	g->dl = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(g->timeout_ms, GPR_TIMESPAN));
	grpc_slice m = grpc_slice_from_static_string(method);
	grpc_call *c = grpc_channel_create_call(g->ch, NULL, GRPC_PROPAGATE_DEFAULTS, g->cq, m, NULL, g->dl, NULL);
	grpc_slice_unref(m);
	snprintf(why, wsize, "no call");
	if (!c)
		return 2; /* UNKNOWN */
	grpc_metadata_array init_md, trail_md;
	grpc_metadata_array_init(&init_md);
	grpc_metadata_array_init(&trail_md);
	grpc_status_code st = GRPC_STATUS_UNKNOWN;
	grpc_slice details = grpc_empty_slice();
	grpc_op op;
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	op.data.recv_status_on_client.trailing_metadata = &trail_md;
	op.data.recv_status_on_client.status = &st;
	op.data.recv_status_on_client.status_details = &details;
	int started = grpc_call_start_batch(c, &op, 1, (void *)1, NULL) == GRPC_CALL_OK;
	int rc = 0;
	if (started && send_all(g, c, req, nreq))
		rc = recv_all(g, c, &init_md, on_msg, ctx, err);
	if (started)
		wait_tag(g, c, (void *)1);
	size_t dn = GRPC_SLICE_LENGTH(details);
	snprintf(why, wsize, "%.*s", (int)(dn < 300 ? dn : 300), (const char *)GRPC_SLICE_START_PTR(details));
	grpc_slice_unref(details);
	grpc_metadata_array_destroy(&init_md);
	grpc_metadata_array_destroy(&trail_md);
	grpc_call_unref(c);
	return rc ? -1 : started ? (int)st : 2;
}

/* FB_EIO naming the call and its status: the caller marks the remote broken (remote.c). */
static int
call_failed(struct fb_reapi *g, const char *name, int st, const char *why, struct fb_error *err)
{
	return fb_seterr(err, FB_EIO, "remote cache %.200s: %s: %s%s%.300s", g->url, name, fb_reapi_code_name(st),
	                 why[0] ? ": " : "", why);
}

/* A growable answer of at most max bytes (one message for a unary call, the chunks of a
 * ByteStream read). */
struct acc {
	unsigned char *p;
	size_t n, max;
};

static int
on_acc(void *ctx, const unsigned char *p, size_t n, struct fb_error *err)
{
	struct acc *a = ctx;
	if (n > a->max - a->n)
		return fb_seterr(err, FB_EFORMAT, "an answer over %zu bytes", a->max);
	unsigned char *np = realloc(a->p, a->n + n + 1);
	if (!np)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	a->p = np;
	if (n)
		memcpy(a->p + a->n, p, n);
	a->n += n;
	return 0;
}

/* A ByteStream ReadResponse's data into the blob's sink (remote.c), never into memory; the
 * blob's expected size bounds it. */
static int
on_chunk(void *ctx, const unsigned char *p, size_t n, struct fb_error *err)
{
	struct fb_remote_sink *s = ctx;
	const unsigned char *d;
	size_t dn;
	int rc = fb_reapi_decode_bytestream(p, n, &d, &dn, err);
	if (rc || fb_remote_sink_write(s, d, dn) == 0)
		return rc;
	return fb_seterr(err, FB_EFORMAT, s->over ? "ByteStream.Read: more than the blob's %llu bytes"
	                                          : "ByteStream.Read: cannot stage the blob (%llu bytes)",
	                 (unsigned long long)s->max);
}

static void
put_instance(struct fb_reapi *g, struct fb_pb_out *o)
{
	if (g->instance[0])
		fb_pb_out_bytes(o, 1, g->instance, strlen(g->instance));
}

/* A call with one request (freed here) whose answers go to on_msg with ctx (on_acc: at most
 * a->max bytes into a->p; on_chunk: into a sink for ByteStream); the status code, or -1 for a
 * local failure (err filled). */
static int
unary(struct fb_reapi *g, const char *method, struct fb_pb_out *req, on_msg_fn on_msg, void *a, char *why,
      size_t wsize, struct fb_error *err)
{
	if (req->oom) {
		free(req->p);
		fb_seterr(err, FB_ENOMEM, "out of memory");
		return -1;
	}
	int st = rpc(g, method, req, 1, on_msg, a, why, wsize, err);
	free(req->p);
	return st;
}

int
fb_reapi_get_action(struct fb_reapi *g, const char *key, unsigned char **rec, size_t *n, struct fb_error *err)
{
	struct fb_pb_out req = {0};
	struct acc a = {NULL, 0, FB_REMOTE_RECORD_MAX};
	char why[320];
	*rec = NULL;
	*n = 0;
	put_instance(g, &req);
	fb_pb_out_digest(&req, 2, key, 0); /* the action digest: the compile key (§8) */
	int st = unary(g, "/build.bazel.remote.execution.v2.ActionCache/GetActionResult", &req, on_acc, &a, why, sizeof(why), err);
	if (st == FB_RPC_OK) {
		*rec = a.p ? a.p : calloc(1, 1);
		*n = a.n;
		return *rec ? 0 : fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	free(a.p);
	if (st < 0)
		return err ? err->code : FB_EFORMAT;
	if (st == FB_RPC_NOT_FOUND)
		return FB_ENOIMAGE;
	return call_failed(g, "GetActionResult", st, why, err);
}

int
fb_reapi_put_action(struct fb_reapi *g, const char *key, const unsigned char *rec, size_t n, struct fb_error *err)
{
	struct fb_pb_out req = {0};
	struct acc a = {NULL, 0, FB_REMOTE_RECORD_MAX};
	char why[320];
	put_instance(g, &req);
	fb_pb_out_digest(&req, 2, key, 0);
	fb_pb_out_bytes(&req, 3, rec, n);
	int st = unary(g, "/build.bazel.remote.execution.v2.ActionCache/UpdateActionResult", &req, on_acc, &a, why,
	               sizeof(why), err);
	free(a.p);
	if (st < 0)
		return err ? err->code : FB_EFORMAT;
	return st == FB_RPC_OK ? 0 : call_failed(g, "UpdateActionResult", st, why, err);
}

/* A ByteStream resource name: [INSTANCE/][uploads/UUID/]blobs/HASH/SIZE. */
static void
resource(struct fb_reapi *g, char *out, size_t size, const char *upload, const struct fb_reapi_blob *b)
{
	snprintf(out, size, "%s%s%s%s%sblobs/%s/%llu", g->instance, g->instance[0] ? "/" : "", upload ? "uploads/" : "",
	         upload ? upload : "", upload ? "/" : "", b->hex, (unsigned long long)b->size);
}

static int
read_stream(struct fb_reapi *g, struct fb_reapi_blob *b, struct fb_error *err)
{
	char name[512], why[320];
	struct fb_pb_out req = {0};
	struct fb_error se = {0};
	if (fb_remote_sink_open(&b->sink, b->tmpdir ? b->tmpdir : "/tmp", b->size, &se) != 0) {
		b->status = FB_RPC_NOT_FOUND; /* nowhere to stage it: a miss, the server is not to blame */
		return 0;
	}
	resource(g, name, sizeof(name), NULL, b);
	fb_pb_out_bytes(&req, 1, name, strlen(name)); /* ReadRequest.resource_name, from offset 0 */
	int st = unary(g, "/google.bytestream.ByteStream/Read", &req, on_chunk, &b->sink, why, sizeof(why), err);
	if (st == FB_RPC_OK) {
		b->streamed = 1;
		b->got_size = (size_t)b->sink.n;
		return 0;
	}
	if (st < 0) /* more bytes than the record says, a malformed chunk, or no memory */
		return err ? err->code : FB_EFORMAT;
	if (st == FB_RPC_NOT_FOUND) {
		b->status = st;
		return 0;
	}
	return call_failed(g, "ByteStream.Read", st, why, err);
}

/* The batch limit, asked of the server once per fb_reapi (GetCapabilities) before its first
 * blob moves; UNIMPLEMENTED (no Capabilities service) means BATCH_MAX, any other failed call is
 * one like the others (FB_EIO, §5), and so is an answer that does not decode. */
static int
batch_limit(struct fb_reapi *g, uint64_t *lim, struct fb_error *err)
{
	if (g->batch_max) {
		*lim = g->batch_max;
		return 0;
	}
	struct fb_pb_out req = {0};
	struct acc a = {NULL, 0, 65536};
	char why[320];
	uint64_t max = 0;
	put_instance(g, &req);
	struct fb_error le = {0};
	int st = unary(g, "/build.bazel.remote.execution.v2.Capabilities/GetCapabilities", &req, on_acc, &a, why,
	               sizeof(why), &le);
	int rc = 0;
	if (st == FB_RPC_OK && fb_reapi_decode_capabilities(a.p, a.n, &max, &le))
		st = -1;
	free(a.p);
	if (st < 0) /* an answer that does not decode or is too long: the server is not usable */
		rc = le.code == FB_ENOMEM ? fb_seterr(err, FB_ENOMEM, "out of memory")
		                          : fb_seterr(err, FB_EIO, "remote cache %.200s: GetCapabilities: %s", g->url, le.msg);
	else if (st != FB_RPC_OK && st != FB_RPC_UNIMPLEMENTED)
		rc = call_failed(g, "GetCapabilities", st, why, err);
	if (rc)
		return rc;
	if (max > (uint64_t)RECV_MAX - 65536)
		max = (uint64_t)RECV_MAX - 65536;
	g->batch_max = !max ? BATCH_MAX : max - (max / 2 < HEADROOM ? max / 2 : HEADROOM);
	*lim = g->batch_max;
	return 0;
}

/* Blobs b[from..to) in one BatchReadBlobs. */
static int
read_batch(struct fb_reapi *g, struct fb_reapi_blob *b, int from, int to, uint64_t lim, struct fb_error *err)
{
	struct fb_pb_out req = {0};
	struct acc a = {NULL, 0, (size_t)lim + 65536};
	char why[320];
	put_instance(g, &req);
	for (int i = from; i < to; i++)
		fb_pb_out_digest(&req, 2, b[i].hex, b[i].size);
	int st = unary(g, "/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchReadBlobs", &req, on_acc, &a,
	               why, sizeof(why), err);
	int rc = st == FB_RPC_OK ? fb_reapi_decode_read(a.p, a.n, b + from, to - from, err)
	         : st < 0    ? (err ? err->code : FB_EFORMAT)
	                     : call_failed(g, "BatchReadBlobs", st, why, err);
	free(a.p);
	return rc;
}

int
fb_reapi_read_blobs(struct fb_reapi *g, struct fb_reapi_blob *b, int n, struct fb_error *err)
{
	for (int i = 0; i < n; i++) {
		b[i].got = NULL;
		b[i].got_size = 0;
		b[i].status = 0;
	}
	uint64_t lim = 0;
	int rc = n ? batch_limit(g, &lim, err) : 0;
	/* Consecutive blobs share a batch while their sizes fit; a blob alone past it streams. */
	for (int i = 0; i < n && !rc;) {
		if (b[i].size > lim) {
			rc = read_stream(g, &b[i++], err);
			continue;
		}
		int j = i;
		uint64_t sum = 0;
		while (j < n && b[j].size <= lim && sum + b[j].size <= lim)
			sum += b[j++].size;
		rc = read_batch(g, b, i, j, lim, err);
		i = j;
	}
	return rc;
}

/* FindMissingBlobs over b[0..n): sets each one's missing. */
static int
find_missing(struct fb_reapi *g, struct fb_reapi_blob *b, int n, struct fb_error *err)
{
	struct fb_pb_out req = {0};
	struct acc a = {NULL, 0, 65536};
	char why[320];
	put_instance(g, &req);
	for (int i = 0; i < n; i++)
		fb_pb_out_digest(&req, 2, b[i].hex, b[i].size);
	int st = unary(g, "/build.bazel.remote.execution.v2.ContentAddressableStorage/FindMissingBlobs", &req, on_acc,
	               &a, why, sizeof(why), err);
	int rc = st == FB_RPC_OK ? fb_reapi_decode_missing(a.p, a.n, b, n, err)
	         : st < 0    ? (err ? err->code : FB_EFORMAT)
	                     : call_failed(g, "FindMissingBlobs", st, why, err);
	free(a.p);
	return rc;
}

/* The missing ones of b[from..to) in one BatchUpdateBlobs; each must come back OK. */
static int
write_batch(struct fb_reapi *g, struct fb_reapi_blob *b, int from, int to, uint64_t *sent, struct fb_error *err)
{
	struct fb_pb_out req = {0};
	struct acc a = {NULL, 0, 65536};
	char why[320];
	put_instance(g, &req);
	for (int i = from; i < to; i++) {
		b[i].status = -1; /* no answer for it yet */
		if (!b[i].missing)
			continue;
		struct fb_pb_out one = {0};
		fb_pb_out_digest(&one, 1, b[i].hex, b[i].size);
		fb_pb_out_bytes(&one, 2, b[i].put, (size_t)b[i].size);
		fb_pb_out_bytes(&req, 2, one.p, one.n);
		req.oom |= one.oom;
		free(one.p);
	}
	int st = unary(g, "/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchUpdateBlobs", &req, on_acc,
	               &a, why, sizeof(why), err);
	int rc = st == FB_RPC_OK ? fb_reapi_decode_update(a.p, a.n, b + from, to - from, err)
	         : st < 0    ? (err ? err->code : FB_EFORMAT)
	                     : call_failed(g, "BatchUpdateBlobs", st, why, err);
	free(a.p);
	for (int i = from; i < to && !rc; i++) {
		if (!b[i].missing)
			continue;
		if (b[i].status != FB_RPC_OK)
			return fb_seterr(err, FB_EIO, "remote cache %.200s: BatchUpdateBlobs: blob %s: %s%s%.200s", g->url,
			                 b[i].hex, b[i].status < 0 ? "no answer" : fb_reapi_code_name(b[i].status),
			                 b[i].status < 0 ? "" : ": ", b[i].status < 0 ? "" : b[i].why);
		*sent += b[i].size;
	}
	return rc;
}

/* A random upload id (ByteStream wants a UUID in the resource name). */
static void
upload_id(char out[37])
{
	unsigned char r[16] = {0};
	FILE *f = fopen("/dev/urandom", "rb");
	if (!f || fread(r, 1, sizeof(r), f) != sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 20;
		memcpy(r, &x, sizeof(x));
	}
	if (f)
		fclose(f);
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	static const char hx[] = "0123456789abcdef";
	for (int i = 0, o = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hx[r[i] >> 4];
		out[o++] = hx[r[i] & 15];
	}
	out[36] = 0;
}

/* One blob through ByteStream.Write in WRITE_CHUNK pieces; the resource name goes with the
 * first, finish_write with the last. */
static int
write_stream(struct fb_reapi *g, struct fb_reapi_blob *b, uint64_t *sent, struct fb_error *err)
{
	char id[37], name[512], why[320];
	upload_id(id);
	resource(g, name, sizeof(name), id, b);
	size_t total = (size_t)b->size, nmsg = total / WRITE_CHUNK + 1;
	struct fb_pb_out *req = calloc(nmsg, sizeof(*req));
	if (!req)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int oom = 0;
	for (size_t i = 0; i < nmsg; i++) {
		size_t off = i * (size_t)WRITE_CHUNK, k = total - off < WRITE_CHUNK ? total - off : WRITE_CHUNK;
		if (i == 0)
			fb_pb_out_bytes(&req[i], 1, name, strlen(name));
		if (off)
			fb_pb_out_varint(&req[i], 2, off);
		if (i == nmsg - 1)
			fb_pb_out_varint(&req[i], 3, 1);
		fb_pb_out_bytes(&req[i], 10, b->put + off, k);
		oom |= req[i].oom;
	}
	struct acc a = {NULL, 0, 65536};
	int st = oom ? -1 : rpc(g, "/google.bytestream.ByteStream/Write", req, (int)nmsg, on_acc, &a, why, sizeof(why), err);
	for (size_t i = 0; i < nmsg; i++)
		free(req[i].p);
	free(req);
	free(a.p);
	if (oom)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	if (st < 0)
		return err ? err->code : FB_EFORMAT;
	if (st != FB_RPC_OK)
		return call_failed(g, "ByteStream.Write", st, why, err);
	*sent += b->size;
	return 0;
}

int
fb_reapi_write_blobs(struct fb_reapi *g, struct fb_reapi_blob *b, int n, uint64_t *sent, struct fb_error *err)
{
	*sent = 0;
	uint64_t lim = 0;
	int rc = find_missing(g, b, n, err);
	for (int i = 0; i < n; i++)
		b[i].missing |= b[i].force;
	int any = 0;
	for (int i = 0; i < n; i++)
		any |= b[i].missing;
	if (!rc && any)
		rc = batch_limit(g, &lim, err);
	for (int i = 0; i < n && !rc;) {
		if (b[i].size > lim) {
			rc = b[i].missing ? write_stream(g, &b[i], sent, err) : 0;
			i++;
			continue;
		}
		int j = i;
		uint64_t sum = 0;
		any = 0;
		while (j < n && b[j].size <= lim && sum + b[j].size + PER_BLOB <= lim) {
			sum += b[j].size + PER_BLOB;
			any |= b[j++].missing;
		}
		rc = any ? write_batch(g, b, i, j, sent, err) : 0;
		i = j;
	}
	return rc;
}

/* The channel's deadline is lent for one call: rpc() reads it from g, and the cache's own
 * calls keep theirs. */
int
fb_reapi_call(struct fb_reapi *g, const char *method, const unsigned char *req, size_t n, long timeout_ms,
              fb_reapi_msg_fn on_msg, void *ctx, char *why, size_t wsize, struct fb_error *err)
{
	struct fb_pb_out one = {(unsigned char *)req, n, n, 0};
	long keep = g->timeout_ms;
	if (timeout_ms > 0)
		g->timeout_ms = timeout_ms;
	int st = rpc(g, method, &one, 1, on_msg, ctx, why, wsize, err);
	g->timeout_ms = keep;
	return st;
}

const char *
fb_reapi_instance(const struct fb_reapi *g)
{
	return g ? g->instance : "";
}
#else
int
fb_reapi_open(const struct fb_remote_open_opts *o, struct fb_reapi **out, struct fb_error *err)
{
	(void)o;
	*out = NULL;
	return fb_seterr(err, FB_ENOTOOL, "remote cache off: grpc:// needs gRPC (libgrpc), which this fatbuild "
	                 "was built without");
}

void
fb_reapi_close(struct fb_reapi *g)
{
	(void)g;
}

void
fb_reapi_close_nowait(struct fb_reapi *g)
{
	(void)g;
}

void
fb_reapi_idle(struct fb_reapi *g)
{
	(void)g;
}

int
fb_reapi_get_action(struct fb_reapi *g, const char *key, unsigned char **rec, size_t *n, struct fb_error *err)
{
	(void)g, (void)key, (void)rec, (void)n;
	return fb_seterr(err, FB_ENOTOOL, "no gRPC");
}

int
fb_reapi_put_action(struct fb_reapi *g, const char *key, const unsigned char *rec, size_t n, struct fb_error *err)
{
	(void)g, (void)key, (void)rec, (void)n;
	return fb_seterr(err, FB_ENOTOOL, "no gRPC");
}

int
fb_reapi_read_blobs(struct fb_reapi *g, struct fb_reapi_blob *b, int n, struct fb_error *err)
{
	(void)g, (void)b, (void)n;
	return fb_seterr(err, FB_ENOTOOL, "no gRPC");
}

int
fb_reapi_write_blobs(struct fb_reapi *g, struct fb_reapi_blob *b, int n, uint64_t *sent, struct fb_error *err)
{
	(void)g, (void)b, (void)n, (void)sent;
	return fb_seterr(err, FB_ENOTOOL, "no gRPC");
}

int
fb_reapi_call(struct fb_reapi *g, const char *method, const unsigned char *req, size_t n, long timeout_ms,
              fb_reapi_msg_fn on_msg, void *ctx, char *why, size_t wsize, struct fb_error *err)
{
	(void)g, (void)method, (void)req, (void)n, (void)timeout_ms, (void)on_msg, (void)ctx;
	snprintf(why, wsize, "no gRPC");
	fb_seterr(err, FB_ENOTOOL, "no gRPC");
	return -1;
}

const char *
fb_reapi_instance(const struct fb_reapi *g)
{
	(void)g;
	return "";
}
#endif
