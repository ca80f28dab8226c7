#!/usr/bin/env bash
# bad_inputs.sh: the bad-input catalogue. Each case crafts one malformed input from a
# good one made here (ptxas + fatbuild pack/embed, ar, byte patches with dd), runs the CLI, and
# checks the documented exit code, ONE specific stderr line (a bash glob), and that no output
# file (-o out*) was left behind. Run: FATBUILD_BIN=... ARCHPROBE_BIN=... bash bad_inputs.sh
set -u
FB=${FATBUILD_BIN:?}
cuda=${CUDA_HOME:-/usr/local/cuda}
w=$(mktemp -d "${TMPDIR:-/tmp}/fbbad.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w" || exit 1
fails=0 n=0

# expect NAME EXIT 'GLOB' CMD...: one stderr line matching GLOB, exit EXIT, no out* file.
expect() {
	local name=$1 want=$2 glob=$3
	shift 3
	n=$((n + 1))
	rm -f out out.* .out*
	"$@" >stdout 2>stderr
	local rc=$? err
	err=$(cat stderr)
	local bad=
	[ "$rc" = "$want" ] || bad="exit $rc, want $want"
	# shellcheck disable=SC2053
	[[ $err == $glob ]] || bad="$bad; stderr does not match '$glob'"
	[ "$(wc -l <stderr)" -le 1 ] || bad="$bad; more than one stderr line"
	if LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <stderr); then bad="$bad; control bytes on stderr"; fi
	if ls out out.* .out* >/dev/null 2>&1; then bad="$bad; output left behind: $(ls -a | grep '^\.\?out' | tr '\n' ' ')"; fi
	if [ -n "$bad" ]; then
		echo "FAIL $name: ${bad#; }"
		echo "  stderr: $err"
		fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}
# patch FILE OFFSET BYTES(printf escapes)
patch() { printf "$3" | dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none; }

# ---- good inputs ----
cat >k.ptx <<'PTX'
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p){ .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ret; }
PTX
"$cuda/bin/ptxas" -arch=sm_80 -o k.cubin k.ptx || { echo "ptxas failed"; exit 1; }
$FB pack -o plain.fatbin k.ptx || exit 1            # entry at 0x10, header 0x50
$FB pack --compress zstd -o zstd.fatbin k.ptx || exit 1
$FB pack --compress lz4 -o lz4.fatbin k.ptx || exit 1
$FB embed -o host.o zstd.fatbin || exit 1
X="$FB extract --arch compute_80"

# ---- containers ----
head -c 10 plain.fatbin >t1
expect header-truncated 1 "fatbuild: extract: t1: container 0 at 0x0: header truncated (10 bytes, need 16)" $X t1 -o out
head -c 40 plain.fatbin >t2
expect container-truncated 1 "fatbuild: extract: t2: container 0 at 0x0: size 0x* runs past the end of the data (0x18 bytes left)" $X t2 -o out
cp plain.fatbin t3; patch t3 0x18 '\x00\x01\x00\x00'
expect entry-past-end 1 "fatbuild: extract: t3: container 0: entry 0: payload size 0x* runs past the container end*" $X t3 -o out
cp plain.fatbin t4; patch t4 0x14 '\x38'
expect header-below-0x40 1 "fatbuild: extract: t4: container 0: entry 0: header size 0x38 is below 0x40" $X t4 -o out
cp plain.fatbin t5; patch t5 0x14 '\x44'
expect header-not-multiple-of-8 1 "fatbuild: extract: t5: container 0: entry 0: header size 0x44 is not a multiple of 8" $X t5 -o out
cp plain.fatbin t6; patch t6 0x08 '\xf8\xff\xff\xff\xff\xff\xff\xff'
expect fatsize-overflows 1 "fatbuild: extract: t6: container 0 at 0x0: size 0xfffffffffffffff8 runs past the end of the data*" $X t6 -o out
cp plain.fatbin t7; patch t7 0x18 '\xf8\xff\xff\xff\xff\xff\xff\xff'
expect payload-size-overflows 1 "fatbuild: extract: t7: container 0: entry 0: payload size 0xfffffffffffffff8 runs past the container end*" $X t7 -o out
cp plain.fatbin t8; patch t8 0x14 '\xf8\xff\xff\xff'
expect header-size-overflows 1 "fatbuild: extract: t8: container 0: entry 0: header size 0xfffffff8 runs past the container end*" $X t8 -o out
cp plain.fatbin t9; patch t9 0x30 '\x40\x00\x00\x00\xff\xff\xff\xff'
expect identifier-outside-header 1 "fatbuild: extract: t9: container 0: entry 0: identifier (offset 0x40, length 4294967295) lies outside the 0x50-byte header" $X t9 -o out
cp plain.fatbin t10; patch t10 0x24 '\xf0\xff\xff\xff'
expect options-offset-outside-header 1 "fatbuild: extract: t10: container 0: entry 0: options descriptor offset 0xfffffff0 lies outside the 0x50-byte header" $X t10 -o out
cp plain.fatbin t11; patch t11 0x00 '\x51'
expect bad-magic 1 "fatbuild: t11: not a fatbin, cubin, PTX, ELF object/library or ar archive" $X t11 -o out

# ---- compression ----
cp zstd.fatbin c1; patch c1 0x20 '\xff\x00'
expect compressed-size-past-payload 1 "fatbuild: extract: c1: container 0: entry 0: compressed size 0xff does not fit the payload size 0x*" $X c1 -o out
cp zstd.fatbin c2; patch c2 0x48 '\x10\x00\x00\x00'
expect zstd-uncompressed-size-lies 1 "fatbuild: extract: c2: container 0: entry 0: zstd frame holds * bytes but the header says 16" $X c2 -o out
cp zstd.fatbin c3; patch c3 0x70 '\xff\xff\xff\xff'
expect zstd-corrupt 1 "fatbuild: extract: c3: container 0: entry 0: zstd decompression failed: *" $X c3 -o out
cp lz4.fatbin c4; patch c4 0x48 '\x10\x00\x00\x00'
expect lz4-uncompressed-size-lies 1 "fatbuild: extract: c4: container 0: entry 0: *LZ4*" $X c4 -o out
cp zstd.fatbin c5; patch c5 0x48 '\x00\x00\x00\x00\x00\x01\x00\x00'
expect bomb-header-1TiB 1 "fatbuild: extract: c5: container 0: entry 0: uncompressed size 1099511627776 is above the cap of 1073741824 bytes (raise it with --max-size)" $X c5 -o out
expect bomb-cap-option 1 "fatbuild: extract: zstd.fatbin: container 0: entry 0: uncompressed size * is above the cap of 100 bytes (raise it with --max-size)" $X --max-size 100 zstd.fatbin -o out
expect cap-option-invalid 2 "fatbuild: extract: invalid --max-size value '1x'" $X --max-size 1x zstd.fatbin -o out
expect inspect-cap-option-invalid 2 "fatbuild: inspect: invalid --max-size value '-1'" $FB inspect --max-size -1 zstd.fatbin

# ---- kinds and flags ----
cp plain.fatbin k1; patch k1 0x10 '\x07'
expect unknown-kind 1 "fatbuild: extract: k1: container 0: entry 0: unknown kind kind7 cannot be decoded" $X k1 -o out
cp plain.fatbin k2; patch k2 0x3a '\x01'
expect obfuscated 1 "fatbuild: extract: k2: container 0: entry 0: payload is obfuscated (flag 0x10000, key 0x0) and cannot be decoded" $X k2 -o out
cp plain.fatbin k3; patch k3 0x3a '\x40'
$FB inspect k3 >k3.txt 2>&1
n=$((n + 1))
if grep -q 'unknown:0x400000' k3.txt; then echo "ok   unknown-flag-reported"; else echo "FAIL unknown-flag-reported"; cat k3.txt; fails=$((fails + 1)); fi

# ---- ELF: cubins and host objects ----
cp k.cubin e1; patch e1 0x28 '\x00\x00\x00\x00\x00\x01\x00\x00'
expect cubin-section-table-past-end 1 "fatbuild: e1: ELF section table (offset 0x10000000000, * entries) runs past the end (* bytes)" $FB inspect --kernels e1
cp k.cubin e2; patch e2 0x3c '\xff\xff'
expect cubin-65535-sections 1 "fatbuild: e2: ELF section table (offset 0x*, 65535 entries) runs past the end (* bytes)" $FB inspect --kernels e2
cp k.cubin e3; patch e3 0x3a '\x10\x00'
expect cubin-section-header-size 1 "fatbuild: e3: ELF section header size 16 is not 64" $FB inspect --kernels e3
cp k.cubin e3b; patch e3b 0x3e '\xff\x00'
expect cubin-section-name-index 1 "fatbuild: e3b: container 0: entry 0: ELF section-name table index 255 is not one of the * sections" $FB inspect --kernels e3b
head -c 100 k.cubin >e4
expect cubin-truncated 1 "fatbuild: e4: ELF section table (offset 0x*) runs past the end (100 bytes)" $FB inspect --kernels e4
cp host.o e5; patch e5 0x28 '\x00\x00\x00\x10'
expect host-section-table-offset 1 "fatbuild: e5: ELF section table offset 0x10000000 is past the end (* bytes)" $FB inspect e5
cp host.o e6; patch e6 0x3c '\xff\xff'
expect host-65535-sections 1 "fatbuild: e6: ELF section table (65535 entries at 0x*) runs past the end (* bytes)" $FB inspect e6
printf '\177ELF' >e7.so
expect elf-header-truncated 1 "fatbuild: e7.so: ELF header truncated (4 bytes)" $FB inspect e7.so
echo "not an ELF file" >libnot.so
expect non-elf-so 1 "fatbuild: libnot.so: not a fatbin, cubin, PTX, ELF object/library or ar archive" $FB inspect libnot.so
: >empty.so
expect empty-file 1 "fatbuild: empty.so: not a fatbin, cubin, PTX, ELF object/library or ar archive" $FB inspect empty.so
mkdir -p dir.so
expect directory 1 "fatbuild: dir.so: not a regular file (a directory)" $FB inspect dir.so
expect missing-file 1 "fatbuild: cannot open missing.so: No such file or directory" $FB inspect missing.so
expect embed-non-fatbin 1 "fatbuild: embed: input 1 is not a fatbinary (bad magic, header or size)" $FB embed -o out.o libnot.so
expect pack-broken-cubin 1 "fatbuild: pack: e3: ELF section header size 16 is not 64" $FB pack -o out.fatbin e3

# ---- kernel sources ----
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n\0junk\n' >nul.cu
expect compile-source-with-nul 2 "fatbuild: nul.cu: contains a NUL byte; not a CUDA source" \
	env FATBUILD_CACHE_DIR="$w/cache" $FB compile --arch-list 8.0 -o out.fatbin nul.cu
expect compile-missing-source 1 "fatbuild: cannot open missing.cu: No such file or directory" \
	env FATBUILD_CACHE_DIR="$w/cache" $FB compile --arch-list 8.0 -o out.fatbin missing.cu

# ---- ar archives ----
hdr() { printf '%-16s%-12s%-6s%-6s%-8s%-10s`\n' "$1" 0 0 0 644 "$2"; }
{ printf '!<arch>\n'; hdr odd.txt/ 1; printf 'x'; } >a1.a
expect archive-odd-size-no-padding-at-end 0 "" $FB inspect a1.a
{ printf '!<arch>\n'; hdr odd.txt/ 1; printf 'x\n'; hdr k.fatbin/ "$(wc -c <zstd.fatbin)"; cat zstd.fatbin; } >a2.a
expect archive-odd-size-then-member 0 "" $FB inspect a2.a
grep -q 'a2.a(k.fatbin)\|compute_80' stdout || { echo "FAIL archive-odd-size-then-member: member after odd padding not found"; fails=$((fails + 1)); }
{ printf '!<arch>\n'; hdr odd.txt/ -5; printf 'x'; } >a3.a
expect archive-negative-size 1 "fatbuild: a3.a: archive member at 0x8 has a bad size field '-5        '" $FB inspect a3.a
{ printf '!<arch>\n'; hdr odd.txt/ 9999999999; printf 'x'; } >a4.a
expect archive-size-past-end 1 "fatbuild: a4.a: archive member at 0x8: size 9999999999 runs past the end (1 bytes left)" $FB inspect a4.a
{ printf '!<arch>\n'; hdr odd.txt/ 12a; printf 'x'; } >a5.a
expect archive-size-not-decimal 1 "fatbuild: a5.a: archive member at 0x8 has a bad size field '12a       '" $FB inspect a5.a
{ printf '!<arch>\n'; printf '%-16s%-12s%-6s%-6s%-8s%-10s`\n' odd.txt/ 0 0 0 644 '1
'; printf 'x'; } >a6.a
expect archive-size-with-newline 1 "fatbuild: a6.a: archive member at 0x8 has a bad size field '1?        '" $FB inspect a6.a
{ printf '!<arch>\n'; hdr /12 1; printf 'x\n'; } >a7.a
expect archive-missing-long-name 1 "fatbuild: a7.a: archive member at 0x8 names a long name that does not exist" $FB inspect a7.a
{ printf '!<arch>\n'; hdr odd.txt/ 1; printf 'x\nabc'; } >a8.a
expect archive-header-truncated 1 "fatbuild: a8.a: archive member header at 0x46 truncated" $FB inspect a8.a
{ printf '!<arch>\n'; printf '%-58s\n\n' odd.txt/; } >a9.a
expect archive-header-no-terminator 1 "fatbuild: a9.a: archive member header at 0x8 is corrupt (no terminator)" $FB inspect a9.a
printf '!<thin>\n' >a10.a
expect thin-archive 1 "fatbuild: a10.a: thin archives are not supported (their members live in other files)" $FB inspect a10.a

# ---- arch lists (env var and argument; 100 000 items and NUL bytes: hardening_test.c) ----
A="$FB flags --cuda-version 13.0"
many=$(printf '86,%.0s' $(seq 30000))
expect archlist-30000-items 0 "" $A --arch-list "$many"
[ "$(cat stdout)" = "-gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_86,code=compute_86" ] || { echo "FAIL archlist-30000-items: $(cat stdout)"; fails=$((fails + 1)); }
expect archlist-env-30000-bad 2 "fatbuild: item 1 '86x': not an arch; accepted: *" env TORCH_CUDA_ARCH_LIST="$(printf '86x %.0s' $(seq 30000))" $A
expect archlist-huge-major 2 "fatbuild: item 1 '99999999999999999999.0': not an arch; *" $A --arch-list 99999999999999999999.0
expect archlist-huge-sm 2 "fatbuild: item 1 'sm_4294967376': not an arch; *" $A --arch-list sm_4294967376
expect archlist-huge-minor 2 "fatbuild: item 1 '8.99999999999999999999': not an arch; *" $A --arch-list 8.99999999999999999999
expect archlist-non-ascii 2 "fatbuild: item 2 'Ämpere': not an arch; *" $A --arch-list "8.0 Ämpere"
expect archlist-fullwidth-digits 2 "fatbuild: item 1 '８.０': not an arch; *" $A --arch-list "８.０"
expect archlist-terminal-escape 2 "fatbuild: item 1 '?[31m8.0': not an arch; *" $A --arch-list $'\e[31m8.0'
expect archlist-env-control-byte 2 "fatbuild: item 1 '8.0?': not an arch; *" env TORCH_CUDA_ARCH_LIST=$'8.0\x01' $A

echo "$n cases, $fails failed"
[ $fails = 0 ]
