# fatbuild dlink: what it links (one linked SASS image from relocatable cubins) and what it
# refuses, saying why: no target, an LTO name as target, whole-program cubins, a target the
# inputs lack, LTO without LTO-IR, the device runtime in PTX, no nvJitLink.
. "$FB_TESTS_DIR/cli/lib.sh"
cat >k.cu <<'CU'
extern __device__ int two(void);
extern "C" __global__ void k(int *p) { *p = two(); }
CU
cat >two.cu <<'CU'
__device__ int two(void) { return 2; }
CU
run2 $FATBUILD dlink -o x.fatbin k.fatbin
run2 $FATBUILD dlink --target lto_86 -o x.fatbin k.fatbin
run2 $FATBUILD compile --no-cache --arch-list 8.6 -o whole.fatbin two.cu
run2 $FATBUILD dlink --target sm_86 -o x.fatbin whole.fatbin
run2 $FATBUILD compile --no-cache --rdc --arch-list 8.6 -o ./ k.cu two.cu
run2 $FATBUILD dlink --target sm_90 -o x.fatbin k.fatbin two.fatbin
run2 $FATBUILD dlink --lto --target sm_86 -o x.fatbin k.fatbin two.fatbin
run2 $FATBUILD dlink --devrt --target compute_86 -o x.fatbin k.fatbin
mkdir -p nocuda/lib64
run2 CUDA_HOME=nocuda $FATBUILD dlink --target sm_86 -o x.fatbin k.fatbin two.fatbin
$FATBUILD dlink --target sm_86 -o x.fatbin k.fatbin 2>&1 | grep -c "Undefined reference to '_Z3twov'"
run test -e x.fatbin
run2 $FATBUILD dlink --target sm_86 -o x.fatbin k.fatbin two.fatbin
$FATBUILD inspect --kernels x.fatbin | grep -E 'cubin|kernel'
run2 $FATBUILD check --arch 8.6 k.fatbin
run2 $FATBUILD check --arch 8.6 x.fatbin
