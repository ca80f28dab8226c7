#!/usr/bin/env bash
# fuzz.sh: builds every libFuzzer target (clang, ASan+UBSan; tests/fuzz/fuzz_*.c) and runs each
# for SECONDS over its seed corpus, printing executions per target and any crash.
#   scripts/fuzz.sh [SECONDS]        default 60 per target; builds in build-fuzz (FB_FUZZ_DIR)
#   scripts/fuzz.sh --seeds          regenerates the checked-in seeds tests/fuzz/corpus/*
#                                    with the toolkit (nvcc-free: ptxas, the built fatbuild, ar)
#   FB_FUZZ_TARGETS="fuzz_ninja fuzz_fatbin" scripts/fuzz.sh 30   only those targets
# New corpus inputs go to $dir/fuzz-corpus/<target> (never the sources). A crash leaves
# $dir/fuzz-out/<target>/crash-* ; copy it to tests/hardening/<target>/ (hardening_replay
# replays every file there) and fix the code. Exit: 0 when no target crashed, 1 otherwise.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${FB_FUZZ_DIR:-build-fuzz}
case $dir in /*) ;; *) dir=$root/$dir ;; esac
jobs=$(nproc 2>/dev/null || echo 2)

build() {
	CC=clang cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFB_SANITIZE=ON -DFB_FUZZ=ON >/dev/null || exit 1
	cmake --build "$dir" -j "$jobs" || exit 1
}

# Seeds: tiny inputs made by a fixed recipe; regenerate with --seeds after format changes.
seeds() {
	local c=tests/fuzz/corpus fb=${FATBUILD_BIN:-$dir/bin/fatbuild} t
	local cuda=${CUDA_HOME:-/usr/local/cuda}
	t=$(mktemp -d) || exit 1
	trap 'rm -rf "$t"' RETURN
	[ -x "$fb" ] || build
	cat >"$t/k.ptx" <<'PTX'
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p){ .reg .b64 %rd<2>; .shared .align 4 .b8 s[16]; ld.param.u64 %rd1, [p]; ret; }
PTX
	"$cuda/bin/ptxas" -arch=sm_80 -o "$t/k80.cubin" "$t/k.ptx" || exit 1
	sed 's/sm_80/sm_90a/' "$t/k.ptx" >"$t/k90a.ptx"
	"$cuda/bin/ptxas" -arch=sm_90a -o "$t/k90a.cubin" "$t/k90a.ptx" || exit 1
	mkdir -p $c/fuzz_fatbin $c/fuzz_cubin $c/fuzz_hostelf $c/fuzz_archive $c/fuzz_ninja $c/fuzz_text
	rm -f $c/fuzz_fatbin/* $c/fuzz_cubin/* $c/fuzz_hostelf/* $c/fuzz_archive/* $c/fuzz_ninja/* $c/fuzz_text/*
	"$fb" pack -o $c/fuzz_fatbin/ptx_plain "$t/k.ptx" || exit 1
	"$fb" pack --compress zstd -o $c/fuzz_fatbin/ptx_zstd "$t/k.ptx" || exit 1
	"$fb" pack --compress lz4 --ident k.cu --cmdline -O3 -o $c/fuzz_fatbin/ptx_lz4 "$t/k.ptx" || exit 1
	"$fb" pack -o $c/fuzz_fatbin/elf_ptx "$t/k80.cubin" "$t/k.ptx" || exit 1
	"$fb" pack --compress zstd -o $c/fuzz_fatbin/elf_zstd "$t/k90a.cubin@sm_90a" || exit 1
	cat $c/fuzz_fatbin/ptx_plain $c/fuzz_fatbin/ptx_lz4 >$c/fuzz_fatbin/two_containers
	cp "$t/k80.cubin" $c/fuzz_cubin/sm80
	cp "$t/k90a.cubin" $c/fuzz_cubin/sm90a
	"$fb" embed -o $c/fuzz_hostelf/host.o $c/fuzz_fatbin/ptx_zstd || exit 1
	cp $c/fuzz_fatbin/elf_ptx $c/fuzz_hostelf/fatbin
	cp "$t/k80.cubin" $c/fuzz_hostelf/cubin
	cp "$t/k.ptx" $c/fuzz_hostelf/ptx
	# archives: one member with an odd size (padding byte), one with a long name
	printf 'x' >"$t/odd.txt"
	cp $c/fuzz_hostelf/host.o "$t/a_member_with_a_long_name.o"
	(cd "$t" && ar rcS lib.a odd.txt a_member_with_a_long_name.o && ar rc libs.a odd.txt a_member_with_a_long_name.o) || exit 1
	tail -c +9 "$t/lib.a" >$c/fuzz_archive/long_name_odd
	tail -c +9 "$t/libs.a" >$c/fuzz_archive/symtab
	cp "$t/lib.a" $c/fuzz_hostelf/archive
	# fatbuild check: a container kept in .ldata (objcopy), relocatable code in __nv_relfatbin, a
	# fatbin taken whole ('!' first); METADATA, RECORD, a wheel's name, a RECORD path to join
	mkdir -p $c/fuzz_devcode $c/fuzz_distinfo
	rm -f $c/fuzz_devcode/* $c/fuzz_distinfo/*
	objcopy --rename-section .nv_fatbin=.ldata $c/fuzz_hostelf/host.o "$t/own.o" || exit 1
	objcopy --rename-section .nv_fatbin=__nv_relfatbin $c/fuzz_hostelf/host.o "$t/rel.o" || exit 1
	tail -c +7 "$t/own.o" >$c/fuzz_devcode/own_ldata
	tail -c +7 "$t/rel.o" >$c/fuzz_devcode/relfatbin
	{ printf '!'; cat $c/fuzz_fatbin/elf_ptx; } >$c/fuzz_devcode/fatbin
	printf '\0Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0\n\nbody\n' >$c/fuzz_distinfo/metadata
	printf '\1torch/a.py,sha256=x,1\n"a,b""c",,\n' >$c/fuzz_distinfo/record
	printf '\2torch-2.15.0+cu132-cp311-cp311-linux_x86_64.whl' >$c/fuzz_distinfo/wheel
	printf '\3lib/python3.11/site-packages\0../../../bin/x' >$c/fuzz_distinfo/join
	printf 'a b$c:d|e\0x $y\0o\0i' >$c/fuzz_ninja/specials
	printf "it's \"q\"\0 lead\0/p/a b.o\0/p/c:d.cu" >$c/fuzz_ninja/quotes
	printf '\0\0\0' >$c/fuzz_ninja/empty
	printf 'k.cu(3): error: expected a ";"\n  x[0]=1 }\n        ^\n\n1 error detected in the compilation of "k.cu".\n' \
		>$c/fuzz_text/nvrtc_log
	cp "$t/k.ptx" $c/fuzz_text/ptx
	printf 'compute_90a' >$c/fuzz_text/target
	printf '/a b/#c$d\\e.h' >$c/fuzz_text/path
	# fuzz_prune: two control bytes (targets, options) + a fatbin, an object, an archive, a linked .so
	mkdir -p $c/fuzz_prune
	rm -f $c/fuzz_prune/*
	"$fb" pack --compress zstd -o "$t/multi.fatbin" "$t/k80.cubin" "$t/k90a.cubin@sm_90a" "$t/k.ptx" || exit 1
	"$fb" embed -o "$t/multi.o" "$t/multi.fatbin" || exit 1
	(cd "$t" && cp multi.o m1.o && ar rc libm.a odd.txt m1.o) || exit 1
	cc -shared -nostdlib -s -Wl,-z,noseparate-code,-z,max-page-size=0x100,--build-id=none,--hash-style=gnu -o "$t/multi.so" "$t/multi.o" || exit 1
	{ printf '\002\000'; cat "$t/multi.fatbin"; } >$c/fuzz_prune/fatbin_sm80
	{ printf '\110\000'; cat "$t/multi.fatbin"; } >$c/fuzz_prune/fatbin_sm90_ptx80
	{ printf '\001\001'; cat "$t/multi.fatbin"; } >$c/fuzz_prune/fatbin_missing
	{ printf '\010\000'; cat "$t/multi.o"; } >$c/fuzz_prune/object
	{ printf '\002\000'; cat "$t/libm.a"; } >$c/fuzz_prune/archive
	{ printf '\010\004'; cat "$t/multi.so"; } >$c/fuzz_prune/linked
	# fuzz_probe: real replies of the probe child (archprobe --probe-child=1 writes on fd 3)
	# from the fake driver, and an opt-in probe cache file (the same record after a key)
	local ap=${ARCHPROBE_BIN:-$dir/bin/archprobe} fake=$dir/fakecuda/libcuda.so.1
	[ -x "$ap" ] && [ -e "$fake" ] || build
	mkdir -p $c/fuzz_probe
	rm -f $c/fuzz_probe/*
	child() { env -u CUDA_VISIBLE_DEVICES -u FAKECUDA_FAIL "$@" "$ap" --probe-child=1 --libcuda "$fake" 3>&1 >/dev/null |
		sed "s|$fake|/lib/libcuda.so.1|g"; }
	child FAKECUDA_DEVICES=8.6,9.0 >$c/fuzz_probe/two_devices
	child FAKECUDA_DEVICES=8.6,9.0,12.0 FAKECUDA_FAIL='cuDeviceGetAttribute@1#75:999' >$c/fuzz_probe/device_error
	child FAKECUDA_DEVICES= >$c/fuzz_probe/no_device
	child FAKECUDA_DEVICES=8.12,10.3 >$c/fuzz_probe/bad_cc
	child FAKECUDA_INIT=100 >$c/fuzz_probe/init_error
	(cd "$t" && FAKECUDA_DEVICES=12.1 ARCHPROBE_CACHE=$t/probe.cache "$ap" --libcuda "$fake" --format list \
		--cuda-version 13.0 >/dev/null) && sed "s|$fake|/lib/libcuda.so.1|g" "$t/probe.cache" >$c/fuzz_probe/cache_file
	# fuzz_cache: a real compile-cache entry (NVRTC, one tiny kernel, PTX only) and entry parts
	mkdir -p $c/fuzz_cache
	rm -f $c/fuzz_cache/*
	printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' >"$t/k.cu"
	(cd "$t" && FATBUILD_CACHE_DIR=$t/cache "$fb" compile --arch-list compute_80 -o k.fatbin k.cu) || exit 1
	cp "$(find "$t/cache" -type f | head -1)" $c/fuzz_cache/entry_ptx
	printf '\003\004cubiptx_warning: x' >$c/fuzz_cache/parts
	du -sh $c
}

if [ "${1:-}" = --seeds ]; then
	seeds
	exit 0
fi
secs=${1:-60}
build
targets=${FB_FUZZ_TARGETS:-$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')}
status=0
printf '%-16s %10s %8s %8s  %s\n' target execs exec/s corpus result
for t in $targets; do
	mkdir -p "$dir/fuzz-corpus/$t" "$dir/fuzz-out/$t" tests/fuzz/corpus/$t
	log=$dir/fuzz-out/$t.log
	(cd "$dir/fuzz-out/$t" && "$dir/bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 "$dir/fuzz-corpus/$t" "$root/tests/fuzz/corpus/$t") >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	ncorp=$(ls "$dir/fuzz-corpus/$t" | wc -l)
	if [ $rc = 0 ]; then
		res=ok
	else
		res="CRASH (rc $rc): $(ls "$dir/fuzz-out/$t"/crash-* "$dir/fuzz-out/$t"/leak-* "$dir/fuzz-out/$t"/timeout-* "$dir/fuzz-out/$t"/oom-* 2>/dev/null | tr '\n' ' ') see $log"
		status=1
	fi
	printf '%-16s %10s %8s %8s  %s\n' "$t" "${execs:-?}" "${speed:-?}" "$ncorp" "$res"
	[ $rc = 0 ] || grep -m3 -E "ERROR|SUMMARY|runtime error" "$log" | sed 's/^/    /'
done
exit $status
