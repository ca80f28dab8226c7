#!/usr/bin/env bash
# bench-inspect.sh: how fast `fatbuild inspect` lists every entry of a big CUDA library
# (default libcublasLt.so: ~540 MB, 2782 containers), and, when NVIDIA's cuobjdump can be
# had (pip package nvidia-cuda-cuobjdump, installed into a venv under /tmp), the same listing
# with `cuobjdump --list-elf --list-ptx`: entry counts compared per arch, times side by side.
#   scripts/bench-inspect.sh [LIBRARY] [RUNS]
# Env: FATBUILD (binary; default build/bin/fatbuild), CUOBJDUMP (skip the pip install),
#      FB_BENCH_NO_PIP=1 (do not try pip).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
FB=${FATBUILD:-$here/build/bin/fatbuild}
lib=${1:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so}
runs=${2:-5}
[ -x "$FB" ] || { echo "bench-inspect: $FB not found; build first (cmake --build build)" >&2; exit 2; }
[ -e "$lib" ] || { echo "bench-inspect: $lib not found" >&2; exit 2; }
lib=$(readlink -f "$lib")
now() { date +%s.%N; }
# best of N wall-clock seconds for a command (output discarded); first run warms the page cache
best() {
	"$@" >/dev/null 2>&1 || true
	local b=999999 i s e t
	for i in $(seq "$runs"); do
		s=$(now); "$@" >/dev/null 2>&1 || true; e=$(now)
		t=$(echo "$e - $s" | bc -l)
		if [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
	done
	printf '%.3f' "$b"
}
size=$(stat -c %s "$lib")
head=$("$FB" inspect "$lib" | head -1)
echo "library:  $lib ($((size / 1048576)) MiB)"
echo "fatbuild: $head"
t_fb=$(best "$FB" inspect "$lib")
t_fbj=$(best "$FB" inspect --format json "$lib")
echo "fatbuild inspect (table):  ${t_fb} s   (best of $runs, warm cache)"
echo "fatbuild inspect (json):   ${t_fbj} s"

ours=$(mktemp) theirs=$(mktemp)
trap 'rm -f "$ours" "$theirs"' EXIT
"$FB" inspect --format json "$lib" | python3 -c '
import json, sys, collections
d = json.load(sys.stdin)
c = collections.Counter()
for f in d["files"]:
    for k in f["containers"]:
        for e in k["entries"]:
            if e["kind"] in ("elf", "ptx"):
                # cuobjdump names both sm_X (no a/f for f) : normalise
                a = e["arch"].replace("compute_", "sm_")
                if a.endswith("f"): a = a[:-1]
                c[(e["kind"].upper(), a)] += 1
for (k, a), n in sorted(c.items()): print(k, a, n)' >"$ours"

cuo=${CUOBJDUMP:-}
if [ -z "$cuo" ] && [ "${FB_BENCH_NO_PIP:-0}" != 1 ]; then
	venv=/tmp/fbbench-venv
	if [ ! -x "$venv/bin/pip" ]; then python3 -m venv "$venv" >/dev/null 2>&1 || true; fi
	if [ -x "$venv/bin/pip" ]; then
		cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
		if [ -z "$cuo" ]; then
			timeout 180 "$venv/bin/pip" install -q nvidia-cuda-cuobjdump >/dev/null 2>&1 || true
			cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
		fi
	fi
fi
if [ -z "$cuo" ] || [ ! -x "$cuo" ]; then
	echo "cuobjdump: not available (pip install nvidia-cuda-cuobjdump failed or was skipped); no comparison"
	exit 0
fi
echo "cuobjdump: $cuo ($("$cuo" --version | tail -1))"
"$cuo" --list-elf --list-ptx "$lib" | sed -nE 's/^(ELF|PTX) file +[0-9]+: .*\.([a-z]+_[0-9]+[af]?)\.(cubin|ptx)$/\1 \2/p' |
	sort | uniq -c | awk '{print $2, $3, $1}' >"$theirs"
if diff -u "$theirs" "$ours" >/dev/null; then
	echo "entries:  identical per kind and arch ($(awk '{s += $3} END {print s}' "$ours") ELF+PTX entries; cuobjdump does not print 'f')"
else
	echo "entries:  DIFFER (cuobjdump vs fatbuild):"; diff -u "$theirs" "$ours" || true
fi
t_cu=$(best "$cuo" --list-elf --list-ptx "$lib")
echo "cuobjdump --list-elf --list-ptx: ${t_cu} s"
echo "ratio:    cuobjdump / fatbuild = $(echo "$t_cu / $t_fb" | bc -l | xargs printf '%.0f')x"
