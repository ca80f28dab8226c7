#!/usr/bin/env bash
# build_nvcc.sh: --backend nvcc builds an extension from a .cu with host code and a <<<...>>>
# launch; its images are exactly the arch list's (checked with `fatbuild inspect`), and it
# exports the extern "C" host function. Skipped (77) without nvcc.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || { echo "no nvcc at $nvcc: skipped"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb nvcc.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/lib nv.so"
fails=0
fail() { echo "FAIL: $*" >&2; sed 's/^/  | /' "$work/log" >&2; fails=$((fails + 1)); }
"$FATBUILD_BIN" build --backend nvcc --arch-list "8.0 8.6+PTX" --build-dir "$work/b d" -o "$out" \
	"$FB_SOURCE_DIR/examples/saxpy/saxpy_launch.cu" >"$work/log" 2>&1 || fail "nvcc build"
"$FATBUILD_BIN" inspect "$out" >"$work/log" 2>&1 || fail "inspect"
got=$(awk '$2 == "elf" || $2 == "ptx" { print $2 ":" $3 }' "$work/log" | sort | tr '\n' ' ')
[ "$got" = "elf:sm_80 elf:sm_86 ptx:compute_86 " ] || { echo "images: $got" >&2; fail "wrong images"; }
nm -D --defined-only "$out" >"$work/log" 2>&1
grep -q ' T saxpy_host$' "$work/log" || fail "saxpy_host not exported"
# The build.ninja carries the gencode flags of the arch list.
grep -q -- '-gencode=arch=compute_86,code=compute_86' "$work/b d/build.ninja" || { cp "$work/b d/build.ninja" "$work/log"; fail "gencode flags"; }
# No-op rebuild.
"$FATBUILD_BIN" build --backend nvcc --arch-list "8.0 8.6+PTX" --build-dir "$work/b d" -o "$out" \
	"$FB_SOURCE_DIR/examples/saxpy/saxpy_launch.cu" >"$work/log" 2>&1 || fail "rebuild"
grep -q "no work to do" "$work/log" || fail "nvcc no-op rebuild ran something"
[ $fails = 0 ] && echo "ok build_nvcc"
exit $((fails > 0))
