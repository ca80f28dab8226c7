# The default search: libcuda.so.1 through the system loader (LD_LIBRARY_PATH here), the path
# actually loaded reported (dladdr), and the loader trace with -v.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=9.0 ARCHPROBE_LIBCUDA=
run LD_LIBRARY_PATH=$FB_BINARY_DIR/fakecuda $ARCHPROBE --cuda-version 13.0
run LD_LIBRARY_PATH=$FB_BINARY_DIR/fakecuda $ARCHPROBE --cuda-version 13.0 --format cmake -v
run LD_LIBRARY_PATH=$FB_BINARY_DIR/fakecuda $ARCHPROBE --cuda-version 13.0 --format cmake -v --no-subprocess
# a legacy driver without cuDeviceGetUuid_v2 still gives the UUID
run LD_LIBRARY_PATH=$FB_BINARY_DIR/fakecuda-legacy $ARCHPROBE --cuda-version 13.0
