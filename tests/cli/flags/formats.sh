# Every output format of `fatbuild flags` for the spec's example list and a suffixed one
# (built-in CUDA 13.0 table: the same on every machine).
. "$FB_TESTS_DIR/cli/lib.sh"
for f in nvcc torch cmake clang nvrtc bazel list json; do
	run2 $FATBUILD flags --arch-list "8.0 8.6+PTX" --format $f --cuda-version 13.0
done
for f in nvcc torch cmake clang nvrtc bazel list; do
	run2 $FATBUILD flags --arch-list "9.0a 10.0f+PTX 12.0" --format $f --cuda-version 13.0
done
run2 $FATBUILD flags --arch-list "compute_86 sm_90" --format cmake --cuda-version 13.0
run2 $FATBUILD flags --arch-list "compute_86 sm_90" --format bazel --cuda-version 13.0
