"""stall_server.py PORTFILE: a gRPC server on 127.0.0.1 (a free port, written to PORTFILE) that
accepts every call to every method and never answers it: the HTTP/2 connection is healthy,
only the answer never comes (tests/remote_reapi.sh). A call ends when its client cancels it;
the server runs until killed."""
import os
import sys
import threading
from concurrent import futures

import grpc


def hang(request, context):
    done = threading.Event()
    context.add_callback(done.set)
    done.wait(600)
    context.abort(grpc.StatusCode.UNAVAILABLE, "stall_server: gave up")


class Stall(grpc.GenericRpcHandler):
    def service(self, details):
        return grpc.unary_unary_rpc_method_handler(hang)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
server.add_generic_rpc_handlers((Stall(),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % port)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.wait_for_termination()
