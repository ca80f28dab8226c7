#!/usr/bin/env bash
# fatbin_libs.sh: `fatbuild inspect` reads everything NVIDIA ships in $CUDA/lib64 without an
# error, finds the documented container counts (docs/fatbin.md §1, CUDA 13.0), does not
# decompress unless asked (--max-size 1 would fail otherwise), and a decompressed ELF
# extracted from a shipped library is a valid CUDA ELF. Skips (77) without the libraries.
set -u
: "${FATBUILD_BIN:?}"
FB=$FATBUILD_BIN
CUDA=${CUDA_HOME:-/usr/local/cuda}
L=$CUDA/lib64
[ -e "$L/libcublasLt.so" ] || { echo "skip: $L/libcublasLt.so not found"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/fblibs.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
start=$(date +%s)
n=0
for f in "$L"/libcublasLt.so "$L"/libcublas.so "$L"/libcufft.so "$L"/libcurand.so "$L"/libcusparse.so \
	"$L"/libnccl.so "$L"/libcudnn*.so "$L"/libcusolver.so "$L"/libcudadevrt.a "$L"/libcudart_static.a; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	if ! "$FB" inspect --max-size 1 "$f" >"$w/out" 2>"$w/err"; then
		fail "inspect $f: $(head -3 "$w/err")"
		continue
	fi
	[ -s "$w/err" ] && fail "inspect $f wrote to stderr: $(head -3 "$w/err")"
	echo "ok   $(head -1 "$w/out")"
done
[ $n -ge 5 ] || fail "only $n libraries found"

count() { # lib → number of containers (json)
	"$FB" inspect --format json "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(len(f["containers"]) for f in d["files"]))'
}
expect() { # lib containers
	[ -e "$L/$1" ] || return 0
	local got
	got=$(count "$L/$1")
	if [ "$got" = "$2" ]; then echo "ok   $1: $2 containers"; else fail "$1: $got containers, want $2"; fi
}
expect libcublasLt.so 2782
expect libcublas.so 193
expect libcudnn_engines_precompiled.so 1379
# libnccl: 127 containers in __nv_relfatbin (plus its .nv_fatbin ones)
if [ -e "$L/libnccl.so" ]; then
	rel=$("$FB" inspect "$L/libnccl.so" | grep -c '^  container .*__nv_relfatbin$')
	[ "$rel" = 127 ] && echo "ok   libnccl.so: 127 __nv_relfatbin containers" || fail "libnccl.so: $rel __nv_relfatbin containers, want 127"
fi
# table and json agree on the entry count
t=$("$FB" inspect "$L/libcublasLt.so" | head -1 | sed -n 's/.*, \([0-9]*\) entries$/\1/p')
j=$("$FB" inspect --format json "$L/libcublasLt.so" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(len(c["entries"]) for f in d["files"] for c in f["containers"]))')
[ -n "$t" ] && [ "$t" = "$j" ] && echo "ok   libcublasLt.so: $t entries (table = json)" || fail "entry counts differ: table $t json $j"

# a decompressed ELF from a shipped archive: size as the header says, a CUDA ELF with kernels
if [ -e "$L/libcudadevrt.a" ]; then
	usz=$("$FB" inspect --format json "$L/libcudadevrt.a" | python3 -c '
import json,sys
d=json.load(sys.stdin)
e=[e for f in d["files"] for c in f["containers"] for e in c["entries"] if e["arch"]=="sm_100"][0]
assert e["compression"]=="zstd", e
print(e["size"])')
	"$FB" extract --arch sm_100 "$L/libcudadevrt.a" -o "$w/devrt.cubin" || fail "extract sm_100 from libcudadevrt.a"
	sz=$(stat -c %s "$w/devrt.cubin" 2>/dev/null || echo 0)
	[ "$sz" -gt 0 ] && [ "$sz" -le "$usz" ] || fail "extracted cubin is $sz bytes; header says $usz"
	if command -v readelf >/dev/null; then
		readelf -h "$w/devrt.cubin" | grep -q "NVIDIA CUDA" || fail "extracted cubin: readelf says $(readelf -h "$w/devrt.cubin" 2>&1 | grep Machine)"
	fi
	"$FB" inspect --kernels "$w/devrt.cubin" >"$w/k" || fail "inspect --kernels on the extracted cubin"
	grep -q "relocatable (ET_REL) cubin, ELF ABI 8, e_flags 0x06006402" "$w/k" && echo "ok   libcudadevrt.a sm_100: $sz bytes, ET_REL, ABI 8" ||
		fail "extracted cubin: $(head -3 "$w/k")"
	"$FB" extract --arch sm_100 --max-size 1000 "$L/libcudadevrt.a" -o "$w/x" 2>"$w/err" && fail "--max-size not honoured"
	grep -q "above the cap" "$w/err" || fail "cap message: $(cat "$w/err")"
fi
# --kernels on one library container decompresses on request
if [ -e "$L/libcurand.so" ]; then
	"$FB" inspect --kernels "$L/libcurand.so" >"$w/curand" || fail "inspect --kernels libcurand.so"
	grep -q "kernel " "$w/curand" && echo "ok   libcurand.so --kernels: $(grep -c 'kernel ' "$w/curand") kernels" || fail "libcurand.so: no kernels listed"
fi
echo "took $(($(date +%s) - start)) s"
exit $((fails > 0))
