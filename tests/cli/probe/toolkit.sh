# Devices older / newer than the toolkit (docs/probe.md §8 (9)), via the arch-list engine's
# device rules: too old is an error for the native list (2), dropped with --fallback; too new
# is clamped to the newest arch as PTX with a notice.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
run FAKECUDA_DEVICES=5.0 $ARCHPROBE --cuda-version 13.0 --format cmake
run FAKECUDA_DEVICES=5.0,8.6 $ARCHPROBE --cuda-version 13.0 --format cmake
run FAKECUDA_DEVICES=5.0 $ARCHPROBE --cuda-version 13.0 --format cmake --fallback 8.0
run FAKECUDA_DEVICES=13.5 $ARCHPROBE --cuda-version 13.0 --format nvcc
run FAKECUDA_DEVICES=8.6,13.5 $ARCHPROBE --cuda-version 12.4 --format torch
run FAKECUDA_DEVICES=10.0 $ARCHPROBE --cuda-version 12.4 --format cmake
# the drop-ins report the devices as they are
run FAKECUDA_DEVICES=5.0,13.5 $ARCHPROBE --format nvptx-arch
