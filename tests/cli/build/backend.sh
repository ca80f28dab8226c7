# --backend auto (the default): each .cu goes to nvcc or NVRTC by its content; -v says which
# and why. A <<<...>>> inside a __global__/__device__ body is a device-side launch (CDP). Comments and string literals do not count; a header included with "..." or found
# in an -I dir is read too.
k() { printf '%b' "$2" >"$1"; }
k dev.cu '#include <cuda_fp16.h>\n#include "ok.cuh"\n// a <<<1, 1>>> launch in a comment\nextern "C" __global__ void k(float *p) { *p = sq(2.f); }\n'
k ok.cuh '#pragma once\n__host__ __device__ inline float sq(float x) { return x * x; }\nstruct __align__(16) v4 { float a, b, c, d; };\nnamespace n { __device__ int f() { return 1; } }\nconst char *s = "main() { <<< }";\n'
k hosthdr.cu '#include <cstdio>\n__global__ void k() {}\n'
k launch.cu '__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); }\n'
k main.cu '__global__ void k() {}\nint\nmain(void)\n{\n\treturn 0;\n}\n'
k hostfn.cu 'extern "C" {\n__global__ void k() {}\nint answer(int x) { return x; }\n}\n'
k viahdr.cu '#include "h.cuh"\n__global__ void k() {}\n'
k h.cuh '#include <vector>\n'
mkdir -p inc/lib
k inc/lib/t.cuh '#include <torch/extension.h>\n'
k viainc.cu '#include <lib/t.cuh>\n__global__ void k() {}\n'
# A launch from a kernel (dynamic parallelism) is device code; one from a host function is not.
k cdp.cu '__global__ void child() {}\n__device__ void go() { child<<<1, 1>>>(); }\n__global__ void parent() { child<<<1, 1>>>(); }\n'
k cdphost.cu '__global__ void child() {}\n__global__ void parent() { child<<<1, 1>>>(); }\nstruct s { void f() { child<<<1, 1>>>(); } };\n'
for f in dev hosthdr launch main hostfn viahdr viainc cdp cdphost; do
	$FATBUILD build -v --emit-ninja --arch-list 8.0 -I inc --build-dir "bd_$f" -o "$f.so" "$f.cu" 2>&1 >/dev/null
	grep -q "nvcc -c" "bd_$f/build.ninja" && echo "$f: nvcc edge" || echo "$f: NVRTC edge"
done
# An explicit --backend is obeyed, and says nothing.
$FATBUILD build -v --emit-ninja --backend nvrtc --arch-list 8.0 --build-dir bd_x -o x.so launch.cu 2>&1 >/dev/null
grep -c " compile --arch-list sm_80 " bd_x/build.ninja
