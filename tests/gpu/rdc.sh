#!/usr/bin/env bash
# rdc.sh: relocatable device code on a real GPU (cannot run without one; exits 77 then), with
# examples/rdc: apply_scale calls scale_value, a device function of another file (x = 2x + 1),
# and cdp_parent launches cdp_child from the device (dynamic parallelism, out[i] = 3 i).
#   1. nvrtc backend, --rdc, the device's own arch: both programs, every number checked;
#   2. the same with --lto (LTO-IR, nvJitLink -lto);
#   3. the same through cuLibraryLoadData (FBRT_LOADER=library);
#   4. --rdc for an OLDER arch + PTX: the two-file program through the linked PTX (JIT); the CDP
#      program is not run there (the device runtime links only into SASS);
#   5. nvcc backend, --rdc (and --lto when the toolkit has nvvm/lib64/libnvvm.so): both programs
#      through cudart <<<...>>> launches.
# Usage: tests/gpu/rdc.sh [BUILD_DIR]   (default: build); CUDA_MODULE_LOADING=EAGER.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${1:-$root/build}
fb=${FATBUILD_BIN:-$bdir/bin/fatbuild}
[ -x "$fb" ] || { echo "rdc.sh: no fatbuild at $fb (build first)" >&2; exit 2; }
# FB_GPU_CC (with FBRT_LIBCUDA naming tests/fakecuda's driver, FAKECUDA_EMULATE=1) dry-runs
# this script without a GPU; the nvcc-backend step then is skipped (cudart needs a real driver).
cc=${FB_GPU_CC:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ')}
if [ -z "$cc" ]; then echo "rdc.sh: no GPU visible (nvidia-smi): skipped"; exit 77; fi
major=${cc%%.*}
echo "device compute capability $cc"
work=$(mktemp -d "${TMPDIR:-/tmp}/fb rdc gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CUDA_MODULE_LOADING=EAGER FATBUILD_CACHE_DIR=${FATBUILD_CACHE_DIR:-$work/cache}
ex=$root/examples/rdc
home=${CUDA_HOME:-/usr/local/cuda}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# The driver program: dlopen the extension, run rdc_apply on 1M floats and (unless "apply")
# rdc_cdp with 64 parent blocks of 32 children each; check every value.
cat >"$work/run.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
	int only_apply = argc > 2 && strcmp(argv[2], "apply") == 0;
	int (*apply)(float *, int, char *, size_t);
	int (*cdp)(int *, int, int, int, char *, size_t);
	*(void **)&apply = dlsym(h, "rdc_apply");
	*(void **)&cdp = dlsym(h, "rdc_cdp");
	if (!apply || !cdp) { printf("missing rdc_apply/rdc_cdp\n"); return 2; }
	int n = 1 << 20, blocks = 64, per = 32;
	float *x = malloc(n * sizeof(float));
	int *out = calloc((size_t)blocks * per, sizeof(int));
	char msg[1024] = "";
	for (int i = 0; i < n; i++) x[i] = (float)(i % 4096) * 0.5f;
	if (apply(x, n, msg, sizeof(msg))) { printf("rdc_apply: %s\n", msg); return 1; }
	for (int i = 0; i < n; i++) {
		float want = 2.0f * ((float)(i % 4096) * 0.5f) + 1.0f;
		if (x[i] != want) { printf("x[%d] = %g, want %g\n", i, x[i], want); return 1; }
	}
	if (only_apply) { printf("ok apply %d\n", n); return 0; }
	for (int i = 0; i < blocks * per; i++) out[i] = -1;
	if (cdp(out, blocks, per, 3, msg, sizeof(msg))) { printf("rdc_cdp: %s\n", msg); return 1; }
	for (int i = 0; i < blocks * per; i++)
		if (out[i] != 3 * i) { printf("out[%d] = %d, want %d\n", i, out[i], 3 * i); return 1; }
	printf("ok apply %d cdp %d\n", n, blocks * per);
	return 0;
}
C
cc -O2 "$work/run.c" -o "$work/run" -ldl || exit 2

build() { # name archlist [extra args...]
	local name=$1 arch=$2; shift 2
	"$fb" build --arch-list "$arch" --build-dir "$work/b-$name" -o "$work/lib$name.so" "$@" >"$work/$name.log" 2>&1 \
		|| { cat "$work/$name.log" >&2; return 1; }
}
kernels=("$ex/scale.cu" "$ex/apply.cu" "$ex/cdp.cu")
check_run() { # what lib [apply]
	local out; out=$("$work/run" "$2" ${3:+"$3"}); echo "$1: $out"
	case $out in ok\ apply*) ;; *) fail "$1" ;; esac
	if [ -z "${3:-}" ]; then case $out in *" cdp "*) ;; *) fail "$1: CDP not run" ;; esac; fi
}

# 1. --rdc, native arch
build rdc "$cc" --rdc "${kernels[@]}" "$ex/rdc_host.c" || fail "--rdc build for $cc"
"$fb" inspect "$work/librdc.so" | grep -E ' (elf|ptx) '
check_run "nvrtc --rdc ($cc)" "$work/librdc.so"
# 2. --lto
build lto "$cc" --lto "${kernels[@]}" "$ex/rdc_host.c" || fail "--lto build for $cc"
check_run "nvrtc --lto ($cc)" "$work/liblto.so"
# 3. cuLibraryLoadData
out=$(FBRT_LOADER=library "$work/run" "$work/librdc.so"); echo "cuLibraryLoadData: $out"
case $out in "ok apply "*" cdp "*) ;; *) fail "rdc through cuLibraryLoadData" ;; esac
# 4. an older arch + PTX: the linked PTX is JIT-compiled (two-file program only)
older=7.5; [ "$major" -ge 9 ] && older=8.0
build jit "$older+PTX" --rdc "$ex/scale.cu" "$ex/apply.cu" "$ex/rdc_host.c" || fail "--rdc build for $older+PTX"
"$fb" inspect "$work/libjit.so" | grep -E ' (elf|ptx) '
check_run "linked PTX compute_${older/./} JIT on $cc" "$work/libjit.so" apply
# 5. the nvcc backend
if [ -x "$home/bin/nvcc" ] && [ -z "${FB_GPU_CC:-}" ]; then
	build nvcc "$cc" --backend nvcc --rdc "${kernels[@]}" "$ex/rdc_launch.cu" || fail "nvcc --rdc build"
	check_run "nvcc --rdc ($cc)" "$work/libnvcc.so"
	if [ -e "$home/nvvm/lib64/libnvvm.so" ]; then
		build nvcclto "$cc" --backend nvcc --lto "${kernels[@]}" "$ex/rdc_launch.cu" || fail "nvcc --lto build"
		check_run "nvcc --lto ($cc)" "$work/libnvcclto.so"
	else
		echo "nvcc --lto: $home/nvvm/lib64/libnvvm.so missing, not run"
	fi
fi
[ $fails = 0 ] && echo "ok rdc.sh"
exit $((fails > 0))
