#include "scan.cuh"
template <typename T> __global__ void sum_kernel(const T *x, T *out) {
	T v = block_sum<T, 128>(x[blockIdx.x * 128 + threadIdx.x]);
	if (threadIdx.x == 0) { out[blockIdx.x] = v; atomicAdd(&calls, 1u); }
}
template __global__ void sum_kernel<float>(const float *, float *);
