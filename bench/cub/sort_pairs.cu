#include "cub_common.cuh"
extern "C" __global__ void sort_pairs(const float *kin, const int *vin, float *kout, int *vout)
{
	using Sort = cub::BlockRadixSort<float, BLOCK, ITEMS, int>;
	__shared__ typename Sort::TempStorage t;
	float k[ITEMS];
	int v[ITEMS];
	const size_t off = (size_t)blockIdx.x * BLOCK * ITEMS;
	cub::LoadDirectBlocked(threadIdx.x, kin + off, k);
	cub::LoadDirectBlocked(threadIdx.x, vin + off, v);
	Sort(t).SortDescending(k, v);
	cub::StoreDirectBlocked(threadIdx.x, kout + off, k);
	cub::StoreDirectBlocked(threadIdx.x, vout + off, v);
}
