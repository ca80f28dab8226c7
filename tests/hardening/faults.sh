#!/usr/bin/env bash
# faults.sh: faults during builds and compiles, each checked for a specific message, a
# documented exit code, no partial output, and a clean next run:
#   unwritable build dir / output dir; corrupted and truncated cache entries, the images' and a
#   host edge's (detected, reported, recompiled, rewritten); SIGINT during a build and during a compile; two builds of one build
#   dir at once (fb_build's lock: the second waits); NVRTC missing; NVRTC failing and crashing
#   in the middle of a batch (a forwarding fake libnvrtc); a hanging and a crashing driver under
#   'fatbuild build --arch-list native' (the probe child is killed / reported, the build stops).
set -u
FB=${FATBUILD_BIN:?}
cuda=${CUDA_HOME:-/usr/local/cuda}
w=$(mktemp -d "${TMPDIR:-/tmp}/fbfault.XXXXXX")
cleanup() { [ -n "${bgpids:-}" ] && kill $bgpids 2>/dev/null; rm -rf "$w"; }
trap cleanup EXIT
cd "$w" || exit 1
fails=0 n=0
export FATBUILD_CACHE_DIR=$w/cache FATBUILD_BUILD_DIR=$w/builds
unset TORCH_CUDA_ARCH_LIST CC
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -f stderr ] && sed 's/^/  stderr: /' stderr | head -5; }
# expect NAME EXIT 'GLOB' CMD...: exit EXIT and a stderr line matching GLOB (bash pattern)
expect() {
	local name=$1 want=$2 glob=$3
	shift 3
	"$@" >stdout 2>stderr
	local rc=$?
	if [ "$rc" != "$want" ]; then bad "$name (exit $rc, want $want)"; return; fi
	if [ -n "$glob" ] && ! grep -qx -- "$(printf '%s' "$glob" | sed 's/[][\.^$]/\\&/g; s/\*/.*/g')" stderr; then
		bad "$name (no stderr line matches '$glob')"; return
	fi
	ok "$name"
}
leftovers() { find "$@" -name '*.tmp*' 2>/dev/null | head -5; }

cat >k.cu <<'K'
extern "C" __global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}
K
cat >host.c <<'H'
int host_version(void) { return 1; }
H
B="$FB build --arch-list 8.0 -o $w/out/libx.so k.cu host.c"
mkdir -p out

# ---- unwritable places (root ignores modes, so a file stands in the way) ----
: >afile
expect build-dir-unwritable 1 "fatbuild: cannot create build dir $w/afile/sub: Not a directory" $FB build --arch-list 8.0 --build-dir "$w/afile/sub" -o out/libx.so k.cu host.c
[ ! -e out/libx.so ] || bad "build-dir-unwritable left out/libx.so"
expect output-dir-unwritable 1 "fatbuild: cannot write $w/afile/libx.so: Not a directory" \
	$FB build --arch-list 8.0 -o "$w/afile/libx.so" k.cu host.c
cat stdout stderr | grep -q "afile/libx.so.*: Not a directory" && ok output-dir-unwritable-says-why || bad output-dir-unwritable-says-why
expect compile-output-unwritable 1 "*afile/k.fatbin*" $FB compile --arch-list 8.0 -o "$w/afile/k.fatbin" k.cu
if [ "$(id -u)" != 0 ]; then
	mkdir ro && chmod 555 ro
	expect build-dir-read-only 1 "*ro/b*Permission denied*" $FB build --arch-list 8.0 --build-dir "$w/ro/b" -o out/libx.so k.cu host.c
fi

# ---- the cache ----
rm -rf cache
expect cache-fill 0 "" $FB compile -v --arch-list "8.0 9.0" -o k.fatbin k.cu
entries=$(find cache -type f -path "cache/??/*" | sort) # entries only, not cache/stats
[ "$(echo "$entries" | wc -l)" = 2 ] && ok cache-two-entries || bad "cache-two-entries: $entries"
e1=$(echo "$entries" | head -1) e2=$(echo "$entries" | tail -1)
printf '\xff\xff\xff\xff' | dd of="$e1" bs=1 seek=200 conv=notrunc status=none # corrupt
head -c 40 "$e2" >"$e2.cut" && mv "$e2.cut" "$e2"                                 # truncated
expect cache-corrupt-recompiled 0 "fatbuild: compile: 2 images for 2 targets from 1 sources: 2 jobs, 0 cached, 2 compiled*" \
	$FB compile -v --arch-list "8.0 9.0" -o k2.fatbin k.cu
[ "$(grep -c '^fatbuild: warning: corrupt cache entry for k.cu (sm_[89]0) removed and recompiled: cache entry .*: size or checksum mismatch ([0-9]* bytes)$' stderr)" = 2 ] &&
	ok cache-corrupt-reported || bad cache-corrupt-reported
cmp -s k.fatbin k2.fatbin && ok cache-corrupt-same-output || bad cache-corrupt-same-output
expect cache-rewritten 0 "fatbuild: compile: 2 images for 2 targets from 1 sources: 2 jobs, 2 cached, 0 compiled*" \
	$FB compile -v --arch-list "8.0 9.0" -o k3.fatbin k.cu
: >"$e1" # empty entry
expect cache-empty-entry 0 "*1 cached, 1 compiled*" $FB compile -v --arch-list "8.0 9.0" -o k3.fatbin k.cu
: >"$e1" # reported without -v too, and only once: the entry is rewritten
expect cache-empty-entry-reported 0 "fatbuild: warning: corrupt cache entry for k.cu (sm_*) removed and recompiled: cache entry $w/$e1: size or checksum mismatch (0 bytes)" \
	$FB compile --arch-list "8.0 9.0" -o k3.fatbin k.cu
expect cache-clean-silent 0 "" $FB compile --arch-list "8.0 9.0" -o k3.fatbin k.cu
[ ! -s stderr ] && ok cache-clean-silent-stderr || bad cache-clean-silent-stderr
chmod 444 "$e1" "$e2" # read-only entries are still read
expect cache-read-only-entries 0 "*2 cached, 0 compiled*" $FB compile -v --arch-list "8.0 9.0" -o k3.fatbin k.cu
expect cache-dir-unusable 0 "" env FATBUILD_CACHE_DIR="$w/afile/cache" $FB compile --arch-list 8.0 -o k4.fatbin k.cu
[ -s k4.fatbin ] && ok cache-dir-unusable-still-compiles || bad cache-dir-unusable-still-compiles
[ -z "$(leftovers cache .)" ] && ok cache-no-temporaries || bad "cache-no-temporaries: $(leftovers cache .)"
# a host edge's entries (fatbuild edge: the manifest, the object) are checked as the images are:
# a damaged one is removed, reported once, and the compile runs
printf 'int f(void) { return 7; }\n' >e.c
expect edge-cache-fill 0 "" $FB edge -o e.o --depfile e.d -- cc -c -MD -MF e.d -o e.o e.c
for f in $(find cache -type f -path "cache/??/*" | sort); do
	echo "$entries" | grep -qx "$f" || printf '\xff\xff\xff\xff' | dd of="$f" bs=1 seek=70 conv=notrunc status=none
done
cp e.o e1.o && rm -f e.o e.d
expect edge-cache-corrupt-reported 0 "fatbuild: warning: corrupt cache entry for e.o removed and compiled: cache entry $w/cache/*: size or checksum mismatch (* bytes)" \
	$FB edge -o e.o --depfile e.d -- cc -c -MD -MF e.d -o e.o e.c
[ "$(grep -c corrupt stderr)" = 1 ] && cmp -s e.o e1.o && ok edge-cache-corrupt-once-same-object ||
	bad edge-cache-corrupt-once-same-object
expect edge-cache-rewritten 0 "" $FB edge -o e.o --depfile e.d -- cc -c -MD -MF e.d -o e.o e.c
[ ! -s stderr ] && ok edge-cache-rewritten-silent || bad edge-cache-rewritten-silent

# ---- two builds of one build dir at once: the second waits for the first's lock ----
cat >slowcc <<'S'
#!/bin/sh
# a C compiler that writes half an object first, then takes its time
echo "$*" >>"$SLOWCC_LOG"
out=
prev=
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
[ -n "$out" ] && echo partial >"$out"
sleep "${SLOWCC_SLEEP:-2}"
exec cc "$@"
S
chmod +x slowcc
export SLOWCC_LOG=$w/slowcc.log
: >"$SLOWCC_LOG"
CC=$w/slowcc $B >b1.log 2>&1 &
p1=$!
sleep 0.3
CC=$w/slowcc $B >b2.log 2>&1 &
p2=$!
bgpids="$p1 $p2"
wait $p1; r1=$?
wait $p2; r2=$?
bgpids=
[ $r1 = 0 ] && [ $r2 = 0 ] && ok concurrent-both-succeed || { bad "concurrent-both-succeed ($r1 $r2)"; cat b1.log b2.log; }
ncc=$(grep -c -- '^-c ' "$SLOWCC_LOG")
[ "$ncc" = 1 ] && ok concurrent-host-compiled-once || bad "concurrent-host-compiled-once: $ncc compiles of host.c"
grep -q 'no work to do' b1.log b2.log && ok concurrent-second-found-no-work || bad concurrent-second-found-no-work
nm -D --defined-only out/libx.so 2>/dev/null | grep -q host_version && ok concurrent-output-valid || bad concurrent-output-valid

# ---- SIGINT during a build: the previous output stays, no partial files, the next run works ----
sum=$(cksum <out/libx.so)
echo 'int host_version2(void) { return 2; }' >>host.c
: >"$SLOWCC_LOG"
SLOWCC_SLEEP=30 CC=$w/slowcc setsid $B >int.log 2>&1 &
p=$!
bgpids=$p
for _ in $(seq 100); do [ -s "$SLOWCC_LOG" ] && break; sleep 0.1; done
sleep 0.3
kill -INT -- -$p
wait $p
rint=$?
bgpids=
for _ in $(seq 50); do flock -n builds/x/.fatbuild.lock true 2>/dev/null && break; sleep 0.1; done
[ $rint != 0 ] && ok sigint-build-fails || bad "sigint-build-fails (exit $rint)"
[ "$(cksum <out/libx.so)" = "$sum" ] && ok sigint-previous-output-kept || bad sigint-previous-output-kept
[ -z "$(leftovers out builds)" ] && ok sigint-no-temporaries || bad "sigint-no-temporaries: $(leftovers out builds)"
if grep -rqx partial builds/x/obj 2>/dev/null; then bad "sigint-no-partial-object: $(grep -rlx partial builds/x/obj)"; else ok sigint-no-partial-object; fi
expect sigint-next-run-succeeds 0 "" $B
nm -D --defined-only out/libx.so | grep -q host_version2 && ok sigint-next-run-output || bad sigint-next-run-output

# ---- SIGINT during an NVRTC batch ----
printf '#include <cub/cub.cuh>\n' | cat - k.cu >heavy.cu # a few seconds per target
setsid $FB compile --no-cache -j 2 --arch-list "7.5 8.0 8.6 8.9 9.0 10.0 12.0" -o int.fatbin heavy.cu >cint.log 2>&1 &
p=$!
bgpids=$p
sleep 1
kill -INT -- -$p
wait $p
rc=$?
bgpids=
sleep 0.3
[ $rc != 0 ] && [ ! -e int.fatbin ] && ok sigint-compile-no-output || bad "sigint-compile-no-output (exit $rc)"
ps -eo pid,pgid,args | awk -v g=$p '$2 == g' | grep -q . && bad "sigint-compile-no-stray-jobs: $(ps -eo pid,pgid,args | awk -v g=$p '$2 == g')" || ok sigint-compile-no-stray-jobs
[ -z "$(leftovers . cache)" ] && ok sigint-compile-no-temporaries || bad "sigint-compile-no-temporaries: $(leftovers . cache)"

# ---- NVRTC missing, failing and crashing mid-batch ----
mkdir -p nocuda
expect nvrtc-missing 1 "fatbuild: cannot tell which arches the CUDA toolkit at $w/nocuda supports: no libnvrtc.so.13/.12 under $w/nocuda (nor .so.11.2; looked in lib64, lib and pip wheel trees*" \
	env CUDA_HOME="$w/nocuda" $FB compile --arch-list 8.0 -o nv.fatbin k.cu
[ ! -e nv.fatbin ] || bad "nvrtc-missing left nv.fatbin"
realnv=$(ls "$cuda"/lib64/libnvrtc.so.13* 2>/dev/null | head -1)
if [ -n "$realnv" ] && cc -shared -fPIC -o fake_libnvrtc.so "$FB_SOURCE_DIR/tests/hardening/fake_nvrtc.c" -ldl; then
	mkdir -p fakecuda/lib64
	for f in "$cuda"/*; do [ "$(basename "$f")" = lib64 ] || ln -s "$f" fakecuda/; done
	cp fake_libnvrtc.so fakecuda/lib64/libnvrtc.so.13
	export FAKE_NVRTC_REAL=$realnv
	{ cat k.cu; echo '// FAKE_NVRTC_ABORT_sm_90'; } >crash.cu
	{ cat k.cu; echo '// FAKE_NVRTC_FAIL_sm_90'; } >fail.cu
	expect nvrtc-crash-mid-batch 1 "fatbuild: crash.cu: NVRTC died with signal 6 compiling for sm_90" \
		env CUDA_HOME="$w/fakecuda" $FB compile --no-cache --arch-list "8.0 9.0" -o nv.fatbin crash.cu
	[ ! -e nv.fatbin ] || bad "nvrtc-crash-mid-batch left nv.fatbin"
	expect nvrtc-fail-mid-batch 1 "fatbuild: compile: fail.cu: NVRTC_ERROR_INTERNAL_ERROR for sm_90" \
		env CUDA_HOME="$w/fakecuda" $FB compile --no-cache --arch-list "8.0 9.0" -o nv.fatbin fail.cu
	[ ! -e nv.fatbin ] || bad "nvrtc-fail-mid-batch left nv.fatbin"
	cp crash.cu crashk.cu
	expect nvrtc-crash-in-build 1 "fatbuild: build failed (ninja exited with status 1*" \
		env CUDA_HOME="$w/fakecuda" $FB build --arch-list "8.0 9.0" -o out/liby.so crashk.cu host.c
	[ ! -e out/liby.so ] && [ -z "$(leftovers out)" ] && ok nvrtc-crash-in-build-no-output || bad nvrtc-crash-in-build-no-output
	expect nvrtc-fake-works-otherwise 0 "" env CUDA_HOME="$w/fakecuda" $FB compile --no-cache --arch-list "8.0 9.0" -o nv.fatbin k.cu
else
	bad "cannot build the fake NVRTC (real one: '$realnv')"
fi

# ---- a hanging and a crashing driver during a native build ----
fake=${FB_BINARY_DIR:-}/fakecuda/libcuda.so.1
if [ -e "$fake" ]; then
	# exit 6 as for 'fatbuild flags': fb_build keeps the probe's AP_ETIMEOUT/AP_ECRASH in err.ap_code
	expect driver-hang-build 6 "fatbuild: native: cannot list the CUDA devices: the device probe did not finish within 0.5 s (the driver *hung)*" \
		env ARCHPROBE_LIBCUDA="$fake" FAKECUDA_DEVICES=8.6 FAKECUDA_HANG=1 ARCHPROBE_TIMEOUT=0.5 \
		$FB build --arch-list native -o out/libn.so k.cu host.c
	expect driver-crash-build 6 "fatbuild: native: cannot list the CUDA devices: the device probe crashed (*) while using *" \
		env ARCHPROBE_LIBCUDA="$fake" FAKECUDA_DEVICES=8.6 FAKECUDA_SEGV=1 $FB build --arch-list native -o out/libn.so k.cu host.c
	[ ! -e out/libn.so ] && ok driver-faults-no-output || bad driver-faults-no-output
else
	bad "no fake driver at '$fake'"
fi

echo "$n checks, $fails failed"
[ $fails = 0 ]
