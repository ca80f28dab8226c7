# The main job: fatbuild --arch-list "8.0 8.6+PTX" -o libx.so kernels.cu host.cpp (no 'build'
# word), then the library's images and exported host function.
export FATBUILD_CACHE_DIR=$PWD/cache FATBUILD_BUILD_DIR=$PWD/builds
cat >kernels.cu <<'K'
extern "C" __global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}
K
cat >host.cpp <<'H'
#include <cstdint>
#include <fatbuild_runtime.h>
extern "C" int scale_device(std::uint64_t x, float a, int n)
{
	void *args[] = {&x, &a, &n};
	return fbrt_launch_name("scale", fbrt_dim((n + 127) / 128), fbrt_dim(128), 0, nullptr, args, nullptr);
}
H
$FATBUILD --arch-list "8.0 8.6+PTX" -o libx.so kernels.cu host.cpp >build.log 2>&1 || { cat build.log; exit 1; }
grep -c '^\[' build.log
$FATBUILD inspect libx.so | awk '$2 == "elf" || $2 == "ptx" { print $2, $3 }'
nm -D --defined-only libx.so | awk '$2 == "T" { print $3 }' | grep -v '^_'
ls builds
# Again: nothing to do.
$FATBUILD --arch-list "8.0 8.6+PTX" -o libx.so kernels.cu host.cpp | tail -n 1
