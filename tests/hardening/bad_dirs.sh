#!/usr/bin/env bash
# bad_dirs.sh: the bad-input catalogue for directory states (docs/security.md). Each row makes
# a build root, build dir or cache dir another user could write into (a symlink someone else
# planted, a symlink in a directory others can write, another owner, group- or world-writable,
# a shared cache without setgid), runs the CLI, and checks exit 7, ONE specific stderr line (a
# bash glob), no output file left, and nothing written into the refused directory. Rows that
# need another owner (chown) run only as root, as in CI; as another user they are listed as
# skipped. The states fatbuild accepts (a group-writable directory the user named and owns, a
# setgid team cache with FATBUILD_CACHE_SHARED=1) are checked to build.
set -u
FB=${FATBUILD_BIN:?}
src=${FB_SOURCE_DIR:?}
w=$(mktemp -d "${TMPDIR:-/tmp}/fbdirs.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w" || exit 1
umask 022
fails=0 n=0
other=54322 # an unused uid: "another user"
root=0
[ "$(id -u)" = 0 ] && root=1

# expect NAME DIR 'GLOB' CMD...: exit 7, one stderr line matching GLOB, no out* file, DIR unchanged.
expect() {
	local name=$1 dir=$2 glob=$3
	shift 3
	n=$((n + 1))
	rm -rf out out.* .out*
	local before after
	before=$(find "$dir" -mindepth 1 2>/dev/null | sort | tr '\n' ' ')
	touch stamp
	"$@" >stdout 2>stderr
	local rc=$? err bad=
	err=$(cat stderr)
	after=$(find "$dir" -mindepth 1 2>/dev/null | sort | tr '\n' ' ')
	[ "$rc" = 7 ] || bad="exit $rc, want 7"
	# shellcheck disable=SC2053
	[[ $err == $glob ]] || bad="$bad; stderr does not match '$glob'"
	[ "$(wc -l <stderr)" -le 1 ] || bad="$bad; more than one stderr line"
	if ls out out.* >/dev/null 2>&1; then bad="$bad; output left behind"; fi
	[ "$before" = "$after" ] || bad="$bad; the refused directory changed: $after"
	[ -z "$(find "$dir" -mindepth 1 -newer stamp 2>/dev/null)" ] || bad="$bad; something in $dir was touched"
	if [ -n "$bad" ]; then
		echo "FAIL $name: ${bad#; }"
		echo "  stderr: $err"
		fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
skip() { echo "skip $1 (needs root: chown to another uid)"; }

cp "$src/examples/saxpy/saxpy.cu" "$src/examples/saxpy/saxpy.cuh" "$src/examples/saxpy/saxpy_host.c" .
export HOME=$w/home FATBUILD_CACHE_DIR=$w/cache
unset FATBUILD_BUILD_DIR XDG_CACHE_HOME FATBUILD_CACHE_SHARED
mkdir -p "$HOME"
B="$FB build --arch-list 8.0 -o out.so saxpy.cu saxpy_host.c"
C="$FB compile --arch-list 8.0 -o out.fatbin saxpy.cu"

# ---- build root: FATBUILD_BUILD_DIR, and the default ~/.cache/fatbuild/build ----
mkdir -m 0777 ww && expect build-root-world-writable ww \
	"fatbuild: build root $w/ww is world-writable (owner uid $(id -u)*, mode 0777): any user could put files into it; remove it, or pass --build-dir DIR*" \
	env FATBUILD_BUILD_DIR="$w/ww" $B
mkdir -p home/.cache/fatbuild/build && chmod 0770 home/.cache/fatbuild/build && expect build-root-group-writable home/.cache/fatbuild/build \
	"fatbuild: build root $w/home/.cache/fatbuild/build is group-writable (owner uid $(id -u)*, mode 0770): other users of its group could put files into it; chmod g-w it, or*" \
	$B
rm -rf home/.cache
mkdir -m 0777 shared && mkdir -m 0700 real && ln -s "$w/real" shared/root
expect build-root-symlink-in-writable-dir real \
	"fatbuild: build root $w/shared/root is a symlink in $w/shared, which others can write (mode 0777): it could be swapped; use the real path, or*" \
	env FATBUILD_BUILD_DIR="$w/shared/root" $B
if [ $root = 1 ]; then
	mkdir -m 0755 foreign && chown $other:$other foreign
	expect build-root-foreign foreign \
		"fatbuild: build root $w/foreign is owned by uid $other (mode 0755), not by you: another user could put files into it;*" \
		env FATBUILD_BUILD_DIR="$w/foreign" $B
	mkdir -m 0700 real2 && ln -s "$w/real2" planted && chown -h $other:$other planted
	expect build-root-symlink-planted real2 \
		"fatbuild: build root $w/planted is a symlink owned by uid $other, not by you: another user may have planted it; remove it, or*" \
		env FATBUILD_BUILD_DIR="$w/planted" $B
	# the old default's attack: $TMPDIR/fatbuild-UID/NAME made by someone else, obj/ world-writable
	mkdir -p "tmp/fatbuild-$(id -u)/x/obj" && chmod 0777 "tmp/fatbuild-$(id -u)/x/obj" && chown -R $other:$other tmp/fatbuild-*
	expect build-dir-foreign "tmp/fatbuild-$(id -u)" \
		"fatbuild: build dir $w/tmp/fatbuild-$(id -u)/x is owned by uid $other (mode 0755), not by you:*" \
		$FB build --arch-list 8.0 --build-dir "$w/tmp/fatbuild-$(id -u)/x" -o out.so saxpy.cu saxpy_host.c
	mkdir -p mine/obj && chown $other:$other mine/obj
	expect build-obj-foreign mine \
		"fatbuild: build dir $w/mine/obj is owned by uid $other (mode 0755), not by you:*" \
		$FB build --arch-list 8.0 --build-dir "$w/mine" -o out.so saxpy.cu saxpy_host.c
else
	skip build-root-foreign; skip build-root-symlink-planted; skip build-dir-foreign; skip build-obj-foreign
fi
mkdir -m 0777 wwdir && expect build-dir-world-writable wwdir \
	"fatbuild: build dir $w/wwdir is world-writable (owner uid $(id -u)*, mode 0777):*" \
	$FB build --arch-list 8.0 --build-dir "$w/wwdir" -o out.so saxpy.cu saxpy_host.c
# accepted: a group-writable build dir the user named and owns
mkdir -m 0770 gw && $FB build --arch-list 8.0 --build-dir "$w/gw" -o out.so saxpy.cu saxpy_host.c >log 2>&1 && [ -f out.so ] &&
	ok build-dir-explicit-group-writable-accepted || { bad build-dir-explicit-group-writable-accepted; cat log; }
[ "$(stat -c %a gw/obj gw/out)" = "700
700" ] && ok build-subdirs-0700 || bad "build-subdirs-0700: $(stat -c %a gw/obj gw/out | tr '\n' ' ')"
rm -f out.so

# ---- the cache dir (compile; a build's compile edges refuse it the same way) ----
mkdir -m 0777 cww && expect cache-dir-world-writable cww \
	"fatbuild: cache dir $w/cww is world-writable (owner uid $(id -u)*, mode 0777): any user could put files into it; remove it or chmod go-w it, set FATBUILD_CACHE_DIR*" \
	env FATBUILD_CACHE_DIR="$w/cww" $C
mkdir -p -m 0770 xdg/fatbuild && expect cache-dir-group-writable xdg/fatbuild \
	"fatbuild: cache dir $w/xdg/fatbuild is group-writable (owner uid $(id -u)*, mode 0770):*" \
	env -u FATBUILD_CACHE_DIR XDG_CACHE_HOME="$w/xdg" $C
mkdir -m 0700 creal && ln -s "$w/creal" shared/cache
expect cache-dir-symlink-in-writable-dir creal \
	"fatbuild: cache dir $w/shared/cache is a symlink in $w/shared, which others can write (mode 0777):*" \
	env FATBUILD_CACHE_DIR="$w/shared/cache" $C
mkdir -m 0770 team && expect cache-shared-not-setgid team \
	"fatbuild: cache dir $w/team is group-writable but not a setgid directory of one of your groups*" \
	env FATBUILD_CACHE_DIR="$w/team" FATBUILD_CACHE_SHARED=1 $C
# a build, whose NVRTC and host edges use the cache: refused the same way before ninja or the
# build dir (which the build's own steps would have only warned about, or failed in, exit 1)
rm -rf home/.cache
mkdir -m 2770 bgw && expect build-cache-dir-group-writable bgw \
	"fatbuild: cache dir $w/bgw is group-writable (owner uid $(id -u)*, mode 2770): other users of its group could put files into it;*FATBUILD_CACHE_SHARED=1*" \
	env FATBUILD_CACHE_DIR="$w/bgw" $B
expect build-host-only-cache-dir-group-writable bgw "fatbuild: cache dir $w/bgw is group-writable*" \
	env FATBUILD_CACHE_DIR="$w/bgw" $FB build -o out.so saxpy_host.c
expect build-cache-dir-world-writable cww "fatbuild: cache dir $w/cww is world-writable*" env FATBUILD_CACHE_DIR="$w/cww" $B
[ ! -e home/.cache/fatbuild/build ] && ok build-cache-refused-before-the-build-dir || bad "build-cache-refused-before-the-build-dir: $(ls home/.cache/fatbuild/build)"
env FATBUILD_CACHE_DIR="$w/bgw" $FB build --arch-list 8.0 --no-edge-cache -o out.so saxpy_host.c >log 2>&1 && [ -f out.so ] &&
	ok build-without-the-cache-accepted || { bad build-without-the-cache-accepted; cat log; }
rm -f out.so
expect cache-clear-world-writable cww "fatbuild: cache dir $w/cww is world-writable*" \
	env FATBUILD_CACHE_DIR="$w/cww" $FB cache clear
if [ $root = 1 ]; then
	mkdir -m 0755 cforeign && chown $other:$other cforeign
	expect cache-dir-foreign cforeign \
		"fatbuild: cache dir $w/cforeign is owned by uid $other (mode 0755), not by you:*" \
		env FATBUILD_CACHE_DIR="$w/cforeign" $C
	mkdir -m 0700 creal2 && ln -s "$w/creal2" cplanted && chown -h $other:$other cplanted
	expect cache-dir-symlink-planted creal2 \
		"fatbuild: cache dir $w/cplanted is a symlink owned by uid $other, not by you:*" \
		env FATBUILD_CACHE_DIR="$w/cplanted" $C
else
	skip cache-dir-foreign; skip cache-dir-symlink-planted
fi
# accepted: a setgid team cache, opted in; its shards are created 2770
mkdir -m 2770 team2 && FATBUILD_CACHE_DIR="$w/team2" FATBUILD_CACHE_SHARED=1 $C >log 2>&1 && [ -s out.fatbin ] &&
	ok cache-shared-setgid-accepted || { bad cache-shared-setgid-accepted; cat log; }
shard=$(find team2 -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$shard" ] && [ "$(stat -c %a "$shard")" = 2770 ] && ok cache-shared-shard-2770 || bad "cache-shared-shard-2770: ${shard:-none} $(stat -c %a "$shard" 2>/dev/null)"
rm -f out.fatbin
# a team cache someone else made: refused without the opt-in, used with it
if [ $root = 1 ]; then
	mkdir -m 2770 team3 && chown $other:"$(id -g)" team3 && chmod 2770 team3
	expect cache-shared-without-opt-in team3 \
		"fatbuild: cache dir $w/team3 is owned by uid $other (mode 2770), not by you:*" \
		env FATBUILD_CACHE_DIR="$w/team3" $C
	FATBUILD_CACHE_DIR="$w/team3" FATBUILD_CACHE_SHARED=1 $C >log 2>&1 && [ -s out.fatbin ] &&
		ok cache-shared-foreign-opted-in || { bad cache-shared-foreign-opted-in; cat log; }
	rm -f out.fatbin
else
	skip cache-shared-without-opt-in
fi

echo "$n checks, $fails failed"
[ $fails = 0 ]
