/* nodeadline.c: an LD_PRELOAD shim for tests/remote_reapi.sh. It gives every gRPC call the
 * program makes no deadline (grpc_channel_create_call's deadline replaced by the infinite
 * future), which is what a program sees when gRPC's deadline timer does not fire: a call to a
 * server that accepted it and never answers then waits forever, unless the program bounds
 * the wait itself (docs/remote-cache.md §8). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <grpc/grpc.h>
#include <stdint.h>

typedef grpc_call *(*create_fn)(grpc_channel *, grpc_call *, uint32_t, grpc_completion_queue *, grpc_slice,
                                const grpc_slice *, gpr_timespec, void *);

grpc_call *
grpc_channel_create_call(grpc_channel *ch, grpc_call *parent, uint32_t mask, grpc_completion_queue *cq,
                         grpc_slice method, const grpc_slice *host, gpr_timespec deadline, void *reserved)
{
	create_fn real = (create_fn)dlsym(RTLD_NEXT, "grpc_channel_create_call");
	gpr_timespec never = {INT64_MAX, 0, GPR_CLOCK_REALTIME};
	(void)deadline;
	return real(ch, parent, mask, cq, method, host, never, reserved);
}
