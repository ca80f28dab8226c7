#!/usr/bin/env bash
# bounded.sh: inputs that would make fatbuild work without end, or without bound, each given
# a limit that ends it with one line (docs/hardening.md "Attacks on the caches and inputs").
#  - `check --python PY` where PY never answers (it sleeps), or exits but leaves a process that
#    holds its output open: a bounded wait, the interpreter's process group killed, one line,
#    a nonzero exit, and no process of it left running.
#  - `check` of a zip bomb (a member of 1 GiB of zeros, deflated at level 9 to 1 MB): the member
#    is stopped early and named in the report, and the archive's other members are still read;
#    under `ulimit -f` 128 MiB, so a check that inflates the bomb whole is killed (SIGXFSZ).
#  - a `fatbuild edge` manifest naming a header that has since become 3 GB (a sparse file):
#    the edge is compiled, not served and not kept, with one note, in seconds (hashing the
#    file took about 20 s for each lookup and again for each keep).
set -u
FB=${FATBUILD_BIN:?}
w=$(mktemp -d "${TMPDIR:-/tmp}/fbbound.XXXXXX")
# stray: the pids of processes run from $w's copy of sleep, started by the interpreters
stray() { pgrep -f "^$w/fbsleep" || true; }
cleanup() {
	for p in $(stray); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w" || exit 1
mkdir -p home tmp
export HOME=$w/home TMPDIR=$w/tmp FATBUILD_CACHE_DIR=$w/cache FATBUILD_BUILD_DIR=$w/bd XDG_CACHE_HOME=$w/xdg
unset FATBUILD_REMOTE_CACHE FATBUILD_REMOTE_EXECUTOR FATBUILD_CACHE_SHARED FATBUILD_EDGE_CACHE
fails=0 n=0
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
cp "$(command -v sleep)" fbsleep

# ---- check --python: an interpreter that never answers (its wait is 60 s: run it meanwhile) ----
printf '#!/bin/sh\nexec %s/fbsleep 1000\n' "$w" >sleeper
printf '#!/bin/sh\n%s/fbsleep 1000 &\necho "fbsite %s"\n' "$w" "$w/home" >forker
chmod +x sleeper forker
start=$(date +%s)
timeout -k 5 100 "$FB" check --arch 8.0 --python ./sleeper >sleeper.out 2>sleeper.err &
sleeper_pid=$!

# ---- an interpreter that exits but leaves a process holding its output open ----
t0=$(date +%s)
timeout -k 5 30 "$FB" check --arch 8.0 --python ./forker >out 2>err
rc=$? secs=$(($(date +%s) - t0))
if [ $rc != 0 ] && [ $rc != 124 ] && [ $rc != 137 ] && [ "$(wc -l <err)" = 1 ] &&
	[[ $(cat err) == "fatbuild: check --python: ./forker exited, but a process it started still holds its output open: stopped, its process group killed" ]]; then
	ok "check-python-stray-child (exit $rc, ${secs} s)"
else
	bad "check-python-stray-child (exit $rc, ${secs} s): $(head -c 400 err)"
fi

# ---- a zip bomb ----
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a80.ptx
"$FB" pack -o k80.fatbin a80.ptx || exit 1
python3 - <<'PY' || exit 1
import zipfile
with zipfile.ZipFile("bomb.whl", "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    with z.open("bomb/libbomb.so", "w", force_zip64=True) as f:
        f.write(b"\x7fELF\x02\x01\x01" + bytes(57))
        chunk = bytes(1 << 24)
        for _ in range(64):
            f.write(chunk)
    z.write("k80.fatbin", "bomb/k80.fatbin")
PY
t0=$(date +%s)
(ulimit -f 131072 && timeout -k 5 60 "$FB" check --arch 8.0 bomb.whl) >out 2>err
rc=$? secs=$(($(date +%s) - t0))
if [ $rc = 1 ] && grep -q "^  could not be read: bomb/libbomb.so: not inflated past [0-9]* bytes: more than 100 times its compressed size (a decompression bomb?)$" out &&
	grep -q "^  bomb/k80.fatbin: 1 container (compute_80)" out; then
	ok "check-zip-bomb-stopped (exit $rc, ${secs} s)"
else
	bad "check-zip-bomb-stopped (exit $rc, ${secs} s)"
	cat out err | head -8
fi
[ -z "$(ls -A tmp)" ] && ok check-zip-bomb-leaves-no-temporary || bad "check-zip-bomb-leaves-no-temporary: $(ls -A tmp)"

# ---- an edge manifest naming a header that became 3 GB ----
printf 'int e(void) { return 1; }\n' >e.c
cc -c -o e.o e.c || exit 1
printf '#define BIG 1\n' >big.h
export FATBUILD_EDGE_LOG=$w/edge.log
edge() {
	: >edge.log
	timeout -k 5 "$1" "$FB" edge -o "$w/x.o" --depfile "$w/x.d" --base "$w" --tool cc -- \
		sh -c "cp $w/e.o $w/x.o && printf '%s: %s %s\\n' $w/x.o $w/e.c $w/big.h >$w/x.d" >out 2>err
}
entries() { find cache -type f -regex '.*/[0-9a-f]*' | wc -l; }
edge 60 && edge 60 && grep -q "^hit local" edge.log || { bad "edge-manifest-setup: $(cat err edge.log)"; }
before=$(entries)
truncate -s 3G big.h
t0=$(date +%s)
edge 20
rc=$? secs=$(($(date +%s) - t0))
if [ $rc = 0 ] && grep -q "^ran" edge.log && [ "$(wc -l <err)" = 1 ] &&
	[[ $(cat err) == "fatbuild: warning: edge cache not used: $w/big.h is 3221225472 bytes, more than the 268435456 an edge hashes for one file; compiled here" ]]; then
	ok "edge-manifest-huge-file-compiled (${secs} s)"
else
	bad "edge-manifest-huge-file-compiled (exit $rc, ${secs} s): $(cat err edge.log | head -c 600)"
fi
[ "$(entries)" = "$before" ] && ok edge-manifest-huge-file-not-kept || bad "edge-manifest-huge-file-not-kept: $before, then $(entries)"
t0=$(date +%s)
edge 20
rc=$? secs=$(($(date +%s) - t0))
[ $rc = 0 ] && grep -q "^ran" edge.log && ok "edge-manifest-huge-file-again (${secs} s)" ||
	bad "edge-manifest-huge-file-again (exit $rc, ${secs} s): $(cat err)"
rm -f big.h

# ---- the sleeping interpreter, started first ----
wait $sleeper_pid
rc=$? secs=$(($(date +%s) - start))
if [ $rc != 0 ] && [ $rc != 124 ] && [ $rc != 137 ] && [ "$(wc -l <sleeper.err)" = 1 ] &&
	[[ $(cat sleeper.err) == "fatbuild: check --python: ./sleeper did not answer within 60 s: stopped, its process group killed" ]]; then
	ok "check-python-never-answers (exit $rc, ${secs} s)"
else
	bad "check-python-never-answers (exit $rc, ${secs} s): $(head -c 400 sleeper.err)"
fi
sleep 1
[ -z "$(stray)" ] && ok check-python-leaves-no-process || bad "check-python-leaves-no-process: $(stray | tr '\n' ' ')"

echo "$n checks, $fails failed"
[ $fails = 0 ]
