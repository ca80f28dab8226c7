#!/usr/bin/env bash
# run.sh: the pip route, end to end, as a Python user gets it. The wheel scripts/wheel.sh made
# (ctest wheel_dist, into FB_BINARY_DIR/wheel-dist: the repository's pyproject.toml built by
# scikit-build-core, repaired by auditwheel, libelf, libzstd, liblz4, libcrypto and gRPC carried,
# CUDA never) goes alone (with its dependency ninja) into a new venv. Then, with no build of this
# tree on PATH and none of fatbuild's variables set: the console scripts (`fatbuild --version`, `archprobe --format json`),
# `import fatbuild`, `fatbuild env` (the runtime library and header inside the venv), the
# bundled programs' libraries ($ORIGIN-relative, all found). Last, a planted breach: a copy of
# the package without its runtime library must fail the same checks. torch with the wheel
# (fatbuild.load, and BuildExtension through a project's [build-system] requires) is
# tests/wheel/sandbox.sh's, in a stricter place: a sandbox without the build host's libraries.
# Environment: FB_SOURCE_DIR, FB_BINARY_DIR.
set -u
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
work=$FB_BINARY_DIR/wheel-test
# The builds' compile cache (and the torch PCH they make, hundreds of MB) stays in the work dir,
# not in the user's cache; nothing else is set, so the tools are found as a user's would be.
export FATBUILD_CACHE_DIR=$work/cache
tools=${FB_VENV_DIR:-$FB_BINARY_DIR}/venv-wheeltools
dist=$FB_BINARY_DIR/wheel-dist
# fail, ok, run_logged and the fails count
. "$FB_SOURCE_DIR/tests/torch/lib.sh"
finish() {
	[ $fails -eq 0 ] && { echo "PASS: wheel"; exit 0; }
	echo "$fails check(s) failed" >&2
	exit 1
}

rm -rf "$work" && mkdir -p "$work"
ver=$(sed -n 's/^project(archprobe_fatbuild VERSION \([0-9.]*\).*/\1/p' "$FB_SOURCE_DIR/CMakeLists.txt")
[ -n "$ver" ] || { echo "no project version in CMakeLists.txt" >&2; exit 1; }

# 1. The wheel scripts/wheel.sh made (ctest wheel_dist, which checks its tag), and what it carries.
fixed=$(ls "$dist"/fatbuild-"$ver"-py3-none-manylinux_*_"$(uname -m)".whl 2>/dev/null)
[ -f "$fixed" ] && ok "the repaired wheel: $(basename "$fixed")" || { fail "no repaired wheel in $dist (ctest wheel_dist makes it)"; finish; }
run_logged auditwheel-show "$tools/bin/auditwheel" show "$fixed" || finish
python3 -m zipfile -l "$fixed" | awk 'NR > 1 { print $1 }' >"$work/contents.txt"
for f in fatbuild/_bundle/bin/fatbuild fatbuild/_bundle/bin/archprobe fatbuild/_bundle/lib/libfatbuild_runtime.a \
	fatbuild/_bundle/include/fatbuild_runtime.h fatbuild/__init__.py fatbuild/setuptools.py; do
	grep -qx "$f" "$work/contents.txt" && ok "wheel carries $f" || fail "wheel lacks $f"
done
# What the build found is carried (docs/pytorch.md: gRPC bundled, not dlopen'ed).
libs="libelf libzstd liblz4"
pkg-config --exists libcrypto && libs="$libs libcrypto"
pkg-config --exists grpc && libs="$libs libgrpc libgpr"
for l in $libs; do
	grep -q "^fatbuild\.libs/$l-" "$work/contents.txt" && ok "wheel carries $l" || fail "wheel lacks $l (fatbuild.libs/: $(grep -c '^fatbuild\.libs/.' "$work/contents.txt") files)"
done
grep -Eq "libcuda|libnvrtc|libnvJitLink|libcudart" "$work/contents.txt" && fail "wheel carries a CUDA library: $(grep -E 'libcuda|libnvrtc|libnvJitLink|libcudart' "$work/contents.txt" | head -n 3)" ||
	ok "wheel carries no CUDA library (dlopen'ed from the toolkit)"

# 3. A new venv with that wheel alone.
venv=$work/venv
run_logged venv python3 -m venv "$venv" || finish
run_logged pip-install "$venv/bin/pip" install --disable-pip-version-check "$fixed" || finish
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
bundle=$site/fatbuild/_bundle
# As a user's shell with the venv activated; nothing of this build tree, no fatbuild variable.
run_venv() {
	env -u FATBUILD_EXECUTABLE -u ARCHPROBE_EXECUTABLE -u FATBUILD_PROGRAM -u FATBUILD_RUNTIME -u FATBUILD_INCLUDE \
		-u FATBUILD_NINJA -u PYTHONPATH -u PYTHONHOME -u TORCH_CUDA_ARCH_LIST PATH="$venv/bin:/usr/bin:/bin" "$@"
}
[ "$(run_venv sh -c 'command -v fatbuild')" = "$venv/bin/fatbuild" ] && [ "$(run_venv sh -c 'command -v archprobe')" = "$venv/bin/archprobe" ] &&
	ok "console scripts fatbuild and archprobe on the venv's PATH" || fail "console scripts: $(run_venv sh -c 'command -v fatbuild archprobe' | tr '\n' ' ')"
if run_logged version run_venv fatbuild --version; then
	[ "$(head -n 1 "$work/version.log")" = "fatbuild $ver" ] && ok "fatbuild --version: fatbuild $ver" || fail "fatbuild --version: $(head -n 1 "$work/version.log")"
fi
# archprobe exits 0 with a GPU, else with the failure's code; the report is there either way.
run_venv archprobe --format json >"$work/archprobe.json" 2>"$work/archprobe.err"
aprc=$?
if "$venv/bin/python" -c "import json, sys; r = json.load(open(sys.argv[1])); assert r['schema'] == 'archprobe/1', r; print(r['status'])" \
	"$work/archprobe.json" >"$work/archprobe.status" 2>&1; then
	ok "archprobe --format json: status $(cat "$work/archprobe.status") (exit $aprc)"
else
	fail "archprobe --format json (exit $aprc): $(head -c 300 "$work/archprobe.json") $(head -c 300 "$work/archprobe.err")"
fi
cat >"$work/found.py" <<'PY'
import fatbuild, fatbuild._tools as t, os
print(fatbuild.find_executable("fatbuild"))
print(fatbuild.find_executable("archprobe"))
print(" ".join(fatbuild.arch_flags("8.0 9.0+PTX")))
os.environ["PATH"] = "/nonexistent"
print((t._tool_env() or {}).get("FATBUILD_NINJA"))
PY
if run_logged import run_venv "$venv/bin/python" "$work/found.py"; then
	[ "$(sed -n 1p "$work/import.log")" = "$bundle/bin/fatbuild" ] && [ "$(sed -n 2p "$work/import.log")" = "$bundle/bin/archprobe" ] &&
		ok "import fatbuild: the bundled programs are found" || fail "import fatbuild: found $(head -n 2 "$work/import.log" | tr '\n' ' ')"
	grep -q -- "-gencode=arch=compute_90,code=compute_90" "$work/import.log" && ok "fatbuild.arch_flags" || fail "fatbuild.arch_flags: $(sed -n 3p "$work/import.log")"
	[ "$(sed -n 4p "$work/import.log")" = "$venv/bin/ninja" ] && ok "ninja from the venv when PATH has none" ||
		fail "ninja without PATH: '$(sed -n 4p "$work/import.log")', want $venv/bin/ninja"
fi
# check_install BUNDLE: `fatbuild env` of BUNDLE's fatbuild names BUNDLE's runtime and header,
# and its libraries resolve, none from an absolute RUNPATH.
check_install() {
	local b=$1 bad=0 f
	run_venv "$b/bin/fatbuild" env >"$work/env.log" 2>&1
	grep -Eq "^runtime +$b/lib/libfatbuild_runtime\.a$" "$work/env.log" || { echo "runtime: $(grep '^runtime' "$work/env.log")"; bad=1; }
	grep -Eq "^include +$b/include$" "$work/env.log" || { echo "include: $(grep '^include' "$work/env.log")"; bad=1; }
	for f in "$b/bin/fatbuild" "$b/bin/archprobe"; do
		ldd "$f" >"$work/ldd.log" 2>&1
		grep -q "not found" "$work/ldd.log" && { echo "$f: $(grep 'not found' "$work/ldd.log" | head -n 2)"; bad=1; }
		readelf -d "$f" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p' | tr ':' '\n' | grep -v '^\$ORIGIN' | grep . &&
			{ echo "$f: a RUNPATH entry not below \$ORIGIN"; bad=1; }
	done
	return $bad
}
check_install "$bundle" >"$work/install.log" 2>&1 && ok "fatbuild env: runtime and header from $bundle; libraries found" ||
	fail "the installed wheel: $(cat "$work/install.log")"
# Built with FB_BUILD_TREE_PATHS off: nothing of the source tree (nor of the build's temporary
# directory) is compiled into the programs.
for f in fatbuild archprobe; do
	strings "$bundle/bin/$f" | grep -F -e "$FB_SOURCE_DIR" -e "/build/lib/libfatbuild_runtime.a" >"$work/paths.log" &&
		fail "bundled $f names build paths: $(head -n 2 "$work/paths.log" | tr '\n' ' ')" || ok "bundled $f names no build path"
done
grep -q "fatbuild.libs/libelf" <(ldd "$bundle/bin/fatbuild") && ok "libelf from the wheel's fatbuild.libs" || fail "libelf: $(ldd "$bundle/bin/fatbuild" | grep libelf)"

# 4. The planted breach: the same checks on a copy of the package (beside its fatbuild.libs, as
# installed) without its runtime library fail, and for that reason.
mkdir -p "$work/broken"
cp -r "$site/fatbuild" "$site/fatbuild.libs" "$work/broken/"
rm -f "$work/broken/fatbuild/_bundle/lib/libfatbuild_runtime.a"
if check_install "$work/broken/fatbuild/_bundle" >"$work/broken.log" 2>&1; then
	fail "a bundle without its runtime library passed the checks"
else
	grep -Eq "^runtime: runtime +$work/broken/fatbuild/_bundle/(bin/\.\./)?lib/libfatbuild_runtime\.a \(missing\)$" "$work/broken.log" &&
		[ "$(wc -l <"$work/broken.log")" = 1 ] &&
		ok "a bundle without its runtime library fails them: $(cat "$work/broken.log")" ||
		fail "the bundle without its runtime library failed otherwise: $(head -n 3 "$work/broken.log")"
fi
finish
