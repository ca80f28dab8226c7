"""bot.py: a test bot for the farm of tests/remote/farm.sh (docs/remote-cache.md §9), what
buildbox-worker does, in short: it holds a session with BuildGrid's Bots service
(google.devtools.remoteworkers.v1test2) and hands each lease to the real buildbox-run, which
stages the input root from a buildbox-casd proxy in front of BuildGrid's CAS, runs the command
in bubblewrap and uploads the outputs, then answers the lease COMPLETED with Any(ActionResult).

  bot.py URL/INSTANCE --name NAME --prop K=V... --casd unix:SOCK --work DIR -- RUNNER [ARGS...]

URL is grpc://HOST:PORT; each --prop is a platform property of the bot's primary device
(OSFamily, ISA, fbtest: what the scheduler matches jobs against). One lease at a time. Each
run is one line in the bot's log: "lease ID: exit N" (or the runner's failure). A session
BuildGrid no longer has (it drops one it has not heard from for bot-session-keepalive-timeout,
as after the server itself was stopped that long) is made again, as a worker would."""
import argparse
import os
import subprocess
import sys
import time

import grpc
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2_grpc as re_grpc
from buildgrid._protos.google.devtools.remoteworkers.v1test2 import bots_pb2, bots_pb2_grpc, worker_pb2
from buildgrid._protos.google.rpc import code_pb2, status_pb2


# what BuildGrid answers about a bot session it no longer has
LOST = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.DATA_LOSS)


def action_of(lease, cas, instance):
    """The lease's Action: the payload is the Action itself or its Digest (BuildGrid sends either)."""
    act = re_pb2.Action()
    if lease.payload.Is(re_pb2.Action.DESCRIPTOR):
        lease.payload.Unpack(act)
        return act
    dg = re_pb2.Digest()
    lease.payload.Unpack(dg)
    r = cas.BatchReadBlobs(re_pb2.BatchReadBlobsRequest(instance_name=instance, digests=[dg]))
    act.ParseFromString(r.responses[0].data)
    return act


def run(lease, a, cas, instance):
    """buildbox-run on the lease's Action; sets the lease COMPLETED with its ActionResult."""
    act = action_of(lease, cas, instance)
    path, out = os.path.join(a.work, "action"), os.path.join(a.work, "result")
    with open(path, "wb") as f:
        f.write(act.SerializeToString())
    if os.path.exists(out):
        os.unlink(out)
    argv = a.runner + [f"--remote={a.casd}", f"--action={path}", f"--action-result={out}"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lease.state = bots_pb2.LeaseState.COMPLETED
    if p.returncode != 0 or not os.path.exists(out):
        msg = p.stdout.decode(errors="replace")[-2000:]
        print(f"lease {lease.id}: runner failed ({p.returncode}): {msg}", flush=True)
        lease.status.CopyFrom(status_pb2.Status(code=code_pb2.INTERNAL, message=msg))
        return
    ar = re_pb2.ActionResult()
    ar.ParseFromString(open(out, "rb").read())
    ar.execution_metadata.worker = a.name
    lease.result.Pack(ar)
    lease.status.CopyFrom(status_pb2.Status(code=code_pb2.OK))
    print(f"lease {lease.id}: exit {ar.exit_code}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--name", required=True)
    ap.add_argument("--prop", action="append", default=[])
    ap.add_argument("--casd", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("runner", nargs="+")
    a = ap.parse_args()
    target, _, instance = a.url.removeprefix("grpc://").partition("/")
    ch = grpc.insecure_channel(target)
    bots, cas = bots_pb2_grpc.BotsStub(ch), re_grpc.ContentAddressableStorageStub(ch)
    dev = worker_pb2.Device(handle=a.name)
    for kv in a.prop:
        k, v = kv.split("=", 1)
        dev.properties.add(key=k, value=v)
    session = bots_pb2.BotSession(bot_id=a.name, status=bots_pb2.BotStatus.OK,
                                  worker=worker_pb2.Worker(devices=[dev]))
    fresh = session

    def create():
        # BuildGrid 0.9.1 once failed a CreateBotSession with DATA_LOSS ("Bot not found to fetch
        # expiry") beside a reaping of sessions; a worker asks again
        for i in range(20):
            try:
                s = bots.CreateBotSession(bots_pb2.CreateBotSessionRequest(parent=instance, bot_session=fresh))
                print(f"session {s.name}", flush=True)
                return s
            except grpc.RpcError as e:
                if i == 19 or e.code() not in LOST:
                    raise
                print(f"CreateBotSession: {e.code().name}: again", flush=True)
                time.sleep(0.5)

    session = create()
    while True:
        for lease in session.leases:
            if lease.state in (bots_pb2.LeaseState.PENDING, bots_pb2.LeaseState.ACTIVE):
                kind = lease.payload.type_url.rsplit(".", 1)[-1]
                print(f"lease {lease.id}: {bots_pb2.LeaseState.Name(lease.state)}, payload {kind}", flush=True)
            if lease.state == bots_pb2.LeaseState.PENDING:
                lease.state = bots_pb2.LeaseState.ACTIVE
            if lease.state == bots_pb2.LeaseState.ACTIVE:
                run(lease, a, cas, instance)
        try:
            session = bots.UpdateBotSession(bots_pb2.UpdateBotSessionRequest(name=session.name, bot_session=session),
                                            timeout=120)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:  # a long poll that outlived its deadline: ask again
                time.sleep(0.1)
            elif e.code() in LOST:
                # BuildGrid dropped the session (it heard nothing for bot-session-keepalive-timeout,
                # as when the server itself was stopped that long): a new one, as a worker would
                print(f"session {session.name} lost ({e.code().name}): a new one", flush=True)
                session = create()
            else:
                raise


if __name__ == "__main__":
    sys.exit(main())
