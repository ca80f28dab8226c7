#!/usr/bin/env bash
# build_nvcc_threads.sh: an nvcc edge for several targets runs one nvcc with --threads (the host
# pass and each target in parallel), and its images are those of the same nvcc call run
# serially, byte for byte: a CUB file (examples/kernels/radix_sort.cu) for "8.0 9.0" built
#   default             build.ninja has --threads 2 (-j 2, one nvcc edge, two targets)
#   --no-nvcc-threads   no --threads: the targets one after another in the same command
# and each target's cubin (`fatbuild extract`) compared with cmp; a user's own --threads is
# kept and ours not added; beside a host edge nvcc runs under nice -n 5, which the edge cache's
# key leaves out; beside host edges that, with the nvcc edges, fill every job slot, no --threads.
# Skipped (77) without nvcc.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
[ -x "$nvcc" ] || { echo "no nvcc at $nvcc: skipped"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-nvthreads.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$FB_SOURCE_DIR/examples/kernels/radix_sort.cu
# Both builds compile: the edge cache leaves --threads out of its key, so the second would
# otherwise get the first one's object.
export FATBUILD_EDGE_CACHE=0
fails=0
fail() { echo "FAIL: $*" >&2; sed 's/^/  | /' "$work/log" >&2; fails=$((fails + 1)); }
build() { # build NAME [flags...]
	local name=$1
	shift
	"$FATBUILD_BIN" build -j 2 --backend nvcc --arch-list "8.0 9.0" "$@" --build-dir "$work/$name" \
		-o "$work/$name.so" "$src" >"$work/log" 2>&1 || fail "$name: build"
}
build threads
grep -q -- '--threads 2 ' "$work/threads/build.ninja" || { cp "$work/threads/build.ninja" "$work/log"; fail "threads: no --threads 2 in build.ninja"; }
build serial --no-nvcc-threads
! grep -q -- '--threads' "$work/serial/build.ninja" || { cp "$work/serial/build.ninja" "$work/log"; fail "serial: --threads in build.ninja"; }
# A user's own -t/--threads wins: ours is not added beside it.
"$FATBUILD_BIN" build -j 2 --backend nvcc --arch-list "8.0 9.0" --nvcc-flags "--threads 1" --emit-ninja \
	--build-dir "$work/user" -o "$work/user.so" "$src" >"$work/log" 2>&1 || fail "user: emit"
[ "$(grep -o -- '--threads [0-9]*' "$work/user/build.ninja" | sort -u)" = "--threads 1" ] ||
	{ cp "$work/user/build.ninja" "$work/log"; fail "user: --threads other than the user's"; }
# The two commands differ in --threads alone.
sed 's/ --threads 2//' "$work/threads/build.ninja" | sed "s#$work/threads#$work/serial#g" | grep 'nvcc -c' >"$work/a"
grep 'nvcc -c' "$work/serial/build.ninja" >"$work/b"
[ -s "$work/b" ] && diff "$work/a" "$work/b" >"$work/log" || fail "the nvcc commands differ in more than --threads"
for a in sm_80 sm_90; do
	for f in threads.so serial.so; do
		"$FATBUILD_BIN" extract --arch "$a" "$work/$f" -o "$work/$f.$a.cubin" >"$work/log" 2>&1 || fail "extract $a from $f"
	done
	[ -s "$work/serial.so.$a.cubin" ] || { : >"$work/log"; fail "$a: empty cubin"; }
	cmp "$work/threads.so.$a.cubin" "$work/serial.so.$a.cubin" >"$work/log" 2>&1 || fail "$a: --threads differs from the serial nvcc"
done
# Beside a C or C++ edge, nvcc gets threads only for job slots no edge takes from the start, and
# they run at a lower priority (nice 5), so they fill cores the host compile leaves idle; when
# the edges fill every slot (-j 2: the .cu and the .c, a torch extension's shape) none, as
# torch's serial nvcc; without a host edge, at the default priority. The edge cache's key
# leaves both --threads and nice out: the .cu's entry is shared between the builds.
printf 'int host_side(void) { return 1; }\n' >"$work/h.c"
"$FATBUILD_BIN" build -j 2 --backend nvcc --arch-list "8.0 9.0" --emit-ninja --build-dir "$work/full" \
	-o "$work/full.so" "$src" "$work/h.c" >"$work/log" 2>&1 || fail "full: emit"
grep -q -- '/nvcc .*' "$work/full/build.ninja" && ! grep -q -- '--threads' "$work/full/build.ninja" ||
	{ cp "$work/full/build.ninja" "$work/log"; fail "full: nvcc --threads where the edges fill every job slot"; }
"$FATBUILD_BIN" build -j 3 --backend nvcc --arch-list "8.0 9.0" --emit-ninja --build-dir "$work/mixed" \
	-o "$work/mixed.so" "$src" "$work/h.c" >"$work/log" 2>&1 || fail "mixed: emit"
grep -q -- 'nice -n 5 [^ ]*/nvcc .*--threads 2 ' "$work/mixed/build.ninja" ||
	{ cp "$work/mixed/build.ninja" "$work/log"; fail "mixed: nvcc --threads not under nice -n 5"; }
! grep -q 'nice' "$work/threads/build.ninja" || { cp "$work/threads/build.ninja" "$work/log"; fail "threads: nice without a host edge"; }
cp "$src" "$work/k.cu" # beside h.c: sources in one directory get the same prefix map
(
	unset FATBUILD_EDGE_CACHE
	export FATBUILD_CACHE_DIR=$work/cache FATBUILD_EDGE_LOG=$work/edges
	"$FATBUILD_BIN" build -j 2 --backend nvcc --arch-list "8.0 9.0" --build-dir "$work/c1" -o "$work/c1.so" "$work/k.cu" &&
		"$FATBUILD_BIN" build -j 3 --backend nvcc --arch-list "8.0 9.0" --build-dir "$work/c2" -o "$work/c2.so" \
			"$work/k.cu" "$work/h.c"
) >"$work/log" 2>&1 || fail "cache: builds"
grep -q 'nice -n 5' "$work/c2/build.ninja" || fail "cache: the second build's nvcc is not under nice"
grep -q "^hit local $work/c2/obj/0_k.cu.o" "$work/edges" ||
	{ cat "$work/edges" >>"$work/log"; fail "cache: the niced nvcc edge missed the entry of the plain one"; }
[ $fails = 0 ] && echo "ok build_nvcc_threads"
exit $((fails > 0))
