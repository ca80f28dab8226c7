# native/auto: devices from ARCHPROBE_ARCHS (replaces probing) and from the fake libcuda;
# the fallback chain when no device is visible.
. "$FB_TESTS_DIR/cli/lib.sh"
export ARCHPROBE_LIBCUDA=$FB_BINARY_DIR/fakecuda/libcuda.so.1
unset ARCHPROBE_FALLBACK ARCHPROBE_ARCHS CUDA_VISIBLE_DEVICES
run2 ARCHPROBE_ARCHS="8.6 10.0" $FATBUILD flags --arch-list native --cuda-version 13.0
run2 ARCHPROBE_ARCHS="8.6 10.0" $FATBUILD flags --arch-list native --cuda-version 13.0 --format json
run2 ARCHPROBE_ARCHS="12.0" $FATBUILD flags --arch-list auto --cuda-version 11.8
run2 ARCHPROBE_ARCHS="7.0 8.6" $FATBUILD flags --arch-list auto --cuda-version 13.0
run2 FAKECUDA_DEVICES=8.6,10.0,8.6 $FATBUILD flags --arch-list native --cuda-version 13.0
run2 FAKECUDA_DEVICES=9.0,12.0 $FATBUILD flags --cuda-version 13.0 --format torch
run2 FAKECUDA_DEVICES= $FATBUILD flags --cuda-version 13.0
run2 FAKECUDA_DEVICES= $FATBUILD flags --arch-list auto --fallback "8.0 9.0+PTX" --cuda-version 13.0
run2 FAKECUDA_DEVICES= ARCHPROBE_FALLBACK="Hopper" $FATBUILD flags --arch-list auto --cuda-version 13.0
run2 FAKECUDA_DEVICES= ARCHPROBE_FALLBACK="Hopper" $FATBUILD flags --arch-list auto --fallback 8.6 --cuda-version 13.0
