#!/usr/bin/env bash
# bench-rdc.sh: a relocatable-device-code build (examples/rdc: the two-file program and the CDP
# program, 3 kernel files + host code) with fatbuild's NVRTC backend (NVRTC -rdc=true per file
# and target, then one nvJitLink device link per target with libcudadevrt) against the nvcc
# backend (nvcc -rdc=true -c per file with the same -gencode flags, one nvcc -dlink, the host
# link) - the same ninja graph and parallelism, only the device compiler and linker differ.
#   cold   empty build dir, empty compile cache
#   warm   empty build dir, compile cache kept (nvcc has no cache: a second cold build)
#   edit   scale.cu changed: its compiles, the device link(s) and the link rerun
#   no-op  nothing changed (ninja: no work to do)
# Prints seconds (best of RUNS for warm, edit and no-op) and the nvcc/fatbuild ratios, for --rdc
# and then for --lto (nvJitLink -lto against nvcc code=lto_X + nvcc -dlink -dlto).
#   scripts/bench-rdc.sh [ARCH_LIST] [RUNS]     (default "8.0 8.6 9.0", 3)
# Env: FATBUILD (binary; default build/bin/fatbuild), JOBS (default: nproc), CUDA_HOME.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
FB=${FATBUILD:-$here/build/bin/fatbuild}
arch=${1:-8.0 8.6 9.0}
runs=${2:-3}
jobs=${JOBS:-$(nproc)}
home=${CUDA_HOME:-/usr/local/cuda}
[ -x "$FB" ] || { echo "bench-rdc: $FB not found; build first (cmake --build build)" >&2; exit 2; }
[ -x "$home/bin/nvcc" ] || { echo "bench-rdc: no nvcc at $home/bin/nvcc" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-bench-rdc.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here"/examples/rdc/* "$work/"
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }

# run NAME BACKEND MODE: one build into $work/NAME.so with build dir $work/NAME (output hidden)
run() {
	local host=$work/rdc_host.c
	[ "$2" = nvcc ] && host=$work/rdc_launch.cu
	"$FB" build -j "$jobs" --backend "$2" "--$3" --arch-list "$arch" --build-dir "$work/$1" -o "$work/$1.so" \
		"$work/scale.cu" "$work/apply.cu" "$work/cdp.cu" "$host" >"$work/$1.log" 2>&1 ||
		{ cat "$work/$1.log" >&2; exit 1; }
}
timed() { local s e; s=$(now); "$@"; e=$(now); secs "$s" "$e"; }
edit_run() { echo "// edit $RANDOM$RANDOM" >>"$work/scale.cu"; run "$@"; }
best_of() { # best_of CMD...: best wall time of $runs runs
	local b=999999 t i
	for i in $(seq "$runs"); do
		t=$(timed "$@")
		[ "$(echo "$t < $b" | bc -l)" = 1 ] && b=$t
	done
	echo "$b"
}
measure() { # name backend mode -> "cold warm edit noop"
	local name=$1
	export FATBUILD_CACHE_DIR=$work/cache-$name
	rm -rf "$work/$name" "$FATBUILD_CACHE_DIR"
	local cold warm edit noop b=999999 t i
	cold=$(timed run "$@")
	for i in $(seq "$runs"); do
		rm -rf "$work/$name"
		t=$(timed run "$@")
		[ "$(echo "$t < $b" | bc -l)" = 1 ] && b=$t
	done
	warm=$b
	edit=$(best_of edit_run "$@")
	grep -q "DLINK\|NVCC -dlink" "$work/$name.log" || echo "warning: the $name edit build did not device-link" >&2
	noop=$(best_of run "$@")
	grep -q "no work to do" "$work/$name.log" || echo "warning: the $name no-op build did work" >&2
	echo "$cold $warm $edit $noop"
}
table() { # mode
	local mode=$1
	read -r fb_cold fb_warm fb_edit fb_noop <<<"$(measure "fb-$mode" nvrtc "$mode")"
	read -r nv_cold nv_warm nv_edit nv_noop <<<"$(measure "nv-$mode" nvcc "$mode")"
	"$FB" inspect "$work/fb-$mode.so" | awk '/^  container/ { c = ($0 ~ /\.nv_fatbin$/) } c && $2 == "elf" { n++ } END { print "fatbuild: " n " linked SASS images" }'
	"$FB" inspect "$work/nv-$mode.so" | awk '/^  container/ { c = ($0 ~ /\.nv_fatbin$/) } c && $2 == "elf" { n++ } END { print "nvcc:     " n " linked SASS images" }'
	printf '%-8s %10s %10s %12s   (--%s)\n' case fatbuild nvcc nvcc/fatbuild "$mode"
	for c in cold warm edit noop; do
		f=$(eval echo "\$fb_$c"); n=$(eval echo "\$nv_$c")
		printf '%-8s %9.3fs %9.3fs %11.2fx\n' "$c" "$f" "$n" "$(echo "$n / $f" | bc -l)"
	done
}

echo "fatbuild build --rdc (NVRTC + nvJitLink) vs nvcc: examples/rdc (3 kernel files + host), --arch-list \"$arch\", -j $jobs, $(nproc) CPUs"
"$FB" flags --arch-list "$arch" --format nvcc 2>/dev/null | sed 's/^/gencode: /' || true
table rdc
if [ ! -e "$home/nvvm/lib64/libnvvm.so" ]; then
	# nvcc's device LTO loads nvvm/lib64/libnvvm.so beside its own bin/; a toolkit without it gets
	# a view (symlinks, bin/ file by file, at a path without blanks) that has it
	view=$(mktemp -d /tmp/fbcuda.XXXXXX)
	trap 'rm -rf "$work" "$view"' EXIT
	mkdir -p "$view/bin" "$view/nvvm"
	for f in "$home"/*; do case ${f##*/} in bin | nvvm) ;; *) ln -s "$f" "$view/" ;; esac; done
	for f in "$home"/bin/*; do ln -s "$f" "$view/bin/"; done
	for f in "$home"/nvvm/*; do ln -s "$f" "$view/nvvm/"; done
	[ -e "$view/nvvm/lib64" ] || ln -s "$home/lib64" "$view/nvvm/lib64"
	echo "--lto: $home/nvvm/lib64/libnvvm.so missing; nvcc runs through the toolkit view $view"
	export CUDA_HOME=$view
fi
table lto
