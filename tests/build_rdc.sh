#!/usr/bin/env bash
# build_rdc.sh: relocatable device code through both backends (examples/rdc: a kernel calling
# a device function of another file, and a CDP parent kernel launching a child).
#   nvrtc: build --rdc and --lto (shared library and --executable); the embedded container holds
#     exactly one linked (ET_EXEC) SASS image per target, with the kernels of every file; the
#     fake driver loads it, resolves apply_scale, cdp_parent and cdp_child, and (emulated) the
#     numbers come out right; NVIDIA's cuobjdump (pip wheel nvidia-cuda-cuobjdump, in a venv
#     under the build dir) lists the same images and functions; nvlink links our relocatable
#     per-target outputs, and refuses one alone; the fake refuses an unlinked relocatable image;
#     touching one .cu redoes only its compiles, the device links, the embed and the link.
#   nvcc: build --backend nvcc --rdc and --lto: nvcc -dlink's container holds one linked image
#     per target, the host functions are exported, a changed .cu redoes its object, the device
#     link and the link; --lto uses code=lto_X.
# Skips (77) without nvJitLink; the nvcc part is skipped without nvcc.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
home=${CUDA_HOME:-/usr/local/cuda}
[ -e "$home/lib64/libnvJitLink.so.13" ] || [ -e "$home/lib64/libnvJitLink.so.12" ] ||
	{ echo "no nvJitLink in $home/lib64: skipped"; exit 77; }
fake=$FB_BINARY_DIR/fakecuda/libcuda.so.1
[ -e "$fake" ] || { echo "no fake driver at $fake (build the fakecuda target)"; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb rdc.XXXXXX")
view=
trap 'rm -rf "$work" ${view:+"$view"}' EXIT
export FATBUILD_CACHE_DIR="$work/cache"
ex=$FB_SOURCE_DIR/examples/rdc
src="$work/src dir"
mkdir -p "$src"
cp "$ex"/*.cu "$ex"/*.c "$src/"
fails=0
fail() { echo "FAIL: $*" >&2; [ -f "$work/log" ] && sed 's/^/  | /' "$work/log" >&2; fails=$((fails + 1)); }
kernels=("$src/scale.cu" "$src/apply.cu" "$src/cdp.cu")
fb() { "$FATBUILD_BIN" "$@"; }

# The driver program: dlopen the extension (or run the program), call rdc_apply and rdc_cdp.
cat >"$work/run.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
	int (*apply)(float *, int, char *, size_t);
	int (*cdp)(int *, int, int, int, char *, size_t);
	*(void **)&apply = dlsym(h, "rdc_apply");
	*(void **)&cdp = dlsym(h, "rdc_cdp");
	if (!apply || !cdp) { printf("missing rdc_apply/rdc_cdp\n"); return 2; }
	enum { N = 1000, B = 6, P = 16 };
	static float x[N];
	static int out[B * P];
	char msg[1024] = "";
	for (int i = 0; i < N; i++) x[i] = (float)i;
	if (apply(x, N, msg, sizeof(msg))) { printf("rdc_apply: %s\n", msg); return 1; }
	for (int i = 0; i < N; i++)
		if (x[i] != 2.0f * (float)i + 1.0f) { printf("x[%d] = %g, want %g\n", i, x[i], 2.0 * i + 1); return 1; }
	if (cdp(out, B, P, 3, msg, sizeof(msg))) { printf("rdc_cdp: %s\n", msg); return 1; }
	for (int i = 0; i < B * P; i++)
		if (out[i] != 3 * i) { printf("out[%d] = %d, want %d\n", i, out[i], 3 * i); return 1; }
	printf("ok apply %d cdp %d\n", N, B * P);
	return 0;
}
C
# A program linked with --executable: the same checks from main().
sed -e 's/int main(int argc, char \*\*argv) {/int rdc_apply(float *, int, char *, size_t); int rdc_cdp(int *, int, int, int, char *, size_t);\nint main(void) {/' \
	-e '/dlopen\|dlsym\|dlerror\|missing rdc_apply\|int (\*/d' "$work/run.c" | sed 's/(apply(/(rdc_apply(/; s/(cdp(/(rdc_cdp(/' >"$src/main.c"
cc -O1 -o "$work/run" "$work/run.c" -ldl >"$work/log" 2>&1 || fail "cc run.c"
# A raw loader: cuModuleLoadData on a file, then cuModuleGetFunction for each name given.
cat >"$work/load.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	void *h = dlopen(getenv("FBRT_LIBCUDA"), RTLD_NOW);
	if (!h) return 3;
	int (*init)(unsigned), (*load)(void **, const void *), (*get)(void **, void *, const char *);
	*(void **)&init = dlsym(h, "cuInit"); *(void **)&load = dlsym(h, "cuModuleLoadData");
	*(void **)&get = dlsym(h, "cuModuleGetFunction");
	FILE *f = fopen(argv[1], "rb"); if (!f) return 4;
	static unsigned char buf[1 << 24]; size_t n = fread(buf, 1, sizeof(buf), f); fclose(f); (void)n;
	void *m = NULL, *fn = NULL;
	int rc = init(0); if (!rc) rc = load(&m, buf);
	printf("load %d\n", rc);
	for (int i = 2; !rc && i < argc; i++) printf("%s %d\n", argv[i], get(&fn, m, argv[i]));
	return rc != 0;
}
C
cc -O1 -o "$work/load" "$work/load.c" -ldl >"$work/log" 2>&1 || fail "cc load.c"

run_fake() { # CC LIB: run the driver program against the fake driver on a device of that CC
	FAKECUDA_DEVICES=$1 FAKECUDA_CONTEXT=0 FAKECUDA_EMULATE=1 FBRT_LIBCUDA=$fake FAKECUDA_LOG="$work/fake.log" \
		"$work/run" "$2" >"$work/log" 2>&1
}
images() { # FILE: "kind:arch ..." of its .nv_fatbin containers
	fb inspect "$1" 2>/dev/null | awk '/^  container/ { c = ($0 ~ /\.nv_fatbin$/ || $0 !~ /, [._a-z]+$/) } c && ($2 == "elf" || $2 == "ptx" || $2 == "lto") { print $2 ":" $3 }' | tr '\n' ' '
}
edges() { sed -n 's/^\[[0-9]*\/[0-9]*\] //p' "$work/log" | sort | tr '\n' ';'; }

# ---- nvrtc backend, --rdc ----
lib="$work/out dir/librdc.so"
mkdir -p "$work/out dir"
bdir="$work/b rdc"
fb build --rdc -j 2 --arch-list "8.6 9.0+PTX" --build-dir "$bdir" -o "$lib" "${kernels[@]}" "$src/rdc_host.c" \
	>"$work/log" 2>&1 || fail "nvrtc --rdc build"
got=$(images "$lib")
[ "$got" = "elf:sm_86 elf:sm_90 ptx:compute_90 " ] || { echo "images: $got" >&2; fail "nvrtc --rdc: not one linked image per target"; }
fb inspect "$lib" >"$work/log" 2>&1
[ "$(grep -c '^  container' "$work/log")" = 1 ] || fail "nvrtc --rdc: more than one container"
fb inspect --kernels "$lib" >"$work/log" 2>&1
[ "$(grep -c 'executable (ET_EXEC) cubin' "$work/log")" = 2 ] || fail "nvrtc --rdc: the SASS images are not linked executables"
for k in apply_scale cdp_parent cdp_child; do
	[ "$(grep -c "kernel $k " "$work/log")" = 2 ] || fail "nvrtc --rdc: $k not in both SASS images"
done
for cc in 8.6 9.0; do
	run_fake $cc "$lib" || fail "nvrtc --rdc on fake $cc"
	grep -q "^ok apply 1000 cdp 96" "$work/log" || fail "nvrtc --rdc: wrong numbers on $cc"
	want=sm_${cc/./}
	grep -q "image $want" "$work/fake.log" || { cp "$work/fake.log" "$work/log"; fail "fake $cc did not load $want"; }
	rm -f "$work/fake.log"
done
# the per-target relocatable outputs: nvlink links them, refuses one alone; the fake refuses it
nvlink=$home/bin/nvlink
if [ -x "$nvlink" ]; then
	"$nvlink" -arch=sm_86 "$bdir/obj/0_scale.cu.sm_86.fatbin" "$bdir/obj/1_apply.cu.sm_86.fatbin" -o "$work/nl.cubin" \
		>"$work/log" 2>&1 || fail "nvlink cannot link our relocatable cubins"
	fb inspect --kernels "$work/nl.cubin" >"$work/log" 2>&1
	grep -q "kernel apply_scale" "$work/log" || fail "nvlink's link of our cubins lacks apply_scale"
	if "$nvlink" -arch=sm_86 "$bdir/obj/1_apply.cu.sm_86.fatbin" -o "$work/nl2.cubin" >"$work/log" 2>&1; then
		fail "nvlink linked apply.cu without scale.cu"
	fi
	grep -q "_Z11scale_valuef" "$work/log" || fail "nvlink's error does not name scale_value"
fi
FAKECUDA_DEVICES=8.6 FAKECUDA_CONTEXT=0 FBRT_LIBCUDA=$fake "$work/load" "$bdir/obj/1_apply.cu.sm_86.fatbin" apply_scale \
	>"$work/log" 2>&1 && fail "the fake driver loaded an unlinked relocatable image"
grep -q "^load 200" "$work/log" || fail "unlinked relocatable image: not CUDA_ERROR_INVALID_IMAGE"
FAKECUDA_DEVICES=8.6 FAKECUDA_CONTEXT=0 FBRT_LIBCUDA=$fake "$work/load" "$bdir/obj/dlink.fatbin" apply_scale cdp_parent cdp_child \
	>"$work/log" 2>&1 || fail "the fake driver cannot load the linked fatbin"
[ "$(grep -c '^\(apply_scale\|cdp_parent\|cdp_child\) 0$' "$work/log")" = 3 ] || fail "linked fatbin: kernels not resolved"
fb check --arch 8.6 "$bdir/obj/1_apply.cu.sm_86.fatbin" >"$work/log" 2>&1 && fail "check passed a relocatable image"
grep -q "relocatable" "$work/log" || fail "check does not explain relocatable images"
# without --rdc the two-file program does not link
fb build -j 2 --arch-list "8.6" --build-dir "$work/b plain" -o "$work/plain.so" "${kernels[@]}" "$src/rdc_host.c" \
	>"$work/log" 2>&1 && fail "two-file build without --rdc succeeded"
grep -q "scale_value" "$work/log" || fail "the failing whole-program build does not name scale_value"

# incremental: changing scale.cu recompiles it for each target, redoes the device links, the
# merge, the embed and the link, nothing else
sleep 1.1
echo "// changed" >>"$src/scale.cu"
fb build --rdc -j 2 --arch-list "8.6 9.0+PTX" --build-dir "$bdir" -o "$lib" "${kernels[@]}" "$src/rdc_host.c" \
	>"$work/log" 2>&1 || fail "incremental rebuild"
want="DLINK compute_90;DLINK sm_86;DLINK sm_90;EMBED fatbin.o;LINK librdc.so;MERGE dlink.fatbin;NVRTC compute_90 scale.cu;NVRTC sm_86 scale.cu;NVRTC sm_90 scale.cu;"
[ "$(edges)" = "$want" ] || { echo "want: $want" >&2; echo "got:  $(edges)" >&2; fail "incremental: wrong edges"; }
fb build --rdc -j 2 --arch-list "8.6 9.0+PTX" --build-dir "$bdir" -o "$lib" "${kernels[@]}" "$src/rdc_host.c" \
	>"$work/log" 2>&1 || fail "no-op rebuild"
grep -q "no work to do" "$work/log" || fail "no-op rdc rebuild ran something"

# cuobjdump (NVIDIA's reader) sees the same linked images and functions
venv=${FB_VENV_DIR:-$FB_BINARY_DIR}/cuobjdump-venv
cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
if [ -z "$cuo" ]; then
	{ [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"; } >"$work/log" 2>&1 &&
		timeout 300 "$venv/bin/pip" install -q nvidia-cuda-cuobjdump >>"$work/log" 2>&1
	cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
fi
if [ -n "$cuo" ]; then
	"$cuo" -lelf "$lib" >"$work/log" 2>&1 || fail "cuobjdump -lelf"
	[ "$(grep -c '^ELF file' "$work/log")" = 2 ] && grep -q 'sm_86.cubin' "$work/log" && grep -q 'sm_90.cubin' "$work/log" ||
		fail "cuobjdump: not one ELF per SASS target"
	"$cuo" -res-usage "$lib" >"$work/log" 2>&1 || fail "cuobjdump -res-usage"
	for k in apply_scale cdp_parent cdp_child _Z11scale_valuef; do
		[ "$(grep -c "Function $k:" "$work/log")" = 2 ] || fail "cuobjdump: $k not in both images"
	done
else
	echo "cuobjdump: pip install nvidia-cuda-cuobjdump failed (offline?); NVIDIA reader check not done" >&2
	fails=$((fails + 1))
fi

# ---- nvrtc backend, --lto, and --executable ----
prog="$work/rdc prog"
fb build --lto --executable -j 2 --arch-list "8.6 9.0" --build-dir "$work/b lto" -o "$prog" "${kernels[@]}" \
	"$src/rdc_host.c" "$src/main.c" >"$work/log" 2>&1 || fail "nvrtc --lto --executable build"
got=$(images "$prog")
[ "$got" = "elf:sm_86 elf:sm_90 " ] || { echo "images: $got" >&2; fail "nvrtc --lto: not one linked image per target"; }
fb inspect "$work/b lto/obj/1_apply.cu.sm_86.fatbin" >"$work/log" 2>&1
grep -q " lto  *lto_86 " "$work/log" || fail "--lto compile edge did not write LTO-IR"
FAKECUDA_DEVICES=9.0 FAKECUDA_CONTEXT=0 FAKECUDA_EMULATE=1 FBRT_LIBCUDA=$fake "$prog" >"$work/log" 2>&1 ||
	fail "nvrtc --lto program on fake 9.0"
grep -q "^ok apply 1000 cdp 96" "$work/log" || fail "nvrtc --lto program: wrong numbers"

# ---- nvcc backend ----
nvcc=$home/bin/nvcc
if [ -x "$nvcc" ]; then
	nlib="$work/out dir/librdc nvcc.so"
	fb build --backend nvcc --rdc -j 2 --arch-list "8.6 9.0+PTX" --build-dir "$work/b nvcc" -o "$nlib" "${kernels[@]}" \
		"$src/rdc_launch.cu" >"$work/log" 2>&1 || fail "nvcc --rdc build"
	got=$(images "$nlib")
	[ "$got" = "elf:sm_86 elf:sm_90 " ] || { echo "images: $got" >&2; fail "nvcc --rdc: not one linked image per SASS target in .nv_fatbin"; }
	grep -q -- '-rdc=true' "$work/b nvcc/build.ninja" && grep -q -- 'nvcc -dlink\|nvcc'"'"'\? -dlink' "$work/b nvcc/build.ninja" &&
		grep -q -- '-lcudadevrt' "$work/b nvcc/build.ninja" || { cp "$work/b nvcc/build.ninja" "$work/log"; fail "nvcc --rdc: flags"; }
	nm -D --defined-only "$nlib" >"$work/log" 2>&1
	grep -q ' T rdc_apply$' "$work/log" && grep -q ' T rdc_cdp$' "$work/log" || fail "nvcc --rdc: host functions not exported"
	# incremental: a changed scale.cu is recompiled, then the device link and the link rerun
	sleep 1.1
	echo "// changed again" >>"$src/scale.cu"
	fb build --backend nvcc --rdc -j 2 --arch-list "8.6 9.0+PTX" --build-dir "$work/b nvcc" -o "$nlib" "${kernels[@]}" \
		"$src/rdc_launch.cu" >"$work/log" 2>&1 || fail "nvcc --rdc rebuild"
	want="LINK librdc nvcc.so;NVCC -dlink;NVCC scale.cu;"
	[ "$(edges)" = "$want" ] || { echo "want: $want" >&2; echo "got:  $(edges)" >&2; fail "nvcc incremental: wrong edges"; }
	# nvcc's device LTO needs nvvm/lib64/libnvvm.so beside the toolkit; a toolkit without it gets a
	# toolkit view (symlinks) that has it
	lhome=$home
	if [ ! -e "$home/nvvm/lib64/libnvvm.so" ]; then
		fb build --backend nvcc --lto --arch-list "8.6" --build-dir "$work/b nvcc lto0" -o "$work/x.so" "${kernels[@]}" \
			"$src/rdc_launch.cu" >"$work/log" 2>&1 && fail "nvcc --lto without libnvvm succeeded"
		grep -q "nvvm/lib64/libnvvm.so" "$work/log" || fail "nvcc --lto without libnvvm: message"
		view=$(mktemp -d /tmp/fbcuda.XXXXXX)
		lhome=$view/cuda
		mkdir -p "$lhome/nvvm" "$lhome/bin" # bin file by file: nvcc finds nvvm/ beside its own path
		for f in "$home"/*; do [ "${f##*/}" = nvvm ] || [ "${f##*/}" = bin ] || ln -s "$f" "$lhome/"; done
		for f in "$home"/bin/*; do ln -s "$f" "$lhome/bin/"; done
		for f in "$home"/nvvm/*; do ln -s "$f" "$lhome/nvvm/"; done
		[ -e "$lhome/nvvm/lib64" ] || ln -s "$home/lib64" "$lhome/nvvm/lib64"
	fi
	CUDA_HOME=$lhome fb build --backend nvcc --lto -j 2 --arch-list "8.6 9.0" --build-dir "$work/b nvcc lto" \
		-o "$work/lto nvcc.so" "${kernels[@]}" "$src/rdc_launch.cu" >"$work/log" 2>&1 || fail "nvcc --lto build"
	got=$(images "$work/lto nvcc.so")
	[ "$got" = "elf:sm_86 elf:sm_90 " ] || { echo "images: $got" >&2; fail "nvcc --lto: not one linked image per target"; }
	grep -q 'code=lto_86' "$work/b nvcc lto/build.ninja" || fail "nvcc --lto: no code=lto_86"
else
	echo "no nvcc at $nvcc: nvcc part skipped"
fi
[ $fails = 0 ] && echo "ok build_rdc"
exit $((fails > 0))
