# fatbuild's native/auto go through ap_probe via the arch-list engine; its probe child is the
# archprobe beside the fatbuild binary.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=8.6,9.0
run $FATBUILD flags --arch-list native --format cmake --cuda-version 13.0
run $FATBUILD flags --format torch --cuda-version 13.0
run CUDA_VISIBLE_DEVICES=1 $FATBUILD flags --arch-list native --format cmake --cuda-version 13.0
run CUDA_VISIBLE_DEVICES= $FATBUILD flags --arch-list native --format cmake --cuda-version 13.0
run ARCHPROBE_LIBCUDA=/nonexistent $FATBUILD flags --arch-list native --format cmake --cuda-version 13.0
run FAKECUDA_INIT=34 $FATBUILD flags --arch-list native --format cmake --cuda-version 13.0
run FAKECUDA_HANG=1 ARCHPROBE_TIMEOUT=0.5 $FATBUILD flags --arch-list native --format cmake --cuda-version 13.0
run ARCHPROBE_LIBCUDA=/nonexistent $FATBUILD flags --arch-list auto --format cmake --cuda-version 13.0 --fallback 8.0
