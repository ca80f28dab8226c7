#!/usr/bin/env bash
# remote_exec_edge.sh: host and nvcc compile edges as REAPI Actions (docs/remote-cache.md §9 "Host
# and nvcc edges") against buildbox-casd as a single-node executor (tests/remote/executor.sh, the
# real buildbox-run bubblewrap runner). `fatbuild edge --remote-exec` on an nvcc edge (a .cu with
# a kernel and a host function, sm_80) and a C++ edge gives objects byte-identical to local runs,
# with no compile run here (the compilers on the local PATH are wrappers that log each run: only
# the -M runs that learn the header list appear); a compile error shows the compiler's message
# and exit status as a local run does; a dead executor falls back with exactly one warning for
# the processes of one build (the state file) and the same bytes; the same edge with a fresh
# cache dir is answered by the executor's action cache; `fatbuild build` with
# FATBUILD_REMOTE_EXECUTOR sends both edges there and links a library byte-identical to a local
# build's, and with a dead executor one warning for the build and the same library; a header
# named through '..' keeps its edge here, saying why. Skipped (77) only without nvcc, bubblewrap or gRPC in the build, or when pip cannot
# install buildstream.
: "${FATBUILD_BIN:?}"
mode=${1:-exec}
source "$FB_SOURCE_DIR/tests/remote/rexec_lib.sh" rxedge
fb=$FATBUILD_BIN
nvcc=/usr/local/cuda/bin/nvcc

[ -x "$nvcc" ] || { echo "SKIP: no nvcc"; exit 77; }
command -v g++ >/dev/null || { echo "SKIP: no g++"; exit 77; }
rx_need_grpc
if [ "$mode" = farm ]; then
	rx_need_infra
else
	command -v bwrap >/dev/null || { echo "SKIP: bubblewrap not installed (scripts/deps.sh)"; exit 77; }
	rx_bb_venv "${FB_VENV_DIR:-$FB_BINARY_DIR}/rexec-bb-venv" || { echo "SKIP: cannot pip install $bb_pkg"; exit 77; }
fi

# the local compilers: wrappers that log each run into $t/local-runs, then run the real one
mkdir -p "$t/wrap" "$t/src"
for c in g++ gcc c++ cc nvcc; do
	real=$(command -v "$c")
	[ "$c" = nvcc ] && real=$nvcc
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexec "%s" "$@"\n' "$c" "$t/local-runs" "$real" >"$t/wrap/$c"
	chmod +x "$t/wrap/$c"
done
export PATH="$t/wrap:$PATH"
# The nvcc first on PATH is now the wrapper, whose directory is no toolkit: name the toolkit the
# wrapper runs (a shell with no CUDA_HOME, as env -i gives, found it through PATH before).
export CUDA_HOME=${nvcc%/bin/nvcc}
unset FATBUILD_REMOTE_CACHE FATBUILD_REMOTE_EXECUTOR FATBUILD_REMOTE_CACHE_STATE CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH

cd "$t/src" || exit 1
printf '#define SCALE 3\n' >k.h
cat >k.cu <<'EOF'
#include "k.h"
__global__ void scale(float *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= SCALE; }
int host_scale(float *p, int n) { scale<<<(n + 255) / 256, 256>>>(p, n); return SCALE; }
EOF
printf '#include "k.h"\n#include <vector>\nint twice(int v) { std::vector<int> x(3, v); return SCALE * x[1]; }\n' >a.cpp
printf 'int broken(int v) { return v + ; }\n' >bad.cpp

# edge DIR NAME KIND [edge options]: `fatbuild edge` of NAME (cu: nvcc, sm_80; cpp, bad: g++) into
# $t/DIR with a cache of its own ($cache, else $t/cache-DIR); stderr in $t/DIR/NAME.err, the log
# $t/DIR/log
edge() {
	local name=$1 d=$t/$1 n=$2 k=$3
	shift 3
	mkdir -p "$d"
	local obj=$d/$n.o dep=$d/$n.o.d maps=(-ffile-prefix-map="$t/src"=. -ffile-prefix-map="$d"=.)
	local cmd=(g++ -c -O2 -fPIC "${maps[@]}" -MD -MF "$dep" -o "$obj" "$t/src/$n.cpp")
	[ "$k" = cu ] && cmd=(nvcc -c -O2 -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 -keep -keep-dir "$d/$n.keep"
		-Xcompiler "${maps[0]}" -Xcompiler "${maps[1]}" -MD -MF "$dep" -o "$obj" "$t/src/$n.cu")
	[ "$k" = cu ] && [ "$*" = "" ] && mkdir -p "$d/$n.keep" # a local run: the keep dir fatbuild build makes
	FATBUILD_CACHE_DIR=${cache:-$t/cache-$name} FATBUILD_EDGE_LOG=$d/log "$fb" edge -o "$obj" --depfile "$dep" --tool "${cmd[0]}" \
		"$@" -- "${cmd[@]}" 2>"$d/$n.err"
}
# compiled_here: the compiles (-c: nvcc's, and its host compiler's inside it; not the -M and -E
# runs of a header scan) logged since the last call
compiled_here() {
	local n
	n=$(grep -c -- ' -c ' "$t/local-runs" 2>/dev/null)
	: >"$t/local-runs"
	echo "${n:-0}"
}
casd_runs() { grep -c 'Runner exited with code' "$t/exec/casd.log"; }

# the reference: local runs
edge local k cu || { cat "$t/local/k.err" >&2; no "the local nvcc edge failed"; exit 1; }
edge local a cpp || { cat "$t/local/a.err" >&2; no "the local C++ edge failed"; exit 1; }
edge local bad cpp
echo "exit $?" >>"$t/local/bad.err"
[ "$(compiled_here)" -ge 3 ] || no "the local runs were not logged by the wrappers"

if [ "$mode" = farm ]; then
	farm_start "$t/farm" a:fbtest=a b:fbtest=b || { no "the farm did not start"; exit 1; }
	# the same edges at the bot with fbtest=a: the same bytes, nothing compiled here
	for n in k a; do
		kind=cpp
		[ $n = k ] && kind=cu
		edge fa $n $kind --remote-exec "$farm_url" --remote-exec-property fbtest=a ||
			{ cat "$t/fa/$n.err" >&2; no "$n: the edge at the farm failed"; }
		cmp -s "$t/local/$n.o" "$t/fa/$n.o" || no "$n.o from the farm differs from the local one"
		grep -qx "remote $t/fa/$n.o" "$t/fa/log" || { cat "$t/fa/log" "$t/fa/$n.err" >&2; no "$n: not run at the farm"; }
	done
	[ "$(compiled_here)" = 0 ] || no "edges at the farm compiled here"
	[ "$(grep -c ': exit 0$' "$t/farm/a/bot.log")" -ge 2 ] && ! grep -q ': exit ' "$t/farm/b/bot.log" ||
		{ tail "$t/farm/a/bot.log" "$t/farm/b/bot.log" >&2; no "the edges did not run on bot a alone"; }
	edge fa bad cpp --remote-exec "$farm_url" --remote-exec-property fbtest=a
	echo "exit $?" >>"$t/fa/bad.err"
	diff "$t/local/bad.err" "$t/fa/bad.err" >&2 || no "the compile error from the farm differs from the local one"
	# a property no bot offers: QUEUED past the timeout, compiled here with one warning
	edge fz a cpp --remote-exec "$farm_url" --remote-exec-property fbtest=zz --remote-exec-timeout 8 ||
		no "the fallback from a job no bot takes failed"
	cmp -s "$t/local/a.o" "$t/fz/a.o" || no "a.o compiled after the QUEUED fallback differs"
	[ "$(grep -c '^fatbuild: remote-exec: ' "$t/fz/a.err")" = 1 ] &&
		grep -q "^fatbuild: remote-exec: $farm_url: .*QUEUED.*; compiling here\$" "$t/fz/a.err" ||
		{ cat "$t/fz/a.err" >&2; no "a job no bot takes did not give one QUEUED warning"; }
	[ "$fail" = 0 ] && echo "remote_exec_edge farm: ok"
	exit "$fail"
fi

exec_start "$t/exec" 2 || { no "buildbox-casd did not start"; exit 1; }

# 1. nvcc and C++ edges at the executor: the same bytes, nothing compiled here
runs0=$(casd_runs)
edge rx k cu --remote-exec "$exec_url" || { cat "$t/rx/k.err" >&2; no "the remote nvcc edge failed"; }
# (FATBUILD_COMPILE_VERBOSE: what `fatbuild build -v` sets for the edges of a build with a compile server)
FATBUILD_COMPILE_VERBOSE=1 edge rx a cpp --remote-exec "$exec_url" || { cat "$t/rx/a.err" >&2; no "the remote C++ edge failed"; }
grep -qx 'edge a.o (remote)' "$t/rx/a.err" || { cat "$t/rx/a.err" >&2; no "the verbose line does not say the edge ran remotely"; }
for n in k a; do
	cmp -s "$t/local/$n.o" "$t/rx/$n.o" || no "$n.o from the executor differs from the local one"
	grep -qx "remote $t/rx/$n.o" "$t/rx/log" || { cat "$t/rx/log" "$t/rx/$n.err" >&2; no "$n: the log does not say it ran remotely"; }
	diff <(grep -o '[^ ]*k\.h' "$t/local/$n.o.d") <(grep -o '[^ ]*k\.h' "$t/rx/$n.o.d") >/dev/null ||
		no "$n: the depfile does not name the header as the local one does"
done
n=$(compiled_here)
[ "$n" = 0 ] || no "$n compiles ran here with --remote-exec"
[ "$(($(casd_runs) - runs0))" = 2 ] || no "the executor did not run both edges ($(($(casd_runs) - runs0)) runs)"

# 1b. a header named through '..': the worker's root may lack the directory it passes through, so
# the edge compiles here, quietly (no executor failure), and says why
mkdir -p "$t/src/sub"
printf '#include "../k.h"\nint thrice(int v) { return SCALE * v; }\n' >"$t/src/sub/up.cpp"
mkdir -p "$t/up"
FATBUILD_COMPILE_VERBOSE=1 FATBUILD_CACHE_DIR=$t/cache-up "$fb" edge -o "$t/up/up.o" --depfile "$t/up/up.o.d" \
	--remote-exec "$exec_url" -- g++ -c -O2 -MD -MF "$t/up/up.o.d" -o "$t/up/up.o" "$t/src/sub/up.cpp" 2>"$t/up/up.err" ||
	{ cat "$t/up/up.err" >&2; no "the edge with a '..' header failed"; }
grep -q "^edge up.o (local: a header path with '..'" "$t/up/up.err" && ! grep -q 'remote-exec: ' "$t/up/up.err" ||
	{ cat "$t/up/up.err" >&2; no "the '..' header did not keep the edge here with its reason"; }
: >"$t/local-runs"

# 2. a compile error: the compiler's message and exit status, as locally
edge rx bad cpp --remote-exec "$exec_url"
echo "exit $?" >>"$t/rx/bad.err"
diff "$t/local/bad.err" "$t/rx/bad.err" >&2 || no "the remote compile error differs from the local one"
grep -q "error: expected primary-expression" "$t/rx/bad.err" || no "the compile error lacks the compiler's message"
n=$(compiled_here)
[ "$n" = 0 ] || no "$n compiles ran here for the compile error"

# 3. the same edges with a fresh cache dir: the executor's action cache answers
runs0=$(casd_runs)
rm -f "$t/rx/k.o" "$t/rx/a.o" "$t/rx/log"
cache=$t/cache-fresh edge rx k cu --remote-exec "$exec_url" || no "the second nvcc edge failed"
cache=$t/cache-fresh edge rx a cpp --remote-exec "$exec_url" || no "the second C++ edge failed"
for n in k a; do
	grep -qx "remote cached $t/rx/$n.o" "$t/rx/log" || { cat "$t/rx/log" >&2; no "$n: not answered by the executor's cache"; }
	cmp -s "$t/local/$n.o" "$t/rx/$n.o" || no "$n.o from the executor's cache differs from the local one"
done
[ "$(casd_runs)" = "$runs0" ] || no "the executor ran the cached edges again"
[ "$(compiled_here)" = 0 ] || no "the cached edges compiled here"

# 3b. a changed source: the manifest of the edge's last compile (its object missed) is the header
# list, nothing scanned here; the bytes of a local compile of the new source
printf '#include "k.h"\nint twice(int v) { return SCALE * v + 1; }\n' >"$t/src/a.cpp"
edge rx a cpp --remote-exec "$exec_url" || { cat "$t/rx/a.err" >&2; no "the changed C++ edge failed"; }
[ -s "$t/local-runs" ] && { cat "$t/local-runs" >&2; no "the changed edge ran the compiler here (its manifest was not used)"; }
cache=$t/cache-local2 edge local a cpp || no "the local compile of the changed source failed"
cmp -s "$t/local/a.o" "$t/rx/a.o" || no "the changed a.o from the executor differs from the local one"
grep -qx "remote $t/rx/a.o" "$t/rx/log" || { cat "$t/rx/log" >&2; no "the changed edge did not run remotely"; }
printf '#include "k.h"\n#include <vector>\nint twice(int v) { std::vector<int> x(3, v); return SCALE * x[1]; }\n' >"$t/src/a.cpp"
edge local a cpp || no "the local compile of the first source failed"
: >"$t/local-runs"

# 4. a dead executor: compiled here, the same bytes, one warning for the edges of one build
dead=grpc://127.0.0.1:$(rx_free_port)
: >"$t/state"
for n in k a; do
	kind=cpp
	[ $n = k ] && kind=cu
	mkdir -p "$t/dead/$n.keep"
	FATBUILD_REMOTE_CACHE_STATE=$t/state edge dead $n $kind --remote-exec "$dead" || no "$n: the fallback failed"
	cmp -s "$t/local/$n.o" "$t/dead/$n.o" || no "$n.o compiled after the fallback differs"
done
w=$(cat "$t/dead/k.err" "$t/dead/a.err" | grep -c '^fatbuild: remote-exec: ')
[ "$w" = 1 ] && grep -q "^fatbuild: remote-exec: $dead: .*UNAVAILABLE.*; compiling here\$" "$t/dead/k.err" ||
	{ cat "$t/dead/k.err" "$t/dead/a.err" >&2; no "a dead executor did not give exactly one warning ($w)"; }
n=$(grep -cE -- "^(nvcc|g\+\+) -c .* -o $t/dead/" "$t/local-runs")
[ "$n" = 2 ] || { cat "$t/local-runs" >&2; no "the fallback did not compile both edges here ($n)"; }
: >"$t/local-runs"

# 5. fatbuild build: both edges at the executor, the library as a local build's
cd "$t/src" || exit 1
CXX=g++ FATBUILD_CACHE_DIR=$t/cache-bl "$fb" build --arch-list 8.0 -o "$t/l.so" --build-dir "$t/bl" a.cpp k.cu \
	>"$t/bl.out" 2>&1 || { cat "$t/bl.out" >&2; no "the local build failed"; }
: >"$t/local-runs"
CXX=g++ FATBUILD_REMOTE_EXECUTOR=$exec_url FATBUILD_EDGE_LOG=$t/br.log FATBUILD_CACHE_DIR=$t/cache-br \
	"$fb" build --arch-list 8.0 -o "$t/r.so" --build-dir "$t/br" a.cpp k.cu >"$t/br.out" 2>&1 ||
	{ cat "$t/br.out" >&2; no "the build with FATBUILD_REMOTE_EXECUTOR failed"; }
[ "$(grep -c '^remote' "$t/br.log")" = 2 ] || { cat "$t/br.log" >&2; no "the build's edges did not run at the executor"; }
cmp -s "$t/l.so" "$t/r.so" || no "the library built with the executor differs from the local build's"
n=$(compiled_here)
[ "$n" = 0 ] || { cat "$t/local-runs" >&2; no "$n compiles ran here in the build with the executor"; }

# 6. fatbuild build with a dead executor: both edges compiled here, one warning for the build
CXX=g++ FATBUILD_REMOTE_EXECUTOR=$dead FATBUILD_CACHE_DIR=$t/cache-bd \
	"$fb" build --arch-list 8.0 -o "$t/d.so" --build-dir "$t/bd" a.cpp k.cu >"$t/bd.out" 2>&1 ||
	{ cat "$t/bd.out" >&2; no "the build with a dead executor failed"; }
cmp -s "$t/l.so" "$t/d.so" || no "the library built after the fallback differs from the local build's"
w=$(grep -c 'fatbuild: remote-exec: ' "$t/bd.out")
[ "$w" = 1 ] || { cat "$t/bd.out" >&2; no "the build with a dead executor gave $w warnings, not one"; }

[ "$fail" = 0 ] && echo "remote_exec_edge: ok"
exit "$fail"
