#!/usr/bin/env bash
# bench-prune.sh: fatbuild prune on a big NVIDIA library (default libcublasLt.so: ~540 MB,
# 2782 containers) to "9.0" and to "8.0 9.0 10.0 12.0+PTX": wall time of the prune (and of
# `fatbuild size` with its zstd estimate), the file size, and the zstd-compressed size (zstd -3,
# what an archive or an image layer stores) before and after, with the ratios. The zstd sizes
# are measured by the zstd CLI, independently of `fatbuild size`'s own estimate (printed beside).
# NVIDIA's nvprune refuses shared libraries (relocatable objects and archives only), so there
# is no NVIDIA tool to time against for a .so; when one is on PATH it is asked, and its answer
# is printed.
# Usage: scripts/bench-prune.sh [LIB] [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so}
bdir=${2:-$root/build}
fb=${FATBUILD_BIN:-$bdir/bin/fatbuild}
[ -x "$fb" ] || { echo "bench-prune.sh: no fatbuild at $fb (build first)" >&2; exit 2; }
[ -f "$lib" ] || { echo "bench-prune.sh: no library $lib" >&2; exit 2; }
command -v zstd >/dev/null || { echo "bench-prune.sh: the zstd CLI is needed" >&2; exit 2; }
w=$(mktemp -d "${TMPDIR:-/tmp}/fbbench-prune.XXXXXX")
trap 'rm -rf "$w"' EXIT
lib=$(readlink -f "$lib")
now() { date +%s.%N; }
zsize() { zstd -3 -q -c -T1 "$1" | wc -c; }
mib() { echo "$1" | awk '{printf "%.1f MiB", $1 / 1048576}'; }

echo "library:  $lib ($(mib "$(stat -c %s "$lib")"), $("$fb" inspect --format json "$lib" |
	python3 -c 'import json,sys; f=json.load(sys.stdin)["files"][0]; print(len(f["containers"]), "containers,", sum(len(c["entries"]) for c in f["containers"]), "entries")'))"
z0=$(zsize "$lib")
echo "zstd -3:  $(mib "$z0") before any prune"
if command -v nvprune >/dev/null; then
	echo "nvprune -arch sm_90 on it: $(nvprune -arch sm_90 "$lib" -o "$w/nv.so" 2>&1 | head -1)"
fi
for list in "9.0" "8.0 9.0 10.0 12.0+PTX"; do
	echo
	echo "== --arch-list \"$list\""
	t0=$(now)
	"$fb" prune --allow-missing --arch-list "$list" "$lib" -o "$w/p.so" >"$w/log" 2>"$w/err"
	t1=$(now)
	sed 's/^/   /' "$w/log"
	[ -s "$w/err" ] && echo "   ($(grep -c . "$w/err") notes, first: $(head -1 "$w/err"))"
	t2=$(now)
	"$fb" size --arch-list "$list" "$lib" >"$w/size"
	t3=$(now)
	z1=$(zsize "$w/p.so")
	printf 'prune:    %.2f s\n' "$(echo "$t1 - $t0" | bc -l)"
	printf 'size:     %.2f s (with two zstd -3 passes over the file)\n' "$(echo "$t3 - $t2" | bc -l)"
	echo "file:     $(mib "$(stat -c %s "$lib")") -> $(mib "$(stat -c %s "$w/p.so")") (linked: rewritten in place)"
	echo "zstd -3:  $(mib "$z0") -> $(mib "$z1"): ratio $(echo "$z0 / $z1" | bc -l | xargs printf '%.2f')x, saves $(mib $((z0 - z1)))"
	echo "estimate: $(grep '  zstd:' "$w/size" | sed 's/^ *//')"
	"$fb" check --arch "$(echo "$list" | sed 's/+PTX//g; s/ /,/g')" "$w/p.so" | sed 's/^/check:    /'
done
