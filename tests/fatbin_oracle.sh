#!/usr/bin/env bash
# fatbin_oracle.sh: our writer against NVIDIA's fatbinary, byte for byte.
# Fixtures: one .cu → PTX (nvcc) → cubins for a matrix of arches (ptxas). PTX is fed to both
# tools already normalised (taken from a fatbinary-made container), since fatbinary strips
# comments and indentation. Also checks inspect --kernels against ptxas -v, extract round
# trips, and the JSON shape. Needs the CUDA toolkit; exits 77 (skip) without one.
set -eu
: "${FATBUILD_BIN:?}"
CUDA=${CUDA_HOME:-/usr/local/cuda}
for t in nvcc ptxas fatbinary; do
	[ -x "$CUDA/bin/$t" ] || { echo "skip: $CUDA/bin/$t not found"; exit 77; }
done
export PATH="$CUDA/bin:$PATH"
FB=$FATBUILD_BIN
w=$(mktemp -d "${TMPDIR:-/tmp}/fboracle.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
same() { # name ours theirs
	if cmp -s "$2" "$3"; then echo "ok   $1"; else fail "$1: $2 and $3 differ"; cmp "$2" "$3" | head -1 >&2 || true; fi
}

cat >k.cu <<'CU'
__device__ int mark = 7;
extern "C" __global__ void kern(int *p) { __shared__ int s[10]; s[threadIdx.x] = p[0]; __syncthreads(); p[1] = s[3] + mark; }
template <typename T> __global__ void tk(T *p) { __shared__ T big[1000]; big[threadIdx.x] = p[0]; __syncthreads(); p[0] = big[5]; }
template __global__ void tk<float>(float *);
CU
nvcc -ptx -arch=compute_80 -o k80.ptx k.cu
sed 's/^\.target sm_80/.target sm_90a/' k80.ptx >k90a.ptx
sed 's/^\.target sm_80/.target sm_100f/' k80.ptx >k100f.ptx
arches="80 86 90 90a 100 100a 100f 120"
for a in $arches; do ptxas -arch=sm_$a -v k80.ptx -o k_$a.cubin 2>ptxas_$a.log; done

# normalised PTX, taken from fatbinary's own container
fatbinary --create=norm.fatbin --compress-mode=none --image3=kind=ptx,sm=80,file=k80.ptx \
	--image3=kind=ptx,sm=90a,file=k90a.ptx --image3=kind=ptx,sm=100f,file=k100f.ptx
$FB extract --arch compute_80 norm.fatbin -o n80.ptx
$FB extract --arch compute_90a norm.fatbin -o n90a.ptx
$FB extract --arch compute_100f norm.fatbin -o n100f.ptx
# sanity: the extracted text is fatbinary's normalisation, not our input
cmp -s n80.ptx k80.ptx && fail "normalised PTX equals the raw PTX (test would prove nothing)"

img3() { # file@target → --image3
	local f=${1%@*} t=${1#*@} kind=elf sm
	case $t in compute_*) kind=ptx; sm=${t#compute_} ;; sm_*) sm=${t#sm_} ;; esac
	echo "--image3=kind=$kind,sm=$sm,file=$f"
}
matrix() { # name "fatbinary options" "our options" images...
	local name=$1 theirs=$2 ours=$3; shift 3
	local args=() i
	for i in "$@"; do args+=("$(img3 "$i")"); done
	# shellcheck disable=SC2086
	fatbinary --create="$name.nv.fatbin" $theirs "${args[@]}"
	# shellcheck disable=SC2086
	$FB pack -o "$name.fb.fatbin" $ours "$@"
	same "$name" "$name.fb.fatbin" "$name.nv.fatbin"
}
all_elf=""
for a in $arches; do all_elf="$all_elf k_$a.cubin@sm_$a"; done
# shellcheck disable=SC2086
matrix elf-only "--compress-mode=none" "" $all_elf
matrix elf-ptx "--compress-mode=none" "" k_80.cubin@sm_80 k_90a.cubin@sm_90a k_100.cubin@sm_100 n80.ptx@compute_80 \
	k_120.cubin@sm_120 n100f.ptx@compute_100f
matrix variants "--compress-mode=none" "" k_100a.cubin@sm_100a k_100f.cubin@sm_100f n90a.ptx@compute_90a k_90a.cubin@sm_90a
matrix ident-cmdline "--compress-mode=none --ident=myident --cmdline=-O3" "--ident=myident --cmdline=-O3" \
	k_80.cubin@sm_80 k_100.cubin@sm_100 n80.ptx@compute_80 n100f.ptx@compute_100f
matrix debug "--compress-mode=none -g" "-g" k_86.cubin@sm_86 n80.ptx@compute_80
# zstd: fatbinary's default compresses PTX (and debug images) at level 5 with its linked libzstd
matrix zstd-default "" "--compress zstd --compress-text-only" k_80.cubin@sm_80 k_100a.cubin@sm_100a n80.ptx@compute_80 n90a.ptx@compute_90a
matrix zstd-all "-compress-all" "--compress zstd" k_80.cubin@sm_80 k_120.cubin@sm_120 n80.ptx@compute_80
matrix zstd-debug "-g" "-g --compress zstd --compress-text-only" k_90.cubin@sm_90 n80.ptx@compute_80
# cubin arch taken from the ELF, 'a' from .nv.compat, PTX arch from .target (no @)
fatbinary --create=implicit.nv.fatbin --compress-mode=none --image3=kind=elf,sm=90a,file=k_90a.cubin \
	--image3=kind=elf,sm=100,file=k_100.cubin --image3=kind=ptx,sm=90a,file=n90a.ptx
$FB pack -o implicit.fb.fatbin k_90a.cubin k_100.cubin n90a.ptx
same implicit implicit.fb.fatbin implicit.nv.fatbin
if out=$(fatbinary --create=x.fatbin --image3=kind=elf,sm=90,file=k_80.cubin 2>&1); then
	fail "fatbinary accepted an arch mismatch (oracle changed?)"
fi
echo "$out" | grep -q "elf arch does not match" || fail "fatbinary mismatch message changed: $out"
$FB pack -o x.fatbin k_80.cubin@sm_90 2>err.txt && fail "pack accepted an sm_80 cubin as sm_90"
grep -q "k_80.cubin is sm_80, not sm_90" err.txt || fail "pack arch mismatch message: $(cat err.txt)"

# LTO-IR (kind 8), read back from an nvcc -dc object by our reader
nvcc -dc -arch=lto_80 -Xfatbin=-compress-mode=none -o l.o k.cu
$FB extract --arch lto_80 l.o -o l.ltoir
fatbinary --create=lto.nv.fatbin --compress-mode=none --image3=kind=nvvm,sm=80,file=l.ltoir
$FB pack -o lto.fb.fatbin l.ltoir@lto_80
same lto lto.fb.fatbin lto.nv.fatbin

# extract round trip (cubins come back byte-identical, decompressed)
$FB pack -o rt.fatbin --compress zstd k_90a.cubin n80.ptx
$FB extract --arch sm_90a rt.fatbin -o rt.cubin && same extract-cubin rt.cubin k_90a.cubin
$FB extract --arch compute_80 rt.fatbin -o rt.ptx && same extract-ptx rt.ptx n80.ptx
$FB pack -o rt4.fatbin --compress lz4 k_120.cubin
$FB extract --arch sm_120 rt4.fatbin -o rt4.cubin && same extract-lz4 rt4.cubin k_120.cubin

# inspect --kernels agrees with ptxas -v (registers, shared memory without the sm>=90 reserve)
for a in 80 90a 100 120; do
	$FB inspect --kernels "k_$a.cubin" >ins_$a.txt
	for k in kern '_Z2tkIfEvPT_'; do
		regs=$(grep -A3 "entry function '$k'" "ptxas_$a.log" | sed -n 's/.*Used \([0-9]*\) registers.*/\1/p')
		smem=$(grep -A3 "entry function '$k'" "ptxas_$a.log" | sed -n 's/.*registers.* \([0-9]*\) bytes smem.*/\1/p')
		[ -n "$smem" ] || smem=0
		name=$k
		[ "$k" = kern ] || name='void tk<float>(float\*)'
		if grep -q "kernel $name  registers $regs  shared $smem[ (]" ins_$a.txt ||
		   grep -q "kernel $name  registers $regs  shared $smem\$" ins_$a.txt; then
			echo "ok   kernels sm_$a $k: $regs regs, $smem smem"
		else
			fail "sm_$a $k: want $regs registers, $smem smem; got: $(grep "kernel" ins_$a.txt | tr '\n' '|')"
		fi
	done
done
grep -q "derived: stored 5024 - 1024" ins_90a.txt || fail "sm_90a: the +1024 reserve is not shown as derived"

# JSON: one document; every entry has kind and arch
$FB inspect --format json zstd-default.nv.fatbin k_90a.cubin n80.ptx >j.json
if command -v python3 >/dev/null; then
	python3 - j.json <<'PY' || fail "json shape"
import json, sys
d = json.load(open(sys.argv[1]))
ents = [e for f in d["files"] for c in f["containers"] for e in c["entries"]]
assert len(ents) == 6, len(ents)
assert all("kind" in e and "arch" in e for e in ents)
assert [e["arch"] for e in ents] == ["sm_80", "sm_100a", "compute_80", "compute_90a", "sm_90a", "compute_80"], [e["arch"] for e in ents]
assert ents[2]["compression"] == "zstd" and ents[0]["compression"] == "none"
PY
fi
[ $fails = 0 ] && echo "all oracle checks passed"
exit $((fails > 0))
