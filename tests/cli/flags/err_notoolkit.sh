# No toolkit where CUDA_HOME points: exit 1 with what to do; --cuda-version needs none.
run() { echo "+ fatbuild $*" >&2; out=$($FATBUILD "$@"); echo "exit=$? stdout=[$out]"; }
export CUDA_HOME=/nonexistent/cuda
run flags --arch-list 8.0 --cuda-version 12.8
$FATBUILD flags --arch-list 8.0
