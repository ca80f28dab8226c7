#!/usr/bin/env bash
# team_cache.sh: a team cache (one setgid directory, two members) gives no member a way to make
# another delete, read or count files outside it (docs/security.md, docs/hardening.md "Attacks
# on the caches"). Two real uids (setpriv; needs root, as CI runs): Mallory plants symlinks
# where the cache walk goes, at a shard's name (da -> the victim's ~/docs, whose files start
# with "da" as entries of shard da do), at hostpch/ (-> a directory of the victim's holding
# directories named like PCH keys) and at an entry's name inside a real shard; the victim then
# runs `cache stats`, `cache trim --max-size 1` and `cache clear` on the team cache: nothing of
# the victim's changes, the links themselves stay (they are not entries), and the real entries
# go. Also: a group-writable cache dir the victim owns is refused without FATBUILD_CACHE_SHARED
# (exit 7, as docs/security.md says), and a team cache keeps its counters. A sticky team cache
# (install -d -m 3770, the root only): every dir fatbuild makes below carries the root's mode,
# so Mallory's cache trim, cache clear and plain rm leave the victim's entries; and every
# member's counters count and the size limit holds (25 entries of Mallory's under 20k while
# the victim owns the stats file).
set -u
FB_BIN=${FATBUILD_BIN:?}
src=${FB_SOURCE_DIR:?}
. "$src/tests/hardening/lib/twouser.sh"
twouser_setup team_cache 54351
V=54351 M=54352 G=54360 # victim, Mallory, the team: uids no account uses
mkdir -p inst/bin vhome mhome src
cp "$FB_BIN" inst/bin/
cp "$src/examples/saxpy/saxpy.cu" "$src/examples/saxpy/saxpy.cuh" src/
printf 'extern "C" __global__ void k2(float *p) { p[threadIdx.x] += 1.f; }\n' >src/k2.cu
chown -R $V:$V vhome
chown -R $M:$M mhome
chmod 0700 vhome mhome
FB=$w/inst/bin/fatbuild
setpriv --reuid=$V --regid=$V --clear-groups -- test -x "$FB" ||
	{ echo "FAIL: $w is not reachable by another uid (a parent is private)"; exit 1; }
# as USER CMD...: run as the victim or Mallory, in the team group, with a clean environment
as() {
	local u=$1 home
	shift
	[ "$u" = $V ] && home=$w/vhome || home=$w/mhome
	setpriv --reuid="$u" --regid="$u" --groups=$G -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" \
		CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" FATBUILD_CACHE_MAX_SIZE=0 "$@"
}
T=$w/team
install -d -m 2770 -o 0 -g $G "$T"
TEAM="FATBUILD_CACHE_DIR=$T FATBUILD_CACHE_SHARED=1"
key=da0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab

# ---- the victim's files a followed link would reach ----
mkdir -p vhome/docs vhome/pchs/$key vhome/pchs/$key/sub vhome/keys
for f in data.csv daily.txt "$key"; do echo "victim's $f" >"vhome/docs/$f"; done
echo "victim's pch" >"vhome/pchs/$key/h.h.gch"
echo "victim's nested" >"vhome/pchs/$key/sub/f"
ab=ab0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab
echo "victim's key file" >"vhome/keys/$ab"
chown -R $V:$V vhome
chmod -R go-rwx vhome/docs vhome/pchs vhome/keys
chmod 0755 vhome # Mallory's links must resolve for the victim, not for Mallory
snapshot() { find vhome/docs vhome/pchs vhome/keys -printf '%p %s %T@\n' | sort; }

# ---- real entries in the team cache, made by both members ----
as $V env $TEAM "$FB" compile --arch-list 8.0 -o "$w/vhome/k.fatbin" "$w/src/saxpy.cu" >out 2>&1 ||
	{ bad "victim-compiles-in-team-cache"; cat out; }
as $M env $TEAM "$FB" compile --arch-list 8.0 -o "$w/mhome/k2.fatbin" "$w/src/k2.cu" >out 2>&1 ||
	{ bad "mallory-compiles-in-team-cache"; cat out; }
as $M env $TEAM "$FB" compile --arch-list 8.0 -o "$w/mhome/k.fatbin" "$w/src/saxpy.cu" >out 2>&1 ||
	{ bad "mallory-hits-in-team-cache"; cat out; }
entries=$(find "$T" -mindepth 2 -maxdepth 2 -type f -regex '.*/[0-9a-f]*' | wc -l)
[ "$entries" -ge 2 ] && ok team-cache-has-entries || bad "team-cache-has-entries: $entries"

# ---- the counters of a team cache ----
as $V env $TEAM "$FB" cache stats >stats 2>&1
grep -qx 'misses (compiled): 2' stats && grep -qx 'local hits: 1' stats && ok team-cache-keeps-counters ||
	{ bad team-cache-keeps-counters; cat stats; }

# ---- Mallory's links ----
as $M ln -s "$w/vhome/docs" "$T/da"
mkdir -p "$T/ab" && chgrp $G "$T/ab" && chmod 2770 "$T/ab"
as $M ln -s "$w/vhome/keys/$ab" "$T/ab/$ab"
as $M ln -s "$w/vhome/pchs" "$T/hostpch"
before=$(snapshot)

as $V env $TEAM "$FB" cache stats >stats 2>&1
rc=$?
[ $rc = 0 ] && ok "stats-with-planted-links (exit 0)" || { bad "stats-with-planted-links (exit $rc)"; cat stats; }
grep -qx 'host PCHs: 0 (0 bytes)' stats && ok stats-counts-no-linked-pch || { bad stats-counts-no-linked-pch; cat stats; }
e=$(sed -n 's/^entries: //p' stats)
[ "$e" = "$entries" ] && ok "stats-counts-only-real-entries ($e)" || bad "stats-counts-only-real-entries: $e, want $entries"

as $V env $TEAM "$FB" cache trim --max-size 1 >out 2>&1
rc=$?
[ $rc = 0 ] && ok "trim-with-planted-links (exit 0)" || { bad "trim-with-planted-links (exit $rc)"; cat out; }
[ "$(snapshot)" = "$before" ] && ok trim-victim-files-intact || { bad trim-victim-files-intact; diff <(echo "$before") <(snapshot); }

# entries again, then clear
as $V env $TEAM "$FB" compile --arch-list 8.0 -o "$w/vhome/k.fatbin" "$w/src/saxpy.cu" >out 2>&1 || { bad recompile; cat out; }
as $V env $TEAM "$FB" cache clear >out 2>&1
rc=$?
[ $rc = 0 ] && ok "clear-with-planted-links (exit 0)" || { bad "clear-with-planted-links (exit $rc)"; cat out; }
[ "$(snapshot)" = "$before" ] && ok clear-victim-files-intact || { bad clear-victim-files-intact; diff <(echo "$before") <(snapshot); }
[ -L "$T/da" ] && [ -L "$T/hostpch" ] && [ -L "$T/ab/$ab" ] && ok clear-leaves-links-alone || bad clear-leaves-links-alone
left=$(find "$T" -mindepth 2 -maxdepth 2 -type f -regex '.*/[0-9a-f]*' | wc -l)
[ "$left" = 0 ] && ok clear-removes-real-entries || bad "clear-removes-real-entries: $left left"

# ---- a group-writable cache dir the victim owns, without the opt-in ----
install -d -m 2770 -o $V -g $G "$w/gw"
as $V env FATBUILD_CACHE_DIR="$w/gw" "$FB" compile --arch-list 8.0 -o "$w/vhome/g.fatbin" "$w/src/saxpy.cu" >out 2>err
rc=$?
[ $rc = 7 ] && [[ $(cat err) == "fatbuild: cache dir $w/gw is group-writable (owner uid $V, mode 2770): other users of its group could put files into it; "*"FATBUILD_CACHE_SHARED=1"* ]] &&
	ok group-writable-cache-refused-without-opt-in || bad "group-writable-cache-refused-without-opt-in (exit $rc): $(cat err)"
[ -z "$(find "$w/gw" -mindepth 1)" ] && [ ! -e vhome/g.fatbin ] && ok group-writable-cache-untouched || bad group-writable-cache-untouched
as $V env FATBUILD_CACHE_DIR="$w/gw" FATBUILD_CACHE_SHARED=1 "$FB" compile --arch-list 8.0 -o "$w/vhome/g.fatbin" "$w/src/saxpy.cu" >out 2>&1 &&
	ok group-writable-cache-with-opt-in || { bad group-writable-cache-with-opt-in; cat out; }

# ---- a sticky team cache: only its root is made by hand, fatbuild makes every dir below ----
install -d -m 3770 -o 0 -g $G "$w/sticky"
S="FATBUILD_CACHE_DIR=$w/sticky FATBUILD_CACHE_SHARED=1"
as $V env $S "$FB" compile --arch-list 8.0 -o "$w/vhome/s.fatbin" "$w/src/saxpy.cu" >out 2>&1 ||
	{ bad sticky-victim-compiles; cat out; }
as $M env $S "$FB" compile --arch-list 8.0 -o "$w/mhome/s2.fatbin" "$w/src/k2.cu" >out 2>&1 ||
	{ bad sticky-mallory-compiles; cat out; }
modes=$(find "$w/sticky" -mindepth 1 -type d -printf '%m %u %p\n' | grep -v '^3770 ')
[ -z "$modes" ] && [ -n "$(find "$w/sticky" -mindepth 1 -type d)" ] && ok sticky-dirs-carry-the-roots-mode ||
	{ bad "sticky-dirs-carry-the-roots-mode (want 3770, the root's):"; echo "$modes"; }
victims() { find "$w/sticky" -mindepth 2 -type f -user $V -regex '.*/[0-9a-f]*' | sort; }
theirs() { find "$w/sticky" -mindepth 2 -type f -user $M -regex '.*/[0-9a-f]*' | wc -l; }
vict=$(victims)
[ -n "$vict" ] && [ "$(theirs)" -ge 1 ] && ok sticky-both-have-entries || bad sticky-both-have-entries
as $M env $S "$FB" cache trim --max-size 1 >out 2>&1
rc=$?
[ $rc = 0 ] && [ "$(victims)" = "$vict" ] && [ "$(theirs)" = 0 ] && ok sticky-trim-removes-own-only ||
	{ bad "sticky-trim-removes-own-only (exit $rc, victim's $(victims | wc -w) of $(echo "$vict" | wc -w), Mallory's $(theirs))"; cat out; }
# each step on both members' entries (the victim's again if a step took them)
as $V env $S "$FB" compile --arch-list 8.0 -o "$w/vhome/s.fatbin" "$w/src/saxpy.cu" >/dev/null 2>&1
as $M env $S "$FB" compile --arch-list 8.0 -o "$w/mhome/s2.fatbin" "$w/src/k2.cu" >/dev/null 2>&1
as $M env $S "$FB" cache clear >out 2>&1
rc=$?
[ $rc = 0 ] && [ "$(victims)" = "$vict" ] && [ "$(theirs)" = 0 ] && ok sticky-clear-removes-own-only ||
	{ bad "sticky-clear-removes-own-only (exit $rc, victim's $(victims | wc -w) of $(echo "$vict" | wc -w), Mallory's $(theirs))"; cat out; }

# the kernel, not only fatbuild's walk, keeps Mallory's hands off
as $V env $S "$FB" compile --arch-list 8.0 -o "$w/vhome/s.fatbin" "$w/src/saxpy.cu" >/dev/null 2>&1
as $M find "$w/sticky" -mindepth 2 -type f -user $V -delete 2>/dev/null
[ "$(victims)" = "$vict" ] && ok sticky-rm-cannot-remove-anothers ||
	{ bad "sticky-rm-cannot-remove-anothers: $(echo "$vict" | wc -w) -> $(victims | wc -w)"; }

# ---- a sticky team cache keeps every member's counters and its size limit ----
# The victim's first compile makes the stats file; then Mallory puts 25 entries under a 20k
# limit: her counts must count and her builds must trim (her own entries: the victim's stay).
install -d -m 3770 -o 0 -g $G "$w/sticky2"
S2="FATBUILD_CACHE_DIR=$w/sticky2 FATBUILD_CACHE_SHARED=1 FATBUILD_CACHE_MAX_SIZE=20k"
as $V env $S2 "$FB" compile --arch-list 8.0 -o "$w/vhome/t.fatbin" "$w/src/saxpy.cu" >out 2>&1 ||
	{ bad sticky-limit-victim-compiles; cat out; }
for i in $(seq 1 25); do
	printf 'extern "C" __global__ void k%d(float *p) { p[threadIdx.x] += %d.f; }\n' $i $i >src/m$i.cu
	as $M env $S2 "$FB" compile --arch-list 8.0 -o "$w/mhome/m.fatbin" "$w/src/m$i.cu" >out 2>&1 ||
		{ bad "sticky-limit-mallory-compiles-$i"; cat out; }
done
as $V env $S2 "$FB" cache stats >stats 2>&1
grep -qx 'misses (compiled): 26' stats && ok "sticky-counts-every-members-compiles (26)" ||
	{ bad "sticky-counts-every-members-compiles: $(grep '^misses' stats), want 26"; }
size=$(sed -n 's/^size: .*(\([0-9]*\) bytes on disk)$/\1/p' stats)
[ -n "$size" ] && [ "$size" -le 20000 ] && ok "sticky-size-limit-holds ($size bytes, limit 20000)" ||
	{ bad "sticky-size-limit-holds: $size bytes, limit 20000"; cat stats; }
ev=$(sed -n 's/^evictions: \([0-9]*\) .*/\1/p' stats)
[ "${ev:-0}" -ge 1 ] && ok "sticky-counts-evictions ($ev)" || { bad "sticky-counts-evictions: ${ev:-none}"; }
[ -n "$(find "$w/sticky2" -mindepth 2 -type f -user $V -regex '.*/[0-9a-f]*')" ] && ok sticky-limit-keeps-anothers ||
	bad sticky-limit-keeps-anothers

echo "$n checks, $fails failed"
[ $fails = 0 ]
