#!/usr/bin/env bash
# remote_exec_compile.sh: `fatbuild compile --remote-exec` (docs/remote-cache.md §9 "Remote
# NVRTC jobs") against real executors: (1) buildbox-casd as a single-node executor
# (tests/remote/executor.sh) and (2) BuildGrid 0.9.1 + PostgreSQL with two test bots of different
# platform properties, each running the real buildbox-run (tests/remote/farm.sh). The multi-file
# example with CUB (examples/kernels: radix_sort.cu includes <cub/cub.cuh>) compiled remotely
# gives fatbins byte-identical to a local compile's, and -v shows every job ran remotely (no
# local NVRTC job); a second run is all cache hits (no Action); a compile error from the executor
# is printed exactly as a local one, with the same exit code; a job's input root holds the
# headers it reads, not the toolkit's tree; a source that includes a macro stays here, and a
# header the scan missed makes its job compile here with one warning, and a header that is
# nowhere is the source's error, shown as a local one; a dead executor (a closed port;
# said once by the processes of one build) and a job no bot can take (a property no bot offers,
# a short timeout) fall back to local compiles with exactly one warning and the same bytes;
# `fatbuild env` shows each executor reachable with execution (GetCapabilities) and the dead one
# unreachable. Skipped (77) only without NVRTC, bubblewrap, PostgreSQL, Python 3.13 or gRPC in
# the build, or when pip cannot install buildstream or buildgrid.
: "${FATBUILD_BIN:?}"
source "$FB_SOURCE_DIR/tests/remote/rexec_lib.sh" rxcompile
fb=$FATBUILD_BIN

ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1 || { echo "SKIP: no NVRTC"; exit 77; }
rx_need_grpc
rx_need_infra

cp -r "$FB_SOURCE_DIR/examples/kernels" "$t/src"
printf 'extern "C" __global__ void broken(int *p) { p[0] = ; }\n' >"$t/src/broken.cu"
cd "$t/src" || exit 1
srcs=(elementwise.cu gemm.cu layernorm.cu radix_sort.cu reduce.cu softmax.cu)
arch=9.0
# fbc NAME [options]: a compile of srcs into $t/NAME/ with a cache of its own; stderr in $t/NAME.err
fbc() {
	local name=$1
	shift
	FATBUILD_CACHE_DIR=$t/cache-$name "$fb" compile --arch-list "$arch" -v "$@" -o "$t/$name/" "${srcs[@]}" \
		2>"$t/$name.err"
}
same() { # same NAME: every fatbin of NAME is the local one's
	local f
	for f in "${srcs[@]}"; do
		cmp -s "$t/local/${f%.cu}.fatbin" "$t/$1/${f%.cu}.fatbin" || { no "$1: ${f%.cu}.fatbin differs from the local compile's"; return 1; }
	done
}
all_remote() { # all_remote NAME: -v says each job ran remotely, none here
	local n
	n=$(grep -c '^\[[0-9]*/[0-9]*\] sm_90 .* (remote' "$t/$1.err")
	[ "$n" = ${#srcs[@]} ] && ! grep -q '(local' "$t/$1.err" &&
		grep -q "remote-exec .*: ${#srcs[@]} of ${#srcs[@]} jobs ran there" "$t/$1.err" ||
		{ cat "$t/$1.err" >&2; rx_farm_tail; no "$1: not every job ran remotely ($n of ${#srcs[@]})"; }
}
one_warning() { # one_warning NAME URL WHAT: exactly one fallback line, naming URL and WHAT
	local n
	n=$(grep -c '^fatbuild: remote-exec: ' "$t/$1.err")
	[ "$n" = 1 ] && grep -q "^fatbuild: remote-exec: $2: .*$3.*; compiling here\$" "$t/$1.err" ||
		{ cat "$t/$1.err" >&2; no "$1: not exactly one fallback warning saying $3 ($n lines)"; }
}

# the reference: a local compile
fbc local || { cat "$t/local.err" >&2; no "the local compile failed"; exit 1; }
FATBUILD_CACHE_DIR=$t/cache-lerr "$fb" compile --arch-list "$arch" -o "$t/lerr.fatbin" broken.cu >"$t/lerr.out" 2>&1
echo "exit $?" >>"$t/lerr.out"

# envline URL: `fatbuild env`'s executor line for URL
envline() { FATBUILD_REMOTE_EXECUTOR=$1 "$fb" env 2>/dev/null | grep '^executor '; }

# 1. buildbox-casd, one executor
exec_start "$t/exec" 2 || { no "buildbox-casd did not start"; exit 1; }
envline "$exec_url" | grep -q "^executor  *$exec_url (from FATBUILD_REMOTE_EXECUTOR): reachable, execution" ||
	{ envline "$exec_url" >&2; no "env: the executor is not shown reachable with execution"; }
fbc ex --remote-exec "$exec_url" || { cat "$t/ex.err" >&2; no "ex: the remote compile failed"; }
same ex && all_remote ex
grep -q '^fatbuild: remote-exec: ' "$t/ex.err" && no "ex: a fallback warning with a working executor"
FATBUILD_CACHE_DIR=$t/cache-ex "$fb" compile --arch-list "$arch" -v --remote-exec "$exec_url" -o "$t/ex2/" \
	"${srcs[@]}" 2>"$t/ex2.err" || no "ex2: the second compile failed"
grep -q "${#srcs[@]} cached, 0 compiled" "$t/ex2.err" && grep -q ": 0 of ${#srcs[@]} jobs ran there" "$t/ex2.err" ||
	{ cat "$t/ex2.err" >&2; no "ex2: a cached job was sent to the executor"; }
FATBUILD_CACHE_DIR=$t/cache-xerr "$fb" compile --arch-list "$arch" --remote-exec "$exec_url" -o "$t/xerr.fatbin" \
	broken.cu >"$t/xerr.out" 2>&1
echo "exit $?" >>"$t/xerr.out"
grep -q 'broken.cu:1:.*error: expected an expression' "$t/xerr.out" && cmp -s "$t/lerr.out" "$t/xerr.out" ||
	{ diff "$t/lerr.out" "$t/xerr.out" >&2; no "xerr: the executor's compile error is not printed as the local one"; }
FATBUILD_CACHE_DIR=$t/cache-xerr "$fb" compile --arch-list "$arch" -v --remote-exec "$exec_url" -o "$t/xerr.fatbin" \
	broken.cu 2>&1 | grep -q '^fatbuild: remote-exec: ' && no "xerr: a compile error was taken for the executor's failure"
# a source with "#include MACRO": the scan cannot tell what it reads, so its job stays here
printf '#define HDR "common.cuh"\n#include HDR\nextern "C" __global__ void m(float *p) { p[0] = 1.0f; }\n' >macro.cu
FATBUILD_CACHE_DIR=$t/cache-macro "$fb" compile --arch-list "$arch" -o "$t/macro-local.fatbin" macro.cu ||
	no "macro: the local compile failed"
FATBUILD_CACHE_DIR=$t/cache-macro-x "$fb" compile --arch-list "$arch" -v --remote-exec "$exec_url" \
	-o "$t/macro.fatbin" macro.cu 2>"$t/macro.err" || { cat "$t/macro.err" >&2; no "macro: the compile failed"; }
cmp -s "$t/macro-local.fatbin" "$t/macro.fatbin" &&
	grep -q '(local: macro.cu has an #include of a macro, which the scan cannot follow)' "$t/macro.err" &&
	! grep -q '^fatbuild: remote-exec: ' "$t/macro.err" || { cat "$t/macro.err" >&2; no "macro: not compiled here, or not said why"; }
# a header the scan misses (reached again through a symbolic link to its directory, from where
# it includes a neighbour the input root lacks): the executor's "cannot open source file" is
# not the source's error; the job is compiled here, with one warning, and the same bytes
mkdir -p inc/real && ln -s real inc/link && printf '#include "b.h"\n' >inc/real/a.h && : >inc/real/b.h
printf '#include <real/a.h>\n#include <link/a.h>\nextern "C" __global__ void l(float *p) { p[0] = 2.0f; }\n' >linked.cu
FATBUILD_CACHE_DIR=$t/cache-linked "$fb" compile --arch-list "$arch" -I inc -o "$t/linked-local.fatbin" linked.cu ||
	no "linked: the local compile failed"
FATBUILD_CACHE_DIR=$t/cache-linked-x "$fb" compile --arch-list "$arch" -I inc -v --remote-exec "$exec_url" \
	-o "$t/linked.fatbin" linked.cu 2>"$t/linked.err" || { cat "$t/linked.err" >&2; no "linked: the compile failed"; }
cmp -s "$t/linked-local.fatbin" "$t/linked.fatbin" || no "linked: the bytes differ from the local compile's"
one_warning linked "$exec_url" "lacked a header the #include scan missed"
# a header that is nowhere (not a scan's miss): the source's own error, shown as a local compile
# shows it, with no warning of the executor
printf '#include "nowhere.h"\nextern "C" __global__ void n(float *p) { p[0] = 3.0f; }\n' >nowhere.cu
for w in local remote; do
	x=()
	[ $w = remote ] && x=(--remote-exec "$exec_url")
	FATBUILD_CACHE_DIR=$t/cache-nowhere-$w "$fb" compile --arch-list "$arch" "${x[@]}" -o "$t/nowhere.fatbin" nowhere.cu \
		>"$t/nowhere-$w.out" 2>&1
	echo "exit $?" >>"$t/nowhere-$w.out"
done
grep -q 'cannot open source file "nowhere.h"' "$t/nowhere-local.out" && cmp -s "$t/nowhere-local.out" "$t/nowhere-remote.out" ||
	{ diff "$t/nowhere-local.out" "$t/nowhere-remote.out" >&2; no "nowhere: a missing header is not shown as the local compile shows it"; }
exec_stop
# a job longer than the Execute stream's window (an eighth of --remote-exec-timeout: 2 s of
# 16; the runner waits 5 s before buildbox-run): buildbox-casd says nothing until the job is
# done, and an Execute sent again would make it run the job a second time, so the client asks
# by name (WaitExecution) and the job runs once
slow=$t/exec-slow
mkdir -p "$slow"
printf '#!/bin/sh\necho run >>%s/runs\nsleep 5\nexec %s "$@"\n' "$slow" "$bb/buildbox-run" >"$slow/runner"
chmod +x "$slow/runner"
exec_runner=$slow/runner exec_start "$slow" 2 || { no "buildbox-casd (slow runner) did not start"; exit 1; }
FATBUILD_CACHE_DIR=$t/cache-slow "$fb" compile --arch-list "$arch" -v --remote-exec "$exec_url" --remote-exec-timeout 16 \
	-o "$t/slow/" elementwise.cu 2>"$t/slow.err" || { cat "$t/slow.err" >&2; no "slow: the compile failed"; }
cmp -s "$t/local/elementwise.fatbin" "$t/slow/elementwise.fatbin" && grep -q '(remote)' "$t/slow.err" &&
	! grep -q '^fatbuild: remote-exec: ' "$t/slow.err" || { cat "$t/slow.err" >&2; no "slow: the job did not run remotely"; }
[ "$(cat "$slow/runs" 2>/dev/null | wc -l)" = 1 ] || no "slow: the executor ran the job $(cat "$slow/runs" 2>/dev/null | wc -l) times"
# the job's input root: the headers the source reads (elementwise.cu: 18 of the toolkit's), not
# the toolkit's include/ tree (about 2,000 files); the executor's CAS holds every blob it was sent
nblobs=$(find "$slow/cache" -path '*/objects/*' -type f | wc -l)
ntree=$(find /usr/local/cuda/include/ -type f | wc -l)
[ "$nblobs" -gt 10 ] && [ "$nblobs" -lt $((ntree / 4)) ] ||
	no "slow: the executor's CAS holds $nblobs blobs for one source (the toolkit's tree has $ntree files)"
exec_stop
envline "$exec_url" | grep -q "^executor  *$exec_url (from FATBUILD_REMOTE_EXECUTOR): NOT REACHABLE: .*UNAVAILABLE" ||
	{ envline "$exec_url" >&2; no "env: a dead executor is not shown unreachable"; }
# a dead executor: the port it listened on, now closed; two processes of one build (fatbuild
# build's compile edges share its state file) say it once in all
for k in 1 2; do
	FATBUILD_REMOTE_CACHE_STATE=$t/build.state fbc dead$k --remote-exec "$exec_url" ||
		{ cat "$t/dead$k.err" >&2; no "dead$k: the compile failed"; }
	same dead$k
done
one_warning dead1 "$exec_url" UNAVAILABLE
grep -q '^fatbuild: remote-exec: ' "$t/dead2.err" && no "dead2: a second warning in one build"
grep -q '(local: the executor failed (earlier in this build)' "$t/dead2.err" ||
	{ cat "$t/dead2.err" >&2; no "dead2: -v does not say why it compiled here"; }

# 2. the farm: two bots of different properties
farm_start "$t/farm" a:fbtest=a b:fbtest=b || { no "the farm did not start"; exit 1; }
envline "$farm_url" | grep -q "reachable, execution" || { envline "$farm_url" >&2; no "env: the farm is not shown reachable"; }
fbc fa --remote-exec "$farm_url" --remote-exec-property fbtest=a || { cat "$t/fa.err" >&2; no "fa: the compile failed"; }
same fa && all_remote fa
fbc fb --remote-exec "$farm_url" --remote-exec-property fbtest=b --remote-jobs 2 ||
	{ cat "$t/fb.err" >&2; no "fb: the compile failed"; }
same fb && all_remote fb
grep -q 'exit 0' "$t/farm/a/bot.log" && grep -q 'exit 0' "$t/farm/b/bot.log" || no "not both bots ran jobs"
# a property no bot offers: QUEUED until the timeout, then local with one warning
s0=$(date +%s)
fbc fz --remote-exec "$farm_url" --remote-exec-property fbtest=zz --remote-exec-timeout 8 ||
	{ cat "$t/fz.err" >&2; no "fz: the compile failed"; }
same fz
one_warning fz "$farm_url" QUEUED
[ $(($(date +%s) - s0)) -ge 8 ] || no "fz: fell back before the timeout"

rx_exit remote_exec_compile
