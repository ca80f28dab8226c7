"""check_ac.py STORE: decodes every STORE/ac/* body with the protobuf runtime as a
build.bazel.remote.execution.v2.ActionResult (the messages built here from descriptors with
the field numbers of bazelbuild/remote-apis remote_execution.proto, no protoc needed) and checks
that each output_files digest names a STORE/cas/ blob of that size and SHA-256, and that the
record names its own key (execution_metadata.worker "fatbuild KEY", docs/remote-cache.md §2).
Prints one line per record; exit status 1 on any failure."""
import hashlib
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, unknown_fields

F = descriptor_pb2.FieldDescriptorProto
fdp = descriptor_pb2.FileDescriptorProto(name="fb_reapi_min.proto", package="build.bazel.remote.execution.v2",
                                         syntax="proto3")


def message(name, fields):
    m = fdp.message_type.add(name=name)
    for fname, num, typ, label, tname in fields:
        f = m.field.add(name=fname, number=num, type=typ, label=label)
        if tname:
            f.type_name = ".build.bazel.remote.execution.v2." + tname


OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED
message("Digest", [("hash", 1, F.TYPE_STRING, OPT, None), ("size_bytes", 2, F.TYPE_INT64, OPT, None)])
message("OutputFile", [("path", 1, F.TYPE_STRING, OPT, None), ("digest", 2, F.TYPE_MESSAGE, OPT, "Digest"),
                       ("is_executable", 4, F.TYPE_BOOL, OPT, None), ("contents", 5, F.TYPE_BYTES, OPT, None)])
message("ExecutedActionMetadata", [("worker", 1, F.TYPE_STRING, OPT, None)])
message("ActionResult", [("output_files", 2, F.TYPE_MESSAGE, REP, "OutputFile"),
                         ("exit_code", 4, F.TYPE_INT32, OPT, None), ("stdout_raw", 5, F.TYPE_BYTES, OPT, None),
                         ("stdout_digest", 6, F.TYPE_MESSAGE, OPT, "Digest"),
                         ("stderr_raw", 7, F.TYPE_BYTES, OPT, None),
                         ("stderr_digest", 8, F.TYPE_MESSAGE, OPT, "Digest"),
                         ("execution_metadata", 9, F.TYPE_MESSAGE, OPT, "ExecutedActionMetadata")])
pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
desc = pool.FindMessageTypeByName("build.bazel.remote.execution.v2.ActionResult")
ActionResult = message_factory.GetMessageClass(desc)

store = sys.argv[1]
bad = 0
names = sorted(os.listdir(os.path.join(store, "ac")))
if not names:
    print("FAIL: no ac/ records")
    sys.exit(1)
for key in names:
    body = open(os.path.join(store, "ac", key), "rb").read()
    ar = ActionResult()
    try:
        ar.ParseFromString(body)
    except Exception as e:  # DecodeError
        print(f"FAIL ac/{key}: not an ActionResult: {e}")
        bad = 1
        continue
    if len(unknown_fields.UnknownFieldSet(ar)):
        print(f"FAIL ac/{key}: fields outside the ActionResult subset fatbuild writes")
        bad = 1
    if ar.SerializeToString() != body:
        print(f"FAIL ac/{key}: does not re-serialize to the same bytes")
        bad = 1
    if len(key) != 64 or key.strip("0123456789abcdef"):
        print(f"FAIL ac/{key}: the key is not 64 lowercase hex")
        bad = 1
    if ar.execution_metadata.worker != "fatbuild " + key:
        print(f"FAIL ac/{key}: names the key '{ar.execution_metadata.worker}', not its own")
        bad = 1
    paths = [f.path for f in ar.output_files]
    if ar.exit_code != 0 or not paths or len(set(paths)) != len(paths) or not set(paths) <= {
            "fatbuild/image.cubin", "fatbuild/image.ptx", "fatbuild/nvrtc.log"}:
        print(f"FAIL ac/{key}: exit_code {ar.exit_code}, output files {paths}")
        bad = 1
    for f in ar.output_files:
        blob = os.path.join(store, "cas", f.digest.hash)
        if not os.path.isfile(blob):
            print(f"FAIL ac/{key}: {f.path}: no blob cas/{f.digest.hash}")
            bad = 1
            continue
        data = open(blob, "rb").read()
        if len(data) != f.digest.size_bytes or hashlib.sha256(data).hexdigest() != f.digest.hash:
            print(f"FAIL ac/{key}: {f.path}: cas/{f.digest.hash} has {len(data)} bytes, another SHA-256 or size")
            bad = 1
    print(f"ac/{key[:12]}: " + ", ".join(f"{f.path} {f.digest.size_bytes}" for f in ar.output_files))
sys.exit(bad)
