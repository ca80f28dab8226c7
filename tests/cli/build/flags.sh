# Which compiler sees which flag. On nvcc's command line (--backend nvcc) the host compiler's
# flags (--cxxflags) go through -Xcompiler, commas escaped, except the ones nvcc shares
# (-I -D -U -std= -g); --nvcc-flags and --cuda-flags are nvcc's own. NVRTC edges get
# --cuda-flags as -Xnvrtc words and never the host flags. A compile whose flags state an -O
# gets no -O2 of fatbuild's; nvcc flags that name the arches (-gencode) replace the arch
# list's, as with torch's builder. (--no-edge-cache: the nvcc command as it is, not quoted
# inside `fatbuild edge`.)
printf '__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); }\n' >l.cu
printf 'extern "C" __global__ void k(float *p) { *p = 1; }\n' >d.cu
flags="-O3 -fdiagnostics-color=always -I inc -DX=1 -fsanitize=address,undefined -std=c++17 -g"
$FATBUILD build --emit-ninja --no-edge-cache --backend nvcc --arch-list 8.0 --build-dir bd --cxxflags "$flags" \
	--nvcc-flags "--use_fast_math -Xptxas -v" --cuda-flags "-lineinfo" -o l.so l.cu >/dev/null || exit 1
sed -n 's/.*nvcc -c -Xcompiler -fPIC -gencode=arch=compute_80,code=sm_80 .*-ccbin [^ ]* \(.*\) -Xcompiler -ffile-prefix-map=[^ ]* -Xcompiler -ffile-prefix-map=[^ ]* -I[^ ]* -MD .*/\1/p' bd/build.ninja
# no -O in the flags: fatbuild's -O2, once; the project's -O3 and gencode: no -O2, no arch list
$FATBUILD build --emit-ninja --no-edge-cache --backend nvcc --arch-list 8.0 --build-dir bd3 -o l.so l.cu >/dev/null || exit 1
sed -n 's/.*nvcc -c \(-O2 -Xcompiler -fPIC -gencode[^ ]*\) .*/\1/p' bd3/build.ninja
$FATBUILD build --emit-ninja --no-edge-cache --backend nvcc --arch-list 8.0 --build-dir bd4 \
	--nvcc-flags "-O3 -gencode arch=compute_90,code=sm_90" -o l.so l.cu >/dev/null || exit 1
grep -o 'nvcc -c [^ ]* [^ ]*' bd4/build.ninja
grep -o -- ' -O[0-9]\| -gencode[= ][^ ]*' bd4/build.ninja | tr -d '\n'; echo
$FATBUILD build --emit-ninja --arch-list 8.0 --build-dir bd2 --cxxflags "$flags" --cuda-flags "-lineinfo -maxrregcount=32" \
	-o d.so d.cu >/dev/null || exit 1
sed -n 's/.* compile --arch-list sm_80 \(.*\) --depfile .*/\1/p' bd2/build.ninja
