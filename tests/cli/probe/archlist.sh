# --arch-list: resolved by the arch-list engine like `fatbuild flags`; lists naming native/auto
# (or blank) are probed first so table/json show the devices; ARCHPROBE_ARCHS still overrides.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=8.6,9.0
run $ARCHPROBE --arch-list "native 8.0" --cuda-version 13.0
run $ARCHPROBE --arch-list "Ampere" --cuda-version 13.0 --format torch
run $ARCHPROBE --arch-list "" --cuda-version 13.0 --format cmake
run FAKECUDA_INIT=100 $ARCHPROBE --arch-list auto --cuda-version 13.0 --format cmake
run FAKECUDA_INIT=100 $ARCHPROBE --arch-list AUTO --cuda-version 13.0 --format cmake --fallback 9.0
run FAKECUDA_INIT=100 $ARCHPROBE --arch-list native --cuda-version 13.0 --format cmake
run FAKECUDA_INIT=100 $ARCHPROBE --arch-list auto --cuda-version 13.0 --format json
run ARCHPROBE_ARCHS=12.0 $ARCHPROBE --arch-list "native 8.0" --cuda-version 13.0 --format cmake
run $ARCHPROBE --arch-list "8.6 bogus" --cuda-version 13.0
