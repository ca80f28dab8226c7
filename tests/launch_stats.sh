#!/usr/bin/env bash
# launch_stats.sh: `fatbuild cache stats` counts the launcher's cicc and ptxas steps by kind
# (docs/remote-cache.md §4). A fresh cache shows no launcher line; after arch 80, then 80;90,
# then 80;90 again, the lines "launcher cicc: hits H, misses M" and "launcher ptxas: ..." hold
# what FATBUILD_LAUNCH_LOG's split lines count (3 hits and 2 misses each), and the misses of
# both kinds are the "misses (compiled)" total; an exact entry's marker is counted as no hit.
set -u
: "${FATBUILD_BIN:?}"
command -v nvcc >/dev/null || { echo "SKIP: no nvcc on PATH"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/fblaunchstats.XXXXXX")
trap 'rm -rf "$w"' EXIT
export FATBUILD_CACHE_DIR=$w/cache FATBUILD_LAUNCH_LOG=$w/launch.log
unset FATBUILD_REMOTE_CACHE
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
cd "$w" || exit 1
printf '__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n' >k.cu
"$FATBUILD_BIN" cache stats >stats0 || no "cache stats on a fresh cache"
! grep -q '^launcher' stats0 || no "a fresh cache shows launcher lines: $(grep '^launcher' stats0)"
a80=(-gencode arch=compute_80,code=sm_80)
a90=(-gencode arch=compute_90,code=sm_90)
"$FATBUILD_BIN" nvcc "${a80[@]}" -c k.cu -o k1.o || no "arch 80"
"$FATBUILD_BIN" nvcc "${a80[@]}" "${a90[@]}" -c k.cu -o k2.o || no "arch 80;90"
"$FATBUILD_BIN" nvcc "${a80[@]}" "${a90[@]}" -c k.cu -o k3.o || no "arch 80;90 again"
[ "$(grep -c '^split ' launch.log)" = 3 ] || { cat launch.log >&2; no "want 3 split compiles"; }
"$FATBUILD_BIN" cache stats >stats || no "cache stats"
count() { grep -o "$1 [a-z_0-9]* $2" launch.log | wc -l; } # KIND hit|miss, of the split lines
for k in cicc ptxas; do
	want="launcher $k: hits $(count $k hit), misses $(count $k miss)"
	grep -qx "$want" stats || { cat launch.log stats >&2; no "want '$want'"; }
done
[ "$(grep -c '^launcher' stats)" = 2 ] || no "want the cicc and ptxas lines alone: $(grep '^launcher' stats)"
grep -qx 'launcher cicc: hits 3, misses 2' stats && grep -qx 'launcher ptxas: hits 3, misses 2' stats ||
	{ cat stats >&2; no "want 3 hits and 2 misses of each kind"; }
grep -qx 'misses (compiled): 4' stats || no "misses (compiled): want 4, the misses of both kinds: $(grep '^misses' stats)"
# A source whose cicc entry is exact (assert: the absolute path in a string) has a marker under
# its based key; the marker is no hit: its second compile adds 2 local hits (cicc, ptxas), not 3.
mkdir -p "$w/ex" && printf '#include <cassert>\n__global__ void as(int *x) { assert(x[0]); }\n' >"$w/ex/as.cu"
export FATBUILD_CACHE_DIR=$w/cache-ex
for n in 1 2; do "$FATBUILD_BIN" nvcc "${a80[@]}" -c "$w/ex/as.cu" -o as$n.o || no "as.cu, compile $n"; done
"$FATBUILD_BIN" cache stats >stats-ex || no "cache stats (as.cu)"
grep -qx 'local hits: 2' stats-ex && grep -qx 'launcher cicc: hits 1, misses 1' stats-ex ||
	{ cat launch.log stats-ex >&2; no "as.cu twice: want 2 local hits and cicc 1 hit, 1 miss"; }
[ "$fail" = 0 ] && echo "launch_stats: ok"
exit "$fail"
