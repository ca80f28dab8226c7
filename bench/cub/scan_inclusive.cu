#include "cub_common.cuh"
extern "C" __global__ void scan_inclusive(const int *in, int *out)
{
	using Scan = cub::BlockScan<int, BLOCK, cub::BLOCK_SCAN_WARP_SCANS>;
	__shared__ typename Scan::TempStorage t;
	int x[ITEMS];
	cub::LoadDirectStriped<BLOCK>(threadIdx.x, in + blockIdx.x * BLOCK * ITEMS, x);
	Scan(t).InclusiveSum(x, x);
	cub::StoreDirectStriped<BLOCK>(threadIdx.x, out + blockIdx.x * BLOCK * ITEMS, x);
}
