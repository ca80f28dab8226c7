// reduce.cu: grid-stride sum and sum-of-squares reductions (float, double, half in / float out).
#include "common.cuh"

extern "C" __global__ void reduce_sum_f32(const float *__restrict__ in, float *__restrict__ out, unsigned long long n)
{
	float acc = 0.f;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		acc += in[i];
	acc = block_sum(acc);
	if (threadIdx.x == 0)
		atomicAdd(out, acc);
}

extern "C" __global__ void reduce_sumsq_f64(const double *__restrict__ in, double *__restrict__ out, unsigned long long n)
{
	double acc = 0.0;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		acc += in[i] * in[i];
	acc = block_sum(acc);
	if (threadIdx.x == 0)
		atomicAdd(out, acc);
}

// Half input, vectorised by two, float accumulation.
extern "C" __global__ void reduce_sum_f16(const __half2 *__restrict__ in, float *__restrict__ out, unsigned long long n2)
{
	float acc = 0.f;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n2;
	     i += (unsigned long long)gridDim.x * blockDim.x) {
		float2 f = __half22float2(in[i]);
		acc += f.x + f.y;
	}
	acc = block_sum(acc);
	if (threadIdx.x == 0)
		atomicAdd(out, acc);
}
