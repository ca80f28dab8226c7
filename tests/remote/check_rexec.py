"""check_rexec.py DIR: the messages fatbuild's remote-execution layer wrote (rexec_test encode DIR:
command, action, dir.N, and spec.json, the spec they came from) against the same messages built
independently here with the protobuf runtime and BuildGrid's compiled remote_execution.proto:
the bytes must be equal (field order, sorting, proto3 defaults), every written message must parse
without unknown fields, and the Action must name the Command and the input root by digest.
One line per check that fails; exit status 1 then."""
import hashlib
import json
import os
import sys

from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from google.protobuf import unknown_fields

d = sys.argv[1]
spec = json.load(open(os.path.join(d, "spec.json")))
source = spec["source"].encode()
bad = 0


def fail(msg):
    global bad
    print("FAIL:", msg)
    bad = 1


def digest(b):
    return re_pb2.Digest(hash=hashlib.sha256(b).hexdigest(), size_bytes=len(b))


def tree(entries, out):
    """The Directory of entries [(relpath, bytes, exec)], its subdirectories added to out
    {hash: bytes}; returns (Directory bytes)."""
    files, subs = [], {}
    for path, data, ex in entries:
        head, _, rest = path.partition("/")
        if rest:
            subs.setdefault(head, []).append((rest, data, ex))
        else:
            files.append((path, data, ex))
    dmsg = re_pb2.Directory()
    for name, data, ex in sorted(files):
        dmsg.files.add(name=name, digest=digest(data), is_executable=bool(ex))
    for name in sorted(subs):
        b = tree(subs[name], out)
        dmsg.directories.add(name=name, digest=digest(b))
    b = dmsg.SerializeToString()
    out[digest(b).hash] = b
    return b


platform = re_pb2.Platform()
for k, v in sorted(map(tuple, spec["props"])):
    platform.properties.add(name=k, value=v)
cmd = re_pb2.Command(arguments=spec["argv"], output_paths=sorted(spec["outputs"]), platform=platform)
for k, v in sorted(map(tuple, spec["env"])):
    cmd.environment_variables.add(name=k, value=v)
dirs = {}
root = tree([(p, source[:n], ex) for p, n, ex in spec["inputs"]], dirs)
act = re_pb2.Action(command_digest=digest(cmd.SerializeToString()), input_root_digest=digest(root), platform=platform)

got = {name: open(os.path.join(d, name), "rb").read() for name in os.listdir(d) if name != "spec.json"}
if got.get("command") != cmd.SerializeToString():
    fail(f"Command differs:\n  fatbuild: {got.get('command')!r}\n  protobuf: {cmd.SerializeToString()!r}")
if got.get("action") != act.SerializeToString():
    fail(f"Action differs:\n  fatbuild: {got.get('action')!r}\n  protobuf: {act.SerializeToString()!r}")
if got.get("dir.0") != root:
    fail("the first Directory is not the input root")
mine = sorted(b for name, b in got.items() if name.startswith("dir."))
if mine != sorted(dirs.values()):
    fail(f"the Directories differ: fatbuild wrote {len(mine)}, protobuf {len(dirs)}")
for name, typ in [("command", re_pb2.Command), ("action", re_pb2.Action)] + [
        (n, re_pb2.Directory) for n in got if n.startswith("dir.")]:
    m = typ()
    m.ParseFromString(got.get(name, b""))
    if len(unknown_fields.UnknownFieldSet(m)):
        fail(f"{name}: fields unknown to {typ.DESCRIPTOR.full_name}")
print(f"check_rexec: Command {len(got.get('command', b''))} bytes, Action {len(got.get('action', b''))} bytes, "
      f"{len(mine)} Directories: {'FAIL' if bad else 'equal to the protobuf runtime'}")
sys.exit(bad)
