#!/usr/bin/env bash
# remote_exec_build.sh: `fatbuild build --remote-exec` (docs/remote-cache.md §9 "Remote NVRTC
# jobs in a build") against real executors: (1) buildbox-casd as a single-node executor
# (tests/remote/executor.sh) and (2) BuildGrid 0.9.1 + PostgreSQL with test bots of two
# platform properties (two of fbtest=a, one of fbtest=b), each running the real buildbox-run
# (tests/remote/farm.sh). The project:
# the example kernels with CUB (examples/kernels: radix_sort.cu includes <cub/cub.cuh>) and the
# saxpy example's kernel and host file (examples/saxpy), for sm_90. A remote build gives a
# .so byte-identical to a local build's, and -v shows every NVRTC job of every edge ran remotely
# (none here) and the build's summary line counts them and the host edge; the graph runs the
# remote jobs' number of NVRTC edges at once and keeps the rest to -j; a compile error from the
# executor shows the compiler's message as a local build does, with the same exit code; a dead executor (a closed port) and a job no bot can take (a property
# no bot offers, a short timeout) fall back to local compiles with exactly one warning for the
# whole build and the same bytes. Skipped (77) only without NVRTC, bubblewrap, PostgreSQL,
# Python 3.13 or gRPC in the build, or when pip cannot install buildstream or buildgrid.
: "${FATBUILD_BIN:?}"
source "$FB_SOURCE_DIR/tests/remote/rexec_lib.sh" rxbuild
fb=$FATBUILD_BIN

ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1 || { echo "SKIP: no NVRTC"; exit 77; }
rx_need_grpc
rx_need_infra

cp -r "$FB_SOURCE_DIR/examples/kernels" "$t/src"
cp "$FB_SOURCE_DIR/examples/saxpy/saxpy.cu" "$FB_SOURCE_DIR/examples/saxpy/saxpy.cuh" \
	"$FB_SOURCE_DIR/examples/saxpy/saxpy_host.c" "$t/src/"
printf 'extern "C" __global__ void broken(int *p) { p[0] = ; }\n' >"$t/broken.cu"
cd "$t/src" || exit 1
kernels=(elementwise.cu gemm.cu layernorm.cu radix_sort.cu reduce.cu softmax.cu saxpy.cu)
njobs=${#kernels[@]}
# fbb NAME [options]: a build of the project into $t/NAME.so, with a cache and a build dir of its
# own (every NVRTC job a miss); its output in $t/NAME.err
fbb() {
	local name=$1
	shift
	# the host file's compiler as the workers have it (the sandbox binds /usr only: no cc, an
	# /etc/alternatives link), so that its edge goes too (§9 "Host and nvcc edges")
	CC=${FBB_CC:-gcc} FATBUILD_CACHE_DIR=$t/cache-$name "$fb" build --arch-list 9.0 --backend nvrtc -j 2 -v \
		--build-dir "$t/bd-$name" "$@" -o "$t/$name.so" "${kernels[@]}" saxpy_host.c >"$t/$name.err" 2>&1
}
same() { # same NAME: NAME's .so is the local build's
	cmp -s "$t/local.so" "$t/$1.so" || no "$1: the .so differs from the local build's"
}
all_remote() { # all_remote NAME: -v says each NVRTC job ran remotely, none here
	local n
	n=$(grep -c '^\[1/1\] sm_[0-9]* .*\.cu .* (remote' "$t/$1.err")
	[ "$n" = $njobs ] && ! grep -q '(local' "$t/$1.err" ||
		{ cat "$t/$1.err" >&2; no "$1: not every NVRTC job ran remotely ($n of $njobs)"; }
}
one_warning() { # one_warning NAME URL WHAT: exactly one fallback line for the build, naming URL and WHAT
	local n
	n=$(grep -c '^fatbuild: remote-exec: ' "$t/$1.err")
	[ "$n" = 1 ] && grep -q "^fatbuild: remote-exec: $2: .*$3.*; compiling here\$" "$t/$1.err" ||
		{ cat "$t/$1.err" >&2; no "$1: not exactly one fallback warning saying $3 ($n lines)"; }
	n=$(grep -c '^\[1/1\] sm_[0-9]* .*\.cu .* (local: the executor failed' "$t/$1.err")
	[ "$n" = $njobs ] || { cat "$t/$1.err" >&2; no "$1: -v does not say why each job compiled here ($n of $njobs)"; }
}
# errbuild NAME [options]: a build of broken.cu; the compiler's message lines and the exit code
# in $t/NAME.msg (the build dir is the same for all, so that paths match)
errbuild() {
	local name=$1
	shift
	rm -rf "$t/bd-err"
	FATBUILD_CACHE_DIR=$t/cache-$name "$fb" build --arch-list 9.0 --backend nvrtc --build-dir "$t/bd-err" "$@" \
		-o "$t/$name.so" "$t/broken.cu" >"$t/$name.err" 2>&1
	echo "exit $?" >"$t/$name.msg"
	grep 'broken.cu' "$t/$name.err" | grep -v '^\[\|^command: \|^FAILED: ' >>"$t/$name.msg"
}
same_error() { # same_error NAME: NAME's compile error is shown as the local build's
	grep -q 'broken.cu:1:.*error: expected an expression' "$t/$1.msg" && cmp -s "$t/lerr.msg" "$t/$1.msg" ||
		{ diff "$t/lerr.msg" "$t/$1.msg" >&2; cat "$t/$1.err" >&2; no "$1: the executor's compile error is not shown as the local one"; }
	grep -q '^fatbuild: remote-exec: ' "$t/$1.err" && no "$1: a compile error was taken for the executor's failure"
}

# the edges' words: the environment's executor, and the option's '' turning it off for them
# (they inherit the environment); nothing runs (--emit-ninja)
emit() { "$fb" build --arch-list 9.0 --backend nvrtc --build-dir "$t/bd-$1" --emit-ninja -o "$t/$1.so" saxpy.cu "${@:2}" >/dev/null; }
FATBUILD_REMOTE_EXECUTOR=grpc://127.0.0.1:9 emit env && grep -q 'fatbuild compile .*--remote-exec grpc://127.0.0.1:9 ' "$t/bd-env/build.ninja" ||
	no "env: FATBUILD_REMOTE_EXECUTOR does not reach the NVRTC edge"
FATBUILD_REMOTE_EXECUTOR=grpc://127.0.0.1:9 emit off --remote-exec '' &&
	grep -q "fatbuild compile .*--remote-exec '' " "$t/bd-off/build.ninja" && ! grep -q 'pool local' "$t/bd-off/build.ninja" ||
	no "off: --remote-exec '' does not turn the environment's executor off for the edges"

# the reference: a local build, and a local compile error
fbb local || { cat "$t/local.err" >&2; no "the local build failed"; exit 1; }
grep -q '(remote\|remote-exec' "$t/local.err" && no "local: a local build speaks of remote execution"
errbuild lerr
grep -q '^exit 1$' "$t/lerr.msg" || { cat "$t/lerr.err" >&2; no "lerr: a compile error is not exit 1"; }

# 1. buildbox-casd, one executor: 12 NVRTC edges at once, the rest within -j 2
exec_start "$t/exec" 2 || { no "buildbox-casd did not start"; exit 1; }
fbb ex --remote-exec "$exec_url" --remote-jobs 12 || { cat "$t/ex.err" >&2; no "ex: the remote build failed"; }
same ex
all_remote ex
grep -q '^fatbuild: remote-exec: ' "$t/ex.err" && no "ex: a fallback warning with a working executor"
tr '\n' ' ' <"$t/bd-ex/build.ninja" | grep -q 'pool nvrtc *depth = 12 *pool local *depth = 2 ' ||
	no "ex: the graph's pools are not the remote jobs (12) and the local jobs (2)"
# the merges, the embed and the link stay here, in the local pool
n=$(awk '/^build .*: (merge|embed|link) /{e=1} e && /^  pool = local$/{n++; e=0} /^$/{e=0} END{print n+0}' "$t/bd-ex/build.ninja")
[ "$n" = $((${#kernels[@]} + 2)) ] || no "ex: $n of the merge, embed and link edges are in the local pool"
# the host edge goes too (no local pool), its compiler as the worker has it
grep -A3 '^build .*saxpy_host.c.o: cc ' "$t/bd-ex/build.ninja" | grep -q 'pool = local' &&
	no "ex: the host edge, which may run at the executor, is held to the local jobs"
grep -q 'saxpy_host.c.o (remote)' "$t/ex.err" || { cat "$t/ex.err" >&2; no "ex: the host edge did not run remotely"; }
# the build's summary (-v): every NVRTC job and the host edge ran there
summary() { # summary NAME NVRTC-RAN EDGES-RAN: the build's one line says so
	grep -q "^fatbuild: build: remote-exec grpc://[^ ]*: $2 of $njobs NVRTC jobs ran there (0 cached), $3 of 1 host and nvcc edges (0 cached)\$" "$t/$1.err" ||
		{ grep 'remote-exec grpc' "$t/$1.err" >&2; no "$1: the build's summary does not say $2 of $njobs NVRTC jobs and $3 of 1 edges ran there"; }
}
summary ex $njobs 1
# a host compiler the workers lack (cc: an /etc/alternatives link, not in the sandbox): one
# warning for the build, the host edge here, and the NVRTC jobs, which bring their compiler,
# still remote
FBB_CC=cc fbb tools --remote-exec "$exec_url" || { cat "$t/tools.err" >&2; no "tools: the build failed"; }
same tools
n=$(grep -c '^\[1/1\] sm_[0-9]* .*\.cu .* (remote' "$t/tools.err")
[ "$n" = $njobs ] || { cat "$t/tools.err" >&2; no "tools: $n of $njobs NVRTC jobs remote after the worker lacked cc"; }
[ "$(grep -c '^fatbuild: remote-exec: .*the worker cannot run cc' "$t/tools.err")" = 1 ] &&
	[ "$(grep -c '^fatbuild: remote-exec: ' "$t/tools.err")" = 1 ] ||
	{ cat "$t/tools.err" >&2; no "tools: not exactly one warning, saying the worker cannot run cc"; }
summary tools $njobs 0
errbuild xerr --remote-exec "$exec_url"
same_error xerr
exec_stop

# a dead executor: the port it listened on, now closed; one warning for the whole build
fbb dead --remote-exec "$exec_url" || { cat "$t/dead.err" >&2; no "dead: the build failed"; }
same dead
one_warning dead "$exec_url" UNAVAILABLE
summary dead 0 0

# 2. the farm: two bots offering fbtest=a, one offering fbtest=b
farm_start "$t/farm" a:fbtest=a a2:fbtest=a b:fbtest=b || { no "the farm did not start"; exit 1; }
fbb fa --remote-exec "$farm_url" --remote-exec-property fbtest=a ||
	{ cat "$t/fa.err" >&2; no "fa: the remote build failed"; }
same fa
all_remote fa
grep -q 'exit 0' "$t/farm/a/bot.log" || grep -q 'exit 0' "$t/farm/a2/bot.log" || no "fa: no bot of fbtest=a ran a job"
grep -q 'exit 0' "$t/farm/b/bot.log" && no "fa: bot b (fbtest=b) ran a job asked of fbtest=a"
errbuild ferr --remote-exec "$farm_url" --remote-exec-property fbtest=b
same_error ferr
# a property no bot offers: QUEUED until the timeout, then local with one warning for the build
s0=$(date +%s)
fbb fz --remote-exec "$farm_url" --remote-exec-property fbtest=zz --remote-exec-timeout 8 ||
	{ cat "$t/fz.err" >&2; no "fz: the build failed"; }
same fz
one_warning fz "$farm_url" QUEUED
[ $(($(date +%s) - s0)) -ge 8 ] || no "fz: fell back before the timeout"

rx_exit remote_exec_build
