#!/usr/bin/env bash
# noshell.sh: fatbuild runs only what it was asked to, and writes only where it may.
#  - no system()/popen()/exec*("sh") in the sources: every child is posix_spawn/fork with an argv;
#  - a build whose sources, build dir and output live in a directory named with spaces, '$',
#    ':', quotes, '#', ';' and '`' works (build.ninja and the shell quoting hold), and file
#    names like "$(touch PWNED).c" run nothing; a '|' (which ninja cannot express) is refused;
#  - with HOME and TMPDIR pointed at fresh directories, a build writes only its build dir,
#    cache and output (explicit dirs: HOME and TMPDIR stay empty; defaults: only
#    $HOME/.cache/fatbuild (the cache, and build/NAME, all 0700) appears; TMPDIR stays empty).
set -u
FB=${FATBUILD_BIN:?}
src=${FB_SOURCE_DIR:?}
w=$(mktemp -d "${TMPDIR:-/tmp}/fbshell.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0 n=0
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
unset TORCH_CUDA_ARCH_LIST CC CXX FATBUILD_BUILD_DIR FATBUILD_CACHE_DIR XDG_CACHE_HOME

hits=$(grep -nE '\b(system|popen|execl|execlp)\s*\(' "$src"/archprobe/*.c "$src"/archprobe/*/*.c "$src"/fatbuild/*/*.c | grep -v '^\S*:\s*\(/\*\|\*\)')
[ -z "$hits" ] && ok no-system-popen || bad "no-system-popen: $hits"
hits=$(grep -nE '"/bin/sh"|"sh", *"-c"' "$src"/archprobe/*.c "$src"/archprobe/*/*.c "$src"/fatbuild/*/*.c)
[ -z "$hits" ] && ok no-sh-c || bad "no-sh-c: $hits"

kernel='extern "C" __global__ void scale(float *x, float a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }'
host='int host_fn(void) { return 42; }'

# ---- an awkward directory ----
d="$w/we ird \$HOME:x 'q' \"dq\" #h ;s \`b\` \$(touch PWNED)"
mkdir -p "$d/src" "$d/out"
echo "$kernel" >"$d/src/k ern\$el.cu"
echo "$host" >"$d/src/\$(touch PWNED).c"
(cd "$w" && $FB build --arch-list 8.0 --build-dir "$d/build dir" -o "$d/out/lib x.so" "$d/src/k ern\$el.cu" \
	"$d/src/\$(touch PWNED).c") >"$w/weird.log" 2>&1
rc=$?
[ $rc = 0 ] && ok weird-dir-build || { bad "weird-dir-build (exit $rc)"; tail -5 "$w/weird.log"; }
nm -D --defined-only "$d/out/lib x.so" 2>/dev/null | grep -q host_fn && ok weird-dir-output || bad weird-dir-output
$FB inspect "$d/out/lib x.so" 2>/dev/null | grep -q 'sm_80' && ok weird-dir-kernels || bad weird-dir-kernels
found=$(find "$w" "${TMPDIR:-/tmp}" "$HOME" -maxdepth 4 -name PWNED 2>/dev/null | head -3)
[ -z "$found" ] && ok nothing-injected || bad "nothing-injected: $found"
# A rebuild with nothing changed does nothing when the path holds ' ', '$', ':', '#', '(', '!',
# '%', '=', '~', '@', '{' (they round-trip through build.ninja and the gcc-style depfiles). Paths
# with ' " ; ` & * ? still build correctly, but ninja's depfile parser cannot read them, so such
# builds redo their compile steps every time (a ninja limitation; docs/hardening.md) and
# fatbuild says so.
d2="$w/sp ace\$x:y#z(w)!%=~@{"
mkdir -p "$d2"
echo "$kernel" >"$d2/k.cu"
echo "$host" >"$d2/h.c"
for i in 1 2; do
	$FB build --arch-list 8.0 --build-dir "$d2/bd" -o "$d2/l.so" "$d2/k.cu" "$d2/h.c" >"$w/d2.$i.log" 2>&1 || bad "dir2-build-$i"
done
grep -q 'no work to do' "$w/d2.2.log" && ok dir2-up-to-date || { bad dir2-up-to-date; cat "$w/d2.2.log"; }
! grep -q 'ninja cannot read' "$w/d2.1.log" && ok dir2-no-depfile-warning || bad dir2-no-depfile-warning
# ... and the awkward directory's build says why it will not be incremental
grep -qF "fatbuild: warning: $d/build dir: ninja cannot read a path containing ' back from dependency files, so the compile steps rerun on every build" \
	"$w/weird.log" && ok weird-dir-depfile-warning || { bad weird-dir-depfile-warning; cat "$w/weird.log"; }
mkdir -p "$w/pi|pe"
echo "$kernel" >"$w/pi|pe/k.cu"
$FB build --arch-list 8.0 --build-dir "$w/bd" -o "$w/pi|pe/libp.so" "$w/pi|pe/k.cu" >"$w/pipe.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "ninja cannot express a path containing '|'" "$w/pipe.log" && [ ! -e "$w/pi|pe/libp.so" ] &&
	ok pipe-refused || { bad "pipe-refused (exit $rc)"; cat "$w/pipe.log"; }

# ---- nothing written outside the build, cache and output paths ----
for mode in explicit defaults; do
	r=$w/$mode
	mkdir -p "$r/home" "$r/tmp" "$r/src" "$r/out"
	echo "$kernel" >"$r/src/k.cu"
	echo "$host" >"$r/src/h.c"
	touch "$r/stamp"
	sleep 1
	if [ $mode = explicit ]; then
		(cd "$r/src" && HOME=$r/home TMPDIR=$r/tmp FATBUILD_CACHE_DIR=$r/cache FATBUILD_BUILD_DIR=$r/bd \
			$FB build --arch-list 8.0 -o "$r/out/libm.so" k.cu h.c) >"$r.log" 2>&1
	else
		(cd "$r/src" && HOME=$r/home TMPDIR=$r/tmp $FB build --arch-list 8.0 -o "$r/out/libm.so" k.cu h.c) >"$r.log" 2>&1
	fi
	rc=$?
	[ $rc = 0 ] && ok "$mode-build" || { bad "$mode-build (exit $rc)"; tail -3 "$r.log"; }
	# the NVRTC digest memo is per user, whatever the cache dir (docs/security.md)
	digests="home/\.cache/fatbuild-digests(/[0-9a-f]{64})?"
	if [ $mode = explicit ]; then
		allowed="^$r/(bd|cache|out)(/|$)|^$r/(home|home/\.cache|$digests|tmp)$"
	else
		allowed="^$r/(home|home/\.cache|home/\.cache/fatbuild(/.*)?|$digests|tmp|out(/.*)?)$"
	fi
	stray=$(find "$r" -newer "$r/stamp" | grep -vE "$allowed" | grep -v "^$r\$")
	[ -z "$stray" ] && ok "$mode-writes-only-allowed" || bad "$mode-writes-only-allowed: $(echo $stray)"
	[ $mode = explicit ] && { left=$(find "$r/home" "$r/tmp" -mindepth 1 | grep -vE "^$r/(home/\.cache|$digests)$")
		[ -z "$left" ] && ok explicit-home-tmp-only-digests || bad "explicit-home-tmp-only-digests: $left"; }
	memo=$(find "$r/home/.cache/fatbuild-digests" -type f 2>/dev/null | wc -l)
	mode_d=$(stat -c %a "$r/home/.cache/fatbuild-digests" 2>/dev/null)
	[ "$memo" = 1 ] && [ "$mode_d" = 700 ] && ok "$mode-one-digest-memo" || bad "$mode-one-digest-memo: $memo files, mode $mode_d"
	if [ $mode = defaults ]; then
		[ -z "$(find "$r/tmp" -mindepth 1)" ] && ok defaults-tmp-empty || bad "defaults-tmp-empty: $(find "$r/tmp" -mindepth 1)"
		[ -f "$r/home/.cache/fatbuild/build/m/build.ninja" ] && ok defaults-build-dir || bad defaults-build-dir
		perms=$(find "$r/home/.cache" -type d -printf '%m\n' | sort -u | tr '\n' ' ')
		[ "$perms" = "700 " ] && ok defaults-dirs-0700 || bad "defaults-dirs-0700: modes $perms"
	fi
	[ -z "$(find "$r/src" -newer "$r/stamp")" ] && ok "$mode-sources-untouched" || bad "$mode-sources-untouched"
done

echo "$n checks, $fails failed"
[ $fails = 0 ]
