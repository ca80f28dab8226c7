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
# Host-compiler flags reach nvcc's host compiler through -Xcompiler (raw, nvcc stops with
# "Unknown option '-fdiagnostics-color=always'"); the default backend (auto) sends this file,
# host code with a <<< launch, to nvcc.
"$FATBUILD_BIN" build --arch-list "8.0" --cxxflags "-O3 -fdiagnostics-color=always" --build-dir "$work/b2" \
	-o "$work/lib2.so" "$FB_SOURCE_DIR/examples/saxpy/saxpy_launch.cu" >"$work/log" 2>&1 || fail "auto + --cxxflags build"
grep -q -- '-Xcompiler -fdiagnostics-color=always' "$work/b2/build.ninja" || { cp "$work/b2/build.ninja" "$work/log"; fail "-Xcompiler routing"; }
"$FATBUILD_BIN" inspect "$work/lib2.so" >"$work/log" 2>&1 || fail "inspect lib2"
got=$(awk '$2 == "elf" || $2 == "ptx" { print $2 ":" $3 }' "$work/log" | sort | tr '\n' ' ')
[ "$got" = "elf:sm_80 " ] || { echo "images: $got" >&2; fail "auto backend: wrong images"; }
# Oracle: our embedded object has the layout nvcc -c gives the same fatbin (sections, flags,
# alignment, the wrapper's relocation) and byte-identical .nv_fatbin content.
cu="$FB_SOURCE_DIR/examples/saxpy/saxpy.cu"
"$nvcc" -c -gencode arch=compute_80,code=sm_80 -I "$FB_SOURCE_DIR/examples/saxpy" "$cu" -o "$work/nv.o" >"$work/log" 2>&1 &&
	"$nvcc" -fatbin -gencode arch=compute_80,code=sm_80 -I "$FB_SOURCE_DIR/examples/saxpy" "$cu" -o "$work/k.fatbin" >>"$work/log" 2>&1 ||
	fail "nvcc -c / -fatbin"
"$FATBUILD_BIN" embed "$work/k.fatbin" -o "$work/our.o" >"$work/log" 2>&1 || fail "embed"
layout() { # name type flags align of the fatbin sections; the wrapper relocation
	readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\] *//' |
		awk '$1 ~ /^(\.nv_fatbin|\.nvFatBinSegment|\.rela\.nvFatBinSegment|\.note\.GNU-stack)$/ { print $1, $2, $(NF-3) ~ /^[A-Z]+$/ ? $(NF-3) : "-", $NF }'
	readelf -rW "$1" | awk '/^Relocation section .\.rela\.nvFatBinSegment/ { r = 1; next } /^Relocation/ { r = 0 } r && /R_X86/ { print $1, $3, $5, $6, $7 }'
}
layout "$work/nv.o" >"$work/nv.layout"
layout "$work/our.o" >"$work/our.layout"
if ! diff "$work/nv.layout" "$work/our.layout" >"$work/log"; then fail "embed layout differs from nvcc -c"; fi
grep -q 'nvFatBinSegment' "$work/our.layout" || { cp "$work/our.layout" "$work/log"; fail "layout extraction found nothing"; }
objcopy -O binary --only-section=.nv_fatbin "$work/nv.o" "$work/nv.bin"
objcopy -O binary --only-section=.nv_fatbin "$work/our.o" "$work/our.bin"
cmp -s "$work/nv.bin" "$work/our.bin" || { : >"$work/log"; fail ".nv_fatbin differs from nvcc -c's"; }
[ $fails = 0 ] && echo "ok build_nvcc"
exit $((fails > 0))
