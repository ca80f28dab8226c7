#!/usr/bin/env bash
# launch_nvcc.sh: fatbuild as nvcc's launcher (docs/launcher.md).
# (a) a CMake CUDA project with CMAKE_CUDA_COMPILER_LAUNCHER=fatbuild builds at arch 80; then
#     80;90 in the same build dir runs only sm_90's cicc and ptxas (1 miss each, sm_80's hits,
#     counted from FATBUILD_LAUNCH_LOG); a new build dir with the warm cache runs none.
# (b) the split's object is plain nvcc's byte for byte once nvcc's temp-file stem
#     (tmpxft_PID_N, which differs between any two plain runs) is masked, its device code equal
#     by `fatbuild diff`, and its -MD depfile equal to plain nvcc's.
# (c) a compile error: stdout, stderr and exit status those of plain nvcc; a warning: the same
#     stderr, from a cold split and from a hit.
# (d) --version, -E and -M print what plain nvcc prints.
# (e) two checkouts of a git project at two paths: in the second, k.cu (a header-only
#     dependency in a subfolder, absolute -I) and anon.cu (an anonymous namespace: the module
#     id, with nvcc's hash of the source's path, is in its PTX and cubin) run no cicc or ptxas;
#     as.cu (assert: the path in a string) runs its steps, and hits in its own checkout; every
#     object is plain nvcc's in its checkout.
set -u
: "${FATBUILD_BIN:?}"
command -v nvcc >/dev/null || { echo "SKIP: no nvcc on PATH"; exit 77; }
command -v cmake >/dev/null && command -v ninja >/dev/null || { echo "SKIP: cmake or ninja missing"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/fblaunchnvcc.XXXXXX")
trap 'rm -rf "$w"' EXIT
export FATBUILD_CACHE_DIR=$w/cache FATBUILD_LAUNCH_LOG=$w/launch.log
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
nvcc=$(command -v nvcc)
count() { grep -o "$1 [a-z_0-9]* $2" "$FATBUILD_LAUNCH_LOG" 2>/dev/null | wc -l; }

mkdir -p "$w/proj"
cat >"$w/proj/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(lk CUDA)
add_library(lk STATIC k.cu)
EOF
printf '__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n' >"$w/proj/k.cu"
configure() { # DIR ARCHES
	cmake -S "$w/proj" -B "$1" -G Ninja -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_COMPILER_LAUNCHER="$FATBUILD_BIN" \
		-DCMAKE_CUDA_ARCHITECTURES="$2" >"$w/cmake.out" 2>&1 || { cat "$w/cmake.out" >&2; no "cmake $1 $2"; }
}
build() { # DIR
	: >"$FATBUILD_LAUNCH_LOG"
	cmake --build "$1" >"$w/build.out" 2>&1 || { cat "$w/build.out" >&2; no "build $1"; }
}

# (a)
configure "$w/b1" 80
build "$w/b1"
grep -q '^split ' "$FATBUILD_LAUNCH_LOG" || { cat "$FATBUILD_LAUNCH_LOG" >&2; no "(a) the arch-80 compile was not split"; }
configure "$w/b1" "80;90"
build "$w/b1"
[ "$(count cicc miss)" = 1 ] && [ "$(count ptxas miss)" = 1 ] && [ "$(count cicc hit)" = 1 ] &&
	[ "$(count ptxas hit)" = 1 ] && grep -q 'cicc compute_90 miss' "$FATBUILD_LAUNCH_LOG" &&
	grep -q 'ptxas sm_90 miss' "$FATBUILD_LAUNCH_LOG" ||
	{ cat "$FATBUILD_LAUNCH_LOG" >&2; no "(a) 80 then 80;90: want sm_90's cicc and ptxas alone to run"; }
configure "$w/b2" "80;90"
build "$w/b2"
[ "$(count cicc miss)" = 0 ] && [ "$(count ptxas miss)" = 0 ] && [ "$(count cicc hit)" = 2 ] ||
	{ cat "$FATBUILD_LAUNCH_LOG" >&2; no "(a) a new build dir with a warm cache ran cicc or ptxas"; }
[ -s "$w/b2/CMakeFiles/lk.dir/k.cu.o" ] || no "(a) no object in the new build dir"

# (b)
mkdir -p "$w/x/s" "$w/x/p"
cp "$w/proj/k.cu" "$w/x/k.cu"
cd "$w/x" || exit 1
gen=(-gencode arch=compute_80,code=sm_80 -gencode "arch=compute_90,code=[sm_90,compute_90]")
"$FATBUILD_BIN" nvcc "${gen[@]}" -O3 -MD -MT k.o -MF s/k.d -c k.cu -o s/k.o || no "(b) split compile failed"
nvcc "${gen[@]}" -O3 -MD -MT k.o -MF p/k.d -c k.cu -o p/k.o || no "(b) plain compile failed"
tail -1 "$FATBUILD_LAUNCH_LOG" | grep -q '^split ' || no "(b) the compile was not split: $(tail -1 "$FATBUILD_LAUNCH_LOG")"
mask() { perl -pe 's/tmpxft_[0-9a-f]{8}_[0-9a-f]{8}/tmpxft_XXXXXXXX_XXXXXXXX/g' "$1"; }
cmp -s <(mask s/k.o) <(mask p/k.o) || no "(b) the split's object differs from plain nvcc's beyond nvcc's temp-file stem"
"$FATBUILD_BIN" diff s/k.o p/k.o >diff.out 2>&1
grep -q 'all 3 entries identical' diff.out || { cat diff.out >&2; no "(b) fatbuild diff: device code differs"; }
cmp -s s/k.d p/k.d || no "(b) the -MD depfile differs from plain nvcc's"
# the chains side by side (--threads 2) and cold (a cache of its own): the same object
mkdir -p t
FATBUILD_CACHE_DIR=$w/cache-t "$FATBUILD_BIN" nvcc "${gen[@]}" -O3 --threads 2 -c k.cu -o t/k.o || no "(b) --threads 2 failed"
tail -1 "$FATBUILD_LAUNCH_LOG" | grep -q '^split .*cicc compute_90 miss' || no "(b) --threads 2 was not split cold"
cmp -s <(mask t/k.o) <(mask p/k.o) || no "(b) the --threads 2 object differs from plain nvcc's"

# (c)
printf '__global__ void bad(float *x) { x[0] = undeclared; }\n' >bad.cu
printf '__global__ void warn(float *x) { int unused; x[0] = 1.f; }\n' >warn.cu
same() { # WHAT ARGS...: fatbuild nvcc ARGS and nvcc ARGS print the same and exit the same
	local what=$1
	shift
	"$FATBUILD_BIN" nvcc "$@" >f.out 2>f.err
	local fs=$?
	nvcc "$@" >n.out 2>n.err
	local ns=$?
	[ "$fs" = "$ns" ] || no "$what: exit $fs, plain nvcc $ns"
	cmp -s f.out n.out || { diff f.out n.out | head -5 >&2; no "$what: stdout differs from plain nvcc's"; }
	cmp -s f.err n.err || { diff f.err n.err | head -5 >&2; no "$what: stderr differs from plain nvcc's"; }
}
same "(c) a compile error" "${gen[@]}" -c bad.cu -o bad.o
[ -s n.err ] && ! [ -e bad.o ] || no "(c) the error case did not fail"
tail -1 "$FATBUILD_LAUNCH_LOG" | grep -q '^pass .*exited' || no "(c) the failed split is not logged"
same "(c) a warning, cold" "${gen[@]}" -c warn.cu -o warn.o
grep -q 'unused' n.err || no "(c) the warning case printed no warning"
same "(c) a warning, from the cache" "${gen[@]}" -c warn.cu -o warn.o
tail -1 "$FATBUILD_LAUNCH_LOG" | grep -q 'cicc compute_90 hit' || no "(c) the second warning compile was not a hit"

# (d)
same "(d) --version" --version
same "(d) -E" -E k.cu
same "(d) -M" -M k.cu
grep -q '^pass nvcc k.cu: -M (dependencies only)' "$FATBUILD_LAUNCH_LOG" || no "(d) -M is not logged as a passthrough"

# (e)
ex() { perl -pe 's/tmpxft_[0-9a-f]{8}_[0-9a-f]{8}/tmpxft_XXXXXXXX_XXXXXXXX/g' "$1"; }
for c in A "B at another/path"; do
	d="$w/co/$c"
	mkdir -p "$d/third/inc" "$d/build" && git -C "$d" init -q || no "(e) git init $c"
	printf '#pragma once\n__device__ inline float twice(float x) { return 2 * x; }\n' >"$d/third/inc/h.cuh"
	printf '#include "h.cuh"\n__global__ void scale(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n' >"$d/k.cu"
	printf 'namespace { __device__ int hid; }\n__global__ void an(int *x) { x[0] = hid; }\n' >"$d/anon.cu"
	printf '#include <cassert>\n__global__ void as(int *x) { assert(x[0]); }\n' >"$d/as.cu"
	: >"$FATBUILD_LAUNCH_LOG"
	for f in k anon as; do
		(cd "$d/build" && FATBUILD_CACHE_DIR=$w/cache-e "$FATBUILD_BIN" nvcc -I"$d/third/inc" "${gen[@]}" -c "$d/$f.cu" -o $f.o &&
			nvcc -I"$d/third/inc" "${gen[@]}" -c "$d/$f.cu" -o $f.plain.o) || no "(e) $c $f.cu failed"
		cmp -s <(ex "$d/build/$f.o") <(ex "$d/build/$f.plain.o") || no "(e) $c: $f.o is not plain nvcc's"
	done
	cp "$FATBUILD_LAUNCH_LOG" "$w/e-$(echo "$c" | cut -c1).log"
done
for f in k anon; do
	grep -q "split nvcc $w/co/B at another/path/$f.cu: cicc compute_80 hit, ptxas sm_80 hit, cicc compute_90 hit, ptxas sm_90 hit\$" "$w/e-B.log" ||
		{ cat "$w/e-B.log" >&2; no "(e) the second checkout's $f.cu ran cicc or ptxas"; }
done
[ "$(grep -c "/as.cu: .*miss" "$w/e-A.log")" = 1 ] && [ "$(grep "/as.cu:" "$w/e-B.log" | grep -o 'cicc [a-z_0-9]* miss' | wc -l)" = 2 ] ||
	{ cat "$w/e-A.log" "$w/e-B.log" >&2; no "(e) as.cu: want its cicc steps run in each checkout"; }
d="$w/co/A"
(cd "$d/build" && FATBUILD_CACHE_DIR=$w/cache-e "$FATBUILD_BIN" nvcc "${gen[@]}" -c "$d/as.cu" -o as2.o) || no "(e) as.cu again"
tail -1 "$FATBUILD_LAUNCH_LOG" | grep -q 'as.cu: cicc compute_80 hit, ptxas sm_80 hit, cicc compute_90 hit' ||
	{ tail -1 "$FATBUILD_LAUNCH_LOG" >&2; no "(e) as.cu in its own checkout again: not a hit"; }
cmp -s <(ex "$d/build/as2.o") <(ex "$d/build/as.plain.o") || no "(e) as.cu's hit is not plain nvcc's object"

# a host compiler runs as it is
printf 'int twice(int x) { return 2 * x; }\n' >h.c
"$FATBUILD_BIN" cc -c h.c -o h1.o && cc -c h.c -o h2.o && cmp -s h1.o h2.o || no "fatbuild cc -c: not cc's object"
[ "$("$FATBUILD_BIN" cc --version 2>&1)" = "$(cc --version 2>&1)" ] || no "fatbuild cc --version: not cc's"
tail -1 "$FATBUILD_LAUNCH_LOG" | grep -q '^pass cc -: a host compiler' || no "fatbuild cc is not logged"
# a cross compiler's name with a target prefix and a version, as CMake passes it, by path
mkdir -p "$w/bin" && ln -s "$(command -v cc)" "$w/bin/x86_64-test-linux-gnu-gcc-99"
[ "$("$FATBUILD_BIN" "$w/bin/x86_64-test-linux-gnu-gcc-99" --version 2>&1 | tail -n +2)" = "$(cc --version 2>&1 | tail -n +2)" ] ||
	no "fatbuild TRIPLET-gcc-N: not run as a compiler"

[ "$fail" = 0 ] && echo "launch_nvcc: ok"
exit "$fail"
