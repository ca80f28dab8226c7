#!/usr/bin/env bash
# fatbin_cli.sh: usage, exit codes and messages of pack/inspect/check/extract on inputs the
# script makes itself (no toolkit needed: the cubin is a hand-built CUDA ELF header).
set -u
: "${FATBUILD_BIN:?}"
FB=$FATBUILD_BIN
w=$(mktemp -d "${TMPDIR:-/tmp}/fbcli.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect() { # want-exit stderr-substring cmd...
	local want=$1 msg=$2; shift 2
	"$@" >out 2>err
	local rc=$?
	if [ $rc != "$want" ]; then fail "$*: exit $rc, want $want ($(head -2 err))"; return; fi
	if [ -n "$msg" ] && ! grep -qF -- "$msg" err out; then fail "$*: no '$msg' in: $(head -2 err)"; return; fi
	echo "ok   $*"
}
for c in pack inspect check extract; do
	expect 0 "usage: fatbuild $c" "$FB" "$c" --help
	expect 2 "fatbuild: $c: unknown option '--no-such-option'; see 'fatbuild $c --help'" "$FB" "$c" --no-such-option
done
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
printf '.version 9.0\n.target sm_90a\n.address_size 64\n' >b.ptx
expect 2 "no output file" "$FB" pack a.ptx
expect 2 "unknown compression" "$FB" pack -o x.fatbin --compress brotli a.ptx
expect 2 "not a target" "$FB" pack -o x.fatbin a.ptx@sm_8
expect 1 "pack: cannot open missing.ptx: No such file" "$FB" pack -o x.fatbin missing.ptx
expect 1 "a.ptx is compute_80, not compute_86" "$FB" pack -o x.fatbin a.ptx@compute_86
expect 0 "" "$FB" pack -o x.fatbin --compress zstd a.ptx b.ptx
[ -e x.fatbin.tmp.* ] 2>/dev/null && fail "temporary file left behind"
expect 0 "compute_90a" "$FB" inspect x.fatbin
expect 0 "" "$FB" check --arch 8.0,8.9,9.0 x.fatbin
grep -q "9.0: x.fatbin: PTX JIT from compute_90a (entry 1)" out || fail "check output: $(cat out)"
expect 1 "no kernel image is available for 7.5: x.fatbin has compute_80, compute_90a" "$FB" check --arch 7.5 x.fatbin
expect 2 "not a compute capability" "$FB" check --arch banana x.fatbin
expect 1 "has no sm_80 image" "$FB" extract --arch sm_80 x.fatbin -o y
expect 0 "" "$FB" extract --arch compute_90a x.fatbin -o y.ptx
cmp -s y.ptx b.ptx || fail "extract did not give back b.ptx"
expect 1 "above the cap" "$FB" extract --arch compute_90a --max-size 8 x.fatbin -o y.ptx
echo "hello" >a.txt
expect 1 "a.txt: not a fatbin, cubin, PTX" "$FB" inspect a.txt
head -c 40 x.fatbin >t.fatbin
expect 1 "runs past the end of the data" "$FB" inspect t.fatbin
expect 1 "cannot open" "$FB" inspect nope.fatbin
# a header arch that disagrees with the cubin is reported (hand-built sm_80 CUDA ELF, header says 86)
python3 - <<'PY' || fail "cannot build the mismatch fixture"
import struct
elf = bytearray(64)
elf[0:4] = b"\x7fELF"; elf[4] = 2; elf[5] = 1; elf[6] = 1; elf[7] = 0x41; elf[8] = 8
struct.pack_into("<HHI", elf, 0x10, 2, 190, 1)
struct.pack_into("<I", elf, 0x30, 0x06005004)
struct.pack_into("<H", elf, 0x34, 64)
hdr = bytearray(64)
struct.pack_into("<HHIQ", hdr, 0, 2, 0x101, 0x40, 64)
struct.pack_into("<HHI", hdr, 0x18, 8, 1, 86)
struct.pack_into("<Q", hdr, 0x28, 0x11)
body = hdr + elf
open("mism.fatbin", "wb").write(struct.pack("<IHHQ", 0xBA55ED50, 1, 0x10, len(body)) + body)
PY
expect 0 "the cubin is for sm_80 but the entry header says 86" "$FB" inspect --kernels mism.fatbin
# --arch native through archprobe's probe, against the fake driver when it is built
fake=${FB_BINARY_DIR:-}/fakecuda/libcuda.so.1
if [ -e "$fake" ]; then
	ARCHPROBE_LIBCUDA=$fake FAKECUDA_DEVICES=8.6,9.0,8.6 expect 0 "" "$FB" check --arch native x.fatbin
	[ "$(cat out)" = "$(printf '8.6: x.fatbin: PTX JIT from compute_80 (entry 0)\n9.0: x.fatbin: PTX JIT from compute_90a (entry 1)')" ] ||
		fail "check native output: $(cat out)"
	ARCHPROBE_LIBCUDA=$fake FAKECUDA_DEVICES= expect 1 "no device" "$FB" check --arch native x.fatbin
else
	echo "note: $fake not built; --arch native not exercised"
fi
[ $fails = 0 ] && echo "all cli checks passed"
exit $((fails > 0))
