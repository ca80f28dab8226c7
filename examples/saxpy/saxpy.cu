// saxpy.cu: the kernel of the example extension. Compiled by NVRTC for every target of the
// arch list (fatbuild compile); extern "C" keeps its name "saxpy" unmangled.
#include "saxpy.cuh"

extern "C" __global__ void
saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = SAXPY_OP(a, x[i], y[i]);
}
