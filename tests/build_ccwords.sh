#!/usr/bin/env bash
# build_ccwords.sh: CC and CXX are commands with words, split as an unquoted shell variable is
# (CC="ccache cc", CC="cc -DX=1"); each word is quoted on its own in build.ninja; the first word
# must be on PATH; `fatbuild env` shows the words; the nvcc backend runs launchers before nvcc
# and passes CXX's options with -Xcompiler.
set -u
FB=${FATBUILD_BIN:?}
w=$(mktemp -d "${TMPDIR:-/tmp}/fbccw.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w" || exit 1
unset TORCH_CUDA_ARCH_LIST CC CXX
# The words as they reach the compiler, read from build.ninja: not quoted once more inside
# `fatbuild edge` (the edge cache; tests/build_edgecache.sh).
export FATBUILD_CACHE_DIR=$w/cache FATBUILD_BUILD_DIR=$w/builds FATBUILD_EDGE_CACHE=0
fails=0 n=0
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -f log ] && sed 's/^/  log: /' log | tail -8; }

cat >host.c <<'H'
#ifndef FROM_CC_WORDS
#error "built without CC's second word"
#endif
int host_value(void) { return FROM_CC_WORDS; }
H
cat >hostpp.cpp <<'H'
#ifndef FROM_CXX_WORDS
#error "built without CXX's second word"
#endif
extern "C" int host_value_pp(void) { return FROM_CXX_WORDS; }
H

# Without the define the host file does not build: the check below can fail.
$FB build -o libw.so host.c >log 2>&1 && bad "host.c builds without FROM_CC_WORDS" || ok "host.c needs FROM_CC_WORDS"

CC="cc -DFROM_CC_WORDS=1" $FB build -o libw.so host.c >log 2>&1 && nm -D --defined-only libw.so | grep -q host_value &&
	ok "CC='cc -DFROM_CC_WORDS=1' builds" || bad "CC='cc -DFROM_CC_WORDS=1' builds"
grep -q 'cmd = cc -DFROM_CC_WORDS=1 -c -O2 -fPIC' builds/w/build.ninja && ok "build.ninja has CC's words apart" ||
	bad "build.ninja has CC's words apart: $(grep -m1 'cmd = .*host.c' builds/w/build.ninja)"
# Blanks of any kind separate words, quotes are not special (as for an unquoted $CC).
CC="$(printf '\tcc  -DFROM_CC_WORDS=2\n')" $FB build -o libw.so host.c >log 2>&1 && ok "tabs and newlines split words" || bad "tabs and newlines split words"
CC="cc '-DFROM_CC_WORDS=3'" $FB build --emit-ninja -o libw.so host.c >log 2>&1
grep -q "cmd = cc \"'\"'\"'-DFROM_CC_WORDS=3'\"'\"'\" -c" builds/w/build.ninja 2>/dev/null ||
	grep -qF "cmd = cc ''\\''-DFROM_CC_WORDS=3'\\''' -c" builds/w/build.ninja && ok "quotes in CC are part of a word, quoted for the shell" ||
	bad "quotes in CC: $(grep -m1 'cmd = .*host.c' builds/w/build.ninja)"
CC="cc -DFROM_CC_WORDS=4 -DA=*" $FB build -o libw.so host.c >log 2>&1 && grep -qF -- "'-DA=*'" builds/w/build.ninja &&
	ok "no globbing: -DA=* stays one quoted word" || bad "no globbing: -DA=* stays one quoted word"

CXX="c++ -DFROM_CXX_WORDS=1" CC="cc -DFROM_CC_WORDS=1" $FB build -o libpp.so host.c hostpp.cpp >log 2>&1 &&
	nm -D --defined-only libpp.so | grep -q host_value_pp && ok "CXX with words builds and links" || bad "CXX with words builds and links"

if command -v ccache >/dev/null; then
	export CCACHE_DIR=$w/ccache
	CC="ccache cc -DFROM_CC_WORDS=1" $FB build -o libc.so host.c >log 2>&1 && ok "CC='ccache cc ...' builds" || bad "CC='ccache cc ...' builds"
	[ -n "$(find "$w/ccache" -type f -name '*R' 2>/dev/null | head -1)" ] && ok "ccache stored the object" || bad "ccache stored the object: $(ls -R "$w/ccache" 2>&1 | head -5)"
	CC="ccache cc" $FB build -o libd.so host.c >log 2>&1 && bad "ccache cc without the define built" || ok "ccache cc still compiles host.c for real"
else
	bad "ccache is not installed (scripts/deps.sh installs it)"
fi

CC="no-such-compiler-xyz cc" $FB build -o libz.so host.c >log 2>&1
rc=$?
[ $rc = 1 ] && grep -qx "fatbuild: CC='no-such-compiler-xyz cc': 'no-such-compiler-xyz' is not on PATH" log &&
	ok "a first word not on PATH is named" || bad "a first word not on PATH is named (exit $rc)"
CC="   " $FB build -o libz.so host.c >log 2>&1 && bad "blank CC accepted" || ok "blank CC refused"

CC="ccache cc -DFROM_CC_WORDS=1" $FB env >log 2>&1
grep -q "^CC         'ccache' 'cc' '-DFROM_CC_WORDS=1' (ccache is .*/ccache, from CC): " log && ok "env shows CC's words" ||
	bad "env shows CC's words: $(grep '^CC ' log)"

# --backend nvcc: launchers before nvcc, the compiler as -ccbin, its options through -Xcompiler.
# The nvcc fatbuild uses, as `fatbuild env` reports it (CUDA_HOME, else nvcc on PATH, else
# /usr/local/cuda): a shell without CUDA_HOME may find a wrapper such as /usr/local/bin/nvcc.
nvcc=$($FB env 2>/dev/null | sed -n 's/^nvcc  *[^ ]* (\([^;]*\); for --backend nvcc).*/\1/p')
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
	cat >k.cu <<'K'
#if !defined(__CUDA_ARCH__) && !defined(FROM_CXX_WORDS)
#error "host pass built without CXX's option"
#endif
__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }
extern "C" int launch_k(float *x) { k<<<1, 1>>>(x); return 0; }
K
	CXX="ccache c++ -DFROM_CXX_WORDS=1" $FB build --emit-ninja --backend nvcc --arch-list 8.0 -o libn.so k.cu >log 2>&1
	grep -q "cmd = mkdir -p [^ ]*\.keep && ccache $nvcc -c .* -ccbin c++ -Xcompiler -DFROM_CXX_WORDS=1" builds/n/build.ninja &&
		ok "nvcc: ccache runs nvcc, c++ is -ccbin, -D goes through -Xcompiler" ||
		bad "nvcc words: $(grep -m1 'cmd = .*nvcc' builds/n/build.ninja)"
	CXX="c++ -DFROM_CXX_WORDS=1" $FB build --backend nvcc --arch-list 8.0 -o libn.so k.cu >log 2>&1 &&
		ok "nvcc backend builds with CXX's option" || bad "nvcc backend builds with CXX's option"
fi

echo "$n checks, $fails failed"
[ $fails = 0 ]
