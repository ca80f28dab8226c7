#!/usr/bin/env bash
# build_edgecache.sh: host and nvcc edges go through `fatbuild edge` (fatbuild/extension/
# edgecache.c), cached in the compile cache and the remote cache (nginx WebDAV on loopback,
# tests/remote/nginx.sh) as the NVRTC images are. $CC and $CXX are wrappers that log each run
# (nvcc runs $CXX as its host compiler, so its edges are counted too):
#   A  cold, own cache and the remote: every edge runs and is uploaded;
#   B  another build dir, an empty local cache, the same remote: no compiler runs at all,
#      every edge is a remote hit, and the objects and library are A's, byte for byte;
#   B2 the same with -j 5 (nvcc --threads 3, for the slots the three edges leave; not in the
#      key): every edge a remote hit;
#   C  B's build dir again after a header's content changed: that edge runs, the other hits;
#   D  --no-edge-cache and --launcher: no `fatbuild edge` in build.ninja;
#   F  two checkouts at other paths (a header through -I outside the sources' dir, -g), each
#      with FATBUILD_CACHE_BASEDIR at its root and its build dir inside: cold compiles give
#      the same objects, byte for byte (-ffile-prefix-map); with A's local cache the second
#      checkout runs no compiler, every edge a hit; without the base it misses.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || { echo "no nvcc at $nvcc: skipped"; exit 77; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "SKIP: nginx not installed (scripts/deps.sh)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/tmp}/fb-edgecache.XXXXXX")
source "$FB_SOURCE_DIR/tests/remote/nginx.sh"
trap 'nginx_stop; rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; [ -f "$t/log" ] && sed 's/^/  | /' "$t/log" | tail -n 30 >&2; fails=$((fails + 1)); }
nginx_start "$t/srv" || { echo "nginx did not start"; exit 1; }

for c in cc c++; do
	# links are not compiles: only those are logged
	printf '#!/bin/sh\ncase " $* " in *" -shared "*) ;; *) echo "%s $*" >>"%s/runs" ;; esac\nexec %s "$@"\n' "$c" "$t" "$c" >"$t/log$c"
	chmod +x "$t/log$c"
done
export CC=$t/logcc CXX=$t/logc++
mkdir -p "$t/src"
cp "$FB_SOURCE_DIR/examples/saxpy/saxpy_launch.cu" "$FB_SOURCE_DIR/examples/saxpy/saxpy.cuh" "$t/src/"
printf '#pragma once\n#define ANSWER 42\n' >"$t/src/answer.h"
printf '#include <string>\n#include "answer.h"\nextern "C" int cxx_answer() { return (int)std::string(ANSWER, (char)1).size(); }\n' >"$t/src/b.cpp"
printf '#include "answer.h"\nint c_answer(void) { return ANSWER; }\n' >"$t/src/c.c"
srcs=("$t/src/saxpy_launch.cu" "$t/src/b.cpp" "$t/src/c.c")

build() { # build NAME CACHE [flags...]: the edge log in $t/NAME.edges, compiler runs in $t/runs
	local name=$1 cache=$2
	shift 2
	rm -f "$t/runs" "$t/$name.edges"
	FATBUILD_CACHE_DIR=$t/$cache FATBUILD_EDGE_LOG=$t/$name.edges "$FATBUILD_BIN" build -j 2 --arch-list "8.0 9.0" \
		--remote-cache "$NGINX_URL" --build-dir "$t/$name" -o "$t/$name.so" "$@" "${srcs[@]}" >"$t/log" 2>&1
}
count() { grep -c "$1" "$2" 2>/dev/null || true; }

# A
build A cacheA || fail "A: build"
[ "$(count '^ran ' "$t/A.edges")" = 3 ] || { cp "$t/A.edges" "$t/log"; fail "A: want 3 edges run"; }
[ "$(count . "$t/runs")" -ge 3 ] || { cp "$t/runs" "$t/log"; fail "A: the wrappers saw fewer than 3 compiler runs: they cannot prove B's none"; }
[ "$(ls "$t/srv/store/ac" | wc -l)" -ge 6 ] || { ls -R "$t/srv/store" >"$t/log"; fail "A: want a manifest and an object record per edge on the server"; }
# B
build B cacheB || fail "B: build"
[ ! -s "$t/runs" ] || { cp "$t/runs" "$t/log"; fail "B: a compiler ran"; }
[ "$(count '^hit remote ' "$t/B.edges")" = 3 ] || { cp "$t/B.edges" "$t/log"; fail "B: want 3 remote hits"; }
for o in 0_saxpy_launch.cu.o 1_b.cpp.o 2_c.c.o; do
	cmp "$t/A/obj/$o" "$t/B/obj/$o" >"$t/log" 2>&1 || fail "B: $o differs from A's"
done
cmp "$t/A.so" "$t/B.so" >"$t/log" 2>&1 || fail "B: the library differs from A's"
build B cacheB || fail "B: no-op"
grep -q 'no work to do' "$t/log" || fail "B: the rebuild (depfiles written on a hit) did work"
# B2: more job slots give nvcc another --threads, which is not in the key
build B2 cacheB2 -j 5 || fail "B2: build"
grep -q -- '--threads 3' "$t/B2/build.ninja" || { cp "$t/B2/build.ninja" "$t/log"; fail "B2: no --threads 3"; }
[ "$(count '^hit remote ' "$t/B2.edges")" = 3 ] || { cp "$t/B2.edges" "$t/log"; fail "B2: want 3 remote hits with another --threads"; }
# C
printf '#pragma once\n#define ANSWER 43\n' >"$t/src/answer.h"
build B cacheB || fail "C: build"
[ "$(count . "$t/runs")" -ge 2 ] && [ "$(count '^ran ' "$t/B.edges")" = 2 ] ||
	{ cat "$t/B.edges" "$t/runs" >"$t/log"; fail "C: a changed header did not rerun its two edges"; }
# D
build D cacheD --no-edge-cache --emit-ninja || fail "D: emit"
! grep -q ' edge -o ' "$t/D/build.ninja" || { cp "$t/D/build.ninja" "$t/log"; fail "D: --no-edge-cache still caches"; }
build E cacheD --launcher env --emit-ninja || fail "D: emit with a launcher"
! grep -q ' edge -o ' "$t/E/build.ninja" || { cp "$t/E/build.ninja" "$t/log"; fail "D: a launcher and the edge cache together"; }
grep -q ' edge -o ' "$t/A/build.ninja" || { cp "$t/A/build.ninja" "$t/log"; fail "A: no fatbuild edge in build.ninja"; }
# F
for ck in ckA other/deeper/ckB; do
	mkdir -p "$t/$ck/src" "$t/$ck/inc"
	cp "${srcs[0]}" "$t/src/saxpy.cuh" "$t/src/b.cpp" "$t/src/c.c" "$t/$ck/src/"
	cp "$t/src/answer.h" "$t/$ck/inc/"
done
fbuild() { # fbuild CHECKOUT BUILDDIR CACHE [flags...]: a build inside the checkout, its base unless BASE=
	local ck=$t/$1 bd=$2 cache=$3
	shift 3
	rm -f "$t/runs" "$t/F.edges"
	FATBUILD_CACHE_BASEDIR=${BASE-$ck} FATBUILD_CACHE_DIR=$t/$cache FATBUILD_EDGE_LOG=$t/F.edges "$FATBUILD_BIN" build \
		-j 2 --arch-list "8.0" --cflags -g --cxxflags -g -I "$ck/inc" --build-dir "$ck/$bd" -o "$ck/$bd.so" "$@" \
		"$ck/src/saxpy_launch.cu" "$ck/src/b.cpp" "$ck/src/c.c" >"$t/log" 2>&1
}
fobjs="0_saxpy_launch.cu.o 1_b.cpp.o 2_c.c.o"
fbuild ckA build cacheF || fail "F: build in A"
[ "$(count '^ran ' "$t/F.edges")" = 3 ] || { cp "$t/F.edges" "$t/log"; fail "F: A's 3 edges did not run"; }
fbuild other/deeper/ckB cold cacheF2 --no-edge-cache || fail "F: cold build in B"
for o in $fobjs; do
	cmp "$t/ckA/build/obj/$o" "$t/other/deeper/ckB/cold/obj/$o" >"$t/log" 2>&1 || fail "F: $o compiled in B differs from A's"
done
BASE= fbuild other/deeper/ckB nobase cacheF || fail "F: build in B without the base"
[ "$(count '^ran ' "$t/F.edges")" = 3 ] || { cp "$t/F.edges" "$t/log"; fail "F: without FATBUILD_CACHE_BASEDIR, B hit A's entries"; }
fbuild other/deeper/ckB build cacheF || fail "F: build in B"
[ ! -s "$t/runs" ] || { cp "$t/runs" "$t/log"; fail "F: a compiler ran in B"; }
[ "$(count '^hit local ' "$t/F.edges")" = 3 ] || { cp "$t/F.edges" "$t/log"; fail "F: want 3 hits in B"; }
for o in $fobjs; do
	cmp "$t/other/deeper/ckB/cold/obj/$o" "$t/other/deeper/ckB/build/obj/$o" >"$t/log" 2>&1 || fail "F: B's hit $o is not B's cold compile"
done
# ninja has read the depfiles into its log: B's header, not A's, makes b.cpp's object stale
ninja -C "$t/other/deeper/ckB/build" -t deps >"$t/log" 2>&1
grep -q "^ *$t/other/deeper/ckB/inc/answer.h" "$t/log" && ! grep -q "$t/ckA" "$t/log" ||
	fail "F: the hits' depfiles do not name B's files"
# Q  --quiet-dir: the depfile ninja reads leaves out the headers below it, on a compile and on
#    a hit, while the key still takes them: a quiet header's new content is a miss, not a stale hit
mkdir -p "$t/q/sys/inc" "$t/q/src"
printf '#pragma once\n#define SYS 1\n' >"$t/q/sys/inc/sys.h"
printf '#pragma once\n#define OWN 2\n' >"$t/q/src/own.h"
printf '#include "sys.h"\n#include "own.h"\nint q(void) { return SYS + OWN; }\n' >"$t/q/src/q.c"
qedge() { # qedge OBJ: one edge, its log line in $t/Q.edges
	rm -f "$t/Q.edges"
	FATBUILD_CACHE_DIR=$t/cacheQ FATBUILD_EDGE_LOG=$t/Q.edges "$FATBUILD_BIN" edge -o "$1" --depfile "$1.d" \
		--quiet-dir "$t/q/sys/inc/" -- cc -c -isystem "$t/q/sys/inc" -MD -MF "$1.d" -o "$1" "$t/q/src/q.c" >"$t/log" 2>&1
}
qedge "$t/q/a.o" || fail "Q: edge"
grep -q "^ran " "$t/Q.edges" && grep -q "own.h" "$t/q/a.o.d" && ! grep -q "sys.h" "$t/q/a.o.d" ||
	{ cat "$t/Q.edges" "$t/q/a.o.d" >"$t/log"; fail "Q: a compile's depfile names the quiet header or lacks its own"; }
rm -f "$t/q/a.o" "$t/q/a.o.d"
qedge "$t/q/a.o" || fail "Q: edge, hit"
grep -q "^hit local " "$t/Q.edges" && grep -q "own.h" "$t/q/a.o.d" && ! grep -q "sys.h" "$t/q/a.o.d" ||
	{ cat "$t/Q.edges" "$t/q/a.o.d" >"$t/log"; fail "Q: a hit's depfile names the quiet header or lacks its own"; }
printf '#pragma once\n#define SYS 3\n' >"$t/q/sys/inc/sys.h"
qedge "$t/q/a.o" || fail "Q: edge after the quiet header changed"
grep -q "^ran " "$t/Q.edges" || { cat "$t/Q.edges" >"$t/log"; fail "Q: a changed quiet header was served from the cache"; }
[ $fails = 0 ] && echo "ok build_edgecache"
exit $((fails > 0))
