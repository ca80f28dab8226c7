# The CUDA toolkit's real stub libcuda (docs/probe.md §8 (2)): exit 4 with the CUresult name
# from archprobe's own table (the stub's cuGetErrorName itself fails with 34), given directly
# and found through LD_LIBRARY_PATH under its SONAME (the classic "stubs in LD_LIBRARY_PATH").
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
STUB=$FB_CUDA_HOME/lib64/stubs/libcuda.so
[ -e "$STUB" ] || { echo "no toolkit stub at $STUB" >&2; exit 1; }
run ARCHPROBE_LIBCUDA=$STUB $ARCHPROBE --format cmake
run ARCHPROBE_LIBCUDA=$STUB $ARCHPROBE --format json
mkdir -p stubs && ln -s "$STUB" stubs/libcuda.so.1
run ARCHPROBE_LIBCUDA= LD_LIBRARY_PATH=$PWD/stubs $ARCHPROBE --format cmake
# the drop-ins fail like the tools they replace: exit 1, no output
run ARCHPROBE_LIBCUDA=$STUB $ARCHPROBE --format nvptx-arch --silent
run ARCHPROBE_LIBCUDA=$STUB $ARCHPROBE --format nvcc-query --silent
