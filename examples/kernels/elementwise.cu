// elementwise.cu: fused bias + GELU (tanh approximation) in half and bfloat16, two
// elements per thread through __half2 / __nv_bfloat162; no shared memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float gelu(float x)
{
	const float k = 0.7978845608028654f; // sqrt(2/pi)
	return 0.5f * x * (1.f + tanhf(k * (x + 0.044715f * x * x * x)));
}

extern "C" __global__ void bias_gelu_f16(const __half2 *__restrict__ x, const __half2 *__restrict__ bias,
                                         __half2 *__restrict__ y, int cols2, long long n2)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n2; i += (long long)gridDim.x * blockDim.x) {
		float2 v = __half22float2(__hadd2(x[i], bias[i % cols2]));
		y[i] = __floats2half2_rn(gelu(v.x), gelu(v.y));
	}
}

extern "C" __global__ void bias_gelu_bf16(const __nv_bfloat162 *__restrict__ x, const __nv_bfloat162 *__restrict__ bias,
                                          __nv_bfloat162 *__restrict__ y, int cols2, long long n2)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n2; i += (long long)gridDim.x * blockDim.x) {
		float2 v = __bfloat1622float2(__hadd2(x[i], bias[i % cols2]));
		y[i] = __floats2bfloat162_rn(gelu(v.x), gelu(v.y));
	}
}

// y = a * x + y in half, scalar
extern "C" __global__ void haxpy(int n, __half a, const __half *__restrict__ x, __half *__restrict__ y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = __hfma(a, x[i], y[i]);
}
