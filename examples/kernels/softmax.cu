// softmax.cu: numerically stable row softmax, one block per row, float and half.
#include "common.cuh"

template <typename T>
__device__ void softmax_row(const T *__restrict__ in, T *__restrict__ out, int cols)
{
	const T *x = in + (size_t)blockIdx.x * cols;
	T *y = out + (size_t)blockIdx.x * cols;
	float m = __int_as_float(0xff800000); // -inf
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		m = fmaxf(m, to_float(x[i]));
	m = block_max(m);
	float s = 0.f;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		s += __expf(to_float(x[i]) - m);
	s = block_sum(s);
	float inv = 1.f / s;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		y[i] = from_float<T>(__expf(to_float(x[i]) - m) * inv);
}

extern "C" __global__ void softmax_f32(const float *in, float *out, int cols) { softmax_row(in, out, cols); }
extern "C" __global__ void softmax_f16(const __half *in, __half *out, int cols) { softmax_row(in, out, cols); }
