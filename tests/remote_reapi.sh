#!/usr/bin/env bash
# remote_reapi.sh: the shared compile cache over REAPI v2 on gRPC (docs/remote-cache.md §8)
# against a real server: BuildGrid (pip `buildgrid`, in a venv under the build dir:
# $FB_BINARY_DIR/buildgrid-venv), started here on loopback from tests/remote/buildgrid.yml (CAS
# on disk, ActionCache in memory). Machine A compiles and uploads; machine B (empty cache,
# another source path) gets every image from the server, byte for byte, without one NVRTC run
# (counted by tests/remote/forkcount.c); a blob past the batch limit goes through ByteStream
# both ways, and one past fatbuild's own limit but within the server's (GetCapabilities) in
# batches, as BuildGrid's request log shows; grpcs:// works with a trusted certificate and
# warns once without; a corrupted CAS blob is detected and recompiled; read mode stores
# nothing on the server; the server killed in the middle of a build, a dead port, a silent
# one, and one that never answers a call while gRPC's deadline is lost (tests/remote/nodeadline.c)
# each mean local compiles and one warning. BuildGrid is started and stopped by
# tests/remote/buildgrid.sh. Skipped (77) only when buildgrid cannot be pip-installed or
# fatbuild was built without libgrpc (then grpc:// must say so).
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
fb=$FATBUILD_BIN
t=$(mktemp -d "${TMPDIR:-/tmp}/fbreapi.XXXXXX")
silent_pid=
stall_pid=
source "$FB_SOURCE_DIR/tests/remote/buildgrid.sh"
cleanup() {
	bgd_stop
	[ -n "$silent_pid" ] && kill "$silent_pid" 2>/dev/null
	[ -n "$stall_pid" ] && kill "$stall_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$t"
}
trap cleanup EXIT
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
free_port() { bgd_free_port; }

command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: openssl not installed (scripts/deps.sh)"; exit 77; }
mkdir -p "$t/probe"
FATBUILD_CACHE_DIR=$t/probe "$fb" compile --remote-cache grpc://127.0.0.1:1 -o "$t/probe/x.fatbin" \
	"$FB_SOURCE_DIR/examples/kernels/reduce.cu" >/dev/null 2>"$t/probe.log"
if grep -q 'built without' "$t/probe.log"; then
	grep -q 'warning: remote cache off: grpc:// needs gRPC (libgrpc)' "$t/probe.log" ||
		{ cat "$t/probe.log" >&2; echo "FAIL: no gRPC, but not said clearly"; exit 1; }
	echo "SKIP: fatbuild was built without libgrpc (scripts/deps.sh: libgrpc-dev)"
	exit 77
fi

bgd_venv "${FB_VENV_DIR:-$FB_BINARY_DIR}/buildgrid-venv" || { echo "SKIP: cannot pip install $bgd_pkg"; exit 77; }

objects() { find "$t/srv/cas/objects" -type f 2>/dev/null | wc -l; }

${CC:-cc} -shared -fPIC -o "$t/forkcount.so" "$FB_SOURCE_DIR/tests/remote/forkcount.c" -ldl || exit 1
${CC:-cc} -shared -fPIC -o "$t/nodeadline.so" "$FB_SOURCE_DIR/tests/remote/nodeadline.c" -ldl || exit 1
bgd_start "$t/srv" || { no "BuildGrid did not start"; exit 1; }
arch="7.5 8.0+PTX"
for m in a b/deeper/other; do
	mkdir -p "$t/$m/k"
	for f in reduce.cu softmax.cu common.cuh; do cp "$FB_SOURCE_DIR/examples/kernels/$f" "$t/$m/k/"; done
	for size in '5 << 20:big' '(4 << 20) - (40 << 10):mid'; do
		printf '__device__ char big[%s] = {1};\nextern "C" __global__ void k(char *p) { p[threadIdx.x] = big[threadIdx.x * 4099]; }\n' \
			"${size%:*}" >"$t/$m/k/${size#*:}.cu"
	done
done
# calls MARK: the methods BuildGrid was asked for since `mark` set MARK (its log's line count)
mark() { wc -l <"$t/srv/bgd.log"; }
calls() { tail -n +"$(($1 + 1))" "$t/srv/bgd.log" | sed -n 's/.*Received request\..* method="\([A-Za-z]*\)".*/\1/p'; }

source "$FB_SOURCE_DIR/tests/remote/compile.sh"
# gate_open NAME, then `FORKCOUNT_GATE=$t/gate compile ... -o $t/outNAME ... &`, then
# gate_single_threaded NAME: waits until the build's first NVRTC compile (forkcount.c holds it
# there while $t/gate exists) and checks that no fatbuild process has a thread besides its own
# while its jobs run: gRPC's threads ended before the jobs were forked (a child forked while
# one of them held a lock could hang). The caller removes $t/gate. Plain pass only (the asan
# pass cannot preload forkcount.c).
gate_open() { rm -f "$t/gate.started"; touch "$t/gate"; }
gate_single_threaded() {
	for _ in $(seq 600); do [ -e "$t/gate.started" ] && break; sleep 0.1; done
	[ -e "$t/gate.started" ] || no "$1: the build never reached NVRTC"
	local procs p n
	procs=$(pgrep -f -- "-o $t/out$1.fatbin")
	[ -n "$procs" ] || no "$1: no fatbuild process found"
	for p in $procs; do
		n=$(ls "/proc/$p/task" 2>/dev/null | wc -l)
		[ "$n" -le 1 ] || no "$1: fatbuild process $p has $n threads while its jobs run"
	done
}
# gated NAME MACHINE CACHE [compile args]: compile with the gate when forkcount.c is preloaded
# (the plain pass): gate_single_threaded checks it, then the gate opens; plain compile otherwise.
gated() {
	local name=$1
	if [ -n "${ASAN_OPTIONS:-}" ]; then
		compile "$2" "$3" "out$name" "${@:4}"
		return
	fi
	gate_open "$name"
	FORKCOUNT_GATE=$t/gate compile "$2" "$3" "out$name" "${@:4}" &
	local pid=$!
	gate_single_threaded "$name"
	rm -f "$t/gate"
	wait "$pid"
}
warnings() { grep -c 'warning: remote cache' "$t/$1.log"; }

# 1. machine A: cold, compiles everything, uploads blobs and action records
compile a A outA --remote-cache "$url" || { cat "$t/outA.log" >&2; no "A failed"; }
grep -q '4 jobs, 0 cached, 4 compiled' "$t/outA.log" || { cat "$t/outA.log" >&2; no "A summary"; }
[ "$forks" -ge 4 ] || no "A: the counter saw $forks NVRTC compiles (want >= 4): it cannot prove B's zero"
[ "$(stat_of A uploads)" = 4 ] || { cat "$t/outA.log" >&2; no "A: stats uploads $(stat_of A uploads)"; }
[ "$(objects)" -ge 4 ] || no "A: $(objects) blobs in BuildGrid's CAS (want >= 4)"
[ "$(warnings outA)" -eq 0 ] || { cat "$t/outA.log" >&2; no "A: a remote cache warning"; }

# 2. machine B: empty cache, another path: every image from the server, no NVRTC run; the
#    bearer-token header rides along as gRPC metadata (BuildGrid here ignores it)
FATBUILD_REMOTE_CACHE_HEADER="Authorization: Bearer t0ken" compile b/deeper/other B outB --remote-cache "$url" ||
	{ cat "$t/outB.log" >&2; no "B failed"; }
[ "$forks" -eq 0 ] || no "B ran NVRTC $forks times (want 0)"
[ "$(grep -c 'cached (remote)$' "$t/outB.log")" -eq 4 ] || { cat "$t/outB.log" >&2; no "B: not every job from the remote"; }
cmp -s "$t/outA.fatbin" "$t/outB.fatbin" || no "B's fatbinary differs from A's"
[ "$(stat_of B 'remote hits')" = 4 ] || no "B: stats remote hits $(stat_of B 'remote hits')"
[ "$(stat_of B entries)" = 4 ] || no "B: remote hits not kept in the local cache"

# 2b. FATBUILD_REMOTE_CACHE, the unnamed instance (its own action records: a miss, then a hit)
FATBUILD_REMOTE_CACHE=${url%/main} compile a A2 outA2 || { cat "$t/outA2.log" >&2; no "A2 failed"; }
FATBUILD_REMOTE_CACHE=${url%/main}/ compile b/deeper/other B2 outB2 || { cat "$t/outB2.log" >&2; no "B2 failed"; }
[ "$forks" -eq 0 ] || { cat "$t/outB2.log" >&2; no "B2 (unnamed instance) ran NVRTC $forks times"; }

# 2c. grpcs://: the same records over TLS, trusting the test's certificate through gRPC's
#     GRPC_DEFAULT_SSL_ROOTS_FILE_PATH; a certificate nobody trusts is one warning
GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=$t/srv/tls.crt compile b/deeper/other B3 outB3 --remote-cache "$tls_url" ||
	{ cat "$t/outB3.log" >&2; no "B3 (TLS) failed"; }
[ "$forks" -eq 0 ] || { cat "$t/outB3.log" >&2; no "B3 (TLS) ran NVRTC $forks times"; }
cmp -s "$t/outA.fatbin" "$t/outB3.fatbin" || no "B3's fatbinary differs from A's"
compile b/deeper/other B4 outB4 --remote-cache "$tls_url" || { cat "$t/outB4.log" >&2; no "B4 (untrusted TLS) failed"; }
[ "$(warnings outB4)" -eq 1 ] || { cat "$t/outB4.log" >&2; no "untrusted TLS: want one warning"; }
grep -q 'certificate verify failed' "$t/outB4.log" || { cat "$t/outB4.log" >&2; no "B4: the warning does not say why"; }
[ "$forks" -ge 4 ] || no "B4: an untrusted server's images were used"

# 3. a blob over the batch limit (a 5 MiB cubin): ByteStream Write, then Read
one_arch=8.0 files="$t/a/k/big.cu" compile a L1 outL1 --remote-cache "$url" || { cat "$t/outL1.log" >&2; no "L1 failed"; }
one_arch=8.0 files="$t/b/deeper/other/k/big.cu" compile b/deeper/other L2 outL2 --remote-cache "$url" ||
	{ cat "$t/outL2.log" >&2; no "L2 failed"; }
[ "$forks" -eq 0 ] || { cat "$t/outL2.log" >&2; no "L2: the 5 MiB image was compiled, not fetched"; }
[ "$(stat -c %s "$t/outL2.fatbin")" -gt $((5 << 20)) ] || no "L2: the image is not over 5 MiB"
cmp -s "$t/outL1.fatbin" "$t/outL2.fatbin" || no "L2's fatbinary differs from L1's"

# 3b. the batch limit is the server's (GetCapabilities; BuildGrid's is 4 MiB - 1 KiB), less
#     fatbuild's 4 KiB for the message around the blobs: a cubin between 4 MiB - 64 KiB (the
#     limit for a server that names none) and 4 MiB - 5 KiB goes up in BatchUpdateBlobs and
#     comes back in BatchReadBlobs, never through ByteStream
m0=$(mark)
one_arch=8.0 files="$t/a/k/mid.cu" compile a M1 outM1 --remote-cache "$url" || { cat "$t/outM1.log" >&2; no "M1 failed"; }
one_arch=8.0 files="$t/b/deeper/other/k/mid.cu" compile b/deeper/other M2 outM2 --remote-cache "$url" ||
	{ cat "$t/outM2.log" >&2; no "M2 failed"; }
[ "$forks" -eq 0 ] || { cat "$t/outM2.log" >&2; no "M2: the 4 MiB image was compiled, not fetched"; }
cmp -s "$t/outM1.fatbin" "$t/outM2.fatbin" || no "M2's fatbinary differs from M1's"
cubin=$(find "$t/M1" -type f -size +1024k -exec stat -c %s {} + | head -1)
[ "${cubin:-0}" -gt $(((4 << 20) - (64 << 10))) ] && [ "$cubin" -le $(((4 << 20) - (5 << 10))) ] ||
	no "M1: the cached cubin is ${cubin:-missing} bytes, outside (4 MiB - 64 KiB, 4 MiB - 5 KiB]: the step proves nothing"
calls "$m0" >"$t/calls.M"
[ "$(grep -c '^GetCapabilities$' "$t/calls.M")" -ge 2 ] || { cat "$t/calls.M" >&2; no "M: GetCapabilities not asked by both machines"; }
grep -q '^BatchUpdateBlobs$' "$t/calls.M" || { cat "$t/calls.M" >&2; no "M1: no BatchUpdateBlobs"; }
grep -q '^BatchReadBlobs$' "$t/calls.M" || { cat "$t/calls.M" >&2; no "M2: no BatchReadBlobs"; }
! grep -q '^Read$\|^Write$' "$t/calls.M" || { cat "$t/calls.M" >&2; no "M: a blob within the server's limit went through ByteStream"; }
# the 5 MiB blob of step 3 did go through ByteStream (the log names its methods so)
calls 0 | grep -q '^Write$' || no "step 3: no ByteStream Write in BuildGrid's log"

# 4. a corrupted blob in BuildGrid's disk CAS: detected, recompiled, the same output
blob=$(find "$t/srv/cas/objects" -type f -size +8k -size -1000k | head -1)
hash=$(basename "$(dirname "$blob")")$(basename "$blob")
printf 'XXXX' | dd of="$blob" bs=1 seek=100 conv=notrunc 2>/dev/null
compile b/deeper/other C outC --remote-cache "$url" || { cat "$t/outC.log" >&2; no "C failed"; }
grep -q "corrupt remote cache entry.*cas/$hash: content hashes to" "$t/outC.log" ||
	{ cat "$t/outC.log" >&2; no "the corrupt blob $hash was not reported"; }
[ "$forks" -ge 1 ] || no "C: the corrupt entry was not recompiled"
cmp -s "$t/outA.fatbin" "$t/outC.fatbin" || no "C's fatbinary differs"
[ "$(stat_of C 'corrupt entries')" = "0 local, 1 remote" ] || no "C: stats corrupt $(stat_of C 'corrupt entries')"
[ "$(warnings outC)" -eq 0 ] || { cat "$t/outC.log" >&2; no "C: a transport warning"; }

# 5. read mode stores nothing: new content misses, is compiled, and no blob or record is sent
sed -i 's/blockDim/blockDim /' "$t/a/k/reduce.cu"
o0=$(objects)
compile a D outD --remote-cache "$url" --remote-cache-mode read || { cat "$t/outD.log" >&2; no "D failed"; }
[ "$forks" -ge 2 ] || no "D: the changed kernel was not compiled"
[ "$(objects)" -eq "$o0" ] || no "read mode stored $(( $(objects) - o0 )) blobs"
[ "$(stat_of D uploads)" = 0 ] || no "read mode: stats uploads $(stat_of D uploads)"
files="$t/a/k/reduce.cu" compile a D3 outD3 --remote-cache "$url" --remote-cache-mode read || no "D3 failed"
[ "$forks" -ge 2 ] || no "D3: read mode's compile reached the server (a hit for content never uploaded)"

# 6. the server killed in the middle of a build (after the lookups, while NVRTC runs): local
#    compiles, one warning, the same output as a build without the server
#    (the pause comes from forkcount.c, which the asan pass cannot preload: there the plain
#    pass's run of this step stands)
if [ -n "${ASAN_OPTIONS:-}" ]; then
	echo "note: step 6 (server killed mid-build) runs in the plain pass only"
else
	sed -i 's/blockDim/blockDim  /' "$t/a/k/softmax.cu"
	compile a R outR || { cat "$t/outR.log" >&2; no "R (reference, no remote) failed"; }
	gate_open K
	FORKCOUNT_GATE=$t/gate compile a K outK --remote-cache "$url" &
	kpid=$!
	gate_single_threaded K
	bgd_stop
	rm -f "$t/gate"
	wait "$kpid" || { cat "$t/outK.log" >&2; no "K (server killed mid-build) failed"; }
	[ "$(warnings outK)" -eq 1 ] || { cat "$t/outK.log" >&2; no "server killed mid-build: want one warning"; }
	grep -q 'warning: remote cache grpc://.*UNAVAILABLE' "$t/outK.log" || { cat "$t/outK.log" >&2; no "K: the warning does not name UNAVAILABLE"; }
	cmp -s "$t/outR.fatbin" "$t/outK.fatbin" || no "K's fatbinary differs from a local build's"
	[ "$(stat_of K 'remote errors')" = 1 ] || no "K: stats remote errors $(stat_of K 'remote errors')"
fi
bgd_stop # the later steps want no server (stopped already after a run of step 6)

# 7. nothing listening: local compiles, one warning, same output; gRPC's reconnect timer has
#    ended before the jobs are forked
gated E b/deeper/other E --remote-cache "$url" || { cat "$t/outE.log" >&2; no "E (server down) failed"; }
[ "$(warnings outE)" -eq 1 ] || { cat "$t/outE.log" >&2; no "server down: want one warning"; }
cmp -s "$t/outA.fatbin" "$t/outE.fatbin" || no "E's fatbinary differs"
[ "$(stat_of E 'remote errors')" = 1 ] || no "E: stats remote errors $(stat_of E 'remote errors')"

# 8. a server that accepts and never answers: one deadline, then local compiles; the connection
#    attempt (gRPC's own deadline is 20 s) has ended before the jobs are forked
port=$(free_port)
silent_server "$port"
FATBUILD_REMOTE_CACHE_TIMEOUT=1 FATBUILD_REMOTE_CACHE=grpc://127.0.0.1:$port gated F b/deeper/other F ||
	{ cat "$t/outF.log" >&2; no "F (silent server) failed"; }
[ "$(warnings outF)" -eq 1 ] || { cat "$t/outF.log" >&2; no "silent server: want one warning"; }
grep -q 'DEADLINE_EXCEEDED\|UNAVAILABLE' "$t/outF.log" || { cat "$t/outF.log" >&2; no "F: the warning names no deadline"; }
cmp -s "$t/outA.fatbin" "$t/outF.fatbin" || no "F's fatbinary differs"

# 9. a server that answers HTTP/2 but never a call, and gRPC's deadline lost (a call once waited
#    minutes past it here, under load): tests/remote/nodeadline.c gives each call no deadline,
#    so only fatbuild's own bound on the wait (its deadline and 2 s) ends it; one warning, then
#    local compiles
rm -f "$t/stall.port"
"$venv/bin/python" "$FB_SOURCE_DIR/tests/remote/stall_server.py" "$t/stall.port" 2>"$t/stall.log" &
stall_pid=$!
for _ in $(seq 300); do [ -s "$t/stall.port" ] && break; sleep 0.1; done
[ -s "$t/stall.port" ] || { cat "$t/stall.log" >&2; no "the stall server did not start"; }
s0=$(date +%s)
(cd "$t/a" && FATBUILD_CACHE_DIR=$t/S FATBUILD_REMOTE_CACHE_TIMEOUT=1 LD_PRELOAD=$t/nodeadline.so \
	FATBUILD_REMOTE_CACHE=grpc://127.0.0.1:$(cat "$t/stall.port")/main timeout -k 5 120 "$fb" compile -v \
	--arch-list "$arch" -o "$t/outS.fatbin" "$t/a/k/reduce.cu" "$t/a/k/softmax.cu") 2>"$t/outS.log" ||
	{ cat "$t/outS.log" >&2; no "S (stalled server, no gRPC deadline) failed"; }
[ $(($(date +%s) - s0)) -lt 60 ] || no "S: took $(($(date +%s) - s0)) s for a 1 s timeout"
[ "$(warnings outS)" -eq 1 ] && grep -q 'DEADLINE_EXCEEDED' "$t/outS.log" ||
	{ cat "$t/outS.log" >&2; no "S: want one warning naming DEADLINE_EXCEEDED"; }
cmp -s "$t/outA.fatbin" "$t/outS.fatbin" || no "S's fatbinary differs"
kill "$stall_pid" 2>/dev/null

# 10. a bad URL is a clear error
(cd "$t/a" && FATBUILD_CACHE_DIR=$t/G "$fb" compile --remote-cache grpc://:5/x -o "$t/G.fatbin" k/reduce.cu) 2>"$t/G.log"
grep -q "remote cache URL 'grpc://:5/x': not grpc://HOST" "$t/G.log" || { cat "$t/G.log" >&2; no "a bad grpc:// URL is not named"; }

[ $fail = 0 ] && echo "remote_reapi: all checks passed"
exit $fail
