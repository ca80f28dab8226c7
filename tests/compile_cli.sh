#!/usr/bin/env bash
# compile_cli.sh: `fatbuild compile` end to end on copies of the bundled kernels: output and
# depfile, cache hits, invalidation by a header (only its includers recompile), --emit-dir,
# -j 1 vs -j 2 determinism, errors that write nothing, cache stats/clear.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
fb=$FATBUILD_BIN
t=$(mktemp -d "${TMPDIR:-/tmp}/fbcompcli.XXXXXX")
trap 'rm -rf "$t"' EXIT
export FATBUILD_CACHE_DIR=$t/cache
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }

mkdir -p "$t/k" && cd "$t"
for f in reduce.cu softmax.cu layernorm.cu common.cuh layernorm_params.cuh; do
	cp "$FB_SOURCE_DIR/examples/kernels/$f" k/
done
arch="7.5 8.0+PTX"

# 1. cold: every job compiled, output, depfile
$fb compile -v --arch-list "$arch" -o out.fatbin --depfile out.d k/reduce.cu k/softmax.cu k/layernorm.cu 2>log1 ||
	{ cat log1 >&2; no "cold compile failed"; }
[ -s out.fatbin ] || no "no out.fatbin"
grep -q '^\[1/6\] ' log1 || no "no progress lines with -v"
grep -q '6 jobs, 0 cached, 6 compiled' log1 || { cat log1 >&2; no "cold summary"; }
head -1 out.d | grep -qx 'out.fatbin: \\' || no "depfile target line: $(head -1 out.d)"
for d in k/reduce.cu k/softmax.cu k/layernorm.cu k/common.cuh k/layernorm_params.cuh cuda_fp16.h; do
	grep -q "$d" out.d || no "depfile lacks $d"
done
$fb inspect out.fatbin >inspect.txt 2>&1 || no "inspect failed"
for a in sm_75 sm_80 compute_80; do grep -q "$a" inspect.txt || no "fatbin lacks $a"; done

# 2. warm: all from the cache, same bytes
$fb compile -v --arch-list "$arch" -o out2.fatbin k/reduce.cu k/softmax.cu k/layernorm.cu 2>log2 || no "warm failed"
grep -q '6 jobs, 6 cached, 0 compiled' log2 || { cat log2 >&2; no "warm summary"; }
cmp -s out.fatbin out2.fatbin || no "warm output differs"

# 3. a header only layernorm.cu includes: only its two jobs recompile
sed -i 's/1e-5f/1e-6f/' k/layernorm_params.cuh
$fb compile -v --arch-list "$arch" -o out3.fatbin k/reduce.cu k/softmax.cu k/layernorm.cu 2>log3 || no "after edit failed"
grep -q '6 jobs, 4 cached, 2 compiled' log3 || { cat log3 >&2; no "header edit: expected 2 recompiled"; }
grep -E '\] sm_(75|80) k/layernorm.cu [0-9.]+s$' log3 | wc -l | grep -qx 2 || no "layernorm.cu not recompiled"
grep -E '\] sm_(75|80) k/(reduce|softmax).cu cached$' log3 | wc -l | grep -qx 4 || no "others not cached"
cmp -s out.fatbin out3.fatbin && no "output unchanged after a header edit"
# a header both include: all six
echo '// touched' >>k/common.cuh
$fb compile -v --arch-list "$arch" -o out3.fatbin k/reduce.cu k/softmax.cu k/layernorm.cu 2>log4 || no "after common edit"
grep -q '6 jobs, 0 cached, 6 compiled' log4 || { cat log4 >&2; no "common.cuh edit: expected all recompiled"; }

# 4. --emit-dir
$fb compile --arch-list "$arch" --emit-dir emit -o out4.fatbin k/reduce.cu 2>/dev/null || no "emit failed"
for f in reduce.sm_75.cubin reduce.sm_80.cubin reduce.compute_80.ptx; do [ -s "emit/$f" ] || no "no emit/$f"; done
head -c 4 emit/reduce.sm_80.cubin | grep -q ELF || no "cubin is not ELF"
grep -q '^.target sm_80' emit/reduce.compute_80.ptx || no "ptx target"

# 4b. -o DIR/: one fatbin per kernel file, the same bytes as compiling each file alone
$fb compile --arch-list "$arch" -o perfile/ k/reduce.cu k/softmax.cu 2>pf.err || no "-o DIR/ failed"
[ -s perfile/reduce.fatbin ] && [ -s perfile/softmax.fatbin ] || no "no per-file fatbins"
grep -q warning pf.err && no "-o DIR/ warned"
$fb compile --arch-list "$arch" -o alone.fatbin k/softmax.cu || no "softmax alone"
cmp -s alone.fatbin perfile/softmax.fatbin || no "per-file fatbin differs from a single-file compile"
$fb compile --arch-list "$arch" -o two.fatbin k/reduce.cu k/softmax.cu 2>two.err || no "two files, one fatbin"
grep -q 'warning: two.fatbin will hold the images of 2 kernel files' two.err || no "no multi-file warning"

# 5. determinism: -j 1 and -j 2 without the cache
$fb compile --no-cache -j 1 --arch-list "$arch" -o j1.fatbin k/reduce.cu k/softmax.cu k/layernorm.cu || no "-j 1"
$fb compile --no-cache -j 2 --arch-list "$arch" -o j2.fatbin k/reduce.cu k/softmax.cu k/layernorm.cu || no "-j 2"
cmp -s j1.fatbin j2.fatbin || no "-j 1 and -j 2 outputs differ"

# 6. an error writes nothing and leaves an old output alone
printf 'extern "C" __global__ void k(int *p)\n{\n\t*p = nope;\n}\n' >k/bad.cu
cp out.fatbin keep.fatbin
$fb compile --arch-list "$arch" -o out.fatbin --depfile bad.d --emit-dir emit_bad k/reduce.cu k/bad.cu 2>err.txt
rc=$?
[ $rc = 1 ] || no "compile error: exit $rc, want 1"
grep -Eq '^k/bad.cu:3:7: error: identifier "nope" is undefined \[(sm_75|sm_80)\]$' err.txt || { cat err.txt >&2; no "error line"; }
grep -q 'other jobs cancelled, nothing written' err.txt || no "no cancel note"
cmp -s out.fatbin keep.fatbin || no "old output overwritten on error"
[ -e bad.d ] && no "depfile written on error"
[ -e emit_bad ] && no "emit dir written on error"
ls out.fatbin.tmp.* >/dev/null 2>&1 && no "temporary left behind"

# 7. cache stats / clear
$fb cache stats >stats.txt || no "cache stats"
grep -q "cache: $FATBUILD_CACHE_DIR" stats.txt || no "stats dir"
n=$(sed -n 's/^entries: //p' stats.txt)
[ "${n:-0}" -ge 8 ] || no "stats: $n entries"
mkdir -p "$FATBUILD_CACHE_DIR/pch.AbCdEf/w0" && : >"$FATBUILD_CACHE_DIR/pch.AbCdEf/w0/k_0.pch"
$fb cache clear | grep -q "removed $n entries" || no "clear"
[ -e "$FATBUILD_CACHE_DIR/pch.AbCdEf" ] && no "cache clear left a stale PCH directory"
$fb cache stats | grep -qx 'entries: 0' || no "not empty after clear"

# 8. precompiled headers: -v says per job whether the PCH was made or used; the images are
# the same bytes with --no-pch; the private PCH directory is gone afterwards; a worker whose
# parent is killed outright dies too (no orphan NVRTC process).
$fb compile -v -j 1 --arch-list 8.0 -o pch/ k/reduce.cu k/softmax.cu k/layernorm.cu 2>pch.err || { cat pch.err >&2; no "PCH compile"; }
grep -q '(PCH made ' pch.err || { cat pch.err >&2; no "-v: no 'PCH made'"; }
grep -q '(PCH used)' pch.err || { cat pch.err >&2; no "-v: no 'PCH used'"; }
grep -Eq 'PCH made [12], used [12], refused 0' pch.err || { cat pch.err >&2; no "-v: PCH summary"; }
grep -q 'Remark\|precompiled header' pch.err && { cat pch.err >&2; no "PCH messages shown as warnings"; }
$fb compile --no-pch --no-cache -j 1 --arch-list 8.0 -o nopch/ k/reduce.cu k/softmax.cu k/layernorm.cu || no "--no-pch"
for f in reduce softmax layernorm; do cmp -s pch/$f.fatbin nopch/$f.fatbin || no "PCH on and off differ for $f"; done
ls -d "$FATBUILD_CACHE_DIR"/pch.* >/dev/null 2>&1 && no "PCH directory left in the cache"
$fb cache clear >/dev/null
cp "$FB_SOURCE_DIR/examples/kernels/radix_sort.cu" k/
$fb compile --no-cache -j 1 --arch-list 8.0 -o orphan/ k/radix_sort.cu k/reduce.cu 2>/dev/null &
parent=$!
kids=
for i in $(seq 1 400); do
	kids=$(ps -o pid= --ppid $parent 2>/dev/null | tr -d ' ')
	[ -n "$kids" ] && break
	sleep 0.05
done
[ -n "$kids" ] || no "no worker seen"
sleep 0.1 # the worker is inside NVRTC now (a CUB compile takes a second or more)
kill -9 $parent
wait $parent 2>/dev/null
# The worker gets SIGTERM from the kernel (PR_SET_PDEATHSIG), stops its NVRTC jobs and exits:
# it takes under 1 s here, but give it 30 s: a sanitizer build runs its exit-time leak scan
# first, and the suite runs the torch builds beside this test.
running() { [ -d /proc/$1 ] && grep -q '^State:.*[RSD]' /proc/$1/status 2>/dev/null; } # not gone, not a zombie
for i in $(seq 1 300); do
	alive=
	for k in $kids; do
		running $k && alive=1
	done
	[ -z "$alive" ] && break
	sleep 0.1
done
for k in $kids; do
	running $k && {
		no "worker $k outlived its killed parent by 30 s: $(grep '^State:' /proc/$k/status) $(tr '\0' ' ' </proc/$k/cmdline)"
		ps -o pid,ppid,stat,etime,args -g "$k" >&2
		kill -9 $k
	}
done

[ $fail = 0 ] && echo "compile_cli: ok"
exit $fail
