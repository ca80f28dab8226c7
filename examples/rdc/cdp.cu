// cdp.cu: dynamic parallelism, a kernel that launches kernels (needs --rdc and the device
// runtime). Each parent block launches one child grid that fills its slice of out.
extern "C" __global__ void cdp_child(int *out, int base, int mul)
{
	out[base + threadIdx.x] = mul * (base + (int)threadIdx.x);
}

extern "C" __global__ void cdp_parent(int *out, int per_block, int mul)
{
	if (threadIdx.x == 0)
		cdp_child<<<1, per_block>>>(out, per_block * (int)blockIdx.x, mul);
}
