#!/usr/bin/env bash
# remote_exec_python.sh: remote execution from the Python package (docs/pytorch.md "Remote
# execution", docs/remote-cache.md §9 "Remote NVRTC jobs in a build"), with torch (the venv of
# tests/torch/run.sh) and buildbox-casd as the executor (tests/remote/executor.sh).
# FATBUILD_REMOTE_EXECUTOR in the environment reaches the `fatbuild build` that fatbuild.load runs
# (load keeps torch's signature): a URL of another scheme makes load() raise RuntimeError naming
# the variable before anything is compiled. load, load_inline and BuildExtension build .cu with
# nvcc (as torch), so their NVRTC jobs are none; fatbuild.build builds device-only .cu with NVRTC:
# with the executor its two jobs run there (-v: remote, none here), load() of a torch extension
# sends its nvcc edge there and gives the local module byte for byte, and with the executor gone
# the build falls back with exactly one warning on the Python side's stderr. Skipped (77) only
# without NVRTC, bubblewrap, PostgreSQL, Python 3.13 or gRPC in the build, or when pip cannot
# install buildstream or buildgrid; fails when torch cannot be installed (as torch_api).
: "${FATBUILD_BIN:?}"
source "$FB_SOURCE_DIR/tests/remote/rexec_lib.sh" rxpython

ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1 || { echo "SKIP: no NVRTC"; exit 77; }
rx_need_grpc
rx_need_infra
work=$t
. "$FB_SOURCE_DIR/tests/torch/lib.sh"
venv=${TORCH_VENV:-${FB_VENV_DIR:-$FB_BINARY_DIR}/venv-torch}
torch_venv "$venv" || exit 1
py=$venv/bin/python
export PYTHONPATH=$FB_SOURCE_DIR/fatbuild/python FATBUILD_EXECUTABLE=$FATBUILD_BIN PATH=$venv/bin:$PATH
unset TORCH_CUDA_ARCH_LIST CC FATBUILD_REMOTE_EXECUTOR
cp "$FB_SOURCE_DIR/examples/kernels/reduce.cu" "$FB_SOURCE_DIR/examples/kernels/softmax.cu" \
	"$FB_SOURCE_DIR/examples/kernels/common.cuh" "$t/"
echo 'int fb_rx_unused;' >"$t/ext.cpp"

# 1. load(): the variable reaches the build, which refuses a URL of another scheme at once
FATBUILD_REMOTE_EXECUTOR=http://farm:8980 FATBUILD_CACHE_DIR=$t/cache-bad "$py" -c '
import sys, fatbuild
try:
    fatbuild.load("rxbad", [sys.argv[1]], build_directory=sys.argv[2])
except RuntimeError as e:
    print("raised:", e)
' "$t/ext.cpp" "$t/bd-bad" >"$t/bad.out" 2>&1
grep -q "^raised: .*FATBUILD_REMOTE_EXECUTOR.*not a grpc:// or grpcs:// URL" "$t/bad.out" ||
	{ cat "$t/bad.out" >&2; no "load: FATBUILD_REMOTE_EXECUTOR=http://... did not fail the build naming it"; }
ls "$t/bd-bad"/obj/*.o >/dev/null 2>&1 && no "load: compiled before the bad executor URL was refused"

# fbpy NAME VERBOSE: fatbuild.build of the two kernels for sm_90 with its own cache and build dir;
# its output in $t/NAME.out
fbpy() {
	FATBUILD_CACHE_DIR=$t/cache-$1 "$py" -c '
import sys, fatbuild
fatbuild.build(sys.argv[1], sys.argv[2:4], sys.argv[4], build_directory=sys.argv[5], verbose=sys.argv[6] == "1",
               arches="9.0")
' "rx$1" "$t/reduce.cu" "$t/softmax.cu" "$t/$1.so" "$t/bd-$1" "$2" >"$t/$1.out" 2>&1
}

# 2. fatbuild.build with the executor: both NVRTC jobs there, none here
exec_start "$t/exec" 2 || { no "buildbox-casd did not start"; exit 1; }
FATBUILD_REMOTE_EXECUTOR=$exec_url fbpy ex 1 || { cat "$t/ex.out" >&2; no "ex: fatbuild.build failed"; }
n=$(grep -c '^\[1/1\] sm_90 .*\.cu .* (remote' "$t/ex.out")
[ "$n" = 2 ] && ! grep -q '(local' "$t/ex.out" || { cat "$t/ex.out" >&2; no "ex: not both NVRTC jobs ran remotely ($n)"; }
# 3. load() of a torch extension (examples/torch: a .cpp with the torch headers and a .cu with a
# launch, built with nvcc as torch builds it): with the executor its nvcc edge runs there (a .cpp
# compiled with the torch PCH stays here by design) and the module is the local build's, byte
# for byte; -v's summary counts the edges
cp "$FB_SOURCE_DIR/examples/torch/muladd.cpp" "$FB_SOURCE_DIR/examples/torch/muladd.cu" "$t/"
tload() { # tload NAME [VAR=VALUE...]: load() into $t/bd-torch (the same dir each time), the .so kept as $t/NAME.torch.so
	rm -rf "$t/bd-torch"
	env TORCH_CUDA_ARCH_LIST=9.0 FATBUILD_CACHE_DIR=$t/cache-$1 "${@:2}" "$py" -c '
import sys, fatbuild
fatbuild.load("rxmuladd", sys.argv[1:3], build_directory=sys.argv[3], verbose=True, is_python_module=False)
' "$t/muladd.cpp" "$t/muladd.cu" "$t/bd-torch" >"$t/$1.out" 2>&1 && cp "$t/bd-torch"/*.so "$t/$1.torch.so"
}
tload tlocal || { cat "$t/tlocal.out" >&2; no "tlocal: load() failed"; }
tload tremote FATBUILD_REMOTE_EXECUTOR="$exec_url" || { cat "$t/tremote.out" >&2; no "tremote: load() failed"; }
grep -q 'muladd.cu.o (remote)' "$t/tremote.out" && ! grep -q '^fatbuild: remote-exec: ' "$t/tremote.out" ||
	{ cat "$t/tremote.out" >&2; no "tremote: the nvcc edge did not run at the executor"; }
grep -q "^fatbuild: build: remote-exec $exec_url: [12] of 2 host and nvcc edges ran there (0 cached)\$" "$t/tremote.out" ||
	{ grep 'remote-exec' "$t/tremote.out" >&2; no "tremote: no build summary counting the edge"; }
cmp -s "$t/tlocal.torch.so" "$t/tremote.torch.so" || no "tremote: the module differs from the local load()'s"
exec_stop

# 4. the executor gone: local compiles, one warning on the Python side
FATBUILD_REMOTE_EXECUTOR=$exec_url fbpy dead 0 || { cat "$t/dead.out" >&2; no "dead: fatbuild.build failed"; }
n=$(grep -c '^fatbuild: remote-exec: ' "$t/dead.out")
[ "$n" = 1 ] && grep -q "^fatbuild: remote-exec: $exec_url: .*UNAVAILABLE.*; compiling here\$" "$t/dead.out" ||
	{ cat "$t/dead.out" >&2; no "dead: not exactly one fallback warning ($n)"; }
cmp -s "$t/ex.so" "$t/dead.so" || no "dead: the library differs from the remote build's"

[ $fail = 0 ] && echo "remote_exec_python: all checks passed"
exit $fail
