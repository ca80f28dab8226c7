#!/usr/bin/env bash
# bench-remote.sh: what a shared cache buys a fresh machine, side by side in one run, on the
# bundled kernels. Two machines on this one: A and B each have their own local cache and their
# own copy of the sources at different paths (B's deeper), as two checkouts on two hosts:
#   1. nvcc -fatbin with the -gencode flags of the arch list (the baseline without fatbuild)
#   2. fatbuild compile on B, cold: empty local cache, no remote cache (every job runs NVRTC)
#   3. fatbuild compile on B, warm remote: empty local cache, every image from a server that A
#      filled once, for each server of BENCH_SERVERS on loopback, started here:
#      nginx  Bazel's HTTP cache protocol (WebDAV, tests/remote/nginx.sh)
#      buildgrid  REAPI v2 on gRPC (BuildGrid from pip in BUILD_DIR/buildgrid-venv,
#                 tests/remote/buildgrid.sh; needs a fatbuild built with libgrpc)
# BENCH_RUNS interleaved rounds (default 3): each round runs them all once, so that load
# changes hit them alike; medians and ratios are printed. Every warm-remote output is compared
# with the cold one, and a warm run that compiled anything stops the bench.
#
#   scripts/bench-remote.sh [BUILD_DIR]      (default: build)
# Env: BENCH_ARCHS (default "8.0 9.0 12.0+PTX"), BENCH_RUNS, CUDA_HOME, BENCH_KERNELS (the .cu
# files, default examples/kernels/*.cu; the directory of each is copied for A and B),
# BENCH_SERVERS (default "nginx buildgrid"; one that cannot start is left out with a note).
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
FB_SOURCE_DIR=$here # read by tests/remote/buildgrid.sh
srcs_A=()
srcs_B=()
source "$here/tests/remote/nginx.sh"
source "$here/tests/remote/buildgrid.sh"
trap 'nginx_stop; bgd_stop; rm -rf "$t"' EXIT
gencode=$("$fb" flags --arch-list "$archs" --format nvcc)

# copy_sources NAME DIR: a machine's copy of the kernels (their directories, headers and all)
# under DIR, their paths in srcs_NAME
copy_sources() {
	local dir k
	declare -n out=srcs_$1
	out=()
	for k in "${kernels[@]}"; do
		dir=$2/src/$(basename "$(dirname "$k")")
		[ -d "$dir" ] || { mkdir -p "$dir" && cp -r "$(dirname "$k")"/. "$dir/"; }
		out+=("$dir/$(basename "$k")")
	done
}
copy_sources A "$t/A"
copy_sources B "$t/B/another/checkout"

# the servers that start: names and URLs
names=()
urls=()
for s in ${BENCH_SERVERS:-nginx buildgrid}; do
	case $s in
	nginx)
		if nginx_start "$t/nginx"; then
			names+=("nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'), HTTP")
			urls+=("$NGINX_URL")
		else
			echo "bench-remote: nginx did not start (scripts/deps.sh installs it): left out" >&2
		fi
		;;
	buildgrid)
		FATBUILD_CACHE_DIR=$t/probe "$fb" compile --remote-cache grpc://127.0.0.1:1 -o "$t/probe.fatbin" \
			"${kernels[0]}" >"$t/probe.log" 2>&1 || true
		if ! grep -q 'built without' "$t/probe.log"; then
			if bgd_venv "$build/buildgrid-venv" && bgd_start "$t/bgd"; then
				names+=("BuildGrid ${bgd_pkg#*==}, REAPI gRPC")
				urls+=("$url")
			else
				echo "bench-remote: BuildGrid did not start ($bgd_pkg from pip): left out" >&2
			fi
		else
			echo "bench-remote: fatbuild was built without libgrpc: BuildGrid left out" >&2
		fi
		;;
	*) echo "bench-remote: unknown server '$s' in BENCH_SERVERS" >&2; exit 2 ;;
	esac
done
[ ${#urls[@]} -gt 0 ] || { echo "bench-remote: no server started" >&2; exit 2; }

echo "kernels: ${kernels[*]##*/}"
echo "arch list: $archs"
echo "cpus: $(nproc); $("$fb" --version | sed -n 2p)"
echo "machine A: $t/A/src, machine B: $t/B/another/checkout/src (each its own cache)"
for i in "${!urls[@]}"; do echo "server $i: ${names[$i]} at ${urls[$i]}"; done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'; }
# machine A fills each server once
for i in "${!urls[@]}"; do
	FATBUILD_CACHE_DIR=$t/A/cache$i "$fb" compile --remote-cache "${urls[$i]}" --arch-list "$archs" \
		-o "$t/A/out$i/" "${srcs_A[@]}"
done

: >"$t/nvcc.times"
: >"$t/cold.times"
for i in "${!urls[@]}"; do : >"$t/remote$i.times"; done
for r in $(seq "$runs"); do
	line="round $r:"
	if [ -x "$nvcc" ]; then
		mkdir -p "$t/nvcc"
		a=$(now)
		for k in "${srcs_B[@]}"; do
			# shellcheck disable=SC2086
			"$nvcc" -fatbin $gencode -o "$t/nvcc/$(basename "$k" .cu).fatbin" "$k"
		done
		since "$a" >>"$t/nvcc.times"
		line+=" nvcc $(tail -1 "$t/nvcc.times") s,"
	fi
	rm -rf "$t/B/cold" "$t/B/coldcache"
	a=$(now)
	FATBUILD_CACHE_DIR=$t/B/coldcache "$fb" compile --arch-list "$archs" -o "$t/B/cold/" "${srcs_B[@]}"
	since "$a" >>"$t/cold.times"
	line+=" cold $(tail -1 "$t/cold.times") s"
	for i in "${!urls[@]}"; do
		rm -rf "$t/B/remote" "$t/B/remotecache"
		a=$(now)
		FATBUILD_CACHE_DIR=$t/B/remotecache "$fb" compile -v --remote-cache "${urls[$i]}" --arch-list "$archs" \
			-o "$t/B/remote/" "${srcs_B[@]}" 2>"$t/remote.log"
		since "$a" >>"$t/remote$i.times"
		grep -q ' 0 compiled' "$t/remote.log" ||
			{ cat "$t/remote.log" >&2; echo "bench-remote: the warm remote run (${names[$i]}) compiled" >&2; exit 1; }
		for f in "$t"/B/cold/*.fatbin; do
			cmp -s "$f" "$t/B/remote/$(basename "$f")" ||
				{ echo "bench-remote: $(basename "$f") differs cold vs remote (${names[$i]})" >&2; exit 1; }
		done
		line+=", warm remote ${names[$i]%%,*} $(tail -1 "$t/remote$i.times") s"
	done
	echo "$line"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mn=$(median "$t/nvcc.times")
mc=$(median "$t/cold.times")
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n| build on machine B | median wall (%s runs) |\n|---|---:|\n' "$runs"
[ -s "$t/nvcc.times" ] && printf '| nvcc -fatbin + gencode | %.2f s |\n' "$mn"
printf '| fatbuild compile, cold local cache | %.2f s |\n' "$mc"
for i in "${!urls[@]}"; do
	printf '| fatbuild compile, empty local cache, warm remote (%s) | %.2f s |\n' "${names[$i]}" "$(median "$t/remote$i.times")"
done
echo
for i in "${!urls[@]}"; do
	mr=$(median "$t/remote$i.times")
	awk -v c="$mc" -v r="$mr" -v s="${names[$i]%%,*}" 'BEGIN { printf "cold local / warm remote (%s): %.1fx\n", s, c / r }'
	[ -s "$t/nvcc.times" ] && awk -v n="$mn" -v r="$mr" -v s="${names[$i]%%,*}" 'BEGIN { printf "nvcc / warm remote (%s): %.1fx\n", s, n / r }'
done
echo "cold and warm-remote outputs byte-identical: yes (every server, every round)"
