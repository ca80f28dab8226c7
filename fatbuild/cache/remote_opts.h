/* remote_opts.h: how the shared cache is opened (struct fb_remote_open_opts), whichever the
 * transport: remote.c over HTTP, reapi.c over REAPI on gRPC, and remote execution's channel
 * (rexec/exec.c) on the same. Private to libfatbuild. */
#ifndef FB_CACHE_REMOTE_OPTS_H
#define FB_CACHE_REMOTE_OPTS_H

#include <stdatomic.h>

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

#endif
