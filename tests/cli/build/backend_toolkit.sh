# --backend auto with the real toolkit: CUB, Thrust, libcu++ and cooperative-groups kernels of
# device code only go to NVRTC, and NVRTC compiles each (the scan's choice checked against
# NVRTC itself); an unguarded host header inside the toolkit (thrust/complex.h's <cmath>), a
# host-only library API and host code still go to nvcc; a host header the scan cannot see
# (an #include through a macro) fails under NVRTC with the one line naming --backend nvcc.
. "$FB_TESTS_DIR/cli/lib.sh"
export FATBUILD_CACHE_DIR=$PWD/cache
cuda=${CUDA_HOME:-/usr/local/cuda}
k() { printf '%b' "$2" >"$1"; }
k cub.cu '#include <cub/block/block_reduce.cuh>\n#include <cub/block/block_scan.cuh>\n#include <cub/block/block_radix_sort.cuh>\ntemplate <int T>\n__global__ void reduce(const int *in, int *out)\n{\n\tusing R = cub::BlockReduce<int, T>;\n\t__shared__ typename R::TempStorage s;\n\tint v = R(s).Sum(in[threadIdx.x]);\n\tif (threadIdx.x == 0)\n\t\t*out = v;\n}\ntemplate <int T>\n__global__ void sort(int *d)\n{\n\tusing S = cub::BlockRadixSort<int, T, 4>;\n\t__shared__ typename S::TempStorage s;\n\tint k[4];\n\tfor (int i = 0; i < 4; i++)\n\t\tk[i] = d[threadIdx.x * 4 + i];\n\tS(s).Sort(k);\n\tfor (int i = 0; i < 4; i++)\n\t\td[threadIdx.x * 4 + i] = k[i];\n}\ntemplate __global__ void reduce<128>(const int *, int *);\ntemplate __global__ void sort<128>(int *);\n'
k thrust.cu '#include <thrust/functional.h>\n#include <thrust/tuple.h>\n#include <thrust/pair.h>\nextern "C" __global__ void k(float *a, int n)\n{\n\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n\tthrust::tuple<int, float> t = thrust::make_tuple(i, 1.f);\n\tif (i < n)\n\t\ta[i] = thrust::plus<float>()(a[i], thrust::get<1>(t));\n}\n'
k cg.cu '#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\nextern "C" __global__ void sum(const int *in, int *out)\n{\n\tcg::thread_block b = cg::this_thread_block();\n\tcg::thread_block_tile<32> w = cg::tiled_partition<32>(b);\n\tint v = cg::reduce(w, in[b.thread_rank()], cg::plus<int>());\n\tif (w.thread_rank() == 0)\n\t\tatomicAdd(out, v);\n}\n'
k libcu.cu '#include <cuda/std/atomic>\n#include <cuda/std/cstdint>\n#include <cuda_fp16.h>\n#include <curand_kernel.h>\n__global__ void k(cuda::std::uint32_t *p)\n{\n\tcuda::std::atomic_ref<cuda::std::uint32_t> a(*p);\n\ta.fetch_add(1);\n}\n'
k guard.cu '#include "guard.cuh"\n__global__ void k(float *p) { *p = twice(1.f); }\n'
k guard.cuh '#pragma once\n#ifndef __CUDACC_RTC__\n#include <cmath>\n#endif\n__host__ __device__ inline float twice(float x) { return 2 * x; }\n'
k complex.cu '#include <thrust/complex.h>\n__global__ void k(thrust::complex<float> *a) { *a = *a * *a; }\n'
k fft.cu '#include <cufft.h>\n__global__ void k() {}\n'
k unguarded.cu '#include "unguarded.cuh"\n__global__ void k() {}\n'
k unguarded.cuh '#pragma once\n#ifdef __CUDACC_RTC__\n#include <vector>\n#endif\n'
k launch.cu '#include <cub/block/block_reduce.cuh>\n__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); }\n'
for f in cub thrust cg libcu guard complex fft unguarded launch; do
	$FATBUILD build -v --emit-ninja --arch-list "8.0 9.0" -I "$cuda/include/cccl" --build-dir "bd_$f" -o "$f.so" "$f.cu" 2>&1 >/dev/null |
		sed -e "s|$cuda/|CUDA/|g" -e "s|\(CUDA/[^:]*\):[0-9]*|\1:N|" -e 's/; [0-9]* toolkit headers read/; N toolkit headers read/'
	if grep -q "nvcc -c" "bd_$f/build.ninja"; then
		echo "$f: nvcc edge"
	else
		$FATBUILD compile --arch-list 9.0 -o "$f.fatbin" "$f.cu" >/dev/null 2>&1 && echo "$f: NVRTC edge, NVRTC compiles it" ||
			echo "$f: NVRTC edge, NVRTC FAILS"
	fi
done
# A host header through a macro: the scan cannot see it, NVRTC fails and says what to do.
k macro.cu '#define HOST_HEADER <vector>\n#include HOST_HEADER\n__global__ void k() {}\n'
$FATBUILD build -v --emit-ninja --arch-list 9.0 --build-dir bd_macro -o macro.so macro.cu 2>&1 >/dev/null
$FATBUILD compile --arch-list 9.0 -o macro.fatbin macro.cu 2>&1 | grep -c 'no host headers such as <vector>; build host code with nvcc (fatbuild build --backend nvcc)'
