#!/usr/bin/env bash
# remote_cache.sh: the shared compile cache against a real HTTP cache server (nginx with its
# WebDAV module on loopback, started here with its own config under a temporary directory).
# Machine A compiles and uploads; machine B (empty cache, another source path, same content)
# gets every image from the server, byte for byte, without one NVRTC run (counted by an
# LD_PRELOAD counter of nvrtcCompileProgram calls); a corrupted blob or an undecodable ac/
# record on the server is detected and recompiled; a dead or silent server means local compiles and one warning;
# relocatable code (--rdc, LTO-IR) is shared as images are; read-only mode never PUTs; paths
# stay in the key where they reach the output (-lineinfo), and FATBUILD_CACHE_BASEDIR lets
# include directories outside the source's own be shared.
# Every ac/ record A stored is decoded by the real protobuf runtime (pip `protobuf`, in a venv
# under the build dir: $FB_BINARY_DIR/remote-venv) as a Bazel ActionResult whose output files
# name the cas/ blobs by size and SHA-256 (tests/remote/check_ac.py); no pip means FAIL.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
fb=$FATBUILD_BIN
t=$(mktemp -d "${TMPDIR:-/tmp}/fbremote.XXXXXX")
source "$FB_SOURCE_DIR/tests/remote/nginx.sh"
silent_pid=
cleanup() {
	nginx_stop
	[ -n "$silent_pid" ] && kill "$silent_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$t"
}
trap cleanup EXIT
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }

command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "SKIP: nginx not installed (scripts/deps.sh)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
${CC:-cc} -shared -fPIC -o "$t/forkcount.so" "$FB_SOURCE_DIR/tests/remote/forkcount.c" -ldl || exit 1
nginx_start "$t/srv" || { no "nginx did not start"; exit 1; }
url=$NGINX_URL
arch="7.5 8.0+PTX"
for m in a b/deeper/other; do
	mkdir -p "$t/$m/k"
	for f in reduce.cu softmax.cu common.cuh; do cp "$FB_SOURCE_DIR/examples/kernels/$f" "$t/$m/k/"; done
done

source "$FB_SOURCE_DIR/tests/remote/compile.sh"
puts() { grep -c '"PUT ' "$t/srv/logs/access.log"; }

# 1. machine A: cold, compiles everything and uploads
compile a A outA --remote-cache "$url" || { cat "$t/outA.log" >&2; no "A failed"; }
grep -q '4 jobs, 0 cached, 4 compiled' "$t/outA.log" || { cat "$t/outA.log" >&2; no "A summary"; }
[ "$forks" -ge 4 ] || no "A: the counter saw $forks NVRTC compiles (want >= 4): it cannot prove B's zero"
[ "$(ls "$t/srv/store/ac" | wc -l)" -eq 4 ] || no "A: want 4 action records on the server, got $(ls "$t/srv/store/ac" | wc -l)"
[ "$(stat_of A uploads)" = 4 ] || no "A: stats uploads $(stat_of A uploads)"
[ "$(stat_of A 'misses (compiled)')" = 4 ] || no "A: stats misses $(stat_of A 'misses (compiled)')"
# ...as Bazel ActionResult protobufs naming blobs the server holds
pb="protobuf==7.36.2"
venv=${FB_VENV_DIR:-$FB_BINARY_DIR}/remote-venv
if [ "$(cat "$venv/.pkgs" 2>/dev/null)" != "$pb" ]; then
	rm -rf "$venv"
	{ python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "$pb" &&
		echo "$pb" >"$venv/.pkgs"; } || no "pip install $pb into $venv (the protobuf check cannot run)"
fi
"$venv/bin/python" "$FB_SOURCE_DIR/tests/remote/check_ac.py" "$t/srv/store" >"$t/check_ac.log" 2>&1 ||
	{ cat "$t/check_ac.log" >&2; no "A's ac/ records are not valid ActionResults naming their cas/ blobs"; }

# 2. machine B: empty cache, another path, same content: all from the remote, no NVRTC run
compile b/deeper/other B outB --remote-cache "$url" || { cat "$t/outB.log" >&2; no "B failed"; }
[ "$forks" -eq 0 ] || no "B ran NVRTC $forks times (want 0)"
[ "$(grep -c 'cached (remote)$' "$t/outB.log")" -eq 4 ] || { cat "$t/outB.log" >&2; no "B: not every job from the remote"; }
cmp -s "$t/outA.fatbin" "$t/outB.fatbin" || no "B's fatbinary differs from A's"
[ "$(stat_of B 'remote hits')" = 4 ] || no "B: stats remote hits $(stat_of B 'remote hits')"
[ "$(stat_of B entries)" = 4 ] || no "B: remote hits not kept in the local cache"
# ...and the second time from B's local cache, without asking the server
n0=$(wc -l <"$t/srv/logs/access.log")
compile b/deeper/other B outB2 --remote-cache "$url" || no "B warm failed"
[ "$(grep -c 'cached$' "$t/outB2.log")" -eq 4 ] || no "B warm: not all local hits"
[ "$(wc -l <"$t/srv/logs/access.log")" -eq "$n0" ] || no "B warm asked the server"
[ "$(stat_of B 'local hits')" = 4 ] || no "B: stats local hits $(stat_of B 'local hits')"

# 2b. fatbuild build --remote-cache: its NVRTC edges (one per target) ask the server too
FATBUILD_CACHE_DIR=$t/Bb "$fb" build --remote-cache "$url" --arch-list 7.5 --build-dir "$t/bb" -o "$t/libbb.so" \
	"$t/b/deeper/other/k/reduce.cu" >"$t/bb.log" 2>&1 || { cat "$t/bb.log" >&2; no "build --remote-cache failed"; }
[ "$(stat_of Bb 'remote hits')" = 1 ] || { cat "$t/bb.log" >&2; no "build --remote-cache: $(stat_of Bb 'remote hits') remote hits (want 1)"; }
[ "$(stat_of Bb 'misses (compiled)')" = 0 ] || no "build --remote-cache compiled $(stat_of Bb 'misses (compiled)') jobs"

# 3. a corrupted blob on the server: detected, recompiled, the same output, repaired by the upload
blob=$(ls -S "$t/srv/store/cas" | head -1)
printf 'XXXX' | dd of="$t/srv/store/cas/$blob" bs=1 seek=100 conv=notrunc 2>/dev/null
compile b/deeper/other C outC --remote-cache "$url" || { cat "$t/outC.log" >&2; no "C failed"; }
grep -q "corrupt remote cache entry.*cas/$blob" "$t/outC.log" || { cat "$t/outC.log" >&2; no "corrupt blob not reported"; }
[ "$forks" -ge 1 ] || no "C: the corrupt entry was not recompiled"
cmp -s "$t/outA.fatbin" "$t/outC.fatbin" || no "C's fatbinary differs"
[ "$(stat_of C 'corrupt entries')" = "0 local, 1 remote" ] || no "C: stats corrupt $(stat_of C 'corrupt entries')"
[ "$(sha256sum <"$t/srv/store/cas/$blob" | cut -c1-64)" = "$blob" ] || no "the upload did not repair the blob"

# 3b. an ac/ body that is not an ActionResult (here: a record in an older text format) is a
#     miss: reported, compiled locally, the same output, replaced by the upload
rec=$(ls "$t/srv/store/ac" | head -1)
printf 'fatbuild-ac 1\ncubin %s 1\n' "$rec" >"$t/srv/store/ac/$rec"
compile b/deeper/other C2 outC2 --remote-cache "$url" || { cat "$t/outC2.log" >&2; no "C2 failed"; }
grep -q "corrupt remote cache entry.*remote action record ac/$rec" "$t/outC2.log" ||
	{ cat "$t/outC2.log" >&2; no "an undecodable ac/ record not reported"; }
[ "$forks" -ge 1 ] || no "C2: the undecodable record was not recompiled"
cmp -s "$t/outA.fatbin" "$t/outC2.fatbin" || no "C2's fatbinary differs"
"$venv/bin/python" "$FB_SOURCE_DIR/tests/remote/check_ac.py" "$t/srv/store" >"$t/check_ac2.log" 2>&1 ||
	{ cat "$t/check_ac2.log" >&2; no "the upload did not replace the undecodable record"; }

# 3c. a record that names no key (an older fatbuild's, docs/remote-cache.md §2) is a plain miss:
#     not reported, compiled, and replaced by the upload with one that names its key
rec=$(ls "$t/srv/store/ac" | head -1)
head -c $(($(stat -c %s "$t/srv/store/ac/$rec") - 77)) "$t/srv/store/ac/$rec" >"$t/unbound"
[ "$(tail -c 77 "$t/srv/store/ac/$rec" | head -c 13 | od -An -c | tr -d ' ')" = 'J''K\nIfatbuild' ] ||
	no "a record does not end with the execution_metadata that names its key"
cp "$t/unbound" "$t/srv/store/ac/$rec"
compile b/deeper/other C3 outC3 --remote-cache "$url" || { cat "$t/outC3.log" >&2; no "C3 failed"; }
grep -q "corrupt" "$t/outC3.log" && { cat "$t/outC3.log" >&2; no "a record that names no key was reported as damaged"; }
[ "$forks" -ge 1 ] && [ "$(stat_of C3 'remote misses')" -ge 1 ] || no "C3: a record that names no key was not a miss"
cmp -s "$t/outA.fatbin" "$t/outC3.fatbin" || no "C3's fatbinary differs"
"$venv/bin/python" "$FB_SOURCE_DIR/tests/remote/check_ac.py" "$t/srv/store" >"$t/check_ac3.log" 2>&1 ||
	{ cat "$t/check_ac3.log" >&2; no "the upload did not replace the record that names no key"; }

# 3d. relocatable code (--rdc: PTX targets as LTO-IR, which an entry holds where a cubin goes):
#     machine B takes every image from the remote as it does without, the PTX targets' too
compile a L1 outL1 --remote-cache "$url" --rdc || { cat "$t/outL1.log" >&2; no "L1 (--rdc) failed"; }
compile b/deeper/other L2 outL2 --remote-cache "$url" --rdc || { cat "$t/outL2.log" >&2; no "L2 (--rdc) failed"; }
[ "$forks" -eq 0 ] || { cat "$t/outL2.log" >&2; no "--rdc: B ran NVRTC $forks times (want 0: the LTO-IR of a PTX target is a remote hit too)"; }
cmp -s "$t/outL1.fatbin" "$t/outL2.fatbin" || no "--rdc: B's fatbinary differs from A's"

# 4. read-only mode never PUTs
sed -i 's/blockDim/blockDim /' "$t/a/k/reduce.cu" # new content: misses on the server
p0=$(puts)
compile a D outD --remote-cache "$url" --remote-cache-mode read || { cat "$t/outD.log" >&2; no "D failed"; }
[ "$forks" -ge 2 ] || no "D: the changed kernel was not compiled"
[ "$(puts)" -eq "$p0" ] || no "read-only mode sent $(( $(puts) - p0 )) PUTs"
FATBUILD_REMOTE_CACHE_MODE=read compile a D2 outD2 --remote-cache "$url" || no "D2 failed"
[ "$(puts)" -eq "$p0" ] || no "FATBUILD_REMOTE_CACHE_MODE=read sent PUTs"
(cd "$t/a" && "$fb" compile --remote-cache-mode bogus -o x.fatbin k/reduce.cu) 2>/dev/null
[ $? -eq 2 ] || no "a bad --remote-cache-mode is not a usage error"

# 5. server down: local compile, exactly one warning, same output
nginx_stop
compile b/deeper/other E outE --remote-cache "$url" || { cat "$t/outE.log" >&2; no "E (server down) failed"; }
[ "$(grep -c 'warning: remote cache' "$t/outE.log")" -eq 1 ] || { cat "$t/outE.log" >&2; no "server down: want one warning"; }
cmp -s "$t/outA.fatbin" "$t/outE.fatbin" || no "E's fatbinary differs"
[ "$(stat_of E 'remote errors')" = 1 ] || no "E: stats remote errors $(stat_of E 'remote errors')"

# 6. a server that accepts and never answers: one timeout, then local compiles
port=$(nginx_free_port)
silent_server "$port"
FATBUILD_REMOTE_CACHE_TIMEOUT=1 FATBUILD_REMOTE_CACHE=http://127.0.0.1:$port compile b/deeper/other F outF ||
	{ cat "$t/outF.log" >&2; no "F (silent server) failed"; }
[ "$(grep -c 'warning: remote cache' "$t/outF.log")" -eq 1 ] || { cat "$t/outF.log" >&2; no "silent server: want one warning"; }
cmp -s "$t/outA.fatbin" "$t/outF.fatbin" || no "F's fatbinary differs"

# 7. where the path reaches the output (-lineinfo records it), other paths do not share
nginx_start "$t/srv2" || { no "nginx did not restart"; exit 1; }
url=$NGINX_URL
compile a G1 outG1 --remote-cache "$url" --lineinfo || no "G1 failed"
compile b/deeper/other G2 outG2 --remote-cache "$url" --lineinfo || no "G2 failed"
[ "$forks" -ge 4 ] || no "-lineinfo: another path was served A's images ($forks NVRTC runs)"
grep -q 'cached (remote)' "$t/outG2.log" && no "-lineinfo: a remote hit across paths"

# 8. a header outside the source's directory (-I ../inc): shared once FATBUILD_CACHE_BASEDIR
#    names the checkout root, not before
for m in a b/deeper/other; do
	mkdir -p "$t/$m/inc"
	printf '#pragma once\n#define SCALE 3.f\n' >"$t/$m/inc/scale.cuh"
	printf '#include "scale.cuh"\nextern "C" __global__ void s(float *p) { p[threadIdx.x] *= SCALE; }\n' >"$t/$m/k/scale.cu"
done
files="$t/a/k/scale.cu" compile a H1 outH1 --remote-cache "$url" -I "$t/a/inc" || no "H1 failed"
files="$t/b/deeper/other/k/scale.cu" compile b/deeper/other H2 outH2 --remote-cache "$url" -I "$t/b/deeper/other/inc" ||
	no "H2 failed"
[ "$forks" -ge 2 ] || no "without a base dir, another -I path was served A's images"
FATBUILD_CACHE_BASEDIR=$t/a files="$t/a/k/scale.cu" compile a H3 outH3 --remote-cache "$url" -I "$t/a/inc" ||
	no "H3 failed"
FATBUILD_CACHE_BASEDIR=$t/b/deeper/other files="$t/b/deeper/other/k/scale.cu" compile b/deeper/other H4 outH4 \
	--remote-cache "$url" -I "$t/b/deeper/other/inc" || no "H4 failed"
[ "$forks" -eq 0 ] || { cat "$t/outH4.log" >&2; no "FATBUILD_CACHE_BASEDIR: B ran NVRTC $forks times"; }
cmp -s "$t/outH3.fatbin" "$t/outH4.fatbin" || no "H4's fatbinary differs from H3's"

# 9. a server that refuses uploads (405 and an error page): one warning, the build succeeds
nginx_stop
NGINX_NO_PUT=1 nginx_start "$t/srv3" || { no "nginx (no PUT) did not start"; exit 1; }
compile a I outI --remote-cache "$NGINX_URL" || { cat "$t/outI.log" >&2; no "I (PUT refused) failed"; }
[ "$(grep -c 'warning: remote cache.*PUT answered HTTP 405' "$t/outI.log")" -eq 1 ] ||
	{ cat "$t/outI.log" >&2; no "PUT refused: want one warning naming HTTP 405"; }

# 10. the setup docs/caches.md recommends: everyone reads, only CI's credential writes. A
#     developer's read-only compile gets hits; a readwrite one without the credential is
#     refused (one warning, the build succeeds); CI's, with the password in the URL or in
#     FATBUILD_REMOTE_CACHE_HEADER, uploads; no message shows the password.
nginx_stop
NGINX_AUTH=ci:s3cr3t-pw nginx_start "$t/srv4" || { no "nginx (auth) did not start"; exit 1; }
host=${NGINX_URL#http://}
compile a J1 outJ1 --remote-cache "http://ci:s3cr3t-pw@$host" || { cat "$t/outJ1.log" >&2; no "J1 (CI, password in the URL) failed"; }
[ "$(ls "$t/srv4/store/ac" 2>/dev/null | wc -l)" -eq 4 ] || { cat "$t/outJ1.log" >&2; no "J1: CI's compile did not upload"; }
compile a J2 outJ2 --remote-cache "$NGINX_URL" --remote-cache-mode read || no "J2 (developer, read) failed"
[ "$(grep -c 'cached (remote)$' "$t/outJ2.log")" -eq 4 ] || { cat "$t/outJ2.log" >&2; no "J2: an anonymous read got no hits"; }
sed -i 's/blockDim /blockDim  /' "$t/a/k/reduce.cu"
compile a J3 outJ3 --remote-cache "$NGINX_URL" || { cat "$t/outJ3.log" >&2; no "J3 (no credential, readwrite) failed"; }
[ "$(grep -c 'warning: remote cache.*HTTP 401' "$t/outJ3.log")" -eq 1 ] || { cat "$t/outJ3.log" >&2; no "J3: want one warning naming HTTP 401"; }
[ "$(ls "$t/srv4/store/ac" | wc -l)" -eq 4 ] || no "J3: an anonymous PUT was stored"
FATBUILD_REMOTE_CACHE_HEADER="Authorization: Basic $(printf 'ci:s3cr3t-pw' | base64)" compile a J4 outJ4 --remote-cache "$NGINX_URL" ||
	no "J4 (CI, password in the header) failed"
[ "$(ls "$t/srv4/store/ac" | wc -l)" -eq 6 ] || { cat "$t/outJ4.log" >&2; no "J4: the header's credential did not upload"; }
sed -i 's/blockDim  /blockDim   /' "$t/a/k/reduce.cu"
compile a J5 outJ5 -v --remote-cache "http://ci:wrong-pw@$host" || no "J5 (a wrong password) failed"
grep -q 'wrong-pw\|s3cr3t' "$t/outJ5.log" && { cat "$t/outJ5.log" >&2; no "J5: a message shows the password"; }
grep -q 'warning: remote cache http://\*\*\*@.*HTTP 401' "$t/outJ5.log" || { cat "$t/outJ5.log" >&2; no "J5: want the refusal with the URL as ***@"; }

[ $fail = 0 ] && echo "remote_cache: all checks passed"
exit $fail
