#!/usr/bin/env bash
# demo.sh: installs what is missing, builds into build/, and walks through the main jobs.
# Each step is a function with a heading; engineers append steps at the end of the list below.
#   scripts/demo.sh                 every step
#   scripts/demo.sh step_archlist   only the named steps (after a build)
#   FB_DEMO_BUILD=dir               build directory (default build/)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${FB_DEMO_BUILD:-build}
fatbuild=$root/$build/bin/fatbuild
archprobe=$root/$build/bin/archprobe

step() { printf '\n==== %s\n' "$*"; }
# show CMD ARGS...: prints "$ cmd args" (args with spaces quoted, the binary by its name), runs it.
show() {
	local line=${1##*/} a
	for a in "${@:2}"; do
		case $a in *[[:space:]]* | "") line+=" \"$a\"" ;; *) line+=" $a" ;; esac
	done
	printf '$ %s\n' "$line"
	"$@" || echo "(exit $?)"
}

step_deps() {
	step "1. dependencies (scripts/deps.sh --build: what building fatbuild needs)"
	bash scripts/deps.sh --build
	echo "ok"
}

step_build() {
	step "2. build into $build/ (cmake -G Ninja)"
	cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" | tail -n 1
}

step_archlist() {
	step "3. arch lists: one parser for PyTorch, CMake and nvcc syntax, checked against the toolkit"
	show "$fatbuild" --arch-list "8.0 8.6+PTX"
	show "$fatbuild" --arch-list "8.0 8.6+PTX" --format cmake
	show "$fatbuild" --arch-list "Hopper 9.0a 10.0f+PTX" --format torch
	show "$archprobe" --arch-list Ampere --format cmake
	echo "# an arch CUDA 13 dropped: an error that says why (exit 2), or --drop-unsupported"
	show "$fatbuild" --arch-list "7.0 8.0" --cuda-version 13.0
	show "$fatbuild" --arch-list "7.0 8.0" --cuda-version 13.0 --drop-unsupported
	echo "# auto: the visible GPUs, else a fallback (all-major) with a notice"
	show "$fatbuild" --arch-list auto
}

step_probe() {
	step "4. archprobe: which GPUs does this machine have? (the CUDA driver, loaded with dlopen)"
	echo "# on a machine without a GPU or driver: a clean answer and its exit code (3 = no driver)"
	show "$archprobe"
	echo "# the fallback it would use instead, with a notice on stderr"
	show "$archprobe" --format cmake --fallback all-major
	show "$archprobe" --format torch --fallback "8.0 9.0"
}

step_fatbin() {
	step "5. fatbinaries: pack cubins and PTX made by the toolkit, inspect them, check a GPU against them"
	local d=$root/$build/demo/fatbin nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
	mkdir -p "$d"
	echo "# nvcc -cubin (sm_80, sm_90a) and nvcc -ptx (compute_86) of the saxpy kernel"
	show "$nvcc" -cubin -arch=sm_80 -o "$d/saxpy.sm_80.cubin" examples/saxpy/saxpy.cu
	show "$nvcc" -cubin -arch=sm_90a -o "$d/saxpy.sm_90a.cubin" examples/saxpy/saxpy.cu
	show "$nvcc" -ptx -arch=compute_86 -o "$d/saxpy.compute_86.ptx" examples/saxpy/saxpy.cu
	show "$fatbuild" pack -o "$d/saxpy.fatbin" --compress zstd "$d/saxpy.sm_80.cubin" "$d/saxpy.sm_90a.cubin@sm_90a" "$d/saxpy.compute_86.ptx"
	show "$fatbuild" inspect --kernels "$d/saxpy.fatbin"
	show "$fatbuild" check --arch 8.0,8.6,8.9,9.0,7.5 "$d/saxpy.fatbin"
}

step_compile() {
	step "6. fatbuild compile: every arch at once with NVRTC, cached"
	local d=$root/$build/demo/compile
	mkdir -p "$d"
	export FATBUILD_CACHE_DIR=$d/cache
	echo "# -o DIR/: one fatbin per kernel file (a CUDA module loads one image per GPU)"
	show "$fatbuild" compile --arch-list "8.0 8.6 9.0+PTX" -o "$d/out/" \
		examples/kernels/reduce.cu examples/kernels/softmax.cu examples/kernels/layernorm.cu
	show "$fatbuild" inspect "$d/out/reduce.fatbin"
	echo "# again, into a new directory: every target comes from the cache"
	show "$fatbuild" compile -v --arch-list "8.0 8.6 9.0+PTX" -o "$d/out2/" \
		examples/kernels/reduce.cu examples/kernels/softmax.cu examples/kernels/layernorm.cu
	show "$fatbuild" cache stats
	unset FATBUILD_CACHE_DIR
}

step_extension() {
	step "7. the main job: a loadable extension (kernels.cu + host code -> libsaxpy.so)"
	local ex=$root/examples/saxpy demo=$root/$build/demo
	local out=$demo/libsaxpy.so
	mkdir -p "$demo"
	export FATBUILD_BUILD_DIR=$demo/builds
	show "$fatbuild" env
	show "$fatbuild" --arch-list "8.0 8.6+PTX" -o "$out" "$ex/saxpy.cu" "$ex/saxpy_host.c"
	show "$fatbuild" inspect "$out"
	echo "# again: nothing to do (ninja no-op)"
	show "$fatbuild" --arch-list "8.0 8.6+PTX" -o "$out" "$ex/saxpy.cu" "$ex/saxpy_host.c"
	echo "# one more arch: only the new target compiles, then merge, embed, link"
	show "$fatbuild" --arch-list "8.0 8.6+PTX 9.0" -o "$out" "$ex/saxpy.cu" "$ex/saxpy_host.c"
	echo "# which image each GPU gets; 7.5 has none, so check says so first and exits 1 (on purpose)"
	show "$fatbuild" check --arch 8.0,8.6,8.9,9.0,12.0,7.5 "$out"
	echo "# the GPU test, dry-run against the fake driver (tests/fakecuda) on an 8.9 device"
	FB_GPU_CC=8.9 FAKECUDA_DEVICES=8.9 FAKECUDA_CONTEXT=0 FAKECUDA_EMULATE=1 \
		FBRT_LIBCUDA=$root/$build/fakecuda/libcuda.so.1 FATBUILD_BIN=$fatbuild \
		bash tests/gpu/extension.sh "$build" || echo "(exit $?)"
	echo "# the nvcc backend: a .cu with a <<<...>>> launch, linked with cudart"
	show "$fatbuild" build --backend nvcc --arch-list "8.0 8.6+PTX" -o "$demo/libsaxpy_nvcc.so" "$ex/saxpy_launch.cu"
	show "$fatbuild" inspect "$demo/libsaxpy_nvcc.so"
}

steps="step_deps step_build step_archlist step_probe step_fatbin step_compile step_extension"
[ $# -gt 0 ] && steps="$*"
for s in $steps; do
	"$s"
done
