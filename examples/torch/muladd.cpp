// muladd.cpp: the operator fb_muladd::muladd(a, b, c) = a * b + c for float tensors, declared
// with TORCH_LIBRARY, with a CPU and a CUDA implementation; the CUDA kernel is in muladd.cu.
// Built three ways (docs/pytorch.md): fatbuild build --torch, fatbuild.load, a
// setup.py.
#include <Python.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cuda_runtime_api.h>

int fb_muladd_cuda(int64_t n, const float *a, const float *b, float c, float *out, cudaStream_t stream);

namespace fb_muladd {

at::Tensor
muladd_cpu(const at::Tensor &a, const at::Tensor &b, double c)
{
	TORCH_CHECK(a.sizes() == b.sizes(), "muladd: a and b differ in shape");
	TORCH_CHECK(a.dtype() == at::kFloat && b.dtype() == at::kFloat, "muladd: float tensors only");
	TORCH_INTERNAL_ASSERT(a.device().type() == at::DeviceType::CPU);
	TORCH_INTERNAL_ASSERT(b.device().type() == at::DeviceType::CPU);
	at::Tensor x = a.contiguous(), y = b.contiguous();
	at::Tensor out = at::empty_like(x);
	const float *px = x.data_ptr<float>(), *py = y.data_ptr<float>();
	float *po = out.data_ptr<float>();
	const float fc = static_cast<float>(c);
	for (int64_t i = 0, n = out.numel(); i < n; i++)
		po[i] = px[i] * py[i] + fc;
	return out;
}

at::Tensor
muladd_cuda(const at::Tensor &a, const at::Tensor &b, double c)
{
	TORCH_CHECK(a.sizes() == b.sizes(), "muladd: a and b differ in shape");
	TORCH_CHECK(a.dtype() == at::kFloat && b.dtype() == at::kFloat, "muladd: float tensors only");
	TORCH_INTERNAL_ASSERT(a.device().type() == at::DeviceType::CUDA);
	TORCH_CHECK(b.device() == a.device(), "muladd: a and b are on different devices");
	at::Tensor x = a.contiguous(), y = b.contiguous();
	at::Tensor out = at::empty_like(x);
	cudaStream_t stream = c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
	int rc = fb_muladd_cuda(out.numel(), x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(c),
	                        out.data_ptr<float>(), stream);
	TORCH_CHECK(rc == cudaSuccess, "muladd: kernel launch failed: ", cudaGetErrorString((cudaError_t)rc));
	return out;
}

TORCH_LIBRARY(fb_muladd, m)
{
	m.def("muladd(Tensor a, Tensor b, float c) -> Tensor");
}

TORCH_LIBRARY_IMPL(fb_muladd, CPU, m)
{
	m.impl("muladd", &muladd_cpu);
}

TORCH_LIBRARY_IMPL(fb_muladd, CUDA, m)
{
	m.impl("muladd", &muladd_cuda);
}

} // namespace fb_muladd

// `import NAME` runs PyInit_NAME; the operators above register when the library loads, so the
// module itself is empty. NAME is TORCH_EXTENSION_NAME, which --torch defines.
#define FB_CAT2(a, b) a##b
#define FB_CAT(a, b) FB_CAT2(a, b)
#define FB_STR2(a) #a
#define FB_STR(a) FB_STR2(a)

extern "C" PyMODINIT_FUNC
FB_CAT(PyInit_, TORCH_EXTENSION_NAME)(void)
{
	static PyModuleDef def = {PyModuleDef_HEAD_INIT, FB_STR(TORCH_EXTENSION_NAME),
	                          "fb_muladd operators (torch.ops.fb_muladd.muladd)", -1, nullptr,
	                          nullptr, nullptr, nullptr, nullptr};
	return PyModule_Create(&def);
}
