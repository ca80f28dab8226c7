# cache stats / clear / dir on a private cache; a second compile is served from it.
export FATBUILD_CACHE_DIR=$PWD/cache
$FATBUILD cache stats
printf 'extern "C" __global__ void k(float *p) { p[threadIdx.x] *= 2.f; }\n' >k.cu
$FATBUILD compile -v --arch-list "8.0 9.0+PTX" -j 1 -o k.fatbin k.cu
$FATBUILD compile -v --arch-list "8.0 9.0+PTX" -o k.fatbin k.cu
$FATBUILD cache stats | sed 's/^size: .*/size: .../'
$FATBUILD cache clear
$FATBUILD cache stats
$FATBUILD cache dir
