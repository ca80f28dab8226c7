# Validation against the installed toolkit (CUDA_HOME) and against other releases' tables.
run() { echo "+ fatbuild $*" >&2; $FATBUILD "$@"; echo "exit=$?"; }
export CUDA_HOME=$FB_CUDA_HOME
run flags --arch-list "8.0 8.6+PTX"
run flags --arch-list "8.0 8.6+PTX" --format json | grep -E '"(version|source)"' | sed 's/"toolkit": {"version": "[0-9.]*"/"toolkit": {"version": V/; s/"source": "NVRTC [^"]*"/"source": NVRTC/'
run flags --arch-list "7.0 7.5" --cuda-version 12.4
run flags --arch-list "10.1" --cuda-version 12.8
run flags --arch-list "11.0" --cuda-version 12.8
run flags --arch-list "Pascal 3.5" --cuda-version 11.8 --format torch
run flags --arch-list "all-major" --cuda-version 12.8 --format cmake
