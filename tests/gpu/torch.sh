#!/usr/bin/env bash
# torch.sh: the PyTorch example on a real GPU (cannot run without one; exits 77 then).
#   1. fatbuild build --torch for the device's own arch (arch list auto), import the module,
#      run fb_muladd::muladd on CUDA tensors and compare with PyTorch's a * b + c;
#   2. the same through fatbuild.load (torch.ops.load_library);
#   3. a build for an older arch plus its PTX only (8.0+PTX; 7.5+PTX on 8.x), so the driver
#      must JIT the PTX, and the comparison again;
#   4. examples/torch_cub (three CUB .cu files, ops.cpp) through fatbuild.load for the device's
#      arch: rowsum, rowscan and rowsort on CUDA tensors against PyTorch's on the CPU.
# Usage: tests/gpu/torch.sh [BUILD_DIR]  (default: build). PYTHON: a Python with torch and the
# fatbuild package (default BUILD_DIR/venv-torch/bin/python, which ctest -R torch_extension
# sets up).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${1:-$root/build}
fb=${FATBUILD_BIN:-$bdir/bin/fatbuild}
py=${PYTHON:-$bdir/venv-torch/bin/python}
[ -x "$fb" ] || { echo "torch.sh: no fatbuild at $fb (build first)" >&2; exit 2; }
"$py" -c "import torch, fatbuild" 2>/dev/null || { echo "torch.sh: $py lacks torch or fatbuild (ctest -R torch_extension sets them up)" >&2; exit 2; }
cc=$("$py" -c "import torch; print('%d.%d' % torch.cuda.get_device_capability() if torch.cuda.is_available() else '')" 2>/dev/null)
if [ -z "$cc" ]; then echo "torch.sh: torch sees no GPU: skipped"; exit 77; fi
echo "device compute capability $cc"
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-gpu-torch.XXXXXX")
trap 'rm -rf "$work"' EXIT
export FATBUILD_EXECUTABLE=$fb
ex=$root/examples/torch
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
unset TORCH_CUDA_ARCH_LIST

"$fb" build --torch --python "$py" --python-module --name muladd --build-dir "$work/b1" -o "$work/m1/" \
	"$ex/muladd.cpp" "$ex/muladd.cu" >"$work/log" 2>&1 || { cat "$work/log"; fail "build for the device"; }
"$fb" inspect "$work"/m1/muladd*.so | awk '$2 == "elf" || $2 == "ptx" { print "  image", $2, $3 }'
"$py" "$ex/check.py" --module "$work/m1" muladd --cuda || fail "CUDA op (fatbuild build --torch)"

cat >"$work/load.py" <<PY
import sys, subprocess, fatbuild
path = fatbuild.load("muladd_gpu", ["$ex/muladd.cpp", "$ex/muladd.cu"], build_directory="$work/b2", is_python_module=False)
sys.exit(subprocess.call([sys.executable, "$ex/check.py", "--library", path, "--cuda"]))
PY
"$py" "$work/load.py" || fail "CUDA op (fatbuild.load)"

old="8.0+PTX"
[ "${cc%%.*}" -le 8 ] && old="7.5+PTX"
"$fb" build --torch --python "$py" --python-module --name muladd --arch-list "$old" --build-dir "$work/b3" \
	-o "$work/m3/" "$ex/muladd.cpp" "$ex/muladd.cu" >"$work/log" 2>&1 || { cat "$work/log"; fail "build for $old"; }
"$py" "$ex/check.py" --module "$work/m3" muladd --cuda || fail "CUDA op from PTX ($old, JIT)"

cub=$root/examples/torch_cub
cat >"$work/cub.py" <<PY
import sys, subprocess, fatbuild
path = fatbuild.load("fb_cub", ["$cub/ops.cpp", "$cub/rowsum.cu", "$cub/rowscan.cu", "$cub/rowsort.cu"],
                     build_directory="$work/b4", is_python_module=False)
sys.exit(subprocess.call([sys.executable, "$cub/check.py", "--library", path, "--cuda"]))
PY
"$py" "$work/cub.py" || fail "CUB ops on CUDA (examples/torch_cub, fatbuild.load)"

[ $fails = 0 ] && echo "ok gpu/torch"
exit $((fails > 0))
