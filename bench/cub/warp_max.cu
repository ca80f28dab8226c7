#include "cub_common.cuh"
struct max_op {
	__device__ double operator()(double a, double b) const { return a > b ? a : b; }
};
extern "C" __global__ void warp_max(const double *in, double *out)
{
	using WR = cub::WarpReduce<double>;
	__shared__ typename WR::TempStorage t[BLOCK / 32];
	const int i = blockIdx.x * BLOCK + threadIdx.x;
	double m = WR(t[threadIdx.x / 32]).Reduce(in[i], max_op());
	if (threadIdx.x % 32 == 0)
		out[i / 32] = m;
}
