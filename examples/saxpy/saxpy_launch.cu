// saxpy_launch.cu: the same extension for --backend nvcc: host code with a <<<...>>> launch,
// compiled by nvcc with the gencode flags of the arch list and linked with cudart.
#include <cuda_runtime.h>
#include "saxpy.cuh"

__global__ void
saxpy_kernel(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = SAXPY_OP(a, x[i], y[i]);
}

extern "C" int
saxpy_host(float a, const float *x, float *y, int n)
{
	float *dx = nullptr, *dy = nullptr;
	size_t bytes = (size_t)n * sizeof(float);
	cudaError_t rc = cudaMalloc(&dx, bytes);
	if (rc == cudaSuccess)
		rc = cudaMalloc(&dy, bytes);
	if (rc == cudaSuccess)
		rc = cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
	if (rc == cudaSuccess)
		rc = cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice);
	if (rc == cudaSuccess) {
		saxpy_kernel<<<(n + 255) / 256, 256>>>(a, dx, dy, n);
		rc = cudaGetLastError();
	}
	if (rc == cudaSuccess)
		rc = cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
	cudaFree(dx);
	cudaFree(dy);
	return (int)rc;
}
