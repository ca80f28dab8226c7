"""rexec_client.py: a small REAPI v2 remote-execution client for the tests and the benchmark
(docs/remote-cache.md §9), written on BuildGrid's shipped protos and grpcio (run it with the
farm's venv: tests/remote/farm.sh's bgd_python).

  rexec_client.py URL --root DIR [--out DIR] [--prop K=V]... [--output PATH]... [--env K=V]...
                  [--timeout S] [--skip-cache] [--legacy-outputs] -- ARGV...

URL is grpc://HOST:PORT[/INSTANCE]. The input root is DIR's files (relative paths, sorted as
REAPI wants, executable bits kept); the Command runs ARGV with only the --env variables (so
PATH must be among them), output_paths the --output paths (--legacy-outputs: the deprecated
output_files instead). Uploads what the CAS lacks, sends
Execute and follows the Operation stream until it is done or --timeout seconds pass, then
writes each output file under --out and prints one JSON line:
  {"status": "OK"|gRPC code name, "message", "stage": last ExecutionStage name, "cached",
   "exit_code", "outputs": [paths], "stdout", "stderr", "worker", "uploaded": blobs sent,
   "times": {upload, queued, run, fetch} in seconds}
Exit status 0 when the call ended (whatever the action's exit code), 3 on the timeout (the
stage says where the job waited), 4 on a gRPC error."""
import argparse
import hashlib
import json
import os
import sys
import time

import grpc
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2_grpc as re_grpc
from buildgrid._protos.google.rpc import status_pb2

BATCH = 3 << 20  # under gRPC's default 4 MiB message limit


def digest_of(data):
    return re_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def tree(root, blobs):
    """The Directory message of root (files and subdirectories sorted by name), every blob it
    needs added to blobs {hash: bytes}; returns its Digest."""
    d = re_pb2.Directory()
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name)
        if os.path.isdir(p) and not os.path.islink(p):
            d.directories.add(name=name, digest=tree(p, blobs))
        elif os.path.isfile(p):
            data = open(p, "rb").read()
            dg = digest_of(data)
            blobs[dg.hash] = data
            d.files.add(name=name, digest=dg, is_executable=os.access(p, os.X_OK))
    data = d.SerializeToString()
    dg = digest_of(data)
    blobs[dg.hash] = data
    return dg


def upload(cas, instance, blobs):
    want = [digest_of(b) for b in blobs.values()]
    missing = cas.FindMissingBlobs(re_pb2.FindMissingBlobsRequest(instance_name=instance, blob_digests=want))
    batch, size = [], 0
    for dg in missing.missing_blob_digests:
        data = blobs[dg.hash]
        if batch and size + len(data) > BATCH:
            send(cas, instance, batch)
            batch, size = [], 0
        batch.append(re_pb2.BatchUpdateBlobsRequest.Request(digest=dg, data=data))
        size += len(data)
    if batch:
        send(cas, instance, batch)
    return len(missing.missing_blob_digests)


def send(cas, instance, batch):
    r = cas.BatchUpdateBlobs(re_pb2.BatchUpdateBlobsRequest(instance_name=instance, requests=batch))
    for one in r.responses:
        if one.status.code:
            raise SystemExit(f"rexec_client: BatchUpdateBlobs {one.digest.hash}: {one.status.message}")


def fetch(cas, instance, digests):
    if not digests:
        return {}
    r = cas.BatchReadBlobs(re_pb2.BatchReadBlobsRequest(instance_name=instance, digests=digests))
    return {one.digest.hash: one.data for one in r.responses if not one.status.code}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--root", required=True)
    ap.add_argument("--out")
    ap.add_argument("--prop", action="append", default=[])
    ap.add_argument("--output", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--skip-cache", action="store_true")
    ap.add_argument("--legacy-outputs", action="store_true")
    ap.add_argument("argv", nargs="+")
    return ap.parse_args()


def action_of(a, instance, blobs):
    cmd = re_pb2.Command(arguments=a.argv)
    if a.legacy_outputs:  # the deprecated fields (REAPI before v2.1), for the record of §9
        cmd.output_files.extend(sorted(a.output))
    else:
        cmd.output_paths.extend(sorted(a.output))
    for kv in sorted(a.env):
        k, v = kv.split("=", 1)
        cmd.environment_variables.add(name=k, value=v)
    props = sorted(tuple(kv.split("=", 1)) for kv in a.prop)
    platform = re_pb2.Platform(properties=[re_pb2.Platform.Property(name=k, value=v) for k, v in props])
    cmd.platform.CopyFrom(platform)  # REAPI v2.2 moved it to the Action; servers read either
    cdata = cmd.SerializeToString()
    blobs[digest_of(cdata).hash] = cdata
    act = re_pb2.Action(command_digest=digest_of(cdata), input_root_digest=tree(a.root, blobs),
                        do_not_cache=False, platform=platform)
    adata = act.SerializeToString()
    blobs[digest_of(adata).hash] = adata
    return digest_of(adata)


def execute(ex, instance, adg, a, res):
    """Follows Execute's Operation stream, res["stage"] the last stage it named (a gRPC error
    or the deadline leaves it there); returns the ExecuteResponse, the Operation's error
    Status, or None."""
    t0, times = time.monotonic(), res["times"]
    req = re_pb2.ExecuteRequest(instance_name=instance, action_digest=adg, skip_cache_lookup=a.skip_cache)
    for op in ex.Execute(req, timeout=a.timeout):
        md = re_pb2.ExecuteOperationMetadata()
        if op.metadata.Unpack(md):
            name = re_pb2.ExecutionStage.Value.Name(md.stage)
            if name == "EXECUTING" and res["stage"] != "EXECUTING":
                times["queued"] = time.monotonic() - t0
            res["stage"] = name
        if op.done:
            if op.HasField("error"):
                return op.error
            resp = re_pb2.ExecuteResponse()
            op.response.Unpack(resp)
            return resp
    return None


def main():
    a = parse_args()
    target, _, instance = a.url.removeprefix("grpc://").partition("/")
    ch = grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", 64 << 20)])
    cas, ex = re_grpc.ContentAddressableStorageStub(ch), re_grpc.ExecutionStub(ch)
    times, blobs, t0 = {}, {}, time.monotonic()
    res = {"status": "OK", "message": "", "stage": "UNKNOWN", "cached": False, "exit_code": None,
           "outputs": [], "stdout": "", "stderr": "", "times": times}
    rc = 0
    try:
        adg = action_of(a, instance, blobs)
        res["uploaded"] = upload(cas, instance, blobs)
        times["upload"] = time.monotonic() - t0
        t1 = time.monotonic()
        resp = execute(ex, instance, adg, a, res)
        times["run"] = time.monotonic() - t1 - times.get("queued", 0)
        if isinstance(resp, status_pb2.Status) or (resp is not None and resp.status.code):
            st = resp if isinstance(resp, status_pb2.Status) else resp.status
            codes = {c.value[0]: c.name for c in grpc.StatusCode}
            res["status"], res["message"] = codes.get(st.code, str(st.code)), st.message
            rc = 4
        elif resp is not None:
            rc = collect(cas, instance, resp, a, res, times)
    except grpc.RpcError as e:
        res["status"], res["message"] = e.code().name, e.details()
        rc = 3 if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED else 4
    print(json.dumps(res))
    return rc


def collect(cas, instance, resp, a, res, times):
    t = time.monotonic()
    ar = resp.result
    res["cached"], res["exit_code"] = resp.cached_result, ar.exit_code
    res["worker"] = ar.execution_metadata.worker
    want = [f.digest for f in ar.output_files]
    for name in ("stdout_digest", "stderr_digest"):
        if getattr(ar, name).hash:
            want.append(getattr(ar, name))
    got = fetch(cas, instance, want)
    res["stdout"] = (ar.stdout_raw or got.get(ar.stdout_digest.hash, b"")).decode(errors="replace")
    res["stderr"] = (ar.stderr_raw or got.get(ar.stderr_digest.hash, b"")).decode(errors="replace")
    for f in ar.output_files:
        res["outputs"].append(f.path)
        if a.out:
            p = os.path.join(a.out, f.path)
            os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
            with open(p, "wb") as w:
                w.write(got[f.digest.hash])
    times["fetch"] = time.monotonic() - t
    return 0


if __name__ == "__main__":
    sys.exit(main())
