#!/usr/bin/env bash
# Oracle: for each fake-driver fixture, NVIDIA's __nvcc_device_query (loading the fake as
# libcuda.so.1 through LD_LIBRARY_PATH) and `archprobe --format nvcc-query` must print the same
# bytes and exit with the same code, and for the working fixtures `archprobe --format list`
# must name the same arch set. Skips (77) only when the toolkit has no __nvcc_device_query.
set -u
cuda=${CUDA_HOME:-/usr/local/cuda}
query=$cuda/bin/__nvcc_device_query
[ -x "$query" ] || { echo "no $query: skipped"; exit 77; }
: "${ARCHPROBE_BIN:?}" "${FB_BINARY_DIR:?}"
fakedir=$FB_BINARY_DIR/fakecuda
unset ARCHPROBE_LIBCUDA ARCHPROBE_ARCHS ARCHPROBE_FALLBACK CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER
fail=0 n=0
check() { # env assignments for the fixture
	local theirs ours trc orc list
	theirs=$(env "$@" LD_LIBRARY_PATH=$fakedir "$query" --silent 2>/dev/null; echo "|$?")
	ours=$(env "$@" LD_LIBRARY_PATH=$fakedir "$ARCHPROBE_BIN" --format nvcc-query --silent 2>/dev/null; echo "|$?")
	n=$((n + 1))
	if [ "$theirs" != "$ours" ]; then
		echo "MISMATCH [$*]: __nvcc_device_query '$theirs', archprobe '$ours'"; fail=1; return
	fi
	echo "same [$*]: '$ours'"
	case $ours in
	*"|0")
		list=$(env "$@" LD_LIBRARY_PATH=$fakedir "$ARCHPROBE_BIN" --format list --cuda-version 13.0 2>/dev/null)
		if [ "$(echo "$list" | tr ';' ',')" != "${ours%|0}" ]; then
			echo "MISMATCH [$*]: --format list '$list' vs '${ours%|0}'"; fail=1
		fi ;;
	esac
}
check FAKECUDA_DEVICES=8.6
check FAKECUDA_DEVICES=9.0,8.6,7.5
check FAKECUDA_DEVICES=8.6,8.6
check FAKECUDA_DEVICES=12.0,8.0,10.0,8.6,12.1
check FAKECUDA_DEVICES=
check FAKECUDA_DEVICES=8.6 FAKECUDA_INIT=100
check FAKECUDA_DEVICES=8.6 FAKECUDA_INIT=803
check FAKECUDA_DEVICES=8.6,9.0 'FAKECUDA_FAIL=cuDeviceGetAttribute@1#75:999'
check FAKECUDA_DEVICES=8.6,9.0,10.0 CUDA_VISIBLE_DEVICES=2,0
check FAKECUDA_DEVICES=8.6,9.0 CUDA_VISIBLE_DEVICES=
check FAKECUDA_DEVICES=8.6,9.0 CUDA_VISIBLE_DEVICES=0,0
# the toolkit's real stub found as libcuda.so.1 (both fail with exit 1, nothing on stdout)
stubdir=$(mktemp -d "${TMPDIR:-/tmp}/probe_oracle.XXXXXX")
if [ -e "$cuda/lib64/stubs/libcuda.so" ]; then
	ln -s "$cuda/lib64/stubs/libcuda.so" "$stubdir/libcuda.so.1"
	fakedir=$stubdir check TOOLKIT_STUB_AS_LIBCUDA_SO_1=1
fi
rm -rf "$stubdir"
# nvcc -arch=native (which runs __nvcc_device_query) builds SASS for exactly the detected set
nvcc=$cuda/bin/nvcc
if [ -x "$nvcc" ]; then
	echo '__global__ void k() {}' >"${TMPDIR:-/tmp}/probe_oracle.$$.cu"
	for devs in 9.0,8.6 12.0,8.0,10.0,8.6; do
		sass=$(cd "${TMPDIR:-/tmp}" && FAKECUDA_DEVICES=$devs LD_LIBRARY_PATH=$fakedir "$nvcc" -arch=native --dryrun \
			-c probe_oracle.$$.cu 2>&1 | grep -o 'kind=elf,sm=[0-9]*' | sed 's/.*=//' | sort -n | paste -sd';')
		list=$(FAKECUDA_DEVICES=$devs LD_LIBRARY_PATH=$fakedir "$ARCHPROBE_BIN" --format list --cuda-version 13.0 2>/dev/null)
		n=$((n + 1))
		[ "$sass" = "$list" ] && echo "same [nvcc -arch=native, $devs]: SASS $sass" \
			|| { echo "MISMATCH [nvcc -arch=native, $devs]: nvcc SASS '$sass', archprobe '$list'"; fail=1; }
	done
	rm -f "${TMPDIR:-/tmp}/probe_oracle.$$.cu"
fi
# and with no driver at all (when this machine has none)
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '; then
	t=$("$query" --silent 2>/dev/null; echo "|$?")
	o=$("$ARCHPROBE_BIN" --format nvcc-query --silent 2>/dev/null; echo "|$?")
	[ "$t" = "$o" ] && echo "same [no driver]: '$o'" || { echo "MISMATCH [no driver]: '$t' vs '$o'"; fail=1; }
fi
echo "$n fixtures compared"
exit $fail
