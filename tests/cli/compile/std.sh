# --std: each standard NVRTC takes reaches it as -std= (C++03's __cplusplus is below C++11's),
# other values are refused before anything runs.
. "$FB_TESTS_DIR/cli/lib.sh"
export FATBUILD_CACHE_DIR=$PWD/cache
printf '#if __cplusplus >= 201103L\n#error not C++03\n#endif\nextern "C" __global__ void k(int *p) { *p = 1; }\n' >old.cu
run2 $FATBUILD compile --arch-list 8.0 -j 1 --std c++03 -o old.fatbin old.cu
run $FATBUILD compile --arch-list 8.0 -j 1 --std c++11 -o new.fatbin old.cu | grep -E '^(\$ |\[exit )'
run1 $FATBUILD compile --arch-list 8.0 --std c++23 -o x.fatbin old.cu
run1 $FATBUILD compile --arch-list 8.0 --std '' -o x.fatbin old.cu
ls *.fatbin
