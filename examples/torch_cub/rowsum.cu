// rowsum.cu: the sum of each row of a float matrix, one block per row with cub::BlockReduce,
// and its launcher (ops.cpp calls fbc_rowsum_cuda with torch's current stream).
#include <cstdint>

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

__global__ void
rowsum_kernel(const float *x, float *out, int64_t cols)
{
	using Reduce = cub::BlockReduce<float, kThreads>;
	__shared__ typename Reduce::TempStorage tmp;
	const float *row = x + blockIdx.x * cols;
	float acc = 0.f;
	for (int64_t i = threadIdx.x; i < cols; i += kThreads)
		acc += row[i];
	float sum = Reduce(tmp).Sum(acc);
	if (threadIdx.x == 0)
		out[blockIdx.x] = sum;
}

} // namespace

// Returns the launch's cudaError_t (cudaSuccess: queued on stream).
int
fbc_rowsum_cuda(const float *x, float *out, int64_t rows, int64_t cols, cudaStream_t stream)
{
	if (rows > 0)
		rowsum_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, out, cols);
	return (int)cudaGetLastError();
}
