# One device's query fails (docs/probe.md §8 (7)): the others are still reported and used;
# --strict makes it an error (5); the drop-ins behave like nvptx-arch (prints the devices before
# the failing one, exit 1) and __nvcc_device_query (nothing, exit 1).
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=8.6,9.0,12.0 FAKECUDA_FAIL='cuDeviceGetAttribute@1#75:999'
run $ARCHPROBE --cuda-version 13.0
run $ARCHPROBE --cuda-version 13.0 --format cmake
run $ARCHPROBE --cuda-version 13.0 --format cmake --strict
run $ARCHPROBE --format nvptx-arch
run $ARCHPROBE --format nvcc-query
# informative queries failing only empty their fields
run FAKECUDA_FAIL=cuDeviceGetName:999,cuDeviceGetPCIBusId@0:1 $ARCHPROBE --cuda-version 13.0 --strict
# every device failing is a driver error
run FAKECUDA_FAIL=cuDeviceGet:101 $ARCHPROBE --cuda-version 13.0 --format cmake
