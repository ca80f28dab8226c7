#!/usr/bin/env bash
# run.sh: PyTorch extensions, end to end, as a newcomer would build them. A venv under the
# build dir gets torch from PyPI (pip's cache makes reruns fast; created once, reused) and the
# fatbuild Python package (this tree's fatbuild/python, on the venv's path); then examples/torch (muladd) is
# built three ways, each loaded into torch in its own process with its CPU op compared with
# PyTorch's a * b + c (examples/torch/check.py), and each output's images checked with
# `fatbuild inspect` against the arch list:
#   1. fatbuild build --torch --python-module (import muladd; torch.ops.load_library too),
#      a no-op rebuild, the torch query cached in the build dir;
#   2. fatbuild.load(...) (is_python_module=False: torch.ops.load_library), and again as a
#      module; no RUNPATH in either; 2b. load_inline with a CUDA kernel, then a broken C++
#      source: the error starts with the compiler's message;
#   3. a setup.py with fatbuild.setuptools.BuildExtension (pip install --no-build-isolation);
#      3b. a setup.py that names its own -gencode: exactly those images, [n/N] progress;
#   4. examples/torch_cub (three CUB .cu files for nvcc, one .cpp with <torch/extension.h>)
#      with the torch PCH made at once (FATBUILD_HOST_PCH=1) and the edge cache: its CPU ops
#      against PyTorch's (examples/torch_cub/check.py), `fatbuild check` for each asked arch;
#      a second build dir gets every compile from the cache and the same library;
#   5. torch's own BuildExtension with PYTORCH_NVCC="fatbuild nvcc" in two checkouts: split,
#      its op checked, the second checkout's nvcc steps all from the cache. The wheel that
#      carries the tools is tests/wheel/run.sh's.
# Environment: FB_SOURCE_DIR, FB_BINARY_DIR, FATBUILD_BIN; TORCH_VENV (default
# $FB_BINARY_DIR/venv-torch), TORCH_SPEC (default: torch, the newest on PyPI).
set -u
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}" "${FATBUILD_BIN:?}"
venv=${TORCH_VENV:-${FB_VENV_DIR:-$FB_BINARY_DIR}/venv-torch}
work=$FB_BINARY_DIR/torch-consumer
ex=$FB_SOURCE_DIR/examples/torch
archs="8.0 9.0+PTX"
want="elf sm_80|elf sm_90|ptx compute_90|"
# fail, ok, run_logged and the fails count
. "$FB_SOURCE_DIR/tests/torch/lib.sh"
images() { "$FATBUILD_BIN" inspect "$1" | awk '$2 == "elf" || $2 == "ptx" { print $2, $3 }' | sort -u | tr '\n' '|'; }
expect_images() {
	local got
	got=$(images "$2")
	[ "$got" = "$want" ] && ok "$1: images $got" || fail "$1: images '$got', want '$want'"
}

# runpath SO WHAT: the module has no RUNPATH or RPATH (torch's own builds have none).
runpath() {
	local rp
	rp=$(readelf -d "$1" 2>/dev/null | grep -E 'RUNPATH|RPATH')
	[ -z "$rp" ] && ok "$2: no RUNPATH" || fail "$2: $rp"
}

rm -rf "$work" && mkdir -p "$work"
bash "$FB_SOURCE_DIR/scripts/deps.sh" || { echo "deps.sh failed" >&2; exit 1; }

# The venv: reused while its torch imports.
py=$venv/bin/python
torch_venv "$venv" || exit 1
"$py" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" 2>/dev/null
# The Python package, pure Python: this tree's fatbuild/python on the venv's path (a .pth file;
# an installed copy would come first, so none is left). Its one packaging route, the wheel of
# the repository's pyproject.toml, is tests/wheel/run.sh's.
"$venv/bin/pip" uninstall --disable-pip-version-check -q -y fatbuild >/dev/null 2>&1
site=$("$py" -c 'import sysconfig; print(sysconfig.get_path("purelib"))') &&
	echo "$FB_SOURCE_DIR/fatbuild/python" >"$site/fatbuild-source.pth" || exit 1
[ "$("$py" -c 'import fatbuild; print(fatbuild.__file__)')" = "$FB_SOURCE_DIR/fatbuild/python/fatbuild/__init__.py" ] ||
	{ echo "torch: the venv does not import this tree's fatbuild package" >&2; exit 1; }
export FATBUILD_EXECUTABLE=$FATBUILD_BIN
# The compile cache (NVRTC images, cached host and nvcc edges, torch PCHs of ~800 MB) under
# $work, not the user's: removed with it at the next run.
export FATBUILD_CACHE_DIR=$work/cache
export PATH=$venv/bin:$PATH
unset TORCH_CUDA_ARCH_LIST

# 1. The CLI.
cli() {
	"$FATBUILD_BIN" build -v --torch --python "$py" --python-module --name muladd --arch-list "$archs" \
		--build-dir "$work/cli-build" -o "$work/cli/" "$ex/muladd.cpp" "$ex/muladd.cu"
}
if run_logged cli cli; then
	so=$(ls "$work"/cli/muladd.cpython-*.so 2>/dev/null)
	[ -n "$so" ] && ok "cli: $(basename "$so")" || fail "cli: no muladd.cpython-*.so in $work/cli"
	grep -Eq "backend nvcc: .*muladd.cu:[0-9]+ (includes the host header|launches a kernel)" "$work/cli.log" && ok "cli: muladd.cu went to nvcc (-v says why)" ||
		fail "cli: no backend note for muladd.cu"
	for w in -DTORCH_EXTENSION_NAME=muladd -DTORCH_API_INCLUDE_EXTENSION_H --expt-relaxed-constexpr \
		-D__CUDA_NO_HALF_OPERATORS__ -ltorch_python -lc10_cuda; do
		grep -q -- "$w" "$work/cli-build/build.ninja" && ok "cli: build.ninja has $w" || fail "cli: build.ninja lacks $w"
	done
	[ -n "$so" ] && runpath "$so" cli
	[ -n "$so" ] && expect_images cli "$so"
	run_logged cli-import "$py" "$ex/check.py" --module "$work/cli" muladd && ok "cli: $(tail -n 1 "$work/cli-import.log")"
	run_logged cli-load-library "$py" "$ex/check.py" --library "$so" && ok "cli: $(tail -n 1 "$work/cli-load-library.log")"
	if run_logged cli-again cli; then
		grep -q "no work to do" "$work/cli-again.log" && ok "cli: no-op rebuild" || fail "cli: the rebuild did work"
		grep -q "(cached)" "$work/cli-again.log" && ok "cli: torch query cached" || fail "cli: torch asked again"
	fi
fi

# 2. fatbuild.load, as torch.utils.cpp_extension.load.
cat >"$work/load.py" <<PY
import os, sys, fatbuild
path = fatbuild.load("muladd_load", ["$ex/muladd.cpp", "$ex/muladd.cu"], build_directory="$work/load",
                     is_python_module=False, verbose=True)
print("built", path)
sys.exit(__import__("subprocess").call([sys.executable, "$ex/check.py", "--library", path]))
PY
if TORCH_CUDA_ARCH_LIST="$archs" run_logged load "$py" "$work/load.py"; then
	ok "load: $(grep 'muladd max' "$work/load.log")"
	expect_images load "$work/load/muladd_load.so"
	# torch's load() compiles host code with no -O of its own (cpp_extension's cflags: -fPIC,
	# -std, extra_cflags); fatbuild.load follows it (--host-opt none), the CLI keeps -O2.
	if grep -q -- ' -O[0-9s]' "$work/load/build.ninja"; then
		fail "load: an -O in host compiles torch's load() would not use: $(grep -o -- ' -O[0-9s]' "$work/load/build.ninja" | sort | uniq -c | tr '\n' ' ')"
	elif grep -q -- ' -O2 ' "$work/cli-build/build.ninja"; then
		ok "load: host compiles without -O, as torch's load(); the CLI's with -O2"
	else
		fail "load: the CLI's build has no -O2"
	fi
	# torch was imported already: fatbuild.load wrote the answer the CLI got from python -c
	# (the same bytes), and the cold build used it instead of starting Python again.
	cmp -s "$work/cli-build/torch.query" "$work/load/torch.query" && ok "load: torch.query as the CLI's" ||
		fail "load: torch.query differs from the CLI's: $(diff "$work/cli-build/torch.query" "$work/load/torch.query" | head -n 6)"
	grep -q "torch .*(cached)" "$work/load.log" && ok "load: no second Python for the query" || fail "load: the query ran Python"
	# is_python_module=True (the default): the module is imported and returned, from the same
	# file NAME.so as torch's load() writes, so nothing is rebuilt.
	cat >"$work/load-module.py" <<PY
import subprocess, sys, fatbuild, torch
m = fatbuild.load("muladd_load", ["$ex/muladd.cpp", "$ex/muladd.cu"], build_directory="$work/load", verbose=True)
assert m.__name__ == "muladd_load" and m.__file__.endswith("/muladd_load.so"), m
a, b = torch.randn(100), torch.randn(100)
assert torch.allclose(torch.ops.fb_muladd.muladd(a, b, 2.0), a * b + 2.0)
print("module", m.__file__, "op ok")
PY
	if TORCH_CUDA_ARCH_LIST="$archs" run_logged load-module "$py" "$work/load-module.py"; then
		ok "load: $(tail -n 1 "$work/load-module.log")"
		grep -q "no work to do" "$work/load-module.log" && ok "load: the module is the same build" ||
			fail "load: the module build did work: $(grep '^\[[0-9]*/' "$work/load-module.log" | cut -c1-80)"
	fi
	# A module names no directory of this machine (torch's own builds neither: torch is loaded first).
	runpath "$work/load/muladd_load.so" load
	# 2a. a load() that asks for what the last one built, with nothing for ninja to do, runs no
	#     fatbuild (as torch's runs only ninja); a changed source, flag or environment does. The
	#     calls are counted by a wrapper that runs the real fatbuild.
	printf '#!/bin/sh\necho call >>"%s"\nexec "%s" "$@"\n' "$work/fbcalls" "$FATBUILD_BIN" >"$work/fbspy"
	chmod +x "$work/fbspy"
	rm -f "$work/fbcalls"
	cp "$ex/muladd.cpp" "$ex/muladd.cu" "$work/"
	cat >"$work/noop.py" <<PY
import sys, fatbuild
fatbuild.load("muladd_noop", ["$work/muladd.cpp", "$work/muladd.cu"], build_directory="$work/noop",
              is_python_module=False, verbose=True, extra_cflags=sys.argv[1:])
PY
	calls() { [ -f "$work/fbcalls" ] && wc -l <"$work/fbcalls" || echo 0; }
	noop() { FATBUILD_EXECUTABLE=$work/fbspy TORCH_CUDA_ARCH_LIST="$archs" run_logged "noop-$1" "$py" "$work/noop.py" "${@:3}" &&
		[ "$(calls)" = "$2" ] || fail "load no-op $1: fatbuild ran $(calls) times in all, want $2"; }
	noop first 1 && noop again 1 && grep -q "no work to do" "$work/noop-again.log" &&
		ok "load: an unchanged load() runs ninja alone, and shows its 'no work to do'" ||
		fail "load: the unchanged load() said nothing: $(head -c 300 "$work/noop-again.log")"
	touch "$work/muladd.cu"
	noop touched 2 && grep -q '^\[1/' "$work/noop-touched.log" && ok "load: a changed source runs fatbuild" ||
		fail "load: a changed source was not rebuilt"
	noop flags 3 -DFB_NOOP=1 && FB_NOOP_ENV=1 noop env 4 -DFB_NOOP=1 && FB_NOOP_ENV=1 noop same 4 -DFB_NOOP=1 &&
		ok "load: changed flags and environment run fatbuild; the same again does not"
	# 2a'. What ninja checks on a build with nothing to do: as torch's -MMD, none of torch's
	#      headers (thousands), torch's own version.py in their place (a new torch rebuilds).
	tinc=$(sed -n 's/^fbtq include=//p' "$work/noop/torch.query" | head -n 1)
	cobj=$(ls "$work/noop/obj/"*muladd.cpp.o 2>/dev/null | head -n 1)
	deps=$(ninja -C "$work/noop" -t deps "$cobj" 2>&1)
	if [ -z "$tinc" ] || [ -z "$cobj" ] || ! grep -q "muladd.cpp" <<<"$deps"; then
		fail "load: no torch include dir or no deps of the .cpp's object: $(head -c 300 <<<"$deps")"
	elif grep -q "$tinc/" <<<"$deps"; then
		fail "load: ninja checks torch's headers: $(grep -c "$tinc/" <<<"$deps") of them"
	elif ! ninja -C "$work/noop" -t query "$cobj" 2>&1 | grep -q "torch/version.py"; then
		fail "load: the .cpp's edge does not take torch/version.py as an input"
	else
		ok "load: ninja checks none of torch's headers, torch's version.py instead"
	fi
fi
# 2b. load_inline with a CUDA kernel (its bindings generated from functions=), then a C++ error:
# the message starts with the compiler's own, and names neither fatbuild's wrapping nor the PCH's.
cat >"$work/inline.py" <<'PY'
import os, sys, fatbuild, torch
cuda = """
__global__ void addone(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1; }
torch::Tensor addone_cuda(torch::Tensor x) {
    addone<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), (int)x.numel());
    return x;
}
"""
cpp = "torch::Tensor addone_cuda(torch::Tensor x);\ntorch::Tensor twice(torch::Tensor x) { return x * 2; }\n"
m = fatbuild.load_inline("fb_inline", cpp, cuda_sources=cuda, functions=["addone_cuda", "twice"],
                         build_directory=sys.argv[1])
assert torch.equal(m.twice(torch.ones(3)), torch.full((3,), 2.0)) and callable(m.addone_cuda), m
if torch.cuda.is_available():
    x = torch.zeros(1000, device="cuda")
    assert torch.equal(m.addone_cuda(x).cpu(), torch.ones(1000))
print("inline", m.__file__, sorted(n for n in dir(m) if not n.startswith("_")))
bad = os.path.join(sys.argv[1], "bad.cpp")
with open(bad, "w") as f:
    f.write("#include <torch/extension.h>\nint broken() { return undeclared_name; }\n")
try:
    fatbuild.load("fb_bad", [bad], build_directory=sys.argv[1] + "-bad")
    raise SystemExit("the broken source built")
except RuntimeError as e:
    msg = str(e)
first = msg.splitlines()[:3]
print("error, %d characters; first lines:" % len(msg), *first, sep="\n")
assert any(bad + ":2:" in l and "error:" in l and "undeclared_name" in l for l in first), first
for w in ("/bin/sh", "fatbuild edge", "pch.sh", ".keep"):
    assert w not in msg, "the message names " + w
PY
if TORCH_CUDA_ARCH_LIST="$archs" run_logged inline "$py" "$work/inline.py" "$work/inline"; then
	ok "load_inline: $(grep '^inline ' "$work/inline.log")"
	expect_images load_inline "$work/inline/fb_inline.so"
	ok "a C++ error: $(sed -n '/^error, /{s/;.*//;p}' "$work/inline.log"), the compiler's message first"
	runpath "$work/inline/fb_inline.so" load_inline
fi
# The arch list when TORCH_CUDA_ARCH_LIST is unset: the GPUs, else the fallback with a notice.
if run_logged archlist "$py" -c "import fatbuild; print(fatbuild.arch_list(fallback='8.0 9.0+PTX'))"; then
	if "$FB_BINARY_DIR/bin/archprobe" >/dev/null 2>&1; then
		ok "arch_list with a GPU: $(tail -n 1 "$work/archlist.log")"
	else
		[ "$(tail -n 1 "$work/archlist.log")" = "8.0 9.0+PTX" ] && grep -q "fallback" "$work/archlist.log" &&
			ok "arch_list without a GPU: the fallback, with a notice" || fail "arch_list fallback: $(cat "$work/archlist.log")"
	fi
fi

# 3. setup.py with fatbuild's build_ext.
cp -r "$ex" "$work/setup"
if TORCH_CUDA_ARCH_LIST="$archs" MAX_JOBS=2 run_logged setup "$venv/bin/pip" install --disable-pip-version-check \
	--no-build-isolation --no-deps --force-reinstall "$work/setup"; then
	so=$("$py" -c "import importlib.util as u; print(u.find_spec('fb_muladd._C').origin)" 2>/dev/null)
	[ -f "$so" ] && ok "setup.py: installed $(basename "$so")" || fail "setup.py: fb_muladd._C not installed"
	[ -f "$so" ] && expect_images setup.py "$so"
	run_logged setup-import "$py" "$ex/check.py" --package fb_muladd && ok "setup.py: $(tail -n 1 "$work/setup-import.log")"
fi

# 3b. A setup.py whose nvcc flags name its own arches (the common pattern: -O3, --threads,
# hard-coded -gencode), swapped to fatbuild.setuptools by its import line: exactly those images,
# whatever TORCH_CUDA_ARCH_LIST says, no "incompatible redefinition" of nvcc's -O, and the
# build's progress shown as torch's BuildExtension shows it: ninja's [n/N] line with each
# compiler command.
cp -r "$ex" "$work/gencode"
cat >"$work/gencode/setup.py" <<'PY'
from setuptools import setup
from fatbuild.setuptools import BuildExtension, CUDAExtension, CUDA_HOME

assert CUDA_HOME
nvcc = ["-O3", "--use_fast_math", "-lineinfo", "--threads", "2",
        "-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_86,code=[sm_86,compute_86]"]
setup(name="fb_muladd_gencode", packages=["fb_muladd"],
      ext_modules=[CUDAExtension("fb_muladd._C", ["muladd.cpp", "muladd.cu"],
                                 extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc})],
      cmdclass={"build_ext": BuildExtension})
PY
gencode_build() { (cd "$work/gencode" && "$py" setup.py build_ext -b "$work/gencode/lib" -t "$work/gencode/tmp"); }
if TORCH_CUDA_ARCH_LIST="$archs" MAX_JOBS=2 run_logged gencode gencode_build; then
	so=$(ls "$work"/gencode/lib/fb_muladd/_C*.so 2>/dev/null)
	got=$(images "$so")
	[ "$got" = "elf sm_75|elf sm_86|ptx compute_86|" ] && ok "setup.py's own gencode: images $got" ||
		fail "setup.py's own gencode: images '$got', want the project's sm_75, sm_86, compute_86 only"
	grep -q "incompatible redefinition" "$work/gencode.log" && fail "setup.py: nvcc warned of a second -O" ||
		ok "setup.py: one -O for nvcc"
	grep -Eq '^\[1/3\] [^ ]*(nvcc|c\+\+) ' "$work/gencode.log" && ok "setup.py: the build showed [1/3] with the command" ||
		fail "setup.py: no [n/N] progress line with a compiler command"
	runpath "$so" setup.py
fi

# 4. The CUB extension, the PCH and the edge cache with a real torch.
cub=$FB_SOURCE_DIR/examples/torch_cub
cub_build() { # cub_build BUILD_DIR OUT_DIR
	FATBUILD_CACHE_DIR=$work/cub-cache FATBUILD_HOST_PCH=1 FATBUILD_EDGE_LOG=$work/cub-edges \
		"$FATBUILD_BIN" build -v --torch --python "$py" --python-module --name fb_cub --arch-list "8.0 9.0" \
		--build-dir "$1" -o "$2/" "$cub/ops.cpp" "$cub/rowsum.cu" "$cub/rowscan.cu" "$cub/rowsort.cu"
}
if run_logged cub cub_build "$work/cub-build" "$work/cub"; then
	so=$(ls "$work"/cub/fb_cub.cpython-*.so 2>/dev/null)
	grep -q -- '-Werror=invalid-pch -include' "$work/cub-build/build.ninja" && ok "cub: ops.cpp read the torch PCH" ||
		fail "cub: ops.cpp did not read a PCH"
	run_logged cub-import "$py" "$cub/check.py" --module "$work/cub" fb_cub && ok "cub: $(tr '\n' ' ' <"$work/cub-import.log")"
	for a in 8.0 9.0; do
		"$FATBUILD_BIN" check --arch "$a" "$so" >"$work/cub-check.log" 2>&1 && ok "cub: fatbuild check --arch $a" ||
			{ fail "cub: fatbuild check --arch $a:"; sed 's/^/  | /' "$work/cub-check.log" >&2; }
	done
	rm -f "$work/cub-edges"
	if run_logged cub-again cub_build "$work/cub-build2" "$work/cub2"; then
		[ "$(grep -c '^hit local' "$work/cub-edges")" = 4 ] && ok "cub: a second build dir took all 4 compiles from the cache" ||
			fail "cub: second build dir: $(tr '\n' ' ' <"$work/cub-edges")"
		cmp -s "$so" "$(ls "$work"/cub2/fb_cub.cpython-*.so)" && ok "cub: the same library" || fail "cub: the libraries differ"
	fi
fi

# 5. torch's own BuildExtension (torch.utils.cpp_extension; no fatbuild in its setup.py) with
# PYTORCH_NVCC="fatbuild nvcc", as a user sets it for a project left unchanged, in two checkouts
# at two paths (the kernel renamed muladd_kernel.cu: torch's builder would make muladd.o of both
# sources): the .cu is split, the module's op matches PyTorch's with the images asked for, and
# the second checkout runs no cicc or ptxas (the launcher's log; docs/launcher.md "Checkouts").
pyn=$work/pynvcc
for c in one "two x"; do
	mkdir -p "$pyn/$c" && cp -r "$ex/muladd.cpp" "$ex/fb_muladd" "$pyn/$c/" && cp "$ex/muladd.cu" "$pyn/$c/muladd_kernel.cu"
	cat >"$pyn/$c/setup.py" <<'PY'
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="fb_muladd", version="0.1.0", packages=["fb_muladd"],
      ext_modules=[CUDAExtension("fb_muladd._C", ["muladd.cpp", "muladd_kernel.cu"])],
      cmdclass={"build_ext": BuildExtension})
PY
done
pynvcc() { # CHECKOUT
	(cd "$pyn/$1" && PYTORCH_NVCC="$FATBUILD_BIN nvcc" FATBUILD_LAUNCH_LOG=$pyn/launch.log FATBUILD_CACHE_DIR=$pyn/cache \
		TORCH_CUDA_ARCH_LIST="$archs" MAX_JOBS=2 "$py" setup.py build_ext --inplace)
}
for c in one "two x"; do
	tag=pynvcc-$(echo "$c" | cut -c1-3)
	run_logged "$tag" pynvcc "$c" || continue
	PYTHONPATH="$pyn/$c" run_logged "$tag-import" "$py" "$ex/check.py" --package fb_muladd &&
		ok "PYTORCH_NVCC, $c: $(tail -n 1 "$work/$tag-import.log")"
	expect_images "PYTORCH_NVCC, $c" "$(ls "$pyn/$c"/fb_muladd/_C*.so)"
done
grep -q "^split nvcc $pyn/one/muladd_kernel.cu: cicc compute_80 miss, ptxas sm_80 miss" "$pyn/launch.log" &&
	ok "PYTORCH_NVCC: the .cu split into nvcc's steps" || fail "PYTORCH_NVCC: not split: $(head -n 1 "$pyn/launch.log")"
grep -q "^split nvcc $pyn/two x/muladd_kernel.cu: \(\(cicc\|ptxas\) [a-z_0-9]* hit, \)*\(cicc\|ptxas\) [a-z_0-9]* hit\$" "$pyn/launch.log" &&
	ok "PYTORCH_NVCC: the second checkout ran no cicc or ptxas" ||
	fail "PYTORCH_NVCC: the second checkout: $(tail -n 1 "$pyn/launch.log")"

[ $fails -eq 0 ] && { echo "PASS: torch"; exit 0; }
echo "$fails check(s) failed" >&2
exit 1
