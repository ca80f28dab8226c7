#!/usr/bin/env bash
# api.sh: fatbuild's Python layer against torch.utils.cpp_extension without compiling
# (ctest torch_api, label torch): api.py (the API, SYCL, load_inline's files, load()'s words
# against torch's own build.ninja) and cmdline.py (the compile commands fatbuild runs against
# torch's, word by word, through stand-in compilers). The venv is tests/torch/run.sh's.
# Environment: FB_SOURCE_DIR, FB_BINARY_DIR, FATBUILD_BIN; TORCH_VENV, TORCH_SPEC.
set -u
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}" "${FATBUILD_BIN:?}"
work=$FB_BINARY_DIR/torch-api
rm -rf "$work" && mkdir -p "$work"
. "$FB_SOURCE_DIR/tests/torch/lib.sh"
venv=${TORCH_VENV:-${FB_VENV_DIR:-$FB_BINARY_DIR}/venv-torch}
torch_venv "$venv" || exit 1
# the package from the source tree, the tools from this build
export PYTHONPATH=$FB_SOURCE_DIR/fatbuild/python FATBUILD_EXECUTABLE=$FATBUILD_BIN PATH=$venv/bin:$PATH
export FATBUILD_CACHE_DIR=$work/cache
unset TORCH_CUDA_ARCH_LIST CC
run_logged api "$venv/bin/python" "$FB_SOURCE_DIR/tests/torch/api.py" && ok "api: $(tail -n 1 "$work/api.log")"
run_logged cmdline "$venv/bin/python" "$FB_SOURCE_DIR/tests/torch/cmdline.py" "$work/cmdline" &&
	{ grep -v '^ *[+-] ' "$work/cmdline.log" | grep '^  \|PASS'; }
[ $fails -eq 0 ] && { echo "PASS: torch_api"; exit 0; }
echo "$fails check(s) failed" >&2
exit 1
