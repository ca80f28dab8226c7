// rowsort.cu: each row of a float matrix (at most kThreads * kItems columns) sorted ascending,
// one block per row with cub::BlockRadixSort, short rows padded with +inf; and its launcher.
#include <cstdint>

#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 128;
constexpr int kItems = 8;

__global__ void
rowsort_kernel(const float *x, float *out, int64_t cols)
{
	using Load = cub::BlockLoad<float, kThreads, kItems, cub::BLOCK_LOAD_TRANSPOSE>;
	using Sort = cub::BlockRadixSort<float, kThreads, kItems>;
	using Store = cub::BlockStore<float, kThreads, kItems, cub::BLOCK_STORE_TRANSPOSE>;
	__shared__ union {
		typename Load::TempStorage load;
		typename Sort::TempStorage sort;
		typename Store::TempStorage store;
	} tmp;
	float v[kItems];
	Load(tmp.load).Load(x + blockIdx.x * cols, v, (int)cols, __int_as_float(0x7f800000));
	__syncthreads();
	Sort(tmp.sort).Sort(v);
	__syncthreads();
	Store(tmp.store).Store(out + blockIdx.x * cols, v, (int)cols);
}

} // namespace

int
fbc_rowsort_max_cols()
{
	return kThreads * kItems;
}

int
fbc_rowsort_cuda(const float *x, float *out, int64_t rows, int64_t cols, cudaStream_t stream)
{
	if (rows > 0)
		rowsort_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x, out, cols);
	return (int)cudaGetLastError();
}
