# A compile error: the NVRTC log as file:line:col with the target, exit 1, nothing written.
export FATBUILD_CACHE_DIR=$PWD/cache
mkdir -p src
printf '#include "helper.cuh"\nextern "C" __global__ void k(int *p)\n{\n\t*p = helper() + undefined_name;\n}\n' >src/bad.cu
printf '#pragma once\n__device__ inline int helper() { return 1; }\n' >src/helper.cuh
$FATBUILD compile --arch-list "8.0" -j 1 -o out.fatbin --depfile out.d src/bad.cu
rc=$?
ls
exit $rc
