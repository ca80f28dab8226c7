// scan.cuh: shared by the kernels of build_repro.sh; k1.cu and k2.cu hold only templates, so their
// internal names (the anonymous namespace, CUB's) take the front end's seed (a PID without one)
#include <cub/block/block_scan.cuh>
#include <cub/block/block_reduce.cuh>
namespace { __device__ unsigned calls; }
template <typename T, int BLOCK> __device__ T block_sum(T v) {
	using R = cub::BlockReduce<T, BLOCK>;
	__shared__ typename R::TempStorage t;
	return R(t).Sum(v);
}
