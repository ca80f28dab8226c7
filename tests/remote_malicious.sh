#!/usr/bin/env bash
# remote_malicious.sh: a remote cache that attacks (tests/remote/evil_server.py on loopback,
# docs/hardening.md "Attacks on the caches"). For each attack, `fatbuild compile` (two kernels,
# "7.5 8.0+PTX": four jobs) and `fatbuild build` (a kernel and four host edges through
# `fatbuild edge`) from an empty local cache must succeed with the bytes of a build without any
# cache, and again with the remote off and the local cache the attack left (nothing bad was
# kept). The attacks: another key's record (swap); an sm_90 cubin and compute_90 PTX under
# sm_75/sm_80 keys; compute_90 PTX beside the right sm_80 cubin; an x86 object as the cubin;
# an sm_90 cubin as a host object; manifests
# naming /dev/zero, a FIFO, a file outside the build's roots (the server learns nothing: the
# client never asks for the key that file's content would give) and the same through
# "@B0/../.."; blobs 1 MiB longer than their record; a 256 MiB blob that never ends (the peak
# memory of the compile stays within 64 MiB of a compile without the remote); a server that
# never answers (a build of five edges opens at most -j connections and prints one warning
# line about the remote); the local cache's entries swapped between targets. Also: the URL's
# credentials never appear in a message, and an unknown FATBUILD_REMOTE_CACHE_MODE is one line
# and exit 2 from build, compile and edge, before ninja runs. Then the compile attacks again
# over REAPI (grpc://, the server through grpcio from the buildgrid venv remote_reapi uses),
# the endless blob through ByteStream.Read; that part is skipped, with a line saying so, only
# when fatbuild was built without libgrpc or pip cannot install the venv.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
fb=$FATBUILD_BIN
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time (GNU time) not installed (scripts/deps.sh)"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/tmp}/fbevil.XXXXXX")
srv_pid= gsrv_pid=
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
	[ -n "$gsrv_pid" ] && kill "$gsrv_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$t"
}
trap cleanup EXIT
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }

mkdir -p "$t/srv/blobs" "$t/src"
python3 "$FB_SOURCE_DIR/tests/remote/evil_server.py" "$t/srv" 2>"$t/srv.err" &
srv_pid=$!
for _ in $(seq 100); do [ -s "$t/srv/port" ] && break; sleep 0.1; done
[ -s "$t/srv/port" ] || { cat "$t/srv.err" >&2; echo "FAIL: the server did not start"; exit 1; }
url=http://127.0.0.1:$(cat "$t/srv/port")
srv=$t/srv
mode() { echo "$1" >"$srv/mode"; }

# two kernels for compile, one for build, four host files
for k in 1 2; do
	printf 'extern "C" __global__ void k%s(float *p) { p[threadIdx.x] *= %s.f; }\n' $k $k >"$t/src/k$k.cu"
done
for h in 1 2 3 4; do
	printf '#include <stddef.h>\n#include "h.h"\nint h%s(void) { return H + %s + (int)sizeof(size_t); }\n' $h $h >"$t/src/h$h.c"
done
printf '#define H 40\n' >"$t/src/h.h"
ksrc=("$t/src/k1.cu" "$t/src/k2.cu")
bsrc=("$t/src/k1.cu" "$t/src/h1.c" "$t/src/h2.c" "$t/src/h3.c" "$t/src/h4.c")
objs="0_k1.cu.fatbin 1_h1.c.o 2_h2.c.o 3_h3.c.o 4_h4.c.o fatbin.o"
arch="7.5 8.0+PTX"
unset FATBUILD_REMOTE_CACHE FATBUILD_REMOTE_CACHE_MODE FATBUILD_CACHE_BASEDIR
# Under ASan (scripts/test.sh's asan pass) freed memory waits in a quarantine of 256 MB, which a
# streamed download fills chunk by chunk: peak memory would count freed chunks. The bound below
# is about live memory, so the quarantine is kept small (8 MB; use-after-free is still caught
# for the most recent frees).
[ -n "${ASAN_OPTIONS+x}" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"

# compile NAME CACHE [env...]: fatbuild compile with the remote into $t/NAME.fatbin; stderr
# in $t/NAME.log, peak memory (KiB) in $t/NAME.rss
compile() {
	local name=$1 cache=$2
	shift 2
	env FATBUILD_CACHE_DIR="$t/$cache" "$@" /usr/bin/time -f %M -o "$t/$name.rss" \
		"$fb" compile -j 2 --arch-list "$arch" -o "$t/$name.fatbin" "${ksrc[@]}" 2>"$t/$name.log"
}
# build NAME CACHE [args...]: fatbuild build -j 2 into $t/NAME.so, build dir $t/NAME, its output
# in $t/NAME.log, the edge log in $t/NAME.edges; at most 120 s (a hang is a failure)
build() {
	local name=$1 cache=$2
	shift 2
	FATBUILD_CACHE_DIR=$t/$cache FATBUILD_EDGE_LOG=$t/$name.edges timeout 120 "$fb" build -j 2 --arch-list 8.0 \
		--build-dir "$t/$name" -o "$t/$name.so" "$@" "${bsrc[@]}" >"$t/$name.log" 2>&1
}
same_build() { # same_build NAME: its objects and library are the reference's
	local o
	for o in $objs; do cmp -s "$t/ref/obj/$o" "$t/$1/obj/$o" || { no "$1: obj/$o differs from the cache-less build"; return 1; }; done
	cmp -s "$t/ref.so" "$t/$1.so" || { no "$1: the library differs from the cache-less build"; return 1; }
}
show() { sed 's/^/  | /' "$1" | tail -n 20 >&2; }

# the references: no cache at all
"$fb" compile --no-cache -j 2 --arch-list "$arch" -o "$t/ref.fatbin" "${ksrc[@]}" 2>"$t/ref.log" ||
	{ show "$t/ref.log"; no "the cache-less compile failed"; exit 1; }
build ref cref --no-edge-cache || { show "$t/ref.log"; no "the cache-less build failed"; exit 1; }
/usr/bin/time -f %M -o "$t/base.rss" "$fb" compile --no-cache -j 2 --arch-list "$arch" -o "$t/base.fatbin" \
	"${ksrc[@]}" 2>/dev/null || no "the baseline compile failed"
# the wrong-kind blobs: an sm_90 cubin, compute_90 PTX, an x86-64 object
"$fb" compile --no-cache --arch-list 9.0+PTX --emit-dir "$t/emit" -o "$t/emit.fatbin" "$t/src/k1.cu" 2>/dev/null ||
	no "cannot make the sm_90 blobs"
cp "$t/emit/k1.sm_90.cubin" "$t/srv/blobs/cubin90" && cp "$t/emit/k1.compute_90.ptx" "$t/srv/blobs/ptx90"
${CC:-cc} -c -o "$t/srv/blobs/x86" "$t/src/h1.c" -I "$t/src" || no "cannot make the x86 object"

# the honest cache: what a CI job uploads
mode honest
compile fill cfill FATBUILD_REMOTE_CACHE="$url" || { show "$t/fill.log"; no "fill: compile"; }
build fillb cfillb --remote-cache "$url" || { show "$t/fillb.log"; no "fill: build"; }
[ "$(ls "$t/srv/store/ac" | wc -l)" -ge 12 ] || no "fill: want >= 12 records on the server"

# compile_attack MODE [P]: the compile from an empty cache gives the reference bytes, and the
# attack is reported; then again with the remote off and the cache the attack left. Files
# and caches are named $t/${P}c-MODE*.
compile_attack() {
	local m=$1 n=${2:-}c-$1
	mode "$m"
	compile "$n" "c$n" FATBUILD_REMOTE_CACHE="$url" || { show "$t/$n.log"; no "$n: the compile failed"; return; }
	cmp -s "$t/ref.fatbin" "$t/$n.fatbin" || { show "$t/$n.log"; no "$n: wrong bytes"; }
	grep -q 'corrupt remote cache entry' "$t/$n.log" || { show "$t/$n.log"; no "$n: the attack was not reported"; }
	compile "$n-off" "c$n" || { show "$t/$n-off.log"; no "$n, then the remote off: the compile failed"; return; }
	cmp -s "$t/ref.fatbin" "$t/$n-off.fatbin" || no "$n, then the remote off: the local cache kept a bad entry"
}
# build_attack MODE [args]: the same for a build
build_attack() {
	local m=$1
	shift
	mode "$m"
	build "b-$m" "bc-$m" --remote-cache "$url" "$@" || { show "$t/b-$m.log"; no "build under '$m' failed (or hung)"; return; }
	same_build "b-$m" || show "$t/b-$m.log"
	build "b-$m-off" "bc-$m" || { show "$t/b-$m-off.log"; no "build after '$m', remote off, failed"; return; }
	same_build "b-$m-off"
}

# 1. records copied to other keys; wrong-kind blobs under forged records
for m in swap cubin90 x86 ptx90; do compile_attack $m; done
grep -q 'PTX .target is sm_90, not the requested compute_80' "$t/c-ptx90.log" || no "ptx90: the wrong PTX was not named"
for m in swap cubin90 edgeobj; do build_attack $m; done

# 2. manifests that would hang or read outside the build: no hang, the right objects, no leak
for m in man-zero man-fifo man-outside man-dotdot man-link man-dirlink; do
	mkdir -m 700 -p "$t/b-$m" && mkfifo "$t/b-$m/evil.fifo"
	ln -s /etc/passwd "$t/b-$m/evil.link" && ln -s /etc "$t/b-$m/evil.dir"
	build_attack $m
done
grep -q '^LEAK ' "$t/srv/log" && no "a client asked for a key made from a file outside its roots: $(grep -c '^LEAK ' "$t/srv/log") leaks"

# 3. bodies longer than their record, and one without end: the right bytes, bounded memory
compile_attack oversized
mode endless
compile c-endless cc-endless FATBUILD_REMOTE_CACHE="$url" || { show "$t/c-endless.log"; no "compile under 'endless' failed"; }
cmp -s "$t/ref.fatbin" "$t/c-endless.fatbin" || no "compile under 'endless': wrong bytes"
base=$(cat "$t/base.rss") peak=$(tail -n 1 "$t/c-endless.rss")
[ "$peak" -le $((base + 65536)) ] || no "endless body: peak memory ${peak} KiB, a compile without the remote ${base} KiB"

# 4. a server that never answers: a build of five edges pays one timeout per job slot, at most,
#    and says so once; the URL's credentials are never shown
mode silent
: >"$t/srv/log"
secret_url="http://alice:s3cr3t@127.0.0.1:$(cat "$t/srv/port")/team?token=t0k3n"
FATBUILD_REMOTE_CACHE_TIMEOUT=2 build silent csilent --remote-cache "$secret_url" || { show "$t/silent.log"; no "build against a silent server failed"; }
same_build silent
conns=$(grep -c '^silent GET' "$t/srv/log")
[ "$conns" -le 2 ] || no "silent server: $conns requests in one build (want at most one per job slot, 2)"
[ "$(grep -c 'remote cache' "$t/silent.log")" -eq 1 ] || { show "$t/silent.log"; no "silent server: want exactly one line about the remote"; }
grep -q 's3cr3t\|t0k3n' "$t/silent.log" && no "the URL's credentials were printed"
grep -q '127.0.0.1' "$t/silent.log" && ! grep -q '\*\*\*' "$t/silent.log" && no "the URL was printed without *** for its credentials"
FATBUILD_REMOTE_CACHE_TIMEOUT=1 FATBUILD_REMOTE_CACHE=$secret_url "$fb" compile -v --arch-list 7.5 \
	-o "$t/v.fatbin" "$t/src/k1.cu" >"$t/v.log" 2>&1 || no "compile -v against the silent server failed"
grep -q 's3cr3t\|t0k3n' "$t/v.log" && { show "$t/v.log"; no "compile -v printed the URL's credentials"; }
FATBUILD_REMOTE_CACHE=$secret_url "$fb" env >"$t/env.log" 2>&1
grep -q 's3cr3t\|t0k3n' "$t/env.log" && no "fatbuild env printed the URL's credentials"
grep -q '\*\*\*@127.0.0.1' "$t/env.log" || { show "$t/env.log"; no "fatbuild env does not show the remote cache"; }

# 5. the local cache's entries of one kernel swapped between its targets (sm_75 and sm_80+PTX):
#    reported, removed, recompiled, the right bytes
mode honest
compile loc cloc || no "loc: compile"
python3 - "$t/cloc" "$t/ref.fatbin" <<'PY' || no "cannot swap the local entries"
import os, struct, sys
d = sys.argv[1]
ents = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if len(f) == 64]
def sm(p):  # the SM of an entry's cubin (ABI 8: e_flags bits 8-15; 7: bits 0-7)
    b = open(p, "rb").read()
    n = struct.unpack_from("<Q", b, 8)[0]
    c = b[0x40:0x40 + n]
    f = struct.unpack_from("<I", c, 0x30)[0]
    return (f >> 8) & 0xff if c[8] >= 8 else f & 0xff
by = {}
for p in ents:
    by.setdefault(sm(p), []).append(p)
a, b = sorted(by[75])[0], sorted(by[80])[0]
da, db = open(a, "rb").read(), open(b, "rb").read()
open(a, "wb").write(db)
open(b, "wb").write(da)
PY
compile loc2 cloc || { show "$t/loc2.log"; no "a local entry of another target failed the compile"; }
cmp -s "$t/ref.fatbin" "$t/loc2.fatbin" || no "a local entry of another target: wrong bytes"
grep -q 'corrupt cache entry.*removed and recompiled' "$t/loc2.log" || { show "$t/loc2.log"; no "the swapped local entries were not reported"; }

# 6. an unknown FATBUILD_REMOTE_CACHE_MODE: one line, exit 2, before anything runs
FATBUILD_REMOTE_CACHE_MODE=write "$fb" build --build-dir "$t/mode" -o "$t/mode.so" "${bsrc[@]}" >"$t/mode.log" 2>&1
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$t/mode.log")" -eq 1 ] && grep -q 'FATBUILD_REMOTE_CACHE_MODE' "$t/mode.log" ||
	{ show "$t/mode.log"; no "build with FATBUILD_REMOTE_CACHE_MODE=write: exit $rc, want 2 and one line naming it"; }
[ -e "$t/mode/build.ninja" ] && no "build with a bad mode wrote build.ninja"
FATBUILD_REMOTE_CACHE_MODE=write "$fb" compile -o "$t/mode.fatbin" "$t/src/k1.cu" >"$t/mode.log" 2>&1
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$t/mode.log")" -eq 1 ] || { show "$t/mode.log"; no "compile with FATBUILD_REMOTE_CACHE_MODE=write: exit $rc, want 2 and one line"; }
FATBUILD_REMOTE_CACHE_MODE=write "$fb" edge -o "$t/e.o" --depfile "$t/e.d" -- cc -c -o "$t/e.o" "$t/src/h1.c" \
	>"$t/mode.log" 2>&1
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$t/mode.log")" -eq 1 ] || { show "$t/mode.log"; no "edge with FATBUILD_REMOTE_CACHE_MODE=write: exit $rc, want 2 and one line"; }

# 7. REAPI: the compile attacks through a gRPC server that attacks the same way
reapi_skip=
FATBUILD_CACHE_DIR=$t/probe "$fb" compile --remote-cache grpc://127.0.0.1:1 -o "$t/probe.fatbin" "$t/src/k1.cu" \
	>/dev/null 2>"$t/probe.log"
if grep -q 'built without' "$t/probe.log"; then
	reapi_skip="fatbuild was built without libgrpc"
else
	source "$FB_SOURCE_DIR/tests/remote/buildgrid.sh"
	bgd_venv "${FB_BINARY_DIR:-$t}/buildgrid-venv" || reapi_skip="pip cannot install $bgd_pkg (for grpcio)"
fi
if [ -n "$reapi_skip" ]; then
	echo "remote_malicious: the REAPI part is skipped: $reapi_skip"
else
	mkdir -p "$t/gsrv/blobs" && cp "$t/srv/blobs/"* "$t/gsrv/blobs/"
	"$venv/bin/python" "$FB_SOURCE_DIR/tests/remote/evil_server.py" "$t/gsrv" grpc 2>"$t/gsrv.err" &
	gsrv_pid=$!
	for _ in $(seq 100); do [ -s "$t/gsrv/port" ] && break; sleep 0.1; done
	[ -s "$t/gsrv/port" ] || { cat "$t/gsrv.err" >&2; no "the gRPC server did not start"; }
	srv=$t/gsrv url=grpc://127.0.0.1:$(cat "$t/gsrv/port")
	mode honest
	compile gfill cgfill FATBUILD_REMOTE_CACHE="$url" || { show "$t/gfill.log"; no "REAPI fill: compile"; }
	[ "$(ls "$t/gsrv/store/ac" | wc -l)" -eq 4 ] || { show "$t/gfill.log"; no "REAPI fill: want 4 records on the server"; }
	for m in swap cubin90 x86 ptx90 oversized; do compile_attack $m g; done
	mode endless
	compile g-endless cg-endless FATBUILD_REMOTE_CACHE="$url" || { show "$t/g-endless.log"; no "REAPI compile under 'endless' failed"; }
	cmp -s "$t/ref.fatbin" "$t/g-endless.fatbin" || no "REAPI compile under 'endless': wrong bytes"
	grep -q 'endless GRPC ByteStream.Read' "$t/gsrv/log" || no "REAPI 'endless': the blob did not go through ByteStream.Read"
	peak=$(tail -n 1 "$t/g-endless.rss")
	[ "$peak" -le $((base + 65536)) ] || no "REAPI endless stream: peak memory ${peak} KiB, a compile without the remote ${base} KiB"
	mode silent
	FATBUILD_REMOTE_CACHE_TIMEOUT=2 compile g-silent cg-silent FATBUILD_REMOTE_CACHE="$url" ||
		{ show "$t/g-silent.log"; no "REAPI compile against a silent server failed"; }
	cmp -s "$t/ref.fatbin" "$t/g-silent.fatbin" || no "REAPI silent server: wrong bytes"
	[ "$(grep -c 'remote cache' "$t/g-silent.log")" -eq 1 ] || { show "$t/g-silent.log"; no "REAPI silent server: want one line about the remote"; }
fi

[ $fail = 0 ] && echo "remote_malicious: all checks passed"
exit $fail
