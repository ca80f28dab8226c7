#!/usr/bin/env bash
# shared_tmp.sh: another user's files never get into a build or a cache (docs/security.md).
# Two real uids (setpriv; needs root, as CI runs): an attacker and a victim, sharing a sticky
# world-writable temp dir and a group.
#  - The attacker plants the old default build tree $TMPDIR/fatbuild-UID/x (world-writable obj/
#    holding an object with a constructor). Named as the build dir or as FATBUILD_BUILD_DIR it
#    is refused (exit 7, the documented line) and nothing of the victim's appears in it; a build
#    under the new default (~/.cache/fatbuild/build/x) leaves the shared temp dir as it was, and
#    the library holds nothing of the attacker's (no symbol, loading it runs no planted code).
#    Not even the compilers' temporaries go there: ninja runs with TMPDIR=BUILD_DIR/tmp.
#  - Symlink sprays, pointing at the victim's files, at every temporary name of the old scheme
#    (NAME.tmp.PID over a window of pids, OUT.tmp.fb): the output in a directory the attacker
#    can write, build.ninja in a group-writable build dir the victim named, the build lock, the
#    cache entries of an opted-in team cache, the probe cache. The victim's files stay as they
#    were, and every build still produces regular files.
#  - Outputs keep the user's umask; the directories fatbuild makes are 0700.
set -u
FB_BIN=${FATBUILD_BIN:?}
AP_BIN=${ARCHPROBE_BIN:?}
src=${FB_SOURCE_DIR:?}
bin=${FB_BINARY_DIR:?}
. "$src/tests/hardening/lib/twouser.sh"
twouser_setup shared_tmp 54331
V=54331 A=54332 G=54340 # victim, attacker, the group they share: uids no account uses
T=$w/tmp                # the shared temp dir
mkdir -m 1777 "$T"
mkdir -p inst/bin inst/lib/fake inst/include vhome ahome vsrc
cp "$FB_BIN" "$AP_BIN" inst/bin/
cp "$bin/lib/libfatbuild_runtime.a" inst/lib/
cp "$bin/fakecuda/libcuda.so.1" inst/lib/fake/
cp "$src/include/fatbuild_runtime.h" inst/include/
cp "$src/examples/saxpy/saxpy.cu" "$src/examples/saxpy/saxpy.cuh" "$src/examples/saxpy/saxpy_host.c" vsrc/
chown -R $V:$V vhome vsrc
chown -R $A:$A ahome
chmod 0700 vhome ahome
FB=$w/inst/bin/fatbuild AP=$w/inst/bin/archprobe
setpriv --reuid=$V --regid=$V --clear-groups -- test -x "$FB" ||
	{ echo "FAIL: $w is not reachable by another uid (a parent is private)"; exit 1; }
# as USER CMD...: run as the victim or the attacker, with a clean environment
as() {
	local u=$1 home
	shift
	[ "$u" = $V ] && home=$w/vhome || home=$w/ahome
	setpriv --reuid="$u" --regid="$u" --groups=$G -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" \
		TMPDIR="$T" CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" FATBUILD_PROGRAM="$FB" "$@"
}
cat >spray.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* spray PREFIX FROM TO TARGET: symlinks PREFIX.FROM ... PREFIX.TO -> TARGET */
int main(int argc, char **argv) {
	if (argc != 5) return 2;
	char p[8192];
	for (long i = atol(argv[2]); i <= atol(argv[3]); i++) {
		snprintf(p, sizeof(p), "%s.%ld", argv[1], i);
		if (symlink(argv[4], p) != 0) { perror(p); return 1; }
	}
	return 0;
}
C
cat >load.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	return 0;
}
C
cc -O1 -o inst/bin/spray spray.c && cc -O1 -o inst/bin/load load.c -ldl || { echo "FAIL: cc"; exit 1; }
# spray PREFIX TARGET: as the attacker, PREFIX.tmp.PID for the next 4000 pids, and PREFIX.tmp.fb
spray() {
	local last
	last=$(cat /proc/sys/kernel/ns_last_pid)
	as $A "$w/inst/bin/spray" "$1.tmp" "$last" $((last + 4000)) "$2" && as $A ln -s "$2" "$1.tmp.fb"
}
# precious NAME: a file of the victim's that a followed symlink would clobber
precious() { echo "victim's $1" >"vhome/$1" && chown $V:$V "vhome/$1" && touch -d '2020-01-01' "vhome/$1"; }
intact() { [ "$(cat "vhome/$1")" = "victim's $1" ] && [ "$(stat -c %Y "vhome/$1")" = "$(date -d 2020-01-01 +%s)" ]; }
B="--arch-list 8.0 $w/vsrc/saxpy.cu $w/vsrc/saxpy_host.c"

# ---- 1. the planted tree ----
pt=$T/fatbuild-$V
cat >evil.c <<C
#include <fcntl.h>
__attribute__((constructor)) static void planted_ctor(void) { creat("$w/PWNED", 0644); }
int saxpy_device(void) { return 0; }
C
as $A mkdir -p "$pt/x/obj" && as $A chmod 0777 "$pt/x" "$pt/x/obj" &&
	cc -fPIC -c -o "$pt/x/obj/1_saxpy_host.c.o" evil.c && chown $A:$A "$pt/x/obj/1_saxpy_host.c.o" && chmod 0666 "$pt/x/obj/"*
planted=$(find "$T" -printf '%p %u %m %T@\n' | sort)
as $V "$FB" build --build-dir "$pt/x" -o "$w/vsrc/libx.so" $B >out 2>err
rc=$?
[ $rc = 7 ] && ok planted-build-dir-exit-7 || bad "planted-build-dir-exit-7 (exit $rc)"
[[ $(cat err) == "fatbuild: build dir $pt/x is world-writable (owner uid $A, mode 0777): any user could put files into it; remove it, or pass --build-dir DIR (or set FATBUILD_BUILD_DIR) naming a directory of your own" ]] &&
	ok planted-build-dir-message || bad "planted-build-dir-message: $(cat err)"
as $V env FATBUILD_BUILD_DIR="$pt" "$FB" build -o "$w/vsrc/libx.so" $B >out 2>err
rc=$?
[ $rc = 7 ] && [[ $(cat err) == "fatbuild: build root $pt is owned by uid $A (mode 0755), not by you: another user could put files into it;"* ]] &&
	ok planted-build-root-refused || bad "planted-build-root-refused (exit $rc): $(cat err)"
[ ! -e vsrc/libx.so ] && ok planted-no-output || bad planted-no-output
# the new default: the victim's own ~/.cache; the shared temp dir stays as it was
touch stamp
as $V "$FB" build -o "$w/vsrc/libx.so" $B >out 2>&1 && ok default-build || { bad default-build; cat out; }
[ "$(find "$T" -printf '%p %u %m %T@\n' | sort)" = "$planted" ] && ok default-shared-tmp-untouched ||
	bad "default-shared-tmp-untouched: $(find "$T" -newer stamp)"
[ -z "$(find "$T" -user $V)" ] && ok default-nothing-of-the-victim-in-tmp || bad "default-nothing-of-the-victim-in-tmp: $(find "$T" -user $V)"
[ -f vhome/.cache/fatbuild/build/x/build.ninja ] && ok default-build-dir-in-home || bad default-build-dir-in-home
modes=$(find vhome/.cache -type d -printf '%m\n' | sort -u | tr '\n' ' ')
[ "$modes" = "700 " ] && ok default-dirs-0700 || bad "default-dirs-0700: $modes"
nm vsrc/libx.so 2>/dev/null | grep -q planted_ctor && bad "library-holds-planted-object" || ok library-holds-nothing-planted
as $V "$w/inst/bin/load" "$w/vsrc/libx.so" && [ ! -e PWNED ] && ok loading-runs-nothing-planted || bad loading-runs-nothing-planted
[ -z "$(find vhome -user $A)" ] && ok nothing-of-the-attacker-in-home || bad nothing-of-the-attacker-in-home

# ---- 2. symlink sprays ----
# the output, in a directory the attacker can write (not sticky)
mkdir -m 0777 pub && chown $A:$A pub
precious out1
spray "$w/pub/libv.so" "$w/vhome/out1"
as $V "$FB" build -o "$w/pub/libv.so" $B >out 2>&1 && [ -f pub/libv.so ] && [ ! -L pub/libv.so ] && ok spray-output-builds || { bad spray-output-builds; cat out; }
intact out1 && ok spray-output-victim-file-intact || bad spray-output-victim-file-intact
# build.ninja and the lock, in a group-writable build dir the victim named (accepted: the user owns it)
mkdir -m 0770 gbuild && chown $V:$G gbuild && chmod 0770 gbuild
precious ninja1
spray "$w/gbuild/build.ninja" "$w/vhome/ninja1"
as $V "$FB" build --build-dir "$w/gbuild" -o "$w/vsrc/libg.so" $B >out 2>&1 && [ -f gbuild/build.ninja ] && [ ! -L gbuild/build.ninja ] &&
	ok spray-build-ninja-builds || { bad spray-build-ninja-builds; cat out; }
intact ninja1 && ok spray-build-ninja-victim-file-intact || bad spray-build-ninja-victim-file-intact
mkdir -m 0770 gbuild2 && chown $V:$G gbuild2 && chmod 0770 gbuild2
precious lock1
as $A ln -s "$w/vhome/lock1" "$w/gbuild2/.fatbuild.lock"
as $V "$FB" build --build-dir "$w/gbuild2" -o "$w/vsrc/libl.so" $B >out 2>err
[[ $(cat err) == *"cannot create the build lock $w/gbuild2/.fatbuild.lock: Too many levels of symbolic links"* ]] &&
	ok spray-lock-refused || bad "spray-lock-refused: $(cat err)"
intact lock1 && [ "$(stat -c %U:%a "vhome/lock1")" = "$V:644" ] || [ "$(stat -c %u "vhome/lock1")" = $V ] && ok spray-lock-victim-file-intact || bad spray-lock-victim-file-intact
# cache entries of a team cache (the attacker's setgid dir, group shared, opted in)
mkdir team && chown $A:$G team && chmod 2770 team
as $V env FATBUILD_CACHE_DIR="$w/team" "$FB" compile --arch-list 8.0 -o "$w/vsrc/k.fatbin" "$w/vsrc/saxpy.cu" >out 2>err
[ $? = 7 ] && [[ $(cat err) == "fatbuild: cache dir $w/team is owned by uid $A (mode 2770), not by you:"* ]] &&
	ok team-cache-needs-opt-in || bad "team-cache-needs-opt-in: $(cat err)"
as $V env FATBUILD_CACHE_DIR="$w/team" FATBUILD_CACHE_SHARED=1 "$FB" compile --arch-list 8.0 -o "$w/vsrc/k.fatbin" "$w/vsrc/saxpy.cu" >out 2>&1 &&
	ok team-cache-opted-in || { bad team-cache-opted-in; cat out; }
as $A env FATBUILD_CACHE_DIR="$w/team" FATBUILD_CACHE_SHARED=1 "$FB" compile -v --arch-list 8.0 -o "$w/ahome/k.fatbin" "$w/vsrc/saxpy.cu" >out 2>&1
grep -q '1 cached, 0 compiled' out && ok team-cache-shared-hit || { bad team-cache-shared-hit; cat out; }
entry=$(find team -type f ! -name '*.tmp.*' | head -n 1)
precious entry1
if [ -n "$entry" ]; then
	as $A rm -f "$w/$entry"
	spray "$w/$entry" "$w/vhome/entry1"
	as $V env FATBUILD_CACHE_DIR="$w/team" FATBUILD_CACHE_SHARED=1 "$FB" compile --arch-list 8.0 -o "$w/vsrc/k2.fatbin" "$w/vsrc/saxpy.cu" >out 2>&1 &&
		[ -f "$entry" ] && [ ! -L "$entry" ] && ok spray-cache-entry-rewritten || { bad spray-cache-entry-rewritten; cat out; }
else
	bad "spray-cache-entry-rewritten: no entry in the team cache"
fi
intact entry1 && ok spray-cache-entry-victim-file-intact || bad spray-cache-entry-victim-file-intact
# the probe cache, in a group-writable directory: not used at all; a symlink at its name is not followed
mkdir -m 0770 pc && chown $V:$G pc && chmod 0770 pc
precious probe1
spray "$w/pc/probe.cache" "$w/vhome/probe1"
as $A ln -s "$w/vhome/probe1" "$w/pc/probe.cache"
as $V env ARCHPROBE_LIBCUDA="$w/inst/lib/fake/libcuda.so.1" FAKECUDA_DEVICES=8.6 "$AP" -v --format list --cuda-version 13.0 \
	--cache="$w/pc/probe.cache" >out 2>&1
grep -q 'cache not used (neither read nor written): the directory' out && ok probe-cache-refused || { bad probe-cache-refused; cat out; }
intact probe1 && ok spray-probe-cache-victim-file-intact || bad spray-probe-cache-victim-file-intact
mkdir -m 0700 pc2 && chown $V:$V pc2
precious probe2
as $V ln -s "$w/vhome/probe2" "$w/pc2/probe.cache"
as $V env ARCHPROBE_LIBCUDA="$w/inst/lib/fake/libcuda.so.1" FAKECUDA_DEVICES=8.6 "$AP" -v --format list --cuda-version 13.0 \
	--cache="$w/pc2/probe.cache" >out 2>&1
grep -q "cache not used (neither read nor written): $w/pc2/probe.cache is a symlink" out && intact probe2 &&
	ok probe-cache-symlink-not-followed || { bad probe-cache-symlink-not-followed; cat out; }

# ---- 3. modes: outputs keep the umask ----
for u in 022 002 077; do
	as $V sh -c "umask $u && cd '$w/vsrc' && '$FB' build -o libu$u.so $B >/dev/null 2>&1 &&
		'$FB' compile --arch-list 8.0 -o c$u.fatbin saxpy.cu && '$FB' embed -o e$u.o c$u.fatbin &&
		'$FB' extract --arch sm_80 -o x$u.cubin c$u.fatbin" >out 2>&1 || cat out
	want_so=$(printf '%o' $((0777 & ~0$u))) want_f=$(printf '%o' $((0666 & ~0$u)))
	got=$(cd vsrc && stat -c %a "libu$u.so" "c$u.fatbin" "e$u.o" "x$u.cubin" 2>/dev/null | tr '\n' ' ')
	[ "$got" = "$want_so $want_f $want_f $want_f " ] && ok "umask-$u-outputs" || bad "umask-$u-outputs: $got, want $want_so and $want_f"
done

echo "$n checks, $fails failed"
[ $fails = 0 ]
