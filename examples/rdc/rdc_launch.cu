// rdc_launch.cu: host side of the rdc example for the nvcc backend: <<<...>>> launches of
// kernels defined in the other files (extern __global__ needs --rdc).
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" __global__ void apply_scale(float *x, int n);
extern "C" __global__ void cdp_parent(int *out, int per_block, int mul);

static int
report(cudaError_t e, char *msg, size_t size)
{
	if (e != cudaSuccess && msg)
		snprintf(msg, size, "%s", cudaGetErrorString(e));
	return e != cudaSuccess;
}

extern "C" int
rdc_apply(float *x, int n, char *msg, size_t size)
{
	float *d = NULL;
	cudaError_t e = cudaMalloc(&d, (size_t)n * sizeof(float));
	if (e == cudaSuccess)
		e = cudaMemcpy(d, x, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
	if (e == cudaSuccess) {
		apply_scale<<<(n + 255) / 256, 256>>>(d, n);
		e = cudaDeviceSynchronize();
	}
	if (e == cudaSuccess)
		e = cudaMemcpy(x, d, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost);
	cudaFree(d);
	return report(e, msg, size);
}

extern "C" int
rdc_cdp(int *out, int blocks, int per_block, int mul, char *msg, size_t size)
{
	int *d = NULL;
	size_t bytes = (size_t)blocks * (size_t)per_block * sizeof(int);
	cudaError_t e = cudaMalloc(&d, bytes);
	if (e == cudaSuccess)
		e = cudaMemcpy(d, out, bytes, cudaMemcpyHostToDevice);
	if (e == cudaSuccess) {
		cdp_parent<<<blocks, 32>>>(d, per_block, mul);
		e = cudaDeviceSynchronize();
	}
	if (e == cudaSuccess)
		e = cudaMemcpy(out, d, bytes, cudaMemcpyDeviceToHost);
	cudaFree(d);
	return report(e, msg, size);
}
