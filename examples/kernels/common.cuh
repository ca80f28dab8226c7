// common.cuh: warp and block reduction helpers shared by the bundled kernels.
#pragma once
#include <cuda_fp16.h>

#define FB_WARP 32

template <typename T>
__device__ __forceinline__ T warp_sum(T v)
{
#pragma unroll
	for (int off = FB_WARP / 2; off > 0; off /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

template <typename T>
__device__ __forceinline__ T warp_max(T v)
{
#pragma unroll
	for (int off = FB_WARP / 2; off > 0; off /= 2)
		v = max(v, __shfl_xor_sync(0xffffffffu, v, off));
	return v;
}

// Sum over the block; every thread gets the result. blockDim.x must be a multiple of 32.
template <typename T>
__device__ T block_sum(T v)
{
	__shared__ T partial[32];
	int lane = threadIdx.x % FB_WARP, warp = threadIdx.x / FB_WARP;
	v = warp_sum(v);
	if (lane == 0)
		partial[warp] = v;
	__syncthreads();
	int nwarps = (blockDim.x + FB_WARP - 1) / FB_WARP;
	v = lane < nwarps ? partial[lane] : T(0);
	v = warp_sum(v);
	__syncthreads();
	return v;
}

template <typename T>
__device__ T block_max(T v)
{
	__shared__ T partial[32];
	int lane = threadIdx.x % FB_WARP, warp = threadIdx.x / FB_WARP;
	v = warp_max(v);
	if (lane == 0)
		partial[warp] = v;
	__syncthreads();
	int nwarps = (blockDim.x + FB_WARP - 1) / FB_WARP;
	v = lane < nwarps ? partial[lane] : partial[0];
	v = warp_max(v);
	__syncthreads();
	return v;
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
