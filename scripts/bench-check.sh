#!/usr/bin/env bash
# bench-check.sh: `fatbuild check` over a whole Python environment against what one would do
# without it, looping `cuobjdump --list-elf` over the same libraries (docs/check-environment.md §6).
#   scripts/bench-check.sh [SITE-PACKAGES|PYTHON] [ARCHES] [RUNS]
# Default: the PyTorch venv tests/torch/run.sh makes (build/venv-torch), arches 8.0,9.0,12.0,
# 3 runs each after one untimed run (a warm page cache for both). fatbuild reads the whole tree
# (every file, by content); cuobjdump gets only the tree's ELF files (found by their magic), so
# the comparison leaves out the walk it would need. Each run is timed by /usr/bin/time: wall,
# user + system CPU, and the peak memory (max RSS; for the loop, its largest cuobjdump). The
# median of the runs is printed, with the ratios, the load (uptime) before and after, and the
# commands, to run again on a quiet machine.
# Env: FATBUILD (default build/bin/fatbuild), CUOBJDUMP (else $CUDA_HOME/bin/cuobjdump, else
# pip's nvidia-cuda-cuobjdump in a venv under /tmp unless FB_BENCH_NO_PIP=1), JOBS (check -j).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
FB=${FATBUILD:-$here/build/bin/fatbuild}
target=${1:-$here/build/venv-torch}
arches=${2:-8.0,9.0,12.0}
runs=${3:-3}
[ -x "$FB" ] || { echo "bench-check: $FB not found; build first (cmake --build build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-check: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
if [ -d "$target/bin" ] && [ -x "$target/bin/python" ]; then
	target=$target/bin/python
fi
if [ -x "$target" ] && [ ! -d "$target" ]; then
	site=$("$target" -I -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
	what=(--python "$target")
else
	site=$target
	what=("$target")
fi
[ -d "$site" ] || { echo "bench-check: no site-packages at $site (make the venv: ctest -R torch_extension)" >&2; exit 2; }

cuo=${CUOBJDUMP:-${CUDA_HOME:-/usr/local/cuda}/bin/cuobjdump}
if [ ! -x "$cuo" ] && [ "${FB_BENCH_NO_PIP:-0}" != 1 ]; then
	venv=/tmp/fbbench-venv
	[ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >/dev/null 2>&1 || true
	cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
	if [ -z "$cuo" ] && [ -x "$venv/bin/pip" ]; then
		"$venv/bin/pip" install -q nvidia-cuda-cuobjdump >/dev/null 2>&1 || true
		cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
	fi
fi
[ -x "$cuo" ] || { echo "bench-check: no cuobjdump (set CUOBJDUMP, or allow pip)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The ELF files of the tree, not following links (what the loop gets).
find "$site" -type f -print0 | xargs -0 python3 -c '
import sys
for p in sys.argv[1:]:
    try:
        with open(p, "rb") as f:
            if f.read(4) == b"\x7fELF":
                print(p)
    except OSError:
        pass' >"$work/elf.txt"
nelf=$(wc -l <"$work/elf.txt")
bytes=$(tr '\n' '\0' <"$work/elf.txt" | du -cb --files0-from=- | tail -1 | cut -f1)
nfiles=$(find "$site" -type f | wc -l)
cat >"$work/loop.sh" <<LOOP
while IFS= read -r f; do "$cuo" --list-elf "\$f"; done <"$work/elf.txt"
LOOP
fbcmd=("$FB" check --arch "$arches" --format json ${JOBS:+-j "$JOBS"} "${what[@]}")
loopcmd=(bash "$work/loop.sh")

# timed NAME CMD...: one run, "wall cpu maxrss_kb" appended to $work/NAME
timed() {
	local name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@" >"$work/$name.out" 2>/dev/null || true
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$work/t" >>"$work/$name"
}
median() { # FILE COLUMN
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

load_before=$(uptime)
"${fbcmd[@]}" >/dev/null 2>&1 || true
"${loopcmd[@]}" >/dev/null 2>&1 || true
for _ in $(seq "$runs"); do
	timed fb "${fbcmd[@]}"
	timed cuo "${loopcmd[@]}"
done
load_after=$(uptime)

libs=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sum(len(g["libraries"]) for g in d["groups"]))' "$work/fb.out")
cuolibs=$(grep -c '^ELF file' "$work/cuo.out" || true)
echo "environment: $site"
echo "  $nfiles files, $nelf ELF files ($((bytes / 1048576)) MiB); arches $arches; $runs runs each, median, warm page cache"
echo "  fatbuild: $libs files with device code; cuobjdump --list-elf: $cuolibs ELF images listed"
printf '%-34s %9s %9s %11s\n' "" "wall s" "CPU s" "max RSS MiB"
for n in fb cuo; do
	label=$([ $n = fb ] && echo "fatbuild check (whole tree)" || echo "cuobjdump --list-elf (ELF files)")
	printf '%-34s %9s %9s %11d\n' "$label" "$(median "$work/$n" 1)" "$(median "$work/$n" 2)" $(($(median "$work/$n" 3) / 1024))
done
awk -v fw="$(median "$work/fb" 1)" -v cw="$(median "$work/cuo" 1)" -v fc="$(median "$work/fb" 2)" -v cc="$(median "$work/cuo" 2)" \
	-v fm="$(median "$work/fb" 3)" -v cm="$(median "$work/cuo" 3)" \
	'BEGIN { printf "ratios (cuobjdump / fatbuild): wall %.1fx, CPU %.1fx, max RSS %.1fx\n", cw / fw, cc / fc, cm / fm }'
echo "load before: $load_before"
echo "load after:  $load_after"
echo "commands:"
echo "  ${fbcmd[*]}"
echo "  while read f; do $cuo --list-elf \"\$f\"; done <ELF-LIST   (ELF-LIST: the $nelf ELF files of $site)"
