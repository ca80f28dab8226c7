#!/usr/bin/env bash
# prune.sh: fatbuild prune and size on nvcc-built files (.fatbin, .o, .a, .so, executable, an
# rdc .o/.a for nvlink), a fatbuild extension (fake driver) and NVIDIA's libcurand.
#   - the images kept are exactly the expected ones (written out per list below from the rules),
#     both as `fatbuild inspect` and as NVIDIA's cuobjdump (pip wheel nvidia-cuda-cuobjdump,
#     cached in a venv under the build dir) list them, and cuobjdump reads every container;
#   - `fatbuild check` answers the same for every listed CC before and after;
#   - linked files keep their size and every byte outside the device-code sections;
#   - pruned .o/.a still link (host linker; rdc ones through nvcc -dlink, i.e. nvlink);
#   - the fake driver loads the same image from a pruned extension as from the unpruned one;
#   - guard rails: missing images fail without --allow-missing, -o IN needs --in-place.
# Needs the CUDA toolkit (exit 77 without one).
set -u
: "${FATBUILD_BIN:?}"
FB=$FATBUILD_BIN
CUDA=${CUDA_HOME:-/usr/local/cuda}
for t in nvcc; do [ -x "$CUDA/bin/$t" ] || { echo "skip: $CUDA/bin/$t not found"; exit 77; }; done
export PATH="$CUDA/bin:$PATH"
bdir=${FB_BINARY_DIR:-$(dirname "$(dirname "$FB")")}
w=$(mktemp -d "$bdir/prune-test.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w" || exit 1
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# cuobjdump from the pip wheel, cached under the build dir
cuo=${CUOBJDUMP:-}
if [ -z "$cuo" ]; then
	venv=$bdir/venv-cuobjdump
	cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
	if [ -z "$cuo" ]; then
		{ [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"; } >/dev/null 2>&1 &&
			timeout 300 "$venv/bin/pip" install -q nvidia-cuda-cuobjdump >/dev/null 2>&1
		cuo=$(find "$venv" -name cuobjdump -type f -perm -u+x 2>/dev/null | head -1)
	fi
fi
[ -n "$cuo" ] || fail "cuobjdump: pip install nvidia-cuda-cuobjdump failed (no oracle)"

# images as "ELF sm_90" / "PTX sm_120" lines, sorted: ours from inspect, theirs from cuobjdump
ours() {
	"$FB" inspect --format json "$1" | python3 -c '
import json, sys
for f in json.load(sys.stdin)["files"]:
    for c in f["containers"]:
        for e in c["entries"]:
            print(e["kind"].upper(), e["arch"].replace("compute_", "sm_"))' | sort
}
theirs() {
	"$cuo" --list-elf --list-ptx "$1" 2>"$w/cuo.all" |
		sed -nE 's/^(ELF|PTX) file +[0-9]+: .*\.([a-z]+_[0-9]+[af]?)\.(cubin|ptx)$/\1 \2/p' | sort
}
# (cuobjdump says "cuobjdump info: No PTX file found" on stderr when there is none to list)
ncontainers() { "$FB" inspect --format json "$1" | python3 -c 'import json,sys; print(sum(len(f["containers"]) for f in json.load(sys.stdin)["files"]))'; }
# want FILE "ELF sm_90,PTX sm_120" COPIES: the expected multiset, each image COPIES times
want() {
	local f=$1 list=$2 n=${3:-1} i
	IFS=, read -ra items <<<"$list"
	for ((i = 0; i < n; i++)); do printf '%s\n' "${items[@]}"; done | sed '/^$/d' | sort >"$w/want"
	ours "$f" >"$w/ours"
	if cmp -s "$w/want" "$w/ours"; then ok "$f: inspect lists exactly: $list"; else
		fail "$f: inspect lists"; diff "$w/want" "$w/ours" | head -10 >&2; fi
	if [ -n "$cuo" ]; then
		theirs "$f" >"$w/theirs"
		grep -v "^cuobjdump info *: No \(ELF\|PTX\) file found" "$w/cuo.all" >"$w/cuo.err"
		if cmp -s "$w/want" "$w/theirs" && [ ! -s "$w/cuo.err" ]; then ok "$f: cuobjdump lists exactly: $list"; else
			fail "$f: cuobjdump lists"; diff "$w/want" "$w/theirs" | head -10 >&2; head -3 "$w/cuo.err" >&2; fi
	fi
}
# same_check ORIG PRUNED CC...: fatbuild check answers the same (entry numbers aside)
same_check() {
	local a=$1 b=$2 cc; shift 2
	for cc in "$@"; do
		local x y
		x=$("$FB" check --arch "$cc" "$a" 2>&1 | sed -E 's/ \(entry [0-9]+\)//; s#^([^:]*): [^:]*:#\1:#')
		y=$("$FB" check --arch "$cc" "$b" 2>&1 | sed -E 's/ \(entry [0-9]+\)//; s#^([^:]*): [^:]*:#\1:#')
		if [ "$x" = "$y" ] && [ -n "$x" ]; then ok "check $cc: same before and after ($b): $y"; else
			fail "check $cc differs: before '$x', after '$y'"; fi
	done
}
# outside_same ORIG PRUNED: same size, every byte outside .nv_fatbin/__nv_relfatbin identical
outside_same() {
	python3 - "$1" "$2" <<'PY' && ok "$2: same size, bytes outside the device sections identical" || fail "$2: host bytes changed"
import struct, sys
a = open(sys.argv[1], "rb").read(); b = open(sys.argv[2], "rb").read()
assert len(a) == len(b), "size changed"
shoff, = struct.unpack_from("<Q", a, 0x28); shnum, shstr = struct.unpack_from("<HH", a, 0x3c)
secs = [struct.unpack_from("<IIQQQQ", a, shoff + 64 * i) for i in range(shnum)]
stro = secs[shstr][4]
name = lambda n: a[stro + n:a.index(b"\0", stro + n)].decode()
ranges = [(s[4], s[4] + s[5]) for s in secs if name(s[0]) in (".nv_fatbin", "__nv_relfatbin")]
assert ranges, "no device section"
m = bytearray(a); n = bytearray(b)
for lo, hi in ranges:
    m[lo:hi] = bytes(hi - lo); n[lo:hi] = bytes(hi - lo)
assert m == n, "bytes outside the device sections differ"
assert a != b, "nothing was pruned"
PY
}

cat >k.cu <<'CU'
__device__ int mark = 7;
extern "C" __global__ void kern(int *p) { p[threadIdx.x] = mark + (int)threadIdx.x; }
CU
cat >k2.cu <<'CU'
extern "C" __global__ void kern2(float *p) { p[threadIdx.x] *= 2.0f; }
CU
cat >m.cu <<'CU'
extern "C" __global__ void kern(int *p);
int main() { int *d = 0; cudaMalloc(&d, 64); kern<<<1, 4>>>(d); return cudaDeviceSynchronize() != cudaSuccess; }
CU
G="-gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90,code=sm_90"
G="$G -gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=[sm_120,compute_120]"
# shellcheck disable=SC2086
{
	nvcc -c $G k.cu -o k.o && nvcc -c $G k2.cu -o k2.o && nvcc -fatbin $G k.cu -o k.fatbin &&
		nvcc -c -rdc=true $G k.cu -o krdc.o && nvcc -c -rdc=true $G k2.cu -o k2rdc.o &&
		nvcc -c -Xcompiler -fPIC $G k.cu -o kpic.o && nvcc -c -Xcompiler -fPIC $G k2.cu -o k2pic.o &&
		nvcc -c $G m.cu -o m.o
} || { fail "nvcc fixtures"; exit 1; }
ar rcs libk.a k.o k2.o && ar rcs libkrdc.a krdc.o k2rdc.o
g++ -shared kpic.o k2pic.o -L"$CUDA/lib64" -lcudart -o libk.so || fail "link libk.so"
g++ m.o k.o -L"$CUDA/lib64" -lcudart -o exe || fail "link exe"
ALL="ELF sm_80,PTX sm_80,ELF sm_86,ELF sm_90,ELF sm_100,ELF sm_120,PTX sm_120"
want k.o "$ALL"

# list -> expected images per container (fb_select: same-major SASS with minor <= the GPU's,
# sm_100 with its compat blob on 10.3, PTX JIT from the highest compute_X <= the GPU when no
# SASS fits; a PTX target keeps the highest PTX <= it)
lists=("9.0" "8.0 9.0" "8.9" "10.3 12.0+PTX" "11.0")
wants=("ELF sm_90" "ELF sm_80,ELF sm_90" "ELF sm_86" "ELF sm_100,ELF sm_120,PTX sm_120" "PTX sm_80")
ccs=("9.0" "8.0 9.0" "8.9" "10.3 12.0" "11.0")
for i in "${!lists[@]}"; do
	l=${lists[$i]} e=${wants[$i]} tag=$i
	# shellcheck disable=SC2086
	for f in k.fatbin k.o libk.a libk.so exe; do
		out=p$tag.$f
		"$FB" prune --arch-list "$l" "$f" -o "$out" >"$out.log" 2>&1 || { fail "prune '$l' $f: $(cat "$out.log")"; continue; }
		n=1
		case $f in libk.a | libk.so | exe) n=2 ;; esac
		want "$out" "$e" "$n"
		[ "$(ncontainers "$out")" = "$n" ] || fail "$out: container count changed"
		same_check "$f" "$out" ${ccs[$i]}
		case $f in
		libk.so | exe)
			outside_same "$f" "$out"
			grep -q "rewritten in place" "$out.log" || fail "$out: the output does not say it was rewritten in place"
			[ -x "$out" ] || fail "$out: lost its exec bit"
			;;
		k.fatbin | k.o | libk.a)
			[ "$(stat -c %s "$out")" -lt "$(stat -c %s "$f")" ] || fail "$out is not smaller than $f" ;;
		esac
	done
	# pruned objects and archives still link with the host linker
	g++ m.o "p$tag.k.o" -L"$CUDA/lib64" -lcudart -o "exe.$tag" || fail "host link of p$tag.k.o"
	g++ m.o "p$tag.libk.a" -L"$CUDA/lib64" -lcudart -o "exea.$tag" || fail "host link of p$tag.libk.a"
done
ok "pruned .o/.a linked with g++"

# rdc objects and archives through nvlink (nvcc -dlink), for each kept arch
"$FB" prune --arch-list "8.0 9.0" krdc.o -o krdc.p.o >/dev/null || fail "prune krdc.o"
"$FB" prune -gencode "arch=compute_80,code=[sm_80]" -arch=sm_90 libkrdc.a -o libkrdc.p.a >/dev/null || fail "prune libkrdc.a"
want krdc.p.o "ELF sm_80,ELF sm_90"
want libkrdc.p.a "ELF sm_80,ELF sm_90" 2
for a in 80 90; do
	nvcc -dlink -arch=sm_$a krdc.p.o -o dl$a.o 2>dl.err && g++ m.o krdc.p.o dl$a.o -L"$CUDA/lib64" -lcudart -o exerdc$a ||
		fail "nvlink/g++ of krdc.p.o for sm_$a: $(head -3 dl.err)"
	nvcc -dlink -arch=sm_$a libkrdc.p.a -o dla$a.o 2>dl.err || fail "nvlink of libkrdc.p.a for sm_$a: $(head -3 dl.err)"
done
nvcc -dlink -arch=sm_120 krdc.p.o -o dl120.o 2>dl.err
grep -q "sm_120.*not found" dl.err || fail "nvlink found sm_120 in an object pruned to 8.0 9.0: $(head -3 dl.err)"
ok "rdc .o/.a pruned to 8.0 9.0 device-link for sm_80 and sm_90 (and not sm_120)"

# guard rails
if "$FB" prune --arch-list 7.5 k.o -o g.o 2>g.err; then fail "prune to 7.5 (no image fits) succeeded"; fi
grep -q "no image for sm_75" g.err || fail "missing-image report: $(cat g.err)"
[ -e g.o ] && fail "a failed prune left an output"
"$FB" prune --arch-list 7.5 --allow-missing k.o -o g.o >/dev/null 2>&1 || fail "--allow-missing"
want g.o ""
cp k.o inplace.o
if "$FB" prune --arch-list 9.0 inplace.o -o inplace.o 2>/dev/null; then fail "-o IN without --in-place"; fi
"$FB" prune --arch-list 9.0 --in-place inplace.o -o inplace.o >/dev/null || fail "--in-place"
want inplace.o "ELF sm_90"
ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left behind"
ok "guard rails"

# relocatable code in a linked file is kept whole unless --prune-relocatable
G2="-gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=sm_90"
# shellcheck disable=SC2086
nvcc -c -rdc=true -Xcompiler -fPIC $G2 k.cu -o krpic.o && nvcc -dlink -Xcompiler -fPIC $G2 krpic.o -o dlk.o &&
	g++ -shared krpic.o dlk.o -L"$CUDA/lib64" -lcudart -o librdc.so || fail "librdc.so fixture"
where_list() { "$FB" inspect --format json "$1" | python3 -c '
import json, sys
for f in json.load(sys.stdin)["files"]:
    for c in f["containers"]:
        print(c["where"] + ":", " ".join(e["arch"] for e in c["entries"]))'; }
"$FB" prune --arch-list 9.0 librdc.so -o librdc.p.so >rdc.log || fail "prune librdc.so"
got=$(where_list librdc.p.so | tr '\n' ';')
[ "$got" = "__nv_relfatbin: sm_80 compute_80 sm_90;.nv_fatbin: sm_90;" ] || fail "librdc.so pruned to 9.0: $got"
grep -q "kept whole: 1 container(s) with relocatable code" rdc.log || fail "relocatable container not reported: $(cat rdc.log)"
"$FB" prune --prune-relocatable --arch-list 9.0 librdc.so -o librdc.p2.so >/dev/null || fail "prune --prune-relocatable"
got=$(where_list librdc.p2.so | tr '\n' ';')
[ "$got" = "__nv_relfatbin: sm_90;.nv_fatbin: sm_90;" ] || fail "librdc.so --prune-relocatable: $got"
outside_same librdc.so librdc.p2.so
ok "linked rdc library: __nv_relfatbin kept whole unless --prune-relocatable"

# LTO-IR kept unless --prune-lto (then the listed arch's only)
nvcc -c -dc -gencode arch=compute_90,code=lto_90 -gencode arch=compute_80,code=lto_80 k.cu -o klto.o || fail "LTO fixture"
"$FB" prune --arch-list 9.0 klto.o -o klto.p.o >lto.log || fail "prune klto.o"
[ "$(where_list klto.p.o)" = "__nv_relfatbin: lto_90 lto_80" ] || fail "LTO-IR not kept: $(where_list klto.p.o)"
grep -q "kept: 2 LTO-IR entries" lto.log || fail "LTO-IR not reported: $(cat lto.log)"
"$FB" prune --prune-lto --arch-list 9.0 klto.o -o klto.p2.o >/dev/null || fail "prune --prune-lto"
[ "$(where_list klto.p2.o)" = "__nv_relfatbin: lto_90" ] || fail "--prune-lto: $(where_list klto.p2.o)"
ok "LTO-IR kept, and pruned to the listed arch with --prune-lto"

# obfuscated and unknown entries are kept and reported (flags/kind patched into k.fatbin)
python3 - k.fatbin odd.fatbin <<'PY' || fail "odd.fatbin fixture"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, end = 16, 16 + struct.unpack_from("<Q", b, 8)[0]
while off < end:
    kind, _, hsz, psz = struct.unpack_from("<HHIQ", b, off)
    arch, = struct.unpack_from("<I", b, off + 0x1c)
    if kind == 2 and arch == 80:
        struct.pack_into("<Q", b, off + 0x28, struct.unpack_from("<Q", b, off + 0x28)[0] | 0x10000)
    if kind == 1 and arch == 120:
        struct.pack_into("<H", b, off, 16)
    off += hsz + psz
open(sys.argv[2], "wb").write(b)
PY
"$FB" prune --arch-list 9.0 odd.fatbin -o odd.p.fatbin >odd.log 2>&1 || fail "prune odd.fatbin: $(cat odd.log)"
got=$("$FB" inspect --format json odd.p.fatbin | python3 -c '
import json, sys
print(" ".join(e["kind"] + ":" + e["arch"] for e in json.load(sys.stdin)["files"][0]["containers"][0]["entries"]))')
[ "$got" = "elf:sm_80 elf:sm_90 kind16:compute_120" ] || fail "odd.fatbin pruned to 9.0 keeps: $got"
grep -q "obfuscated elf entry kept" odd.log && grep -q "unknown kind16 entry kept" odd.log || fail "odd entries not reported: $(cat odd.log)"
ok "obfuscated and unknown entries kept and reported"

# size: per kind and arch, and the prune estimate agrees with a real prune
"$FB" size --format json --arch-list "8.0 9.0" libk.so >size.json || fail "size"
python3 - "$(stat -c %s p1.libk.so)" <<'PY' || fail "size json"
import json, sys
d = json.load(open("size.json"))["files"][0]
rows = {(r["kind"], r["arch"]): r for r in d["rows"]}
assert rows[("elf", "sm_90")]["entries"] == 2 and rows[("elf", "sm_90")]["kept_entries"] == 2, rows
assert rows[("elf", "sm_120")]["kept_entries"] == 0 and rows[("ptx", "compute_80")]["kept_entries"] == 0
assert d["prune"]["kept_entries"] == 4 and d["prune"]["file_size_after"] == int(sys.argv[1])
assert d["zstd_after"] < d["zstd_before"], d
assert sum(r["stored"] for r in d["rows"]) == d["stored"]
PY
ok "size --arch-list agrees with prune"

# a fatbuild extension against the fake driver: same image pruned and unpruned
fake=$bdir/fakecuda/libcuda.so.1
ex=${FB_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}/examples/saxpy
if [ -f "$fake" ] && [ -d "$ex" ]; then
	FATBUILD_CACHE_DIR=$w/cache "$FB" build --arch-list "8.0 8.6 9.0 12.0+PTX" --build-dir "$w/b" -o libsaxpy.so \
		"$ex/saxpy.cu" "$ex/saxpy_host.c" >build.log 2>&1 || fail "fatbuild build: $(tail -3 build.log)"
	cat >run.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	void *cuda = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h || !cuda) { printf("dlopen: %s\n", dlerror()); return 2; }
	int (*f)(float, const float *, float *, int, char *, size_t);
	const char *(*image)(void);
	*(void **)&f = dlsym(h, "saxpy_host");
	*(void **)&image = dlsym(cuda, "fakecuda_module_image");
	float x[4] = {1, 2, 3, 4}, y[4] = {1, 1, 1, 1};
	char msg[512] = "";
	int rc = f(2.0f, x, y, 4, msg, sizeof(msg));
	printf("rc=%d image=%s y=%g,%g %s\n", rc, image(), y[0], y[3], rc ? msg : "");
	return 0;
}
C
	cc -o run run.c -ldl || fail "cc run.c"
	"$FB" prune --arch-list "8.6 9.0" libsaxpy.so -o libsaxpy.p.so >/dev/null || fail "prune libsaxpy.so"
	want libsaxpy.p.so "ELF sm_86,ELF sm_90"
	for dev in 8.6 8.9 9.0; do
		a=$(FAKECUDA_DEVICES=$dev FAKECUDA_CONTEXT=0 FAKECUDA_EMULATE=1 FBRT_LIBCUDA=$fake ./run "$w/libsaxpy.so" "$fake")
		b=$(FAKECUDA_DEVICES=$dev FAKECUDA_CONTEXT=0 FAKECUDA_EMULATE=1 FBRT_LIBCUDA=$fake ./run "$w/libsaxpy.p.so" "$fake")
		case $a in "rc=0 image=sm_"*) ;; *) fail "unpruned extension on $dev: $a" ;; esac
		if [ "$a" = "$b" ]; then ok "fake driver $dev: $b (pruned = unpruned)"; else fail "fake driver $dev: '$a' vs pruned '$b'"; fi
	done
	b=$(FAKECUDA_DEVICES=12.0 FAKECUDA_CONTEXT=0 FBRT_LIBCUDA=$fake ./run "$w/libsaxpy.p.so" "$fake")
	case $b in "rc=0"*) fail "pruned extension (8.6 9.0) loaded on 12.0: $b" ;; *) ok "pruned extension refuses 12.0: ${b%% *}" ;; esac
else
	fail "fake driver $fake or $ex missing"
fi

# NVIDIA's libcurand, pruned once per list to a file under the build dir
lib=$(ls "$CUDA"/lib64/libcurand.so.* 2>/dev/null | head -1)
if [ -n "$lib" ]; then
	nc=$(ncontainers "$lib")
	"$FB" prune --arch-list "9.0" "$lib" -o curand9.so >curand.log 2>&1 || fail "prune libcurand 9.0: $(cat curand.log)"
	want curand9.so "ELF sm_90" "$nc"
	same_check "$lib" curand9.so 9.0
	outside_same "$lib" curand9.so
	"$FB" prune --allow-missing --arch-list "8.0 12.0+PTX" "$lib" -o curand8.so >curand.log 2>&1 ||
		fail "prune libcurand 8.0 12.0+PTX: $(cat curand.log)"
	# compute_121 PTX is above 12.0: no PTX kept for compute_120 (said so), SASS for both
	want curand8.so "ELF sm_80,ELF sm_120" "$nc"
	grep -q "no PTX" curand.log || fail "libcurand: missing compute_120 PTX not reported"
	same_check "$lib" curand8.so 8.0 12.0
	rm -f curand9.so curand8.so
else
	fail "no libcurand in $CUDA/lib64"
fi

echo "prune.sh: $fails failure(s)"
[ "$fails" -eq 0 ]
