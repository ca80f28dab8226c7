#!/usr/bin/env bash
# prune.sh: pruned binaries on a real GPU (cannot run without one; exits 77 then).
#   1. builds examples/saxpy for an older arch plus the device's own, with PTX
#      ("8.0+PTX CC", "7.5+PTX CC" on 8.x), prunes it to the device's CC and runs it: the
#      numbers must be right and only the device's SASS may be left;
#   2. prunes the same library to the older arch's PTX only ("8.0+PTX"): the driver must JIT
#      the PTX, and the numbers must still be right;
#   3. prunes it to the older arch's SASS only: the device cannot run it, and loading must
#      fail with the documented no-image error, not crash;
#   4. prunes NVIDIA's libcurand to the device's CC, and runs a curand program (Philox
#      uniforms on the device, CUDA_MODULE_LOADING=EAGER so that every module loads) against
#      the pruned and the original library: it must load the pruned copy and print the same
#      numbers;
#   5. an nvcc program of two translation units, one built for the device and one only for the
#      older arch (its module has no image here): pruned to the device's CC, the second
#      container keeps no entry at all; the program must behave exactly as before, with lazy
#      and with eager module loading (how the driver takes an emptied container).
# Usage: tests/gpu/prune.sh [BUILD_DIR]   (default: build).
# FB_GPU_CC (with FBRT_LIBCUDA naming tests/fakecuda's driver, FAKECUDA_EMULATE=1) dry-runs
# steps 1-3 without a GPU; step 4 needs cudart and a real driver and is skipped then.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${1:-$root/build}
fb=${FATBUILD_BIN:-$bdir/bin/fatbuild}
CUDA=${CUDA_HOME:-/usr/local/cuda}
[ -x "$fb" ] || { echo "prune.sh: no fatbuild at $fb (build first)" >&2; exit 2; }
cc=${FB_GPU_CC:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ')}
if [ -z "$cc" ]; then echo "prune.sh: no GPU visible (nvidia-smi): skipped"; exit 77; fi
major=${cc%%.*}
sm=sm_${cc/./}
old=8.0
[ "$major" -le 8 ] && old=7.5
echo "device compute capability $cc; older arch $old"
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-gpu-prune.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CUDA_MODULE_LOADING=EAGER FATBUILD_CACHE_DIR=${FATBUILD_CACHE_DIR:-$work/cache}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
images() { "$fb" inspect --format json "$1" | python3 -c '
import json, sys
print(" ".join(e["arch"] for f in json.load(sys.stdin)["files"] for c in f["containers"] for e in c["entries"]))'; }

# dlopen an extension, run saxpy_host on 1M floats through fbrt, check y = a*x + y
cat >"$work/run.c" <<'C'
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	(void)argc;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
	int (*f)(float, const float *, float *, int, char *, size_t);
	*(void **)&f = dlsym(h, "saxpy_host");
	int n = 1 << 20; float a = 2.5f;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	for (int i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f - (float)i / 2; }
	char msg[1024] = "";
	int rc = f(a, x, y, n, msg, sizeof(msg));
	if (rc) { printf("error %d: %s\n", rc, msg); return 1; }
	for (int i = 0; i < n; i++) {
		float want = a * (float)i + (1.0f - (float)i / 2);
		if (fabsf(y[i] - want) > 1e-3f * fabsf(want) + 1e-3f) { printf("y[%d] = %g, want %g\n", i, y[i], want); return 1; }
	}
	printf("ok %d values\n", n);
	return 0;
}
C
cc -O1 -o "$work/run" "$work/run.c" -ldl -lm || { echo "prune.sh: cannot compile the driver program" >&2; exit 2; }

ex=$root/examples/saxpy
"$fb" build --arch-list "$old+PTX $cc" --build-dir "$work/b" -o "$work/libsaxpy.so" "$ex/saxpy.cu" "$ex/saxpy_host.c" \
	>"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; echo "prune.sh: build failed" >&2; exit 1; }
echo "built: $(images "$work/libsaxpy.so")"

# 1. pruned to the device's own CC
"$fb" prune --arch-list "$cc" "$work/libsaxpy.so" -o "$work/own.so" || fail "prune to $cc"
got=$(images "$work/own.so")
[ "$got" = "$sm" ] || fail "pruned to $cc keeps '$got', want $sm"
out=$("$work/run" "$work/own.so")
case $out in "ok "*) ok "pruned to $cc ($got): $out" ;; *) fail "pruned to $cc: $out" ;; esac

# 2. pruned to the older arch's PTX only: the driver JITs it
"$fb" prune --allow-missing --arch-list "compute_${old/./}" "$work/libsaxpy.so" -o "$work/ptx.so" || fail "prune to PTX"
got=$(images "$work/ptx.so")
[ "$got" = "compute_${old/./}" ] || fail "pruned to compute_${old/./} keeps '$got'"
out=$("$work/run" "$work/ptx.so")
case $out in "ok "*) ok "pruned to compute_${old/./} (JIT): $out" ;; *) fail "pruned to PTX only: $out" ;; esac

# 3. pruned to the older arch's SASS only: the documented error, not a crash
"$fb" prune --arch-list "$old" "$work/libsaxpy.so" -o "$work/bad.so" || fail "prune to $old"
got=$(images "$work/bad.so")
[ "$got" = "sm_${old/./}" ] || fail "pruned to $old keeps '$got'"
out=$("$work/run" "$work/bad.so")
rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -qi "no kernel image\|no image\|NO_BINARY"; then ok "pruned to $old: refused on $cc: $out"; else
	fail "pruned to $old on $cc: exit $rc, '$out'"; fi

# 4. NVIDIA's libcurand pruned to the device's CC
if [ -n "${FB_GPU_CC:-}" ]; then
	echo "skip: libcurand step (dry run: cudart needs a real driver)"
else
	lib=$(readlink -f "$(ls "$CUDA"/lib64/libcurand.so.* | head -1)")
	soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	mkdir -p "$work/lib"
	"$fb" prune --arch-list "$cc" "$lib" -o "$work/lib/${soname:-$(basename "$lib")}" || fail "prune $lib"
	cat >"$work/rng.c" <<'C'
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <curand.h>
#include <dlfcn.h>
#include <stdio.h>
int main(void) {
	Dl_info di;
	if (dladdr((void *)curandCreateGenerator, &di)) fprintf(stderr, "libcurand: %s\n", di.dli_fname);
	size_t n = 1 << 20; float *d, h[8]; double s = 0; static float all[1 << 20];
	curandGenerator_t g;
	if (cudaMalloc((void **)&d, n * sizeof(float)) != cudaSuccess) { printf("cudaMalloc failed\n"); return 1; }
	int r = curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10);
	if (!r) r = curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
	if (!r) r = curandGenerateUniform(g, d, n);
	if (r) { printf("curand error %d\n", r); return 1; }
	cudaMemcpy(all, d, n * sizeof(float), cudaMemcpyDeviceToHost);
	for (size_t i = 0; i < n; i++) s += all[i];
	for (int i = 0; i < 8; i++) h[i] = all[i];
	printf("sum %.6f first %.7f %.7f %.7f %.7f\n", s, h[0], h[1], h[2], h[3]);
	return 0;
}
C
	gcc -o "$work/rng" "$work/rng.c" -I"$CUDA/include" -L"$CUDA/lib64" -lcurand -lcudart -ldl ||
		fail "compile the curand program"
	a=$(LD_LIBRARY_PATH=$CUDA/lib64 "$work/rng" 2>"$work/a.err")
	b=$(LD_LIBRARY_PATH=$work/lib:$CUDA/lib64 "$work/rng" 2>"$work/b.err")
	grep -q "$work/lib/" "$work/b.err" || fail "the curand program did not load the pruned library: $(cat "$work/b.err")"
	case $a in "sum "*) ;; *) fail "original libcurand: $a" ;; esac
	if [ "$a" = "$b" ]; then ok "libcurand pruned to $cc: same numbers ($b)"; else fail "libcurand: original '$a', pruned '$b'"; fi
fi

# 5. a container emptied by the prune (it never served this GPU)
if [ -n "${FB_GPU_CC:-}" ]; then
	echo "skip: emptied-container step (dry run: cudart needs a real driver)"
else
	cat >"$work/e1.cu" <<'CU'
#include <cstdio>
__global__ void k1(int *p) { *p = 42; }
int main() {
	int *d = 0, h = 0;
	if (cudaMalloc(&d, sizeof(int)) != cudaSuccess) { printf("cudaMalloc failed\n"); return 1; }
	k1<<<1, 1>>>(d);
	cudaError_t e = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
	printf("%s %d\n", cudaGetErrorName(e), h);
	return e != cudaSuccess;
}
CU
	cat >"$work/e2.cu" <<'CU'
__global__ void k2(int *p) { *p = 7; }
void launch_k2(int *p) { k2<<<1, 1>>>(p); }
CU
	o=${old/./}
	(cd "$work" && nvcc -c -gencode "arch=compute_${cc/./},code=sm_${cc/./}" e1.cu -o e1.o &&
		nvcc -c -gencode "arch=compute_$o,code=sm_$o" e2.cu -o e2.o && nvcc e1.o e2.o -o both) || fail "nvcc two-TU program"
	"$fb" prune --allow-missing --arch-list "$cc" "$work/both" -o "$work/both.p" >/dev/null 2>&1 || fail "prune both"
	got=$("$fb" inspect --format json "$work/both.p" | python3 -c '
import json, sys
print(" ".join(str(len(c["entries"])) for f in json.load(sys.stdin)["files"] for c in f["containers"]))')
	case $got in *0*) ;; *) fail "no container was emptied (entries per container: $got)" ;; esac
	for mode in LAZY EAGER; do
		a=$(CUDA_MODULE_LOADING=$mode "$work/both" 2>&1)
		b=$(CUDA_MODULE_LOADING=$mode "$work/both.p" 2>&1)
		[ "$mode" = LAZY ] && [ "$a" != "cudaSuccess 42" ] && fail "unpruned two-TU program ($mode): $a"
		if [ "$a" = "$b" ]; then ok "emptied container, $mode loading: same behaviour ($b)"; else
			fail "emptied container, $mode loading: unpruned '$a', pruned '$b'"; fi
	done
fi

echo "prune.sh (gpu): $fails failure(s)"
[ "$fails" -eq 0 ]
