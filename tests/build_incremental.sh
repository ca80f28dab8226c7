#!/usr/bin/env bash
# build_incremental.sh: `fatbuild build` rebuilds exactly what changed. Paths hold spaces on
# purpose (sources, build dir, output). Each step checks which ninja edges ran, by their
# descriptions ("NVRTC sm_80 saxpy.cu", "CC saxpy_host.c", "LINK libsaxpy.so").
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/fb build.XXXXXX")
trap 'rm -rf "$work"' EXIT
export FATBUILD_CACHE_DIR="$work/cache"
src="$work/src \$dir:1"
out="$work/out dir/libsaxpy.so"
mkdir -p "$src" "$work/out dir"
cp "$FB_SOURCE_DIR"/examples/saxpy/saxpy.cu "$FB_SOURCE_DIR"/examples/saxpy/saxpy.cuh \
	"$FB_SOURCE_DIR"/examples/saxpy/saxpy_host.c "$src/"
fails=0
fail() { echo "FAIL: $*" >&2; sed 's/^/  | /' "$work/log" >&2; fails=$((fails + 1)); }
build() { # build ARGS...: runs fatbuild build, output in $work/log
	"$FATBUILD_BIN" build -j 2 --build-dir "$work/build dir" -o "$out" "$@" "$src/saxpy.cu" "$src/saxpy_host.c" \
		>"$work/log" 2>&1
}
edges() { sed -n 's/^\[[0-9]*\/[0-9]*\] //p' "$work/log" | sort | tr '\n' ';'; }
expect_edges() { # step want
	local got; got=$(edges)
	[ "$got" = "$2" ] || { echo "want: $2" >&2; echo "got:  $got" >&2; fail "$1: wrong edges ran"; }
}
# ninja's mtime resolution: make sure a touch is seen as newer.
tick() { sleep 1.1; }

# 1. cold build
build --arch-list "8.0" || fail "cold build"
expect_edges cold "CC saxpy_host.c;EMBED fatbin.o;LINK libsaxpy.so;MERGE 0_saxpy.cu.fatbin;NVRTC sm_80 saxpy.cu;"
[ -f "$out" ] || fail "no output library"
"$FATBUILD_BIN" inspect "$out" >"$work/log" 2>&1 && grep -q 'sm_80' "$work/log" || fail "inspect does not list sm_80"

# -v shows the commands themselves (NVRTC through `fatbuild compile`, the link)
build --arch-list "8.0" -v || fail "-v build"
grep -q "ninja: no work to do" "$work/log" || fail "-v rebuild ran something"
rm -f "$out"
build --arch-list "8.0" -v || fail "-v relink"
grep -q -- "-shared -o .*libsaxpy.so.tmp.fb" "$work/log" || fail "-v does not show the link command"
grep -q "LINK libsaxpy.so" "$work/log" && fail "-v shows descriptions instead of commands"

# 2. no-op: nothing runs, and it is fast
start=$(date +%s%N)
build --arch-list "8.0" || fail "no-op build"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "ninja: no work to do" "$work/log" || fail "no-op rebuild ran something"
[ "$ms" -lt 1500 ] || fail "no-op rebuild took ${ms} ms"
echo "no-op rebuild: ${ms} ms"

# 3. touching a host file rebuilds that object and the link only
tick; touch "$src/saxpy_host.c"
build --arch-list "8.0" || fail "host touch"
expect_edges host-touch "CC saxpy_host.c;LINK libsaxpy.so;"

# 4. adding an arch compiles only the new target
build --arch-list "8.0 8.6" || fail "add arch"
expect_edges add-arch "EMBED fatbin.o;LINK libsaxpy.so;MERGE 0_saxpy.cu.fatbin;NVRTC sm_86 saxpy.cu;"
"$FATBUILD_BIN" inspect "$out" >"$work/log" 2>&1
grep -q sm_80 "$work/log" && grep -q sm_86 "$work/log" || fail "library lacks sm_80 or sm_86 after adding an arch"

# 5. touching a header rebuilds the kernels that include it (every target), not host code
tick; touch "$src/saxpy.cuh"
build --arch-list "8.0 8.6" || fail "header touch"
expect_edges header-touch "EMBED fatbin.o;LINK libsaxpy.so;MERGE 0_saxpy.cu.fatbin;NVRTC sm_80 saxpy.cu;NVRTC sm_86 saxpy.cu;"

# 6. a C flag rebuilds host objects only; a define rebuilds what sees it (kernels and host)
build --arch-list "8.0 8.6" --cflags "-DEXTRA=1" || fail "cflags"
expect_edges cflags "CC saxpy_host.c;LINK libsaxpy.so;"
build --arch-list "8.0 8.6" --cflags "-DEXTRA=1" -D SAXPY_SCALE=2 || fail "define"
expect_edges define "CC saxpy_host.c;EMBED fatbin.o;LINK libsaxpy.so;MERGE 0_saxpy.cu.fatbin;NVRTC sm_80 saxpy.cu;NVRTC sm_86 saxpy.cu;"

# 7. dropping an arch relinks without compiling
build --arch-list "8.6" --cflags "-DEXTRA=1" -D SAXPY_SCALE=2 || fail "drop arch"
expect_edges drop-arch "EMBED fatbin.o;LINK libsaxpy.so;MERGE 0_saxpy.cu.fatbin;"
"$FATBUILD_BIN" inspect "$out" >"$work/log" 2>&1
grep -q sm_80 "$work/log" && fail "sm_80 still in the library after dropping it"

# 8. a failed build leaves the previous library intact
sum=$(cksum <"$out")
tick; echo "this is not C;" >>"$src/saxpy_host.c"
if build --arch-list "8.6" --cflags "-DEXTRA=1" -D SAXPY_SCALE=2; then fail "a broken host file built"; fi
grep -q "build failed" "$work/log" || fail "no 'build failed' message"
[ "$(cksum <"$out")" = "$sum" ] || fail "the previous library was replaced by a failed build"
ls "$work/out dir" | grep -q tmp && fail "a temporary file was left beside the output"

# 9. --emit-ninja only writes build.ninja
rm -rf "$work/emit"
"$FATBUILD_BIN" build --emit-ninja --arch-list 8.6 --build-dir "$work/emit" -o "$work/x.so" "$src/saxpy.cu" >"$work/log" 2>&1 \
	|| fail "--emit-ninja"
[ -f "$work/emit/build.ninja" ] && [ ! -e "$work/x.so" ] && [ ! -e "$work/emit/.ninja_log" ] || fail "--emit-ninja ran the build"

[ $fails = 0 ] && echo "ok build_incremental"
exit $((fails > 0))
