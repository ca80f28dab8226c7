# Validation against the installed toolkit (CUDA_HOME) and against other releases' tables.
. "$FB_TESTS_DIR/cli/lib.sh"
export CUDA_HOME=$FB_CUDA_HOME
run2 $FATBUILD flags --arch-list "8.0 8.6+PTX"
run2 $FATBUILD flags --arch-list "8.0 8.6+PTX" --format json | grep -E '^(\$ |\[exit |\[stderr\])|"(version|source)"' | sed 's/"toolkit": {"version": "[0-9.]*"/"toolkit": {"version": V/; s/"source": "NVRTC [^"]*"/"source": NVRTC/'
run2 $FATBUILD flags --arch-list "7.0 7.5" --cuda-version 12.4
run2 $FATBUILD flags --arch-list "10.1" --cuda-version 12.8
run2 $FATBUILD flags --arch-list "11.0" --cuda-version 12.8
run2 $FATBUILD flags --arch-list "Pascal 3.5" --cuda-version 11.8 --format torch
run2 $FATBUILD flags --arch-list "all-major" --cuda-version 12.8 --format cmake
