#include "cub_common.cuh"
extern "C" __global__ void argmax(const float *in, int *out)
{
	using Reduce = cub::BlockReduce<cub::KeyValuePair<int, float>, BLOCK>;
	__shared__ typename Reduce::TempStorage t;
	const int i = blockIdx.x * BLOCK + threadIdx.x;
	cub::KeyValuePair<int, float> kv(i, in[i]);
	kv = Reduce(t).Reduce(kv, cub::ArgMax());
	if (threadIdx.x == 0)
		out[blockIdx.x] = kv.key;
}
