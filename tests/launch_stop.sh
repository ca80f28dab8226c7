#!/usr/bin/env bash
# launch_stop.sh: a split nvcc stopped by a signal (docs/launcher.md "Stopping"). The host
# compiler (-ccbin) is a script that, for the device preprocess, writes its pid and sleeps, so
# the signal always lands while a step runs. For SIGINT to fatbuild's pid, SIGTERM to it, and
# SIGINT to its whole process group (a terminal's Ctrl-C): exit 128+signal, no
# $TMPDIR/fatbuild-launch-* left, the sleeping step gone, no object, nvcc not run again (the
# log's one line for the command is `stop`).
set -u
: "${FATBUILD_BIN:?}"
command -v nvcc >/dev/null || { echo "SKIP: no nvcc on PATH"; exit 77; }
command -v g++ >/dev/null || { echo "SKIP: no g++ on PATH"; exit 77; }
command -v perl >/dev/null && command -v setsid >/dev/null || { echo "SKIP: perl or setsid missing"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/fblaunchstop.XXXXXX")
steps=
cleanup() {
	for p in $steps; do kill "$p" 2>/dev/null; done # steps the signal did not stop, by their pids
	rm -rf "$w"
}
trap cleanup EXIT
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
mkdir -p "$w/bin" "$w/tmp"
cat >"$w/bin/g++" <<EOF2
#!/bin/sh
case " \$* " in *" -E "*" -D__CUDA_ARCH__="*|*" -D__CUDA_ARCH__="*" -E "*) echo \$\$ >"$w/step.pid"; exec sleep 60 ;; esac
exec "$(command -v g++)" "\$@"
EOF2
chmod +x "$w/bin/g++"
printf '__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n' >"$w/k.cu"
cd "$w" || exit 1
export TMPDIR=$w/tmp FATBUILD_CACHE_DIR=$w/cache FATBUILD_LAUNCH_LOG=$w/launch.log

# stop HOW SIG WANT: starts the split (SIGINT at its default, as in a terminal), sends SIG once
# the device preprocess sleeps (HOW: pid or group), and checks what is left.
stop() {
	local how=$1 sig=$2 want=$3 pid rc i step
	rm -f step.pid k.o launch.log
	if [ "$how" = group ]; then
		setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$FATBUILD_BIN" nvcc -ccbin "$w/bin/g++" -arch=sm_80 -c k.cu -o k.o 2>err &
	else
		perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$FATBUILD_BIN" nvcc -ccbin "$w/bin/g++" -arch=sm_80 -c k.cu -o k.o 2>err &
	fi
	pid=$!
	for ((i = 0; i < 600; i++)); do [ -s step.pid ] && break; sleep 0.1; done
	[ -s step.pid ] || { no "$how $sig: the device preprocess never started"; kill "$pid"; wait "$pid"; return; }
	step=$(cat step.pid)
	steps="$steps $step"
	if [ "$how" = group ]; then kill -s "$sig" -- "-$pid"; else kill -s "$sig" "$pid"; fi
	wait "$pid"
	rc=$?
	[ "$rc" = "$want" ] || no "$how $sig: exit $rc, want $want"
	for ((i = 0; i < 50; i++)); do [ -z "$(ls tmp)" ] && break; sleep 0.1; done
	[ -z "$(ls tmp)" ] || no "$how $sig: left in \$TMPDIR: $(ls tmp)"
	for ((i = 0; i < 50; i++)); do kill -0 "$step" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$step" 2>/dev/null || no "$how $sig: the step it was running (pid $step) still runs"
	[ ! -e k.o ] || no "$how $sig: an object was written"
	[ "$(cat launch.log 2>/dev/null)" = "stop nvcc k.cu: $sig" ] ||
		no "$how $sig: the log is '$(cat launch.log 2>/dev/null)', want one line 'stop nvcc k.cu: $sig'"
	grep -q "interrupted by $sig" err || no "$how $sig: stderr: '$(cat err)'"
}
stop pid SIGINT 130
stop pid SIGTERM 143
stop group SIGINT 130

[ "$fail" = 0 ] && echo "launch_stop: ok"
exit "$fail"
