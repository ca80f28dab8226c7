# No toolkit where CUDA_HOME points: exit 1 with what to do; --cuda-version needs none.
. "$FB_TESTS_DIR/cli/lib.sh"
export CUDA_HOME=/nonexistent/cuda
run2 $FATBUILD flags --arch-list 8.0 --cuda-version 12.8
run2 $FATBUILD flags --arch-list 8.0
