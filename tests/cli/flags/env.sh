# TORCH_CUDA_ARCH_LIST as the default list, and `fatbuild --arch-list` without a subcommand.
run() { echo "+ fatbuild $*" >&2; $FATBUILD "$@"; echo "exit=$?"; }
TORCH_CUDA_ARCH_LIST="8.0 8.6+PTX" run flags --cuda-version 13.0
TORCH_CUDA_ARCH_LIST="8.0 8.6+PTX" run flags --cuda-version 13.0 --arch-list 9.0
run --arch-list "8.0 8.6+PTX" --cuda-version 13.0
run --arch-list Ampere --format cmake --cuda-version 13.0
run flags "8.0 8.6+PTX" --format torch --cuda-version 13.0
run flags --arch-list=Hopper --format=cmake --cuda-version=13.0
