#ifndef __CUDACC_RTC__
#include <cstdio>
#elif defined(X) && !_CCCL_COMPILER(NVRTC)
#else
#include "x.cuh"
#endif
__global__ void k() {}
void h() { k<<<1,1>>>(); }
