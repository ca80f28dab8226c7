#!/usr/bin/env bash
# build_stop.sh: SIGINT, SIGTERM, SIGHUP and SIGKILL sent to the top fatbuild pid alone (as CI
# cancels, `docker stop`, Python's subprocess timeout and pytest-timeout do), while `build`
# compiles a two-kernel, two-arch extension with an empty cache, and while `compile` runs its
# NVRTC jobs. For each: the exit status is 128+signal, within 2 s no process of that build is
# left (found by the case's unique directory in /proc/*/cmdline), 10 s later OUT is still absent
# or still the previous bytes, and a rerun succeeds with output `fatbuild check` accepts.
# Also: a rebuild started right after a SIGKILL waits for the earlier build's ninja to be gone.
# The cases run at once, so the 10 s watches overlap.
set -u
FB=${FATBUILD_BIN:?}
[ -d /proc/self ] || { echo "no /proc: skipped"; exit 77; }
# 2 s, as the product promises; under the sanitizers (the asan pass sets ASAN_OPTIONS) every
# stopping process also runs LeakSanitizer's exit scan over NVRTC's heap, so allow 8 s there.
GRACE=2
[ -n "${ASAN_OPTIONS:-}" ] && GRACE=8
w=$(mktemp -d "${TMPDIR:-/tmp}/fbstop.XXXXXX")
cleanup() { rm -rf "$w"; }
trap cleanup EXIT
cd "$w" || exit 1
unset TORCH_CUDA_ARCH_LIST CC CXX MAX_JOBS
ARCHS="8.0 9.0"

for i in 1 2; do # about a second of NVRTC per job
	cat >m$i.cu <<K
#include <cuda/std/complex>
extern "C" __global__ void scale$i(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}
K
done
echo 'int host_version(void) { return 1; }' >host.c

# The pids whose command line names $1 (bash builtins only: a grep would name it too).
procs_of() {
	local f args out=
	for f in /proc/[0-9]*/cmdline; do
		args=
		{ IFS= read -r -d '' args && while IFS= read -r -d '' a; do args+=" $a"; done; } 2>/dev/null <"$f"
		case "$args" in *"$1"*) f=${f#/proc/}; out+=" ${f%/cmdline}" ;; esac
	done
	echo "$out"
}

# case MODE SIG PREVIOUS: one stopped run, its checks written to $w/MODE-SIG.result
one_case() {
	local mode=$1 sig=$2 prev=$3
	local d=$w/$mode-$sig res=$w/$mode-$sig.result
	mkdir -p "$d/out"
	export FATBUILD_CACHE_DIR=$d/cache
	local out cmd
	if [ "$mode" = build ]; then
		out=$d/out/libx.so
		cmd=("$FB" build -j 2 --arch-list "$ARCHS" --build-dir "$d/bd" -o "$out" "$w/m1.cu" "$w/m2.cu" "$w/host.c")
	else
		out=$d/out/k.fatbin
		cmd=("$FB" compile -j 2 --arch-list "$ARCHS" -o "$out" "$w/m1.cu" "$w/m2.cu")
	fi
	[ "$prev" = yes ] && head -c 4096 /dev/urandom >"$out" && cp "$out" "$d/previous"
	# bash starts background jobs with SIGINT ignored, and fatbuild leaves an ignored signal so
	env --default-signal=INT,TERM,HUP "${cmd[@]}" >"$d/log" 2>&1 &
	local pid=$! k n enough=3
	[ "$mode" = build ] && enough=7
	# Mid-compile: an NVRTC job has been running a while (build: a `fatbuild compile` edge).
	for k in $(seq 300); do
		n=$(procs_of "$d/" | wc -w)
		[ "$n" -ge "$enough" ] && break
		sleep 0.05
	done
	sleep 0.3
	kill -"$sig" "$pid"
	wait "$pid"
	local rc=$? want=$((128 + $(kill -l "$sig")))
	{
		[ "$rc" = "$want" ] && echo "ok   $mode-$sig exit $rc" || echo "FAIL $mode-$sig exit $rc, want $want"
		local left
		for k in $(seq $((GRACE * 10))); do
			left=$(procs_of "$d/")
			[ -z "$left" ] && break
			sleep 0.1
		done
		if [ -z "$left" ]; then
			echo "ok   $mode-$sig no process left within $GRACE s"
		else
			echo "FAIL $mode-$sig processes left after $GRACE s:"
			for k in $left; do tr '\0' ' ' <"/proc/$k/cmdline" 2>/dev/null | sed 's/^/       /'; echo; done
		fi
		sleep 10
		if [ "$prev" = yes ]; then
			cmp -s "$out" "$d/previous" && echo "ok   $mode-$sig previous OUT kept" || echo "FAIL $mode-$sig previous OUT changed"
		else
			[ ! -e "$out" ] && echo "ok   $mode-$sig OUT absent" || echo "FAIL $mode-$sig OUT written after the stop"
		fi
		local tmps
		tmps=$(find "$d/out" -name '*.tmp*'; [ -d "$d/bd/out" ] && find "$d/bd/out" -name '*.tmp*')
		[ -z "$tmps" ] && echo "ok   $mode-$sig no temporaries" || echo "FAIL $mode-$sig temporaries: $tmps"
		if [ "$sig" != KILL ]; then
			grep -qx "fatbuild: $mode: interrupted by SIG$sig; stopped everything it had started, nothing written" "$d/log" &&
				echo "ok   $mode-$sig says it was interrupted" || { echo "FAIL $mode-$sig message:"; sed 's/^/       /' "$d/log"; }
		fi
		if "${cmd[@]}" >"$d/rerun.log" 2>&1 && "$FB" check --arch 9.0 "$out" >"$d/check.log" 2>&1; then
			echo "ok   $mode-$sig rerun and check"
		else
			echo "FAIL $mode-$sig rerun and check:"
			sed 's/^/       /' "$d/rerun.log" "$d/check.log"
		fi
	} >"$res"
}

# A rebuild never runs beside an earlier build's leftovers. Here the leftover is a ninja that
# is slow to stop (FATBUILD_NINJA is a wrapper that ignores SIGTERM and lingers 2 s after its
# ninja is done), and both fatbuild processes of the first build are SIGKILLed, so no fatbuild
# holds the build lock meanwhile: the run lock the wrapper holds from its start must make the
# rebuild wait. Its wrapper must start only after the first one has ended.
leftovers_case() {
	local d=$w/leftovers
	mkdir -p "$d/out"
	cat >"$d/ninja" <<'S'
#!/bin/sh
trap '' INT TERM HUP
echo "start $(date +%s.%N)" >>"$NINJA_LOG"
ninja "$@"
st=$?
sleep 2
echo "end $(date +%s.%N)" >>"$NINJA_LOG"
exit $st
S
	chmod +x "$d/ninja"
	export NINJA_LOG=$d/ninja.log FATBUILD_CACHE_DIR=$d/cache FATBUILD_NINJA=$d/ninja
	: >"$NINJA_LOG"
	local cmd=("$FB" build --build-dir "$d/bd" -o "$d/out/libh.so" "$w/host.c")
	"${cmd[@]}" >"$d/first.log" 2>&1 &
	local pid=$! k
	for k in $(seq 200); do grep -q start "$NINJA_LOG" && break; sleep 0.05; done
	kill -KILL $(ps -o pid= --ppid "$pid") "$pid" 2>/dev/null
	wait "$pid"
	"${cmd[@]}" >"$d/second.log" 2>&1
	local rc=$?
	{
		[ "$rc" = 0 ] && echo "ok   leftovers: the rebuild succeeds" || { echo "FAIL leftovers: the rebuild (exit $rc)"; sed 's/^/       /' "$d/second.log"; }
		if [ "$(awk '{print $1}' "$NINJA_LOG" | tr '\n' ' ')" = "start end start end " ]; then
			echo "ok   leftovers: the rebuild waited for the earlier build's ninja"
		else
			echo "FAIL leftovers: two ninjas at once in one build dir:"; sed 's/^/       /' "$NINJA_LOG"
		fi
	} >"$w/leftovers.result"
}

leftovers_case &
pids=" $!"
for mode in build compile; do
	for sig in INT TERM HUP KILL; do
		prev=no
		case $sig in INT | HUP) prev=yes ;; esac
		one_case $mode $sig $prev &
		pids+=" $!"
	done
done
wait $pids
cat "$w"/*.result
n=$(cat "$w"/*.result | grep -c '^ok ')
bad=$(cat "$w"/*.result | grep -c '^FAIL')
[ "$n" = 48 ] || { echo "FAIL expected 48 checks, saw $n ok"; bad=$((bad + 1)); }
echo "$n checks ok, $bad failed"
[ "$bad" = 0 ]
