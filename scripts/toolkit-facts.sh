#!/bin/bash
# toolkit-facts.sh: reads what each CUDA release supports from NVIDIA's own tools, to
# regenerate or verify the built-in release tables in archprobe/toolkit.c (docs/toolkits.md).
#
#   scripts/toolkit-facts.sh [--check FATBUILD] DIR...
#
# Each DIR is a toolkit tree: a CUDA install, a pip install (site-packages/nvidia/...) or an
# unpacked wheel. DIR may also be a folder of .whl files, which are unpacked next to them
# (DIR/unpacked). For each one it prints a line
#   13.5 ptxas=13.5.37 sm=75 80 … a=90 100 … f=100 … nvrtc=75 80 … nvcc-list-gpu-code=75 80 …
# read from `ptxas --version` and `ptxas --help` (its --gpu-name list of sm_X/sm_Xa/sm_Xf:
# the sm, a and f sets), NVRTC's nvrtcGetSupportedArchs (python3 ctypes) and, where the tree
# has nvcc (CUDA 13 wheels and full installs; the cu11/cu12 nvcc wheels ship ptxas only),
# `nvcc --list-gpu-code`, which must agree with ptxas. With --check, each
# release is compared with `FATBUILD flags --cuda-version X.Y --format json all` (the built-in
# table); any difference is printed and the exit status is 1.
set -u
check=""
if [ "${1:-}" = "--check" ]; then
	check=$2
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 [--check FATBUILD] DIR..." >&2; exit 2; }

unpack() { # folder of wheels -> folder of trees
	local d=$1 out=$1/unpacked
	if [ ! -d "$out" ]; then
		mkdir -p "$out.tmp" && for w in "$d"/*.whl; do
			python3 -m zipfile -e "$w" "$out.tmp" || return 1
		done
		find "$out.tmp" -path '*/bin/*' -type f -exec chmod +x {} + && mv "$out.tmp" "$out"
	fi
	echo "$out"
}

nvrtc_archs() { # libnvrtc path -> "75 80 …"
	python3 - "$1" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
n = ctypes.c_int()
if lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)) != 0:
    sys.exit(1)
a = (ctypes.c_int * n.value)()
if lib.nvrtcGetSupportedArchs(a) != 0:
    sys.exit(1)
print(" ".join(str(x) for x in sorted(a)))
PY
}

rc=0
for d in "$@"; do
	if ls "$d"/*.whl > /dev/null 2>&1; then
		d=$(unpack "$d") || { echo "$d: cannot unpack" >&2; rc=1; continue; }
	fi
	nvcc=$(find "$d/" -path '*/bin/nvcc' -type f | head -1)
	ptxas=$(find "$d/" -path '*/bin/ptxas' -type f | head -1)
	nvrtc=$(find "$d/" -name 'libnvrtc.so.*' ! -name '*builtins*' | sort | head -1)
	if [ -z "$ptxas" ]; then
		echo "$d: no bin/ptxas" >&2
		rc=1
		continue
	fi
	full=$("$ptxas" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p')
	rel=$(echo "$full" | cut -d. -f1,2)
	gpu=$("$ptxas" --help | python3 -c '
import re, sys
h = sys.stdin.read()
sec = h[h.index("--gpu-name"):]
vals = sec[sec.index("Allowed values for this option:"):sec.index("Default value")]
print("\n".join(re.findall(r"sm_(\w+)", vals)))')
	sm=$(echo "$gpu" | grep -E '^[0-9]+$' | sort -n | tr '\n' ' ')
	pa=$(echo "$gpu" | sed -n 's/^\([0-9]*\)a$/\1/p' | sort -n | tr '\n' ' ')
	pf=$(echo "$gpu" | sed -n 's/^\([0-9]*\)f$/\1/p' | sort -n | tr '\n' ' ')
	rt=""
	[ -n "$nvrtc" ] && rt=$(nvrtc_archs "$nvrtc" 2>/dev/null)
	lgc=none
	[ -n "$nvcc" ] && lgc=$("$nvcc" --list-gpu-code | sed -n 's/^sm_\([0-9]*\)$/\1/p' | sort -n | tr '\n' ' ')
	echo "$rel ptxas=$full sm=${sm% } a=${pa% } f=${pf% } nvrtc=${rt:-none} nvcc-list-gpu-code=${lgc% }"
	if [ "$lgc" != none ] && [ "${lgc% }" != "${sm% }" ]; then
		echo "  $rel: nvcc --list-gpu-code and ptxas disagree" >&2
		rc=1
	fi
	if [ -n "$check" ]; then
		js=$("$check" flags --cuda-version "$rel" --format json --arch-list all 2>/dev/null)
		got=$(echo "$js" | python3 -c '
import json, sys
t = json.load(sys.stdin)["toolkit"]
print("sm=%s a=%s f=%s" % tuple(" ".join(map(str, t[k])) for k in ("sm", "a", "f")))')
		want="sm=${sm% } a=${pa% } f=${pf% }"
		if [ "$got" != "$want" ]; then
			echo "  $rel: built-in table differs: table $got, tools $want" >&2
			rc=1
		elif [ -n "$rt" ] && [ "$rt" != "${sm% }" ]; then
			echo "  $rel: NVRTC lists $rt, nvcc ${sm% }" >&2
			rc=1
		else
			echo "  $rel: built-in table matches"
		fi
	fi
done
exit $rc
