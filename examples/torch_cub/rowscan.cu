// rowscan.cu: the inclusive prefix sum of each row of a float matrix, one block per row with
// cub::BlockScan over tiles of kThreads * kItems, the running total carried by a prefix
// callback; and its launcher.
#include <cstdint>

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 128;
constexpr int kItems = 4;

struct Carry {
	float total;
	__device__ float
	operator()(float tile_sum)
	{
		float before = total;
		total += tile_sum;
		return before;
	}
};

__global__ void
rowscan_kernel(const float *x, float *out, int64_t cols)
{
	using Load = cub::BlockLoad<float, kThreads, kItems, cub::BLOCK_LOAD_TRANSPOSE>;
	using Scan = cub::BlockScan<float, kThreads>;
	using Store = cub::BlockStore<float, kThreads, kItems, cub::BLOCK_STORE_TRANSPOSE>;
	__shared__ union {
		typename Load::TempStorage load;
		typename Scan::TempStorage scan;
		typename Store::TempStorage store;
	} tmp;
	const float *row = x + blockIdx.x * cols;
	float *dst = out + blockIdx.x * cols;
	Carry carry{0.f};
	for (int64_t off = 0; off < cols; off += kThreads * kItems) {
		int valid = (int)(cols - off < kThreads * kItems ? cols - off : kThreads * kItems);
		float v[kItems];
		Load(tmp.load).Load(row + off, v, valid, 0.f);
		__syncthreads();
		Scan(tmp.scan).InclusiveSum(v, v, carry);
		__syncthreads();
		Store(tmp.store).Store(dst + off, v, valid);
		__syncthreads();
	}
}

} // namespace

int
fbc_rowscan_cuda(const float *x, float *out, int64_t rows, int64_t cols, cudaStream_t stream)
{
	if (rows > 0)
		rowscan_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, out, cols);
	return (int)cudaGetLastError();
}
