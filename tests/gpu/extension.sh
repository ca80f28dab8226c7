#!/usr/bin/env bash
# extension.sh: the extension build on a real GPU (cannot run without one; exits 77 then).
#   1. builds examples/saxpy for the device's own arch, runs saxpy through the library's
#      saxpy_host (fbrt loads the fatbin with cuModuleLoadData) and checks every number;
#   2. the same through cuLibraryLoadData (FBRT_LOADER=library);
#   3. builds for an OLDER arch plus its PTX (7.5+PTX, or 8.0+PTX on 9.x+), so that the driver
#      must JIT the PTX, and checks the numbers again;
#   4. builds SASS only for an arch the device cannot run and checks the documented error
#      (the device's CC and the images carried);
#   5. builds the nvcc-backend example (<<<...>>> launch, cudart) and checks its numbers.
# Usage: tests/gpu/extension.sh [BUILD_DIR]   (default: build); CUDA_MODULE_LOADING=EAGER.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${1:-$root/build}
fb=${FATBUILD_BIN:-$bdir/bin/fatbuild}
[ -x "$fb" ] || { echo "extension.sh: no fatbuild at $fb (build first)" >&2; exit 2; }
# FB_GPU_CC (with FBRT_LIBCUDA naming tests/fakecuda's driver, FAKECUDA_EMULATE=1) dry-runs
# this script without a GPU; the nvcc-backend step then is skipped (cudart needs a real driver).
cc=${FB_GPU_CC:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ')}
if [ -z "$cc" ]; then echo "extension.sh: no GPU visible (nvidia-smi): skipped"; exit 77; fi
major=${cc%%.*}
echo "device compute capability $cc"
work=$(mktemp -d "${TMPDIR:-/tmp}/fb gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CUDA_MODULE_LOADING=EAGER FATBUILD_CACHE_DIR=${FATBUILD_CACHE_DIR:-$work/cache}
ex=$root/examples/saxpy
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# A driver program: dlopen the extension, run saxpy_host on 1M floats, check y = a*x + y.
cat >"$work/run.c" <<'C'
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
	int fbrt = argc > 2 && strcmp(argv[2], "fbrt") == 0;
	int n = 1 << 20; float a = 2.5f;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	for (int i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f - (float)i / 2; }
	char msg[1024] = ""; int rc;
	if (fbrt) {
		int (*f)(float, const float *, float *, int, char *, size_t);
		*(void **)&f = dlsym(h, "saxpy_host");
		rc = f(a, x, y, n, msg, sizeof(msg));
	} else {
		int (*f)(float, const float *, float *, int);
		*(void **)&f = dlsym(h, "saxpy_host");
		rc = f(a, x, y, n);
	}
	if (rc) { printf("error %d: %s\n", rc, msg); return 1; }
	for (int i = 0; i < n; i++) {
		float want = a * (float)i + (1.0f - (float)i / 2);
		if (fabsf(y[i] - want) > 1e-3f * fabsf(want) + 1e-3f) { printf("y[%d] = %g, want %g\n", i, y[i], want); return 1; }
	}
	printf("ok %d values\n", n);
	return 0;
}
C
cc -O2 "$work/run.c" -o "$work/run" -ldl -lm || exit 2

build() { # name archlist [extra args...]
	local name=$1 arch=$2; shift 2
	"$fb" build --arch-list "$arch" --build-dir "$work/b-$name" -o "$work/lib$name.so" "$@" >"$work/$name.log" 2>&1 \
		|| { cat "$work/$name.log" >&2; return 1; }
}

# 1. native arch
build native "$cc" "$ex/saxpy.cu" "$ex/saxpy_host.c" || fail "build for $cc"
out=$("$work/run" "$work/libnative.so" fbrt); echo "native ($cc): $out"
[ "${out%% *}" = ok ] || fail "saxpy on $cc"
# 2. cuLibraryLoadData
out=$(FBRT_LOADER=library "$work/run" "$work/libnative.so" fbrt); echo "cuLibraryLoadData: $out"
[ "${out%% *}" = ok ] || fail "saxpy through cuLibraryLoadData"

# 3. an older arch + PTX: the driver JITs the PTX
older=7.5; [ "$major" -ge 9 ] && older=8.0
build jit "$older+PTX" "$ex/saxpy.cu" "$ex/saxpy_host.c" || fail "build for $older+PTX"
"$fb" inspect "$work/libjit.so" | grep -E ' (elf|ptx) '
out=$("$work/run" "$work/libjit.so" fbrt); echo "JIT from compute_${older/./} on $cc: $out"
[ "${out%% *}" = ok ] || fail "saxpy via PTX JIT"

# 4. SASS only, for an arch this device cannot run: the documented error
if [ "$major" -ge 8 ]; then
	build nofit 7.5 "$ex/saxpy.cu" "$ex/saxpy_host.c" || fail "build for 7.5"
	out=$("$work/run" "$work/libnofit.so" fbrt); echo "sm_75 only on $cc: $out"
	case $out in
	*"compute capability $cc"*"this library carries sm_75"*) ;;
	*) fail "the no-image error does not name the CC and the images" ;;
	esac
fi

# 5. the nvcc backend
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && [ -z "${FB_GPU_CC:-}" ]; then
	build nvcc "$cc" --backend nvcc "$ex/saxpy_launch.cu" || fail "nvcc backend build"
	out=$("$work/run" "$work/libnvcc.so" cudart); echo "nvcc backend: $out"
	[ "${out%% *}" = ok ] || fail "saxpy built by the nvcc backend"
fi
[ $fails = 0 ] && echo "ok extension.sh"
exit $((fails > 0))
