# native with no visible device: exit 1, the message names CUDA_VISIBLE_DEVICES when set.
. "$FB_TESTS_DIR/cli/lib.sh"
export ARCHPROBE_LIBCUDA=$FB_BINARY_DIR/fakecuda/libcuda.so.1
unset ARCHPROBE_ARCHS CUDA_VISIBLE_DEVICES
run2 FAKECUDA_DEVICES= $FATBUILD flags --arch-list native --cuda-version 13.0
run2 ARCHPROBE_ARCHS=7.0 $FATBUILD flags --arch-list native --cuda-version 13.0
run2 FAKECUDA_DEVICES=8.6 CUDA_VISIBLE_DEVICES= $FATBUILD flags --arch-list native --cuda-version 13.0
