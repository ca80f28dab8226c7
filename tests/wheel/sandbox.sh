#!/usr/bin/env bash
# sandbox.sh: the repaired wheel (scripts/wheel.sh, ctest wheel_dist) installed where nothing was
# built. A bubblewrap sandbox sees this machine read-only, but /usr/include and
# /usr/lib/x86_64-linux-gnu without the files of every -dev package (the C and C++ toolchain's
# own kept) and without libelf, libzstd, liblz4, gRPC, libgpr, absl, re2, c-ares and upb
# (hide.py); the source tree and its builds are hidden too. /usr/local/cuda stays: the toolkit is
# the user's. Debian 12's gcc, as and ld need libzstd.so.1 themselves, so the compiler alone gets it
# (wrappers first on PATH set LD_LIBRARY_PATH for the toolchain); fatbuild's programs do not.
# In that sandbox, for pyenv's Python 3.9 and 3.13 each, a fresh venv gets
#   pip install --no-index --find-links DIST --find-links INDEX fatbuild
# (INDEX: the ninja wheel, its one dependency, downloaded beforehand) and runs `fatbuild --version`,
# `fatbuild build` of examples/saxpy, `fatbuild check` of the library built, `archprobe --fallback`
# and `fatbuild env`. On 3.13, torch from PyPI goes into the venv and examples/torch is built with
# fatbuild.load and its op compared with PyTorch's, and installed with pip's build isolation on
# (examples/torch/pyproject.toml lists fatbuild in [build-system] requires; the local index through
# --find-links and PIP_FIND_LINKS). Not on 3.9: torch 2.9 and newer need Python
# 3.10 (torch 2.8 was the last for 3.9), and the wheel's part (the tools) is the same on both.
# Last, the planted breach: the unrepaired linux_* wheel installed the same way must fail there
# (the libraries it needs are hidden), so a passing run shows the sandbox hides them.
# Environment: FB_SOURCE_DIR, FB_BINARY_DIR; FB_WHEEL_DIST (default FB_BINARY_DIR/wheel-dist, what
# ctest wheel_dist writes); TORCH_SPEC (default torch, pip's cache shared with tests/torch/run.sh).
# Exit 77 only when bwrap cannot make a sandbox here (no user namespaces).
set -u
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
work=$FB_BINARY_DIR/wheel-sandbox
dist=${FB_WHEEL_DIST:-$FB_BINARY_DIR/wheel-dist}
. "$FB_SOURCE_DIR/tests/torch/lib.sh"
finish() {
	[ $fails -eq 0 ] && { echo "PASS: wheel sandbox"; exit 0; }
	echo "$fails check(s) failed" >&2
	exit 1
}
rm -rf "$work" && mkdir -p "$work/index" "$work/tmp" "$work/host/usr/include" "$work/host/usr/lib/x86_64-linux-gnu" "$work/cc" "$work/cclib"
command -v bwrap >/dev/null || { fail "bwrap not found (scripts/deps.sh installs bubblewrap)"; finish; }
bwrap --ro-bind / / --dev /dev true 2>"$work/bwrap.log" || { echo "skipped: bwrap cannot make a sandbox here: $(cat "$work/bwrap.log")" >&2; exit 77; }
whl=$(ls "$dist"/fatbuild-*-py3-none-manylinux_*.whl 2>/dev/null)
raw=$(ls "$dist"/fatbuild-*-py3-none-linux_*.whl 2>/dev/null)
[ -f "$whl" ] && [ -f "$raw" ] || { fail "no repaired and unrepaired wheel in $dist (run scripts/wheel.sh --keep-linux $dist)"; finish; }
pyroot=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
pys=
for v in 3.9 3.13; do
	p=$(ls -d "$pyroot"/versions/"$v".*/bin/python3 2>/dev/null | sort -V | tail -n 1)
	[ -x "$p" ] && pys="$pys $p" || fail "no Python $v in $pyroot/versions (pyenv install $v)"
done
[ $fails = 0 ] || finish
run_logged ninja-wheel "${FB_VENV_DIR:-$FB_BINARY_DIR}/venv-wheeltools/bin/pip" download --disable-pip-version-check -q --only-binary :all: --no-deps -d "$work/index" ninja || finish

# The filtered trees, and the compiler's own libzstd.
run_logged hide python3 "$FB_SOURCE_DIR/tests/wheel/hide.py" "$work/farm" "$work/host" /usr/include /usr/lib/x86_64-linux-gnu || finish
ok "hidden: $(cat "$work/hide.log")"
ln -s "$work/host/usr/lib/x86_64-linux-gnu/libzstd.so.1" "$work/cclib/"
for c in cc c++ gcc g++ gcc-12 g++-12 x86_64-linux-gnu-gcc-12 x86_64-linux-gnu-g++-12; do
	[ -x "/usr/bin/$c" ] || continue
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec /usr/bin/%s "$@"\n' "$work/cclib" "$c" >"$work/cc/$c"
	chmod +x "$work/cc/$c"
done
mkdir -p "$HOME/.cache/pip" "$work/home/.cache/pip"
# inbox CMD...: CMD in the sandbox with HOME (a new one, pip's cache in it the user's), PATH (the
# compiler wrappers first) and nothing else.
inbox() {
	# /tmp first: a checkout under /tmp (CI's `mktemp -d` clone) would otherwise be hidden by it,
	# and with it $work, bound below.
	local args=(--ro-bind / / --dev /dev --proc /proc --bind "$work/tmp" /tmp --tmpfs "$FB_SOURCE_DIR")
	[ "$FB_BINARY_DIR" = "${FB_BINARY_DIR#"$FB_SOURCE_DIR"/}" ] && args+=(--tmpfs "$FB_BINARY_DIR")
	args+=(--bind "$work" "$work" --ro-bind "$FB_SOURCE_DIR/examples" "$FB_SOURCE_DIR/examples" --ro-bind "$dist" "$dist"
		--bind "$HOME/.cache/pip" "$work/home/.cache/pip"
		--ro-bind /usr/include "$work/host/usr/include" --ro-bind /usr/lib/x86_64-linux-gnu "$work/host/usr/lib/x86_64-linux-gnu"
		--ro-bind "$work/farm/usr/include" /usr/include --ro-bind "$work/farm/usr/lib/x86_64-linux-gnu" /usr/lib/x86_64-linux-gnu)
	bwrap "${args[@]}" --chdir "$work" /usr/bin/env -i HOME="$work/home" PATH="$work/cc:/usr/local/bin:/usr/bin:/bin" \
		FATBUILD_CACHE_DIR="$work/cache" "$@"
}
if inbox sh -c 'ls /usr/include/libelf.h /usr/include/grpc/grpc.h /usr/include/zstd.h /usr/lib/x86_64-linux-gnu/libelf.so.1 /usr/lib/x86_64-linux-gnu/libzstd.so.1 /usr/lib/x86_64-linux-gnu/liblz4.so.1' >"$work/seen.log" 2>&1 ||
	! inbox test -f /usr/include/stdio.h || inbox test -e "$FB_BINARY_DIR/bin/fatbuild"; then
	fail "the sandbox shows what it hides, or lacks libc's headers: $(head -n 3 "$work/seen.log")"
	finish
fi
ok "sandbox: no libelf, libzstd, liblz4, gRPC headers or libraries; libc's headers there; no build of this tree"

# tools VENV TAG: the wheel's programs in VENV, in the sandbox.
tools() {
	local venv=$1 tag=$2 out=$work/$2
	mkdir -p "$out"
	run_logged "$tag-version" inbox "$venv/bin/fatbuild" --version && ok "$tag: $(head -n 1 "$work/$tag-version.log")"
	run_logged "$tag-ldd" inbox sh -c "ldd '$venv'/lib/python3*/site-packages/fatbuild/_bundle/bin/fatbuild" &&
		{ grep -Eq "libelf.*fatbuild\.libs" "$work/$tag-ldd.log" && ! grep -q "not found" "$work/$tag-ldd.log" &&
			ok "$tag: fatbuild's libraries found, libelf from fatbuild.libs" || fail "$tag: ldd: $(grep -E 'libelf|not found' "$work/$tag-ldd.log" | tr '\n' ' ')"; }
	run_logged "$tag-build" inbox env PATH="$venv/bin:$work/cc:/usr/local/bin:/usr/bin:/bin" fatbuild build --arch-list "8.0 8.6+PTX" \
		-o "$out/libsaxpy.so" "$FB_SOURCE_DIR/examples/saxpy/saxpy.cu" "$FB_SOURCE_DIR/examples/saxpy/saxpy_host.c" &&
		ok "$tag: fatbuild build of examples/saxpy: $(ls -s --block-size=K "$out/libsaxpy.so" | cut -d' ' -f1)"
	if run_logged "$tag-check" inbox "$venv/bin/fatbuild" check --arch 8.9 "$out/libsaxpy.so"; then
		grep -q "sm_86" "$work/$tag-check.log" && ok "$tag: fatbuild check --arch 8.9: $(grep -m1 sm_86 "$work/$tag-check.log")" ||
			fail "$tag: fatbuild check names no sm_86: $(head -n 3 "$work/$tag-check.log")"
	fi
	# No GPU in the sandbox (none here, or its driver not reached): the fallback list, exit 0.
	inbox "$venv/bin/archprobe" --fallback "8.0 9.0" >"$work/$tag-archprobe.out" 2>"$work/$tag-archprobe.err"
	local rc=$?
	[ $rc = 0 ] && grep -q "sm_80 sm_90" "$work/$tag-archprobe.out" && ok "$tag: archprobe --fallback: $(tr '\n' ' ' <"$work/$tag-archprobe.out")" ||
		fail "$tag: archprobe --fallback (exit $rc): $(head -c 200 "$work/$tag-archprobe.out") $(head -c 300 "$work/$tag-archprobe.err")"
	run_logged "$tag-env" inbox "$venv/bin/fatbuild" env &&
		{ grep -Eq "^runtime +$venv/.*/_bundle/lib/libfatbuild_runtime\.a$" "$work/$tag-env.log" && ok "$tag: fatbuild env: the runtime inside the venv" ||
			fail "$tag: fatbuild env: $(grep '^runtime' "$work/$tag-env.log")"; }
}

for py in $pys; do
	tag=py$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	venv=$work/venv-$tag
	run_logged "$tag-venv" inbox "$py" -m venv "$venv" || continue
	run_logged "$tag-install" inbox "$venv/bin/pip" install --disable-pip-version-check --no-index --find-links "$dist" \
		--find-links "$work/index" fatbuild || continue
	ok "$tag: pip install --no-index --find-links: $(grep -o 'Successfully installed.*' "$work/$tag-install.log")"
	tools "$venv" "$tag"
done

# fatbuild.load of examples/torch, on 3.13 (torch from PyPI, reached from the sandbox).
venv=$work/venv-py3.13
ex=$FB_SOURCE_DIR/examples/torch
cat >"$work/load.py" <<PY
import subprocess, sys, fatbuild
path = fatbuild.load("muladd_sandbox", ["$ex/muladd.cpp", "$ex/muladd.cu"], build_directory="$work/load",
                     is_python_module=False, verbose=True)
print("built", path)
sys.exit(subprocess.call([sys.executable, "$ex/check.py", "--library", path]))
PY
mkdir -p "$work/load"
if [ -x "$venv/bin/fatbuild" ] && run_logged torch inbox "$venv/bin/pip" install --disable-pip-version-check -q "${TORCH_SPEC:-torch}"; then
	if run_logged load inbox env TORCH_CUDA_ARCH_LIST="8.0 9.0+PTX" MAX_JOBS=2 "$venv/bin/python" "$work/load.py"; then
		ok "py3.13: fatbuild.load of examples/torch: $(grep 'muladd max' "$work/load.log")"
		grep -q "/fatbuild/_bundle/bin/fatbuild build" "$work/load.log" && ok "py3.13: fatbuild.load ran the wheel's fatbuild" ||
			fail "py3.13: fatbuild.load: no '.../fatbuild/_bundle/bin/fatbuild build' in its verbose output"
		got=$(inbox "$venv/bin/fatbuild" inspect "$work/load/muladd_sandbox.so" |
			awk '$2 == "elf" || $2 == "ptx" { print $2, $3 }' | sort -u | tr '\n' '|')
		[ "$got" = "elf sm_80|elf sm_90|ptx compute_90|" ] && ok "py3.13: fatbuild.load: images $got" ||
			fail "py3.13: fatbuild.load: images '$got', want elf sm_80, elf sm_90, ptx compute_90"
	fi
fi

# A torch project with fatbuild in its [build-system] requires (examples/torch/pyproject.toml),
# installed with pip's build isolation on: the isolated build env gets fatbuild from the local
# index (PIP_FIND_LINKS, which pip's build env installs read too) and setuptools and torch from
# PyPI; then the package's op is compared with PyTorch's in the venv.
cp -r "$ex" "$work/isolated"
if [ -x "$venv/bin/fatbuild" ] && "$venv/bin/python" -c "import torch" 2>/dev/null &&
	run_logged isolated inbox env PIP_FIND_LINKS="$dist $work/index" TORCH_CUDA_ARCH_LIST="8.0 9.0+PTX" MAX_JOBS=2 \
		"$venv/bin/pip" install --disable-pip-version-check --find-links "$dist" "$work/isolated"; then
	run_logged isolated-import inbox "$venv/bin/python" "$ex/check.py" --package fb_muladd &&
		ok "py3.13: pip install with build isolation, fatbuild from the local index: $(tail -n 1 "$work/isolated-import.log")"
fi

# The planted breach: the unrepaired wheel needs what the sandbox hides.
breach=$work/venv-linux
run_logged breach-venv inbox "${pys##* }" -m venv "$breach" &&
	run_logged breach-install inbox "$breach/bin/pip" install --disable-pip-version-check --no-index --find-links "$work/index" "$raw" || finish
if inbox "$breach/bin/fatbuild" --version >"$work/breach.log" 2>&1; then
	fail "the unrepaired wheel ran in the sandbox: it hides nothing the programs need"
else
	grep -Eq "lib(elf|zstd|lz4|grpc|gpr|absl).*cannot open shared object" "$work/breach.log" &&
		ok "the unrepaired wheel fails there: $(head -n 1 "$work/breach.log")" || fail "the unrepaired wheel failed otherwise: $(head -n 2 "$work/breach.log")"
fi
finish
