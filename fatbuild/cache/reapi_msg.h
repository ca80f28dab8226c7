/* reapi_msg.h: what the REAPI cache reads of a server (reapi_msg.c): the grpc:// URL, the
 * answers and the status names, and the blob of a batch both sides of a call fill. Below the
 * calls (reapi.c); plain C, without gRPC (fuzz_reapi runs the decoders). Private to
 * libfatbuild. */
#ifndef FB_CACHE_REAPI_MSG_H
#define FB_CACHE_REAPI_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "sink.h"

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
