// layernorm.cu: LayerNorm forward (Welford-free two-pass in registers), one block per row,
// float and half with float statistics; writes mean and rstd for the backward pass.
#include "common.cuh"
#include "layernorm_params.cuh"

template <typename T>
__device__ void layernorm_row(const T *__restrict__ x, const T *__restrict__ gamma, const T *__restrict__ beta,
                              T *__restrict__ y, float *__restrict__ mean_out, float *__restrict__ rstd_out,
                              int cols, float eps)
{
	const T *xr = x + (size_t)blockIdx.x * cols;
	T *yr = y + (size_t)blockIdx.x * cols;
	float s = 0.f;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		s += to_float(xr[i]);
	float mean = block_sum(s) / cols;
	float v = 0.f;
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		float d = to_float(xr[i]) - mean;
		v += d * d;
	}
	float rstd = rsqrtf(block_sum(v) / cols + eps);
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		float n = (to_float(xr[i]) - mean) * rstd;
		yr[i] = from_float<T>(n * to_float(gamma[i]) + to_float(beta[i]));
	}
	if (threadIdx.x == 0) {
		mean_out[blockIdx.x] = mean;
		rstd_out[blockIdx.x] = rstd;
	}
}

extern "C" __global__ void __launch_bounds__(LN_THREADS) layernorm_f32(const float *x, const float *g, const float *b,
                                                                      float *y, float *mean, float *rstd, int cols)
{
	layernorm_row(x, g, b, y, mean, rstd, cols, LN_EPS);
}

extern "C" __global__ void __launch_bounds__(LN_THREADS) layernorm_f16(const __half *x, const __half *g,
                                                                      const __half *b, __half *y, float *mean,
                                                                      float *rstd, int cols)
{
	layernorm_row(x, g, b, y, mean, rstd, cols, LN_EPS);
}
