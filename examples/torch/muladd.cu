// muladd.cu: the CUDA kernel of fb_muladd::muladd and its launcher (muladd.cpp declares the
// operator and calls fb_muladd_cuda with the tensors' pointers and torch's current stream).
// Host code with a <<<...>>> launch: --backend auto gives this file to nvcc. It includes no
// torch header, so nvcc parses them neither for the host nor for each arch.
#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void
muladd_kernel(int64_t n, const float *a, const float *b, float c, float *out)
{
	int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] * b[i] + c;
}

} // namespace

// Returns the launch's cudaError_t (cudaSuccess: queued on stream).
int
fb_muladd_cuda(int64_t n, const float *a, const float *b, float c, float *out, cudaStream_t stream)
{
	const int threads = 256;
	const int64_t blocks = (n + threads - 1) / threads;
	if (n > 0)
		muladd_kernel<<<(unsigned)blocks, threads, 0, stream>>>(n, a, b, c, out);
	return (int)cudaGetLastError();
}
