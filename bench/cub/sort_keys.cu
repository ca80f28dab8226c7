#include "cub_common.cuh"
extern "C" __global__ void sort_keys(const unsigned *in, unsigned *out)
{
	using Sort = cub::BlockRadixSort<unsigned, BLOCK, ITEMS>;
	__shared__ typename Sort::TempStorage t;
	unsigned k[ITEMS];
	cub::LoadDirectBlocked(threadIdx.x, in + blockIdx.x * BLOCK * ITEMS, k);
	Sort(t).Sort(k);
	cub::StoreDirectBlocked(threadIdx.x, out + blockIdx.x * BLOCK * ITEMS, k);
}
