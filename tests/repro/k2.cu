#include "scan.cuh"
template <typename T> __global__ void scan_kernel(T *x) {
	using S = cub::BlockScan<T, 128>;
	__shared__ typename S::TempStorage t;
	T v = x[threadIdx.x];
	S(t).InclusiveSum(v, v);
	x[threadIdx.x] = v + block_sum<T, 128>(v);
	if (threadIdx.x == 0) atomicAdd(&calls, 1u);
}
template __global__ void scan_kernel<int>(int *);
