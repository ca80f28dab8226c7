# native with no visible device: exit 1, the message names CUDA_VISIBLE_DEVICES when set.
run() { echo "+ fatbuild $*" >&2; out=$($FATBUILD "$@"); echo "exit=$? stdout=[$out]"; }
export ARCHPROBE_LIBCUDA=$FB_BINARY_DIR/fakecuda/libcuda.so.1
unset ARCHPROBE_ARCHS CUDA_VISIBLE_DEVICES
FAKECUDA_DEVICES= run flags --arch-list native --cuda-version 13.0
ARCHPROBE_ARCHS=7.0 run flags --arch-list native --cuda-version 13.0
FAKECUDA_DEVICES=8.6 CUDA_VISIBLE_DEVICES= $FATBUILD flags --arch-list native --cuda-version 13.0
