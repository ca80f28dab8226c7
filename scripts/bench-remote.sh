#!/usr/bin/env bash
# bench-remote.sh: what a shared cache buys a fresh machine, side by side in one run, on the
# bundled kernels:
#   1. nvcc -fatbin with the -gencode flags of the arch list (the baseline without fatbuild)
#   2. fatbuild compile, cold: empty local cache, no remote cache (every job runs NVRTC)
#   3. fatbuild compile, warm remote: empty local cache, every image from an nginx WebDAV
#      server on loopback (started here, as tests/remote_cache.sh does)
# BENCH_RUNS interleaved rounds (default 3): each round runs the three once, so that load
# changes hit them alike; medians and ratios are printed. The outputs of 2 and 3 are compared.
#
#   scripts/bench-remote.sh [BUILD_DIR]      (default: build)
# Env: BENCH_ARCHS (default "8.0 9.0 12.0+PTX"), BENCH_RUNS, CUDA_HOME, BENCH_KERNELS (the .cu
# files, default examples/kernels/*.cu).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
fb=$build/bin/fatbuild
[ -x "$fb" ] || { echo "bench-remote: $fb not built (cmake --build $build)" >&2; exit 2; }
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}
nvcc=$cuda/bin/nvcc
archs=${BENCH_ARCHS:-8.0 9.0 12.0+PTX}
runs=${BENCH_RUNS:-3}
if [ -n "${BENCH_KERNELS:-}" ]; then read -r -a kernels <<<"$BENCH_KERNELS"; else kernels=("$here"/examples/kernels/*.cu); fi
t=$(mktemp -d "${TMPDIR:-/tmp}/fbbenchremote.XXXXXX")
source "$here/tests/remote/nginx.sh"
trap 'nginx_stop; rm -rf "$t"' EXIT
nginx_start "$t/srv" || { echo "bench-remote: nginx did not start (scripts/deps.sh installs it)" >&2; exit 2; }
gencode=$("$fb" flags --arch-list "$archs" --format nvcc)

echo "kernels: ${kernels[*]##*/}"
echo "arch list: $archs"
echo "cpus: $(nproc); $("$fb" --version | sed -n 2p)"
echo "server: nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') at $NGINX_URL"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'; }
# fill the server once (machine A)
FATBUILD_CACHE_DIR=$t/fill "$fb" compile --remote-cache "$NGINX_URL" --arch-list "$archs" -o "$t/fill/" "${kernels[@]}"

: >"$t/nvcc.times"; : >"$t/cold.times"; : >"$t/remote.times"
for r in $(seq "$runs"); do
	if [ -x "$nvcc" ]; then
		mkdir -p "$t/nvcc"
		a=$(now)
		for k in "${kernels[@]}"; do
			# shellcheck disable=SC2086
			"$nvcc" -fatbin $gencode -o "$t/nvcc/$(basename "$k" .cu).fatbin" "$k"
		done
		since "$a" >>"$t/nvcc.times"
	fi
	rm -rf "$t/cold" "$t/coldcache"
	a=$(now)
	FATBUILD_CACHE_DIR=$t/coldcache "$fb" compile --arch-list "$archs" -o "$t/cold/" "${kernels[@]}"
	since "$a" >>"$t/cold.times"
	rm -rf "$t/remote" "$t/remotecache"
	a=$(now)
	FATBUILD_CACHE_DIR=$t/remotecache "$fb" compile -v --remote-cache "$NGINX_URL" --arch-list "$archs" \
		-o "$t/remote/" "${kernels[@]}" 2>"$t/remote.log"
	since "$a" >>"$t/remote.times"
	grep -q ' 0 compiled' "$t/remote.log" || { cat "$t/remote.log" >&2; echo "bench-remote: the warm remote run compiled" >&2; exit 1; }
	for f in "$t"/cold/*.fatbin; do
		cmp -s "$f" "$t/remote/$(basename "$f")" || { echo "bench-remote: $(basename "$f") differs cold vs remote" >&2; exit 1; }
	done
	echo "round $r: nvcc $(tail -1 "$t/nvcc.times" 2>/dev/null || echo -) s, cold $(tail -1 "$t/cold.times") s, warm remote $(tail -1 "$t/remote.times") s"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mn=$(median "$t/nvcc.times"); mc=$(median "$t/cold.times"); mr=$(median "$t/remote.times")
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n| build | median wall (%s runs) |\n|---|---:|\n' "$runs"
[ -s "$t/nvcc.times" ] && printf '| nvcc -fatbin + gencode | %.2f s |\n' "$mn"
printf '| fatbuild compile, cold local cache | %.2f s |\n' "$mc"
printf '| fatbuild compile, empty local cache, warm remote | %.2f s |\n' "$mr"
awk -v c="$mc" -v r="$mr" 'BEGIN { printf "\ncold local / warm remote: %.1fx\n", c / r }'
[ -s "$t/nvcc.times" ] && awk -v n="$mn" -v r="$mr" 'BEGIN { printf "nvcc / warm remote: %.1fx\n", n / r }'
echo "cold and warm-remote outputs byte-identical: yes"
