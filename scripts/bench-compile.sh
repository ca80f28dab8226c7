#!/usr/bin/env bash
# bench-compile.sh: fatbuild compile (NVRTC, parallel, cached) against nvcc on the bundled
# kernels, side by side in one run:
#   1. nvcc -fatbin with the -gencode flags of the arch list
#   2. the same with --threads $(nproc)
#   3. fatbuild compile -o DIR/ (one fatbin per file, as nvcc writes), cold cache (emptied before every run)
#   4. fatbuild compile, warm cache
# Each is timed by hyperfine, in BENCH_RUNS interleaved rounds (default 3); medians and ratios
# are printed.
#
#   scripts/bench-compile.sh [BUILD_DIR]      (default: build)
# Env: BENCH_ARCHS (default "7.5 8.0 8.6 8.9 9.0 10.0 12.0+PTX"), BENCH_RUNS, CUDA_HOME.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
fb=$build/bin/fatbuild
[ -x "$fb" ] || { echo "bench-compile: $fb not built (cmake --build $build)" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "bench-compile: hyperfine not found" >&2; exit 2; }
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}
nvcc=$cuda/bin/nvcc
archs=${BENCH_ARCHS:-7.5 8.0 8.6 8.9 9.0 10.0 12.0+PTX}
runs=${BENCH_RUNS:-3}
cpus=$(nproc)
kernels=("$here"/examples/kernels/*.cu)
gencode=$("$fb" flags --arch-list "$archs" --format nvcc)
t=$(mktemp -d "${TMPDIR:-/tmp}/fbbench.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/nvcc" "$t/nvcct"
q() { printf '%q ' "$@"; }

echo "kernels: ${kernels[*]##*/}"
echo "arch list: $archs"
echo "gencode: $gencode"
echo "cpus: $cpus; $("$nvcc" --version | tail -1); $("$fb" --version | sed -n 2p)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

cold="rm -rf $t/cache"
# Rounds: every round runs the four builds once each, one after the other, so that a change in
# the machine's load (other jobs) hits all four alike; medians are over the rounds.
# --prepare pairs with the commands in order: only the cold run empties the cache; the warm run
# follows the cold one and finds its cache.
for i in $(seq 1 "$runs"); do
	echo "round $i/$runs (load $(cut -d' ' -f1 /proc/loadavg))"
	hyperfine --runs 1 --export-json "$t/h$i.json" --style none \
		--prepare true --prepare true --prepare "$cold" --prepare true \
		--command-name "nvcc -fatbin" \
		"$(q "$nvcc" -fatbin $gencode -odir "$t/nvcc" "${kernels[@]}")" \
		--command-name "nvcc -fatbin --threads $cpus" \
		"$(q "$nvcc" -fatbin --threads "$cpus" $gencode -odir "$t/nvcct" "${kernels[@]}")" \
		--command-name "fatbuild cold" \
		"$(q env FATBUILD_CACHE_DIR="$t/cache" "$fb" compile --arch-list "$archs" -o "$t/cold/" "${kernels[@]}")" \
		--command-name "fatbuild warm" \
		"$(q env FATBUILD_CACHE_DIR="$t/cache" "$fb" compile --arch-list "$archs" -o "$t/warm/" "${kernels[@]}")"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
diff -r "$t/cold" "$t/warm" >/dev/null && echo "cold and warm outputs: byte-identical"

python3 - "$cpus" "$t"/h*.json <<'PY'
import json, statistics, sys
cpus = sys.argv[1]
r = {}
for f in sys.argv[2:]:
    for x in json.load(open(f))["results"]:
        e = r.setdefault(x["command"], {"times": [], "cpu": []})
        e["times"] += x["times"]
        e["cpu"].append(x["user"] + x["system"])
for v in r.values():
    v["median"], v["min"], v["max"] = statistics.median(v["times"]), min(v["times"]), max(v["times"])
    v["cpumean"] = statistics.mean(v["cpu"])
med = {k: v["median"] for k, v in r.items()}
nv, nvt = med["nvcc -fatbin"], med[f"nvcc -fatbin --threads {cpus}"]
cold, warm = med["fatbuild cold"], med["fatbuild warm"]
print()
print("| build | median wall | min | max | CPU (user+sys, mean) | runs |")
print("|---|---:|---:|---:|---:|---:|")
for k, v in r.items():
    print(f"| {k} | {v['median']:.2f} s | {v['min']:.2f} s | {v['max']:.2f} s | {v['cpumean']:.2f} s | {len(v['times'])} |")
print()
print(f"fatbuild cold vs nvcc:              {nv / cold:.2f}x faster (goal >= 3x)")
print(f"fatbuild cold vs nvcc --threads {cpus}:  {nvt / cold:.2f}x faster (goal >= 2x)")
print(f"fatbuild warm vs cold:              {cold / warm:.1f}x faster (goal >= 20x)")
cpu = {k: v["cpumean"] for k, v in r.items()}
# the same ratios within each round (both builds saw the same load), median over rounds
def per_round(a, b):
    return statistics.median(x / y for x, y in zip(r[a]["times"], r[b]["times"]))
print(f"per round (median): cold vs nvcc {per_round('nvcc -fatbin', 'fatbuild cold'):.2f}x, "
      f"cold vs nvcc --threads {per_round(f'nvcc -fatbin --threads {cpus}', 'fatbuild cold'):.2f}x, "
      f"warm vs cold {per_round('fatbuild cold', 'fatbuild warm'):.1f}x")
print(f"CPU time, nvcc / fatbuild cold:     {cpu['nvcc -fatbin'] / cpu['fatbuild cold']:.2f}x less work")
PY
