# fatbuild dlink: what it links (one linked SASS image from relocatable cubins) and what it
# refuses, saying why: no target, an LTO name as target, whole-program cubins, a target the
# inputs lack, LTO without LTO-IR, the device runtime in PTX, no nvJitLink.
cat >k.cu <<'CU'
extern __device__ int two(void);
extern "C" __global__ void k(int *p) { *p = two(); }
CU
cat >two.cu <<'CU'
__device__ int two(void) { return 2; }
CU
$FATBUILD dlink -o x.fatbin k.fatbin; echo "exit $?"
$FATBUILD dlink --target lto_86 -o x.fatbin k.fatbin; echo "exit $?"
$FATBUILD compile --no-cache --arch-list 8.6 -o whole.fatbin two.cu; echo "exit $?"
$FATBUILD dlink --target sm_86 -o x.fatbin whole.fatbin; echo "exit $?"
$FATBUILD compile --no-cache --rdc --arch-list 8.6 -o ./ k.cu two.cu; echo "exit $?"
$FATBUILD dlink --target sm_90 -o x.fatbin k.fatbin two.fatbin; echo "exit $?"
$FATBUILD dlink --lto --target sm_86 -o x.fatbin k.fatbin two.fatbin; echo "exit $?"
$FATBUILD dlink --devrt --target compute_86 -o x.fatbin k.fatbin; echo "exit $?"
mkdir -p nocuda/lib64
CUDA_HOME=nocuda $FATBUILD dlink --target sm_86 -o x.fatbin k.fatbin two.fatbin; echo "exit $?"
$FATBUILD dlink --target sm_86 -o x.fatbin k.fatbin 2>&1 | grep -c "Undefined reference to '_Z3twov'"
test -e x.fatbin; echo "nothing written: $?"
$FATBUILD dlink --target sm_86 -o x.fatbin k.fatbin two.fatbin; echo "exit $?"
$FATBUILD inspect --kernels x.fatbin | grep -E 'cubin|kernel'
$FATBUILD check --arch 8.6 k.fatbin; echo "exit $?"
$FATBUILD check --arch 8.6 x.fatbin; echo "exit $?"
