#!/usr/bin/env bash
# build_repro.sh: the same sources give the same bytes wherever they lie. Two copies of a
# two-file CUB extension (tests/repro: template-only kernels, whose internal names take the
# front end's seed) are built in different directories, with different cache and build dirs,
# by different processes: the per-kernel fatbins, the objects and the .so are byte-identical,
# with the NVRTC backend (also with -g host code) and with --backend nvcc (also with -g). `fatbuild compile`
# likewise. `fatbuild diff` agrees, and names the entry when one kernel changes.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
fb=$FATBUILD_BIN
t=$(mktemp -d "${TMPDIR:-/tmp}/fbrepro.XXXXXX")
trap 'rm -rf "$t"' EXIT
fails=0
no() { echo "FAIL: $*" >&2; [ -f "$t/log" ] && sed 's/^/  | /' "$t/log" >&2; fails=$((fails + 1)); }
arch="9.0+PTX"
mkdir -p "$t/one/src" "$t/two/deeper/proj"
cp "$FB_SOURCE_DIR"/tests/repro/* "$t/one/src/"
cp "$FB_SOURCE_DIR"/tests/repro/* "$t/two/deeper/proj/"

# fatbuild compile: relative names from one place, absolute from another, separate caches.
(cd "$t/one" && FATBUILD_CACHE_DIR="$t/one/cache" "$fb" compile --arch-list "$arch" -o k.fatbin src/k1.cu src/k2.cu) \
	>"$t/log" 2>&1 || no "compile one"
(cd "$t" && FATBUILD_CACHE_DIR="$t/two/cache" "$fb" compile --arch-list "$arch" -o two/k.fatbin \
	"$t/two/deeper/proj/k1.cu" "$t/two/deeper/proj/k2.cu") >"$t/log" 2>&1 || no "compile two"
cmp -s "$t/one/k.fatbin" "$t/two/k.fatbin" || no "fatbuild compile: different bytes in two places"
"$fb" diff "$t/one/k.fatbin" "$t/two/k.fatbin" >"$t/log" 2>&1 || no "fatbuild diff says the two compiles differ"

build() { # DIR BACKEND CXXFLAGS SRCDIR
	(cd "$1" && FATBUILD_CACHE_DIR="$1/cache.$2" "$fb" build --backend "$2" --cxxflags "$3" --arch-list "$arch" \
		--build-dir "$1/b.$2" -o "$1/ext.$2.so" "$4/k1.cu" "$4/k2.cu" "$4/host.cpp") >"$t/log" 2>&1
}
same() { # BACKEND WHAT
	for f in "$t"/one/b."$1"/obj/*.fatbin "$t"/one/b."$1"/obj/*.o "$t/one/ext.$1.so"; do
		[ -e "$f" ] || continue
		g=${f/#$t\/one/$t/two}
		cmp -s "$f" "$g" || no "$2: ${f#$t/one/} differs between the two builds"
	done
}
build "$t/one" nvrtc -g src || no "nvrtc build one"
build "$t/two" nvrtc -g "$t/two/deeper/proj" || no "nvrtc build two"
ls "$t"/one/b.nvrtc/obj/*.sm_90.fatbin >/dev/null 2>&1 || no "no per-kernel fatbins (the layout changed?)"
same nvrtc "NVRTC backend"
"$fb" diff "$t/one/ext.nvrtc.so" "$t/two/ext.nvrtc.so" >"$t/log" 2>&1 || no "diff of two identical .so"

nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ -x "$nvcc" ]; then
	build "$t/one" nvcc -O2 src || no "nvcc build one"
	build "$t/two" nvcc -O2 "$t/two/deeper/proj" || no "nvcc build two"
	same nvcc "nvcc backend"
	# With -g the host compiler's debug line strings are ordered by a hash of nvcc's temporary
	# file names, which hold nvcc's process id unless its intermediates are named (-keep).
	build "$t/one" nvcc -g src || no "nvcc -g build one"
	build "$t/two" nvcc -g "$t/two/deeper/proj" || no "nvcc -g build two"
	same nvcc "nvcc backend with -g"
	ls "$t"/one/b.nvcc/obj/*.keep >/dev/null 2>&1 && no "nvcc's kept intermediates were not removed"
else
	echo "no nvcc at $nvcc: nvcc backend part skipped"
fi

# One kernel changed: diff exits 1 and names that entry (k1's) and only entries of it.
sed -i 's/128/256/g' "$t/two/deeper/proj/k1.cu"
build "$t/two" nvrtc -g "$t/two/deeper/proj" || no "nvrtc build two, changed"
"$fb" diff "$t/one/ext.nvrtc.so" "$t/two/ext.nvrtc.so" >"$t/log" 2>&1
rc=$?
[ $rc = 1 ] || no "diff after a change exited $rc, not 1"
grep -q 'differ' "$t/log" || no "diff names no differing entry"
[ $fails = 0 ] && echo "build_repro: ok"
exit $((fails > 0))
