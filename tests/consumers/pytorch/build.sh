#!/bin/sh
# build.sh: pip-installs the PyTorch extension in the current directory for the visible GPUs,
# else (docker build, CI) for 8.0 and 9.0+PTX with a notice on stderr. The recipe of docs/build-systems.md;
# tests/consumers/run.sh runs it with a stand-in pip that records what pip would get.
set -eu
archs=$(archprobe --format torch --fallback "8.0;9.0+PTX") || exit 1
TORCH_CUDA_ARCH_LIST="$archs" pip install --no-build-isolation .
