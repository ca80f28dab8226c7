// ops.cpp: three row-wise operators on float matrices, fb_cub::rowsum, rowscan and rowsort,
// each with a CPU implementation (ATen's) and a CUDA one (CUB block algorithms in rowsum.cu,
// rowscan.cu, rowsort.cu). A bigger extension than examples/torch for timing builds
// (scripts/bench-torch.sh): three CUB files for nvcc and one C++ file that includes
// <torch/extension.h>, as most extensions' do.
#include <torch/extension.h>

#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

int fbc_rowsum_cuda(const float *x, float *out, int64_t rows, int64_t cols, cudaStream_t stream);
int fbc_rowscan_cuda(const float *x, float *out, int64_t rows, int64_t cols, cudaStream_t stream);
int fbc_rowsort_cuda(const float *x, float *out, int64_t rows, int64_t cols, cudaStream_t stream);
int fbc_rowsort_max_cols();

namespace fb_cub {

static void
check_matrix(const at::Tensor &x)
{
	TORCH_CHECK(x.dim() == 2, "fb_cub: a matrix (2 dims) is needed");
	TORCH_CHECK(x.dtype() == at::kFloat, "fb_cub: float tensors only");
}

at::Tensor
rowsum_cpu(const at::Tensor &x)
{
	check_matrix(x);
	return x.sum(1);
}

at::Tensor
rowscan_cpu(const at::Tensor &x)
{
	check_matrix(x);
	return x.cumsum(1);
}

at::Tensor
rowsort_cpu(const at::Tensor &x)
{
	check_matrix(x);
	return std::get<0>(x.sort(1));
}

using Launch = int (*)(const float *, float *, int64_t, int64_t, cudaStream_t);

static at::Tensor
on_cuda(const at::Tensor &x, at::Tensor out, Launch launch)
{
	check_matrix(x);
	at::Tensor c = x.contiguous();
	int rc = launch(c.data_ptr<float>(), out.data_ptr<float>(), c.size(0), c.size(1),
	                c10::cuda::getCurrentCUDAStream(c.device().index()).stream());
	TORCH_CHECK(rc == 0, "fb_cub: kernel launch failed: ", cudaGetErrorString((cudaError_t)rc));
	return out;
}

at::Tensor
rowsum_cuda(const at::Tensor &x)
{
	return on_cuda(x, at::empty({x.size(0)}, x.options()), fbc_rowsum_cuda);
}

at::Tensor
rowscan_cuda(const at::Tensor &x)
{
	return on_cuda(x, at::empty_like(x, at::MemoryFormat::Contiguous), fbc_rowscan_cuda);
}

at::Tensor
rowsort_cuda(const at::Tensor &x)
{
	TORCH_CHECK(x.dim() == 2 && x.size(1) <= fbc_rowsort_max_cols(), "fb_cub: rowsort takes at most ",
	            fbc_rowsort_max_cols(), " columns");
	return on_cuda(x, at::empty_like(x, at::MemoryFormat::Contiguous), fbc_rowsort_cuda);
}

TORCH_LIBRARY(fb_cub, m)
{
	m.def("rowsum(Tensor x) -> Tensor");
	m.def("rowscan(Tensor x) -> Tensor");
	m.def("rowsort(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(fb_cub, CPU, m)
{
	m.impl("rowsum", &rowsum_cpu);
	m.impl("rowscan", &rowscan_cpu);
	m.impl("rowsort", &rowsort_cpu);
}

TORCH_LIBRARY_IMPL(fb_cub, CUDA, m)
{
	m.impl("rowsum", &rowsum_cuda);
	m.impl("rowscan", &rowscan_cuda);
	m.impl("rowsort", &rowsort_cuda);
}

} // namespace fb_cub

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}
