# TORCH_CUDA_ARCH_LIST as the default list, and `fatbuild --arch-list` without a subcommand.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 TORCH_CUDA_ARCH_LIST="8.0 8.6+PTX" $FATBUILD flags --cuda-version 13.0
run2 TORCH_CUDA_ARCH_LIST="8.0 8.6+PTX" $FATBUILD flags --cuda-version 13.0 --arch-list 9.0
run2 $FATBUILD --arch-list "8.0 8.6+PTX" --cuda-version 13.0
run2 $FATBUILD --arch-list Ampere --format cmake --cuda-version 13.0
run2 $FATBUILD flags "8.0 8.6+PTX" --format torch --cuda-version 13.0
run2 $FATBUILD flags --arch-list=Hopper --format=cmake --cuda-version=13.0
