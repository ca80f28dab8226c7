#!/usr/bin/env bash
# build_launcher.sh: `fatbuild build --launcher ccache` puts ccache before the host compiler
# (a second build of the host files in a fresh build dir is all ccache hits, read from
# `ccache --print-stats` with CCACHE_DIR here), FATBUILD_LAUNCHER does the same, and the NVRTC
# edges sit in a ninja pool sized by the CPUs (MAX_JOBS) and -j: with -j 64 and MAX_JOBS=1 no
# two NVRTC edges overlap in .ninja_log. sccache (second build all hits) and distcc
# (DISTCC_HOSTS=localhost: both host files go through it) work the same way.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
command -v ccache >/dev/null || { echo "SKIP: ccache not installed (scripts/deps.sh)"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/fblaunch.XXXXXX")
trap 'rm -rf "$w"' EXIT
export FATBUILD_CACHE_DIR=$w/fbcache CCACHE_DIR=$w/ccache CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=$w
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
mkdir -p "$w/src"
cp "$FB_SOURCE_DIR"/examples/saxpy/saxpy.cu "$FB_SOURCE_DIR"/examples/saxpy/saxpy.cuh \
	"$FB_SOURCE_DIR"/examples/saxpy/saxpy_host.c "$w/src/"
printf 'extern "C" int fb_twice(int x) { return 2 * x; }\n' >"$w/src/extra.cpp"
for k in one two three; do
	printf 'extern "C" __global__ void %s(float *p) { p[threadIdx.x] += 1.f; }\n' "$k" >"$w/src/$k.cu"
done
srcs=("$w/src/saxpy.cu" "$w/src/one.cu" "$w/src/two.cu" "$w/src/three.cu" "$w/src/saxpy_host.c" "$w/src/extra.cpp")
stat_of() { ccache --print-stats | awk -v k="$1" '$1 == k { print $2 }'; }
hits() { echo $(( $(stat_of direct_cache_hit) + $(stat_of preprocessed_cache_hit) )); }
misses() { stat_of cache_miss; }

# 1. the generated graph: launcher words before the host compilers, the nvrtc pool
MAX_JOBS=3 "$FATBUILD_BIN" build --emit-ninja --launcher "ccache" -j 64 --arch-list "8.0 9.0" \
	--build-dir "$w/b0" -o "$w/lib0.so" "${srcs[@]}" >"$w/log" 2>&1 || { cat "$w/log" >&2; no "--emit-ninja failed"; }
nj=$w/b0/build.ninja
grep -q '^pool nvrtc$' "$nj" && grep -A1 '^pool nvrtc$' "$nj" | grep -qx '  depth = 3' || no "no 'pool nvrtc' of depth 3 (MAX_JOBS=3, -j 64)"
[ "$(grep -c '^  pool = nvrtc$' "$nj")" -eq 8 ] || no "want 8 NVRTC edges in the pool, got $(grep -c '^  pool = nvrtc$' "$nj")"
[ "$(grep -c '^  cmd = ccache ' "$nj")" -eq 2 ] || no "want 2 host edges launched by ccache, got $(grep -c '^  cmd = ccache ' "$nj")"
grep '^  cmd = ' "$nj" | grep -v '^  cmd = ccache ' | grep -q ' compile ' || no "NVRTC edges lost"
grep '^  cmd = ' "$nj" | grep ' compile ' | grep -q ccache && no "ccache put before fatbuild compile"
MAX_JOBS=8 "$FATBUILD_BIN" build --emit-ninja -j 2 --arch-list "8.0" --build-dir "$w/b1" -o "$w/lib1.so" "${srcs[@]}" \
	>"$w/log" 2>&1 || no "--emit-ninja -j 2 failed"
grep -A1 '^pool nvrtc$' "$w/b1/build.ninja" | grep -qx '  depth = 2' || no "-j 2 below the CPUs: pool depth is not 2"

# 2. ccache: a cold build misses, a second build in a fresh build dir hits every host file
ccache -z >/dev/null
MAX_JOBS=1 "$FATBUILD_BIN" build --launcher ccache -j 64 --arch-list "8.0 9.0" --build-dir "$w/b2" -o "$w/lib2.so" \
	"${srcs[@]}" >"$w/log" 2>&1 || { cat "$w/log" >&2; no "cold build failed"; }
[ "$(misses)" = 2 ] || { ccache -s >&2; no "cold: want 2 ccache misses, got $(misses)"; }
[ "$(hits)" = 0 ] || no "cold: $(hits) ccache hits"
# the pool: with MAX_JOBS=1 the NVRTC edges ran one after another (.ninja_log: start end mtime out hash)
awk '$4 ~ /\.sm_[0-9]+\.fatbin$/ { print $1, $2 }' "$w/b2/.ninja_log" | sort -n >"$w/spans"
[ "$(wc -l <"$w/spans")" -eq 8 ] || no "want 8 NVRTC edges in .ninja_log, got $(wc -l <"$w/spans")"
awk 'NR > 1 && $1 < end { bad = 1 } { end = $2 } END { exit bad }' "$w/spans" || { cat "$w/spans" >&2; no "NVRTC edges overlapped under -j 64 with a pool of 1"; }
ccache -z >/dev/null
FATBUILD_LAUNCHER=ccache "$FATBUILD_BIN" build -j 4 --arch-list "8.0 9.0" --build-dir "$w/b3" -o "$w/lib3.so" \
	"${srcs[@]}" >"$w/log" 2>&1 || { cat "$w/log" >&2; no "warm build failed"; }
[ "$(hits)" = 2 ] || { ccache -s >&2; no "warm: want 2 ccache hits (every host file), got $(hits)"; }
[ "$(misses)" = 0 ] || no "warm: $(misses) ccache misses"

# 3. sccache (its own server on a free port, stopped at the end): the second build hits
if command -v sccache >/dev/null && command -v python3 >/dev/null; then
	export SCCACHE_DIR=$w/sccache
	SCCACHE_SERVER_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export SCCACHE_SERVER_PORT
	trap 'sccache --stop-server >/dev/null 2>&1; rm -rf "$w"' EXIT
	# The same build dir twice, emptied in between: sccache has no base-dir setting, and the host
	# command names the build dir (-ffile-prefix-map=DIR=.).
	sccache --start-server >/dev/null 2>&1 || true # outside the build: its startup is not the build's
	for b in b4 b4; do
		rm -rf "$w/$b"
		"$FATBUILD_BIN" build --launcher sccache -j 4 --arch-list "8.0" --build-dir "$w/$b" -o "$w/$b.so" "${srcs[@]}" \
			>"$w/log" 2>&1 || { cat "$w/log" >&2; no "sccache build $b failed"; }
	done
	sc() { sccache --show-stats | awk -v k="$1" '$0 ~ "^" k " +[0-9]+$" { print $NF }'; }
	[ "$(sc 'Cache misses')" = 2 ] && [ "$(sc 'Cache hits')" = 2 ] ||
		{ sccache --show-stats >&2; no "sccache: want 2 misses then 2 hits, got $(sc 'Cache misses') / $(sc 'Cache hits')"; }
else
	echo "SKIP: sccache part (not installed; scripts/deps.sh installs it)"
fi

# 4. distcc with DISTCC_HOSTS=localhost (compiles here, through distcc): both host files
if command -v distcc >/dev/null; then
	DISTCC_HOSTS=localhost DISTCC_LOG=$w/distcc.log DISTCC_VERBOSE=1 "$FATBUILD_BIN" build --launcher distcc -j 4 \
		--arch-list "8.0" --build-dir "$w/b6" -o "$w/b6.so" "${srcs[@]}" >"$w/log" 2>&1 ||
		{ cat "$w/log" >&2; no "distcc build failed"; }
	for f in saxpy_host.c extra.cpp; do
		grep -q "compile from .*$f to" "$w/distcc.log" 2>/dev/null || no "distcc did not compile $f"
	done
else
	echo "SKIP: distcc part (not installed; scripts/deps.sh installs it)"
fi

[ $fail = 0 ] && echo "build_launcher: all checks passed"
exit $fail
