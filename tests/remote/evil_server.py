"""evil_server.py DIR [grpc]: a loopback cache server that attacks its clients, for
tests/remote_malicious.sh: Bazel's HTTP cache protocol (docs/remote-cache.md §1), or with
"grpc" the cache half of REAPI (§8, through grpcio with raw bytes, the messages written and
read here by hand; Capabilities names no batch limit). Port in DIR/port; the attack is read
from DIR/mode before every request, so the test switches attacks without a restart; one line
per request in DIR/log ("MODE METHOD PATH"; "LEAK KEY" when a client asks for a key it could
only have computed by reading a file the server named in a manifest). DIR/store holds what
honest clients uploaded (mode "honest": PUT stores, GET serves). DIR/blobs/{cubin90,ptx90,x86}
are the wrong-kind blobs: an sm_90 cubin, compute_90 PTX, an x86-64 object.

Every forged record names the key it is served under (execution_metadata.worker =
"fatbuild KEY", docs/remote-cache.md §2): anyone who can write the remote can do that, so
only the checks of what an entry is can catch the wrong-kind ones. The modes:
  honest      a plain cache
  swap        GET ac/K serves the stored record of another key (a copy, binding and all)
  cubin90     every stored key: a record of the sm_90 cubin and compute_90 PTX
  x86         every stored key: a record with the x86 object as its cubin
  ptx90       every stored record with PTX: its own cubin, compute_90 PTX
  edgeobj     every record of a host object (edge K1): the sm_90 cubin as the object
  man-zero    manifests name /dev/zero (after their own lines)
  man-fifo    manifests name @B0/evil.fifo (the test makes that FIFO in the build dir)
  man-outside manifests name only /etc/passwd; the K1 a reader of that file would ask for is a LEAK
  man-dotdot  the same through @B0/../../../../../../../../etc/passwd
  man-link    the same through @B0/evil.link, a symbolic link to /etc/passwd (the test makes it)
  man-dirlink the same through @B0/evil.dir/passwd, evil.dir a symbolic link to /etc
  oversized   cas/ blobs come with 1 MiB more than their record says
  endless     every stored key: a record of a 256 MiB cubin whose body is an ELF header and
              zeros without end
  silent      accepts and never answers
PUTs (REAPI: uploads and records) in an attack mode are answered 200 and dropped, so the
attack outlives the client's repairs. Standard library only, and grpcio for "grpc"."""
import hashlib
import http.server
import os
import socketserver
import sys
import threading
import time

D = sys.argv[1]
STORE = os.path.join(D, "store")
PATHS = (b"fatbuild/image.cubin", b"fatbuild/image.ptx", b"fatbuild/nvrtc.log")
ENDLESS = 256 << 20
forged = {}  # hash -> bytes of blobs the server made up
lock = threading.Lock()


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ld(field, b):
    return varint(field << 3 | 2) + varint(len(b)) + b


def record(key, blobs):
    """An ActionResult: blobs maps a slot (0 cubin, 1 PTX) to (hash, size)."""
    out = b""
    for slot, (h, size) in sorted(blobs.items()):
        out += ld(2, ld(1, PATHS[slot]) + ld(2, ld(1, h.encode()) + varint(2 << 3) + varint(size)))
    return out + ld(9, ld(1, b"fatbuild " + key.encode()))


def fields(b):
    """(field, wire type, value) of one message; values of LEN fields as bytes."""
    i = 0
    while i < len(b):
        tag = shift = 0
        while True:
            c = b[i]
            i += 1
            tag |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                break
        f, wt = tag >> 3, tag & 7
        n = shift = 0
        if wt in (0, 2):
            while True:
                c = b[i]
                i += 1
                n |= (c & 0x7F) << shift
                shift += 7
                if not c & 0x80:
                    break
        if wt == 2:
            yield f, wt, b[i:i + n]
            i += n
        elif wt == 0:
            yield f, wt, n
        else:
            raise ValueError("wire type %d" % wt)


def slots(rec):
    """slot -> (hash, size) of a stored record."""
    out = {}
    for f, _, v in fields(rec):
        if f != 2:
            continue
        path, h, size = None, None, 0
        for g, _, w in fields(v):
            if g == 1:
                path = w
            elif g == 2:
                for k, _, x in fields(w):
                    if k == 1:
                        h = x.decode()
                    elif k == 2:
                        size = x
        if path in PATHS:
            out[PATHS.index(path)] = (h, size)
    return out


def add_blob(data):
    h = hashlib.sha256(data).hexdigest()
    with lock:
        forged[h] = data
    return h, len(data)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def manifest_of(rec):
    """The text of a stored edge manifest (a record of PTX only whose lines are paths), or None."""
    s = slots(rec)
    if set(s) != {1}:
        return None
    text = read(os.path.join(STORE, "cas", s[1][0]))
    lines = text.decode(errors="replace").splitlines() if text else []
    if not lines or not all(l.startswith("@B") or (l.startswith("/") and not l.startswith("//")) for l in lines):
        return None
    return text


def host_object(rec):
    """Whether a stored record is an edge's object: a cubin slot holding an x86-64 ELF."""
    s = slots(rec)
    data = read(os.path.join(STORE, "cas", s[0][0])) if 0 in s else None
    return bool(data) and data[:4] == b"\x7fELF" and data[18:20] == b"\x3e\x00"


def leak_key(k0, lines):
    """The K1 a client computes for a manifest of these lines (edgecache.c key1), each line
    read as the server itself reads /etc/passwd."""
    b = k0.encode() + b"\n"
    for line in lines:
        b += line.encode() + b" " + hashlib.sha256(read("/etc/passwd")).hexdigest().encode() + b"\n"
    return hashlib.sha256(b).hexdigest()


leaks = set()


def forge(mode, key, rec):
    """The record an attack serves for a stored key, or None to serve the stored one."""
    blobs = os.path.join(D, "blobs")
    if mode == "swap":
        keys = sorted(os.listdir(os.path.join(STORE, "ac")))
        return read(os.path.join(STORE, "ac", keys[(keys.index(key) + 1) % len(keys)]))
    if mode == "cubin90":
        return record(key, {0: add_blob(read(os.path.join(blobs, "cubin90"))),
                            1: add_blob(read(os.path.join(blobs, "ptx90")))})
    if mode == "ptx90":
        s = slots(rec)
        if 1 not in s:
            return None
        s[1] = add_blob(read(os.path.join(blobs, "ptx90")))
        return record(key, {k: v for k, v in s.items() if k < 2})
    if mode == "x86":
        return record(key, {0: add_blob(read(os.path.join(blobs, "x86")))})
    if mode == "edgeobj":
        return record(key, {0: add_blob(read(os.path.join(blobs, "cubin90")))}) if host_object(rec) else None
    if mode == "endless":
        return record(key, {0: ("e" * 64, ENDLESS)})
    man = manifest_of(rec) if mode.startswith("man-") else None
    if man is None:
        return None
    if mode == "man-zero":
        man += b"/dev/zero\n"
    elif mode == "man-fifo":
        man += b"@B0/evil.fifo\n"
    else:
        line = {"man-outside": "/etc/passwd", "man-dotdot": "@B0" + "/.." * 8 + "/etc/passwd",
                "man-link": "@B0/evil.link", "man-dirlink": "@B0/evil.dir/passwd"}[mode]
        man = (line + "\n").encode()
        with lock:
            leaks.add(leak_key(key, [line]))
    return record(key, {1: add_blob(man)})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def note(self, line):
        with lock, open(os.path.join(D, "log"), "a") as f:
            f.write(line + "\n")

    def mode(self):
        return (read(os.path.join(D, "mode")) or b"honest").decode().strip()

    def send(self, code, body=b"", length=None):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        mode = self.mode()
        self.note("%s GET %s" % (mode, self.path))
        if mode == "silent":
            time.sleep(3600)
            return
        kind, _, name = self.path.strip("/").rpartition("/")
        kind = kind.rpartition("/")[2]
        if kind == "ac" and name in leaks:
            self.note("LEAK " + name)
        stored = read(os.path.join(STORE, kind, name)) if kind in ("ac", "cas") and "/" not in name else None
        if kind == "ac" and stored is not None and mode != "honest":
            body = forge(mode, name, stored)
            return self.send(200, stored if body is None else body)
        if kind == "cas" and mode == "endless" and name == "e" * 64:
            return self.endless()
        with lock:
            body = forged.get(name) if kind == "cas" else None
        if body is None:
            body = stored
        if body is None:
            return self.send(404)
        if mode == "oversized" and kind == "cas":
            body += b"\0" * (1 << 20)
        self.send(200, body)

    def endless(self):
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        head = b"\x7fELF\x02\x01\x01\x41" + b"\0" * 8 + b"\x02\x00\xbe\x00" + b"\0" * 44
        chunk = b"\0" * (1 << 20)
        try:
            self.wfile.write(head)
            while True:
                self.wfile.write(chunk)
        except OSError:
            pass
        self.close_connection = True

    def do_PUT(self):
        mode = self.mode()
        self.note("%s PUT %s" % (mode, self.path))
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        kind, _, name = self.path.strip("/").rpartition("/")
        kind = kind.rpartition("/")[2]
        if mode == "honest" and kind in ("ac", "cas") and "/" not in name and name:
            os.makedirs(os.path.join(STORE, kind), exist_ok=True)
            with open(os.path.join(STORE, kind, name), "wb") as f:
                f.write(body)
        self.send(201 if mode == "honest" else 200)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


# ---- REAPI on gRPC: the same store and attacks ----

def note(line):
    with lock, open(os.path.join(D, "log"), "a") as f:
        f.write(line + "\n")


def mode_now():
    return (read(os.path.join(D, "mode")) or b"honest").decode().strip()


def digest_of(b):
    h, size = "", 0
    for f, _, v in fields(b):
        if f == 1:
            h = v.decode()
        elif f == 2:
            size = v
    return h, size


def digest_msg(h, size):
    return ld(1, h.encode()) + (varint(2 << 3) + varint(size) if size else b"")


def blob(h):
    with lock:
        b = forged.get(h)
    return b if b is not None else read(os.path.join(STORE, "cas", h)) if "/" not in h else None


def put_file(kind, name, data):
    os.makedirs(os.path.join(STORE, kind), exist_ok=True)
    with open(os.path.join(STORE, kind, name), "wb") as f:
        f.write(data)


def grpc_main():
    import grpc
    from concurrent import futures

    def enter(method, context):
        mode = mode_now()
        note("%s GRPC %s" % (mode, method))
        if mode == "silent":
            time.sleep(3600)
        return mode

    def get_action(req, context):
        mode = enter("GetActionResult", context)
        key = next((digest_of(v)[0] for f, _, v in fields(req) if f == 2), "")
        if key in leaks:
            note("LEAK " + key)
        stored = read(os.path.join(STORE, "ac", key)) if "/" not in key else None
        if stored is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "no record")
        body = forge(mode, key, stored) if mode != "honest" else None
        return stored if body is None else body

    def update_action(req, context):
        mode = enter("UpdateActionResult", context)
        key = next((digest_of(v)[0] for f, _, v in fields(req) if f == 2), "")
        rec = next((v for f, _, v in fields(req) if f == 3), b"")
        if mode == "honest" and key and "/" not in key:
            put_file("ac", key, rec)
        return rec

    def find_missing(req, context):
        mode = enter("FindMissingBlobs", context)
        out = b""
        for f, _, v in fields(req):
            h, size = digest_of(v) if f == 2 else ("", 0)
            if h and mode == "honest" and blob(h) is None:
                out += ld(2, digest_msg(h, size))
        return out

    def batch_update(req, context):
        mode = enter("BatchUpdateBlobs", context)
        out = b""
        for f, _, v in fields(req):
            if f != 2:
                continue
            d = next((x for g, _, x in fields(v) if g == 1), b"")
            data = next((x for g, _, x in fields(v) if g == 2), b"")
            h, _ = digest_of(d)
            if mode == "honest" and h and "/" not in h:
                put_file("cas", h, data)
            out += ld(1, ld(1, d) + ld(2, b""))
        return out

    def batch_read(req, context):
        mode = enter("BatchReadBlobs", context)
        out = b""
        for f, _, v in fields(req):
            if f != 2:
                continue
            h, size = digest_of(v)
            data = blob(h)
            if data is None:
                out += ld(1, ld(1, v) + ld(3, varint(1 << 3) + varint(5)))
                continue
            if mode == "oversized":
                data += b"\0" * (1 << 20)
            out += ld(1, ld(1, v) + ld(2, data) + ld(3, b""))
        return out

    def bs_read(req, context):
        mode = enter("ByteStream.Read", context)
        name = next((v.decode() for f, _, v in fields(req) if f == 1), "")
        h = name.split("blobs/")[-1].split("/")[0]
        if mode == "endless" and h == "e" * 64:
            chunk = ld(10, b"\x7fELF" + b"\0" * ((1 << 20) - 4))
            while context.is_active():
                yield chunk
            return
        data = blob(h)
        if data is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "no blob")
        if mode == "oversized":
            data += b"\0" * (1 << 20)
        for i in range(0, len(data), 1 << 20):
            yield ld(10, data[i:i + (1 << 20)])

    def bs_write(reqs, context):
        mode = enter("ByteStream.Write", context)
        name, data = "", b""
        for req in reqs:
            for f, _, v in fields(req):
                if f == 1:
                    name = v.decode()
                elif f == 10:
                    data += v
        h = name.split("blobs/")[-1].split("/")[0]
        if mode == "honest" and h and "/" not in h:
            put_file("cas", h, data)
        return varint(1 << 3) + varint(len(data))

    def capabilities(req, context):
        enter("GetCapabilities", context)
        return b""

    v2 = "/build.bazel.remote.execution.v2."
    table = {
        v2 + "ActionCache/GetActionResult": grpc.unary_unary_rpc_method_handler(get_action),
        v2 + "ActionCache/UpdateActionResult": grpc.unary_unary_rpc_method_handler(update_action),
        v2 + "ContentAddressableStorage/FindMissingBlobs": grpc.unary_unary_rpc_method_handler(find_missing),
        v2 + "ContentAddressableStorage/BatchUpdateBlobs": grpc.unary_unary_rpc_method_handler(batch_update),
        v2 + "ContentAddressableStorage/BatchReadBlobs": grpc.unary_unary_rpc_method_handler(batch_read),
        v2 + "Capabilities/GetCapabilities": grpc.unary_unary_rpc_method_handler(capabilities),
        "/google.bytestream.ByteStream/Read": grpc.unary_stream_rpc_method_handler(bs_read),
        "/google.bytestream.ByteStream/Write": grpc.stream_unary_rpc_method_handler(bs_write),
    }

    class Handler(grpc.GenericRpcHandler):
        def service(self, details):
            return table.get(details.method)

    opts = [("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)]
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=32), handlers=[Handler()], options=opts)
    return srv, srv.add_insecure_port("127.0.0.1:0")


os.makedirs(os.path.join(STORE, "ac"), exist_ok=True)
os.makedirs(os.path.join(STORE, "cas"), exist_ok=True)
if sys.argv[2:] == ["grpc"]:
    srv, port = grpc_main()
    srv.start()
else:
    srv = Server(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
with open(os.path.join(D, "port.tmp"), "w") as f:
    f.write(str(port))
os.rename(os.path.join(D, "port.tmp"), os.path.join(D, "port"))
if sys.argv[2:] == ["grpc"]:
    srv.wait_for_termination()
else:
    srv.serve_forever()
