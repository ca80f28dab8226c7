// muladd.cu: the CUDA kernel of fb_muladd::muladd (muladd.cpp declares the operator). Host code
// and a <<<...>>> launch: --backend auto gives this file to nvcc, with PyTorch's nvcc flags
// under --torch.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cuda_runtime.h>

namespace fb_muladd {

__global__ void
muladd_kernel(int64_t n, const float *a, const float *b, float c, float *out)
{
	int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] * b[i] + c;
}

at::Tensor
muladd_cuda(const at::Tensor &a, const at::Tensor &b, double c)
{
	TORCH_CHECK(a.sizes() == b.sizes(), "muladd: a and b differ in shape");
	TORCH_CHECK(a.dtype() == at::kFloat && b.dtype() == at::kFloat, "muladd: float tensors only");
	TORCH_INTERNAL_ASSERT(a.device().type() == at::DeviceType::CUDA);
	TORCH_INTERNAL_ASSERT(b.device().type() == at::DeviceType::CUDA);
	at::Tensor x = a.contiguous(), y = b.contiguous();
	at::Tensor out = at::empty_like(x);
	int64_t n = out.numel();
	if (n == 0)
		return out;
	cudaStream_t stream = c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
	int threads = 256;
	int64_t blocks = (n + threads - 1) / threads;
	muladd_kernel<<<(unsigned)blocks, threads, 0, stream>>>(n, x.data_ptr<float>(), y.data_ptr<float>(),
	                                                        static_cast<float>(c), out.data_ptr<float>());
	C10_CUDA_KERNEL_LAUNCH_CHECK();
	return out;
}

TORCH_LIBRARY_IMPL(fb_muladd, CUDA, m)
{
	m.impl("muladd", &muladd_cuda);
}

} // namespace fb_muladd
