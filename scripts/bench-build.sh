#!/usr/bin/env bash
# bench-build.sh: a whole extension build with fatbuild (NVRTC) against the equivalent nvcc
# build (nvcc -c per file with the same -gencode flags, then the link; run here through
# `fatbuild build --backend nvcc`, i.e. the same ninja graph and parallelism, only the device
# compiler differs). Three cases for each:
#   cold   empty build dir, empty compile cache
#   warm   empty build dir, compile cache kept (NVRTC results reused; nvcc has no cache, so
#          for nvcc this is a second cold build with warm page caches)
#   no-op  nothing changed since the last build (ninja: no work to do)
# Prints seconds (best of RUNS for warm and no-op) and the nvcc/fatbuild ratios.
#   scripts/bench-build.sh [ARCH_LIST] [RUNS]     (default "8.0 8.6 9.0+PTX", 3)
# Sources: examples/kernels/*.cu (kernels) + examples/saxpy/saxpy_host.c (host code).
# Env: FATBUILD (binary; default build/bin/fatbuild), JOBS (default: nproc).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
FB=${FATBUILD:-$here/build/bin/fatbuild}
arch=${1:-8.0 8.6 9.0+PTX}
runs=${2:-3}
jobs=${JOBS:-$(nproc)}
[ -x "$FB" ] || { echo "bench-build: $FB not found; build first (cmake --build build)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
kernels=("$here"/examples/kernels/*.cu)
host=$here/examples/saxpy/saxpy_host.c
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }

# run NAME BACKEND: one build into $work/NAME.so with build dir $work/NAME (output hidden)
run() {
	local extra=()
	[ "$2" = nvcc ] && extra=(--backend nvcc)
	"$FB" build -j "$jobs" "${extra[@]}" --arch-list "$arch" --build-dir "$work/$1" -o "$work/$1.so" \
		"${kernels[@]}" "$host" >"$work/$1.log" 2>&1 || { cat "$work/$1.log" >&2; exit 1; }
}
timed() { local s e; s=$(now); "$@"; e=$(now); secs "$s" "$e"; }
best_of() { # best_of CMD...: best wall time of $runs runs
	local b=999999 t i
	for i in $(seq "$runs"); do
		t=$(timed "$@")
		[ "$(echo "$t < $b" | bc -l)" = 1 ] && b=$t
	done
	echo "$b"
}
cold_warm() { # name backend -> "cold warm"
	local name=$1 backend=$2
	export FATBUILD_CACHE_DIR=$work/cache-$name
	rm -rf "$work/$name" "$FATBUILD_CACHE_DIR"
	local cold; cold=$(timed run "$name" "$backend")
	local b=999999 t i
	for i in $(seq "$runs"); do
		rm -rf "$work/$name"
		t=$(timed run "$name" "$backend")
		[ "$(echo "$t < $b" | bc -l)" = 1 ] && b=$t
	done
	echo "$cold $b"
}

echo "fatbuild build vs nvcc: ${#kernels[@]} kernel files + 1 host file, --arch-list \"$arch\", -j $jobs, $(nproc) CPUs"
"$FB" flags --arch-list "$arch" --format nvcc 2>/dev/null | sed 's/^/gencode: /' || true
read -r fb_cold fb_warm <<<"$(cold_warm fb nvrtc)"
export FATBUILD_CACHE_DIR=$work/cache-fb
fb_noop=$(best_of run fb nvrtc)
grep -q "no work to do" "$work/fb.log" || echo "warning: the fatbuild no-op build did work" >&2
read -r nv_cold nv_warm <<<"$(cold_warm nv nvcc)"
nv_noop=$(best_of run nv nvcc)
grep -q "no work to do" "$work/nv.log" || echo "warning: the nvcc no-op build did work" >&2
"$FB" inspect "$work/fb.so" | awk '$2 == "elf" || $2 == "ptx" { n++ } END { print "fatbuild library: " n " images" }'
"$FB" inspect "$work/nv.so" | awk '$2 == "elf" || $2 == "ptx" { n++ } END { print "nvcc library:     " n " images" }'
printf '%-8s %10s %10s %12s\n' case fatbuild nvcc nvcc/fatbuild
for c in cold warm noop; do
	f=$(eval echo "\$fb_$c"); n=$(eval echo "\$nv_$c")
	printf '%-8s %9.3fs %9.3fs %11.2fx\n' "$c" "$f" "$n" "$(echo "$n / $f" | bc -l)"
done
