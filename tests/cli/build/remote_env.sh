# build: what the edges get of the build's remote cache, its compile server and MAX_JOBS comes
# in the environment ninja is started with, never the build's own: --remote-cache and its mode
# over FATBUILD_REMOTE_CACHE and _MODE, the header and timeout of the environment; the socket of
# this build's compile server and, with -v, FATBUILD_COMPILE_VERBOSE; a server the caller's
# environment names is not passed on; MAX_JOBS capped. A stand-in ninja shows what it got.
. "$FB_TESTS_DIR/cli/lib.sh"
export FATBUILD_CACHE_DIR=$PWD/cache FATBUILD_BUILD_DIR=$PWD/builds
cat >ninja <<N
#!/bin/sh
env | grep -E '^(FATBUILD_(REMOTE_CACHE|COMPILE_SOCKET|COMPILE_VERBOSE)|MAX_JOBS|NINJA_STATUS|TMPDIR)' |
	sed 's|$PWD/builds|BUILDS|' | sort >>"$PWD/seen"
N
chmod +x ninja
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' >k.cu
printf 'int h(void) { return 0; }\n' >h.c
seen() {
	echo "\$ $*" | mask
	rm -f seen
	env FATBUILD_NINJA=$PWD/ninja "$@" >/dev/null 2>&1
	cat seen
}
seen FATBUILD_COMPILE_SOCKET=/elsewhere MAX_JOBS=9999 FATBUILD_REMOTE_CACHE=http://127.0.0.1:9/env \
	FATBUILD_REMOTE_CACHE_HEADER='Authorization: Bearer T' FATBUILD_REMOTE_CACHE_TIMEOUT=2.5 \
	$FATBUILD build -v --remote-cache http://127.0.0.1:9/flag --remote-cache-mode read --arch-list 8.0 -o x.so k.cu h.c
seen FATBUILD_COMPILE_SOCKET=/elsewhere FATBUILD_COMPILE_VERBOSE=1 FATBUILD_REMOTE_CACHE=http://127.0.0.1:9/env \
	FATBUILD_REMOTE_CACHE_MODE=read $FATBUILD build --no-compile-server --arch-list 8.0 -o y.so k.cu h.c
seen FATBUILD_REMOTE_CACHE=http://127.0.0.1:9/env $FATBUILD build --remote-cache '' --arch-list 8.0 -o z.so k.cu h.c
