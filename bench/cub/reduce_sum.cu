#include "cub_common.cuh"
extern "C" __global__ void reduce_sum(const float *in, float *out)
{
	using Load = cub::BlockLoad<float, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
	using Reduce = cub::BlockReduce<float, BLOCK>;
	__shared__ union {
		typename Load::TempStorage load;
		typename Reduce::TempStorage reduce;
	} t;
	float x[ITEMS];
	Load(t.load).Load(in + blockIdx.x * BLOCK * ITEMS, x);
	__syncthreads();
	float s = Reduce(t.reduce).Sum(x);
	if (threadIdx.x == 0)
		out[blockIdx.x] = s;
}
