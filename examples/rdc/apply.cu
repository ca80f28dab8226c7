// apply.cu: a kernel calling a device function of another file (scale.cu).
extern __device__ float scale_value(float x);

extern "C" __global__ void apply_scale(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = scale_value(x[i]);
}
