#!/usr/bin/env bash
# cache_trim.sh: the cache's size limit (docs/caches.md "Size"): `cache trim` evicts the least
# recently used first (a hit refreshes an entry), host PCHs included and counted by what they
# take on disk, a PCH a build holds stays, young temporaries stay and old ones go; a compile
# that ends over FATBUILD_CACHE_MAX_SIZE trims; `cache stats` shows size, limit and evictions;
# bad sizes are one line and exit 2; and builds running side by side under a limit that evicts
# everything all the time still produce exactly the bytes of a build without a cache.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
fb=$FATBUILD_BIN
t=$(mktemp -d "${TMPDIR:-/tmp}/fbtrim.XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
export FATBUILD_CACHE_DIR=$t/cache FATBUILD_CACHE_MAX_SIZE=0
unset FATBUILD_CACHE_SHARED FATBUILD_REMOTE_CACHE
fails=0 n=0
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
for k in a b c; do
	printf 'extern "C" __global__ void %s(float *p) { p[threadIdx.x] *= 2.f; }\n' $k >$k.cu
done
# entries SRC: the cache entries of one compile of SRC for 8.0 (a fresh key: the only new file)
entry_of() {
	local before after
	before=$(find cache -mindepth 2 -type f -name '[0-9a-f]*' 2>/dev/null | sort)
	$fb compile --arch-list 8.0 -o "$1.fatbin" "$1.cu" || return 1
	after=$(find cache -mindepth 2 -type f -name '[0-9a-f]*' | sort)
	comm -13 <(echo "$before") <(echo "$after")
}
disk() { stat -c '%b %B' "$@" | awk '{ s += $1 * $2 } END { print s + 0 }'; }

# ---- LRU: a, b, c made in that order (times set), then a used again: b is the oldest ----
ea=$(entry_of a) && eb=$(entry_of b) && ec=$(entry_of c) || { bad "compiles"; exit 1; }
touch -d '2020-01-01' "$ea"
touch -d '2020-01-02' "$eb"
touch -d '2020-01-03' "$ec"
$fb compile -v --arch-list 8.0 -o a.fatbin a.cu 2>log && grep -q '1 cached' log && ok hit-on-a || { bad hit-on-a; cat log; }
[ "$(stat -c %Y "$ea")" -gt "$(date -d 2020-01-04 +%s)" ] && ok hit-refreshes-mtime || bad hit-refreshes-mtime
total=$(disk "$ea" "$eb" "$ec") sb=$(disk "$eb")
# the smallest limit whose 90% mark (max - max/10) holds all but b
max=$(( (total - sb) * 10 / 9 ))
while [ $((max - max / 10)) -lt $((total - sb)) ]; do max=$((max + 1)); done
$fb cache trim --max-size $max >out 2>&1 || { bad "trim exit"; cat out; }
[ -e "$ea" ] && [ ! -e "$eb" ] && [ -e "$ec" ] && ok "lru-evicts-b-only" || { bad "lru-evicts-b-only: a=$([ -e "$ea" ] && echo kept) b=$([ -e "$eb" ] && echo kept) c=$([ -e "$ec" ] && echo kept)"; cat out; }
grep -q 'evicted 1 (0 host PCHs' out && ok trim-reports || { bad trim-reports; cat out; }

# ---- host PCHs: counted by their size on disk, evicted by last use, held ones stay ----
p1=cache/hostpch/$(printf '1%.0s' $(seq 64)) p2=cache/hostpch/$(printf '2%.0s' $(seq 64))
mkdir -p -m 0700 cache/hostpch "$p1" "$p2"
for p in "$p1" "$p2"; do
	head -c 3000000 /dev/urandom >"$p/h.h.gch" && echo id >"$p/id"
done
touch -d '2019-06-01' "$p1"/* "$p1" && touch -d '2019-06-02' "$p2"/* "$p2"
$fb cache stats >stats
pb=$(disk "$p1" "$p1"/* "$p2" "$p2"/*)
grep -qx "host PCHs: 2 (.*)" stats && ok stats-counts-pchs || { bad stats-counts-pchs; cat stats; }
sz=$(sed -n 's/^size: .* (\([0-9]*\) bytes on disk)$/\1/p' stats)
[ "$sz" -ge "$pb" ] && ok "stats-size-includes-pchs ($sz >= $pb)" || bad "stats-size-includes-pchs: $sz < $pb"
# p1 is the oldest of all, but held by a build (a shared flock on its directory): p2 goes instead
flock -s "$p1" -c "$fb cache trim --max-size $((sz - 1))" >out 2>&1
[ -d "$p1" ] && [ ! -e "$p2" ] && ok held-pch-stays-oldest-free-one-goes || { bad held-pch-stays-oldest-free-one-goes; cat out; }
grep -q 'kept 1 in use' out && ok trim-says-kept || { bad trim-says-kept; cat out; }
$fb cache trim --max-size $((pb / 4)) >out 2>&1
[ ! -e "$p1" ] && ok released-pch-evicted || { bad released-pch-evicted; cat out; }

# ---- temporaries: a killed write's (old) goes, a write in progress (young) stays ----
sh=$(dirname "$ec")
old=$sh/$(basename "$ec").tmp.AAAAAAAAAA young=$sh/$(basename "$ec").tmp.BBBBBBBBBB
echo x >"$old" && touch -d '2 hours ago' "$old" && echo y >"$young"
$fb cache trim --max-size 1G >out 2>&1
[ ! -e "$old" ] && [ -e "$young" ] && ok temporaries || bad "temporaries: old $([ -e "$old" ] && echo kept), young $([ -e "$young" ] || echo gone)"
rm -f "$young"

# ---- a compile that ends over the limit trims; stats shows it ----
$fb cache clear >/dev/null
for k in a b c; do $fb compile --arch-list "8.0 9.0" -o $k.fatbin $k.cu || bad "compile $k"; done
full=$(sed -n 's/^size: .* (\([0-9]*\) bytes on disk)$/\1/p' <($fb cache stats))
lim=$((full / 2))
printf 'extern "C" __global__ void d(float *p) { p[threadIdx.x] -= 2.f; }\n' >d.cu
FATBUILD_CACHE_MAX_SIZE=$lim $fb compile -v --arch-list 8.0 -o d.fatbin d.cu 2>log || bad "compile over the limit"
grep -q 'cache: over its limit' log && ok compile-trims-when-over || { bad compile-trims-when-over; cat log; }
FATBUILD_CACHE_MAX_SIZE=$lim $fb cache stats >stats
now=$(sed -n 's/^size: .* (\([0-9]*\) bytes on disk)$/\1/p' stats)
[ "$now" -le "$lim" ] && ok "cache-under-limit-after ($now <= $lim)" || bad "cache-under-limit-after: $now > $lim"
grep -q "^limit: .* ($lim bytes)$" stats && ok stats-shows-limit || { bad stats-shows-limit; cat stats; }
ev=$(sed -n 's/^evictions: \([0-9]*\) .*/\1/p' stats)
[ "${ev:-0}" -ge 1 ] && ok "stats-counts-evictions ($ev)" || { bad stats-counts-evictions; cat stats; }
# under the limit: nothing evicted, and the trigger did not walk (size from the counters)
FATBUILD_CACHE_MAX_SIZE=1G $fb compile -v --arch-list 8.0 -o d.fatbin d.cu 2>log
! grep -q 'over its limit' log && ok no-trim-under-limit || { bad no-trim-under-limit; cat log; }

# ---- sizes ----
for s in 500M:500000000 1.5GiB:1610612736 5G:5000000000 "2k:2000" 123:123 0:none; do
	FATBUILD_CACHE_MAX_SIZE=${s%%:*} $fb cache stats >stats 2>&1
	want=${s#*:}
	if [ "$want" = none ]; then grep -qx 'limit: none' stats; else grep -q "^limit: .* ($want bytes)$" stats; fi &&
		ok "size-${s%%:*}" || { bad "size-${s%%:*}"; grep limit stats; }
done
FATBUILD_CACHE_MAX_SIZE=lots $fb compile --arch-list 8.0 -o bad.fatbin a.cu >out 2>err
rc=$?
[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] && grep -q "FATBUILD_CACHE_MAX_SIZE='lots' is not a size" err && [ ! -e bad.fatbin ] &&
	ok bad-env-size || { bad "bad-env-size (exit $rc)"; cat err; }
$fb cache trim --max-size 5X >out 2>err
[ $? = 2 ] && grep -q "\-\-max-size '5X' is not a size" err && ok bad-option-size || { bad bad-option-size; cat err; }

# ---- side by side under a limit that evicts everything: the bytes of a cache-less build ----
cp "$FB_SOURCE_DIR"/examples/kernels/*.cu "$FB_SOURCE_DIR"/examples/kernels/*.cuh . 2>/dev/null
ks=$(ls reduce.cu softmax.cu layernorm.cu 2>/dev/null | tr '\n' ' ')
$fb compile --no-cache --arch-list "7.5 8.0 9.0" -o ref.fatbin $ks || bad "reference compile"
pids=
for i in 1 2 3; do
	(for r in 1 2 3; do FATBUILD_CACHE_MAX_SIZE=1 $fb compile --arch-list "7.5 8.0 9.0" -o par$i.$r.fatbin $ks || exit 1; done) &
	pids="$pids $!"
done
okp=1
for p in $pids; do wait "$p" || okp=0; done
[ $okp = 1 ] && ok concurrent-compiles-succeed || bad concurrent-compiles-succeed
same=1
for f in par*.fatbin; do cmp -s "$f" ref.fatbin || same=0; done
[ $same = 1 ] && ok concurrent-outputs-identical || bad concurrent-outputs-identical

echo "$n checks, $fails failed"
[ $fails = 0 ]
