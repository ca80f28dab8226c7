# native/auto: devices from ARCHPROBE_ARCHS (replaces probing) and from the fake libcuda;
# the fallback chain when no device is visible.
run() { echo "+ fatbuild $*" >&2; $FATBUILD "$@"; echo "exit=$?"; }
export ARCHPROBE_LIBCUDA=$FB_BINARY_DIR/fakecuda/libcuda.so.1
unset ARCHPROBE_FALLBACK ARCHPROBE_ARCHS CUDA_VISIBLE_DEVICES
ARCHPROBE_ARCHS="8.6 10.0" run flags --arch-list native --cuda-version 13.0
ARCHPROBE_ARCHS="8.6 10.0" run flags --arch-list native --cuda-version 13.0 --format json
ARCHPROBE_ARCHS="12.0" run flags --arch-list auto --cuda-version 11.8
ARCHPROBE_ARCHS="7.0 8.6" run flags --arch-list auto --cuda-version 13.0
FAKECUDA_DEVICES=8.6,10.0,8.6 run flags --arch-list native --cuda-version 13.0
FAKECUDA_DEVICES=9.0,12.0 run flags --cuda-version 13.0 --format torch
FAKECUDA_DEVICES= run flags --cuda-version 13.0
FAKECUDA_DEVICES= run flags --arch-list auto --fallback "8.0 9.0+PTX" --cuda-version 13.0
FAKECUDA_DEVICES= ARCHPROBE_FALLBACK="Hopper" run flags --arch-list auto --cuda-version 13.0
FAKECUDA_DEVICES= ARCHPROBE_FALLBACK="Hopper" run flags --arch-list auto --fallback 8.6 --cuda-version 13.0
