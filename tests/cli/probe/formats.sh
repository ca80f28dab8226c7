# Every output format for two devices, 8.6 and 9.0 (docs/probe.md §8 (6)).
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=8.6,9.0
for f in table json cmake torch nvcc clang list nvrtc bazel nvptx-arch; do
	run $ARCHPROBE --format $f --cuda-version 13.0
done
# nvcc-query writes no newline, as __nvcc_device_query does
run $ARCHPROBE --format nvcc-query
echo
run $ARCHPROBE --cuda-version 13.0 --no-subprocess --format torch
