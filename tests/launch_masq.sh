#!/usr/bin/env bash
# launch_masq.sh: the masquerade directory (docs/launcher.md "One word"). `fatbuild shims DIR`
# makes links named after the compilers; with DIR first on PATH:
# (a) `cc --version` prints what cc prints and `cc -c` writes cc's object, logged as a pass;
# (b) a PATH whose only nvcc is the link, or the links of two fatbuilds (this one and a copy
#     installed elsewhere), is one line naming PATH and exit 127, at once (no loop);
# (c) with nvcc: `nvcc -c k.cu` is split (a `split` line in FATBUILD_LAUNCH_LOG) and its object
#     is plain nvcc's once nvcc's temp-file stem is masked, as tests/launch_nvcc.sh (b) masks it.
set -u
: "${FATBUILD_BIN:?}"
command -v cc >/dev/null || { echo "SKIP: no cc on PATH"; exit 77; }
to=$(command -v timeout) || { echo "SKIP: no timeout on PATH"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/fblaunchmasq.XXXXXX")
trap 'rm -rf "$w"' EXIT
export FATBUILD_CACHE_DIR=$w/cache FATBUILD_LAUNCH_LOG=$w/launch.log
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
cd "$w" || exit 1
"$FATBUILD_BIN" shims "$w/shims" >shims.out || no "fatbuild shims failed: $(cat shims.out)"
self=$(readlink -f "$FATBUILD_BIN")
for n in nvcc gcc g++ cc c++ clang clang++; do
	[ -L "shims/$n" ] && [ "$(readlink -f "shims/$n")" = "$self" ] || no "shims/$n is not a link to fatbuild"
done
"$FATBUILD_BIN" shims "$w/shims" >/dev/null || no "fatbuild shims on its own dir again failed"
real=$PATH
export PATH=$w/shims:$real

# (a)
[ "$(command -v cc)" = "$w/shims/cc" ] || no "(a) cc on PATH is $(command -v cc), not the link"
cc --version >via.out 2>&1
PATH=$real cc --version >plain.out 2>&1
cmp -s via.out plain.out || { diff via.out plain.out | head -5 >&2; no "(a) cc --version through the link is not cc's"; }
tail -1 launch.log | grep -q '^pass cc -: a host compiler' || no "(a) cc through the link is not logged: $(tail -1 launch.log)"
printf 'int twice(int x) { return 2 * x; }\n' >h.c
cc -c h.c -o h1.o && PATH=$real cc -c h.c -o h2.o && cmp -s h1.o h2.o || no "(a) cc -c through the link: not cc's object"

# (b)
mkdir only && ln -s "$w/shims/nvcc" only/nvcc
check127() { # WHAT PATH
	local rc
	PATH=$2 "$to" 20 "$w/shims/nvcc" --version >out 2>err
	rc=$?
	[ "$rc" = 127 ] || no "$1: exit $rc, want 127 ($(head -c 300 err))"
	[ ! -s out ] && [ "$(wc -l <err)" = 1 ] && grep -qF "(PATH=$2)" err || no "$1: want one line naming PATH: '$(cat out err)'"
}
check127 "(b) only the link" "$w/only:$w/shims"
mkdir other && cp "$FATBUILD_BIN" other/fatbuild && other/fatbuild shims "$w/shims2" >/dev/null || no "(b) a copy's shims"
check127 "(b) two fatbuilds' links" "$w/shims:$w/shims2"

# (c)
if PATH=$real command -v nvcc >/dev/null; then
	printf '__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n' >k.cu
	[ "$(command -v nvcc)" = "$w/shims/nvcc" ] || no "(c) nvcc on PATH is $(command -v nvcc), not the link"
	: >launch.log
	gen=(-gencode arch=compute_80,code=sm_80 -gencode "arch=compute_90,code=[sm_90,compute_90]")
	nvcc "${gen[@]}" -O3 -c k.cu -o s.o || no "(c) nvcc through the link failed"
	grep -q '^split nvcc k.cu: cicc compute_80 miss, ptxas sm_80 miss, cicc compute_90 miss' launch.log ||
		{ cat launch.log >&2; no "(c) nvcc through the link was not split"; }
	PATH=$real nvcc "${gen[@]}" -O3 -c k.cu -o p.o || no "(c) plain nvcc failed"
	mask() { perl -pe 's/tmpxft_[0-9a-f]{8}_[0-9a-f]{8}/tmpxft_XXXXXXXX_XXXXXXXX/g' "$1"; }
	cmp -s <(mask s.o) <(mask p.o) || no "(c) the object through the link differs from plain nvcc's beyond the temp-file stem"
else
	echo "launch_masq: no nvcc: (c) not run"
fi

[ "$fail" = 0 ] && echo "launch_masq: ok"
exit "$fail"
