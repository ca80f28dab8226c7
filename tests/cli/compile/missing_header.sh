# An include that cannot be found: NVRTC's message, with file:line:col and the target.
export FATBUILD_CACHE_DIR=$PWD/cache
printf '#include <cuda_fp16.h>\n#include "not_there.cuh"\nextern "C" __global__ void k(__half *p) { *p = 0; }\n' >k.cu
$FATBUILD compile --arch-list "9.0" -o out.fatbin k.cu
