# A host header under NVRTC: NVRTC's message, then one line saying NVRTC compiles device code
# only and naming --backend nvcc. A missing header of the project's own gets no such line.
. "$FB_TESTS_DIR/cli/lib.sh"
export FATBUILD_CACHE_DIR=$PWD/cache
printf '#include <cstdio>\n__global__ void k() { printf("hi\\n"); }\n' >h.cu
run2 $FATBUILD compile --arch-list "9.0" -o out.fatbin h.cu
printf '#include "mine.cuh"\n__global__ void k() {}\n' >m.cu
$FATBUILD compile --arch-list "9.0" -o out.fatbin m.cu 2>&1 | grep -c "backend nvcc"
