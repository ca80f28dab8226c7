#!/usr/bin/env bash
# remote_exec_client.sh: fatbuild's remote-execution protocol layer (fatbuild/rexec/action.c,
# docs/remote-cache.md §9), through tests/rexec_test's modes. (1) The messages it writes (Command,
# Action, the input root's Directories) are byte for byte those the protobuf runtime writes from
# the same spec with BuildGrid's compiled remote_execution.proto (tests/remote/check_rexec.py).
# (2) Against a real executor (buildbox-casd with buildbox-run, tests/remote/executor.sh): an
# nvcc -cubin -arch=sm_90 compile gives a cubin byte-identical to a local nvcc run's; the second
# identical Execute is a cached result that uploads nothing; a compile error is the command's
# exit code 1 and nvcc's message, not a failed call; a job past its deadline and a dead port
# are failed calls that say so. (3) Against the BuildGrid farm (tests/remote/farm.sh, one bot):
# the same compile, COMPLETED; a job no bot takes fails at its deadline saying it was QUEUED; an
# unregistered platform property is FAILED_PRECONDITION. (4) Calls on 8 threads of one process
# against a server that never answers: each ends at its own deadline (gRPC's, not the backstop),
# or within 0.5 s of the stop flag. Usage: remote_exec_client.sh REXEC_TEST. Skipped (77) without
# gRPC in the build, nvcc, bubblewrap, PostgreSQL, Python 3.13, or pip.
rt=${1:?usage: remote_exec_client.sh REXEC_TEST}
source "$FB_SOURCE_DIR/tests/remote/rexec_lib.sh" rxclient

nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || { echo "SKIP: no $nvcc"; exit 77; }
"$rt" run grpc://127.0.0.1:1 "$t" "$t/o" 1000 -- true 2>"$t/probe.err"
grep -q 'no gRPC' "$t/probe.err" && { echo "SKIP: fatbuild was built without libgrpc"; exit 77; }
rx_need_infra

# 1. the encoders against the protobuf runtime
mkdir -p "$t/enc"
"$rt" encode "$t/enc" || no "rexec_test encode failed"
"$bgd_python" "$FB_SOURCE_DIR/tests/remote/check_rexec.py" "$t/enc" || no "the messages differ from the protobuf runtime's"

# 2. one nvcc compile through the C client against buildbox-casd
mkdir -p "$t/root/k" "$t/local/out"
cat >"$t/root/k/axpy.cu" <<'CU'
extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
CU
printf 'extern "C" __global__ void broken(int *p) { p[0] = ; }\n' >"$t/root/k/broken.cu"
cp -r "$t/root/k" "$t/local/"
(cd "$t/local" && "$nvcc" -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu) || { no "local nvcc failed"; exit 1; }
exec_start "$t/exec" 2 || { no "buildbox-casd did not start"; exit 1; }
path=PATH=/usr/local/cuda/bin:/usr/bin:/bin
# crun NAME MS [args] -- ARGV: rexec_test run, its stdout in $t/NAME.out, stderr in $t/NAME.err
crun() {
	local name=$1 ms=$2
	shift 2
	"$rt" run "$exec_url" "$t/root" "$t/$name" "$ms" "$@" >"$t/$name.out" 2>"$t/$name.err"
}
says() { grep -qx -- "$2" "$t/$1.out" || { cat "$t/$1.out" "$t/$1.err" >&2; return 1; }; }
crun c1 120000 --env "$path" --output out/axpy.cubin -- nvcc -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu ||
	{ cat "$t/c1.err" >&2; no "c1: the C client failed"; }
says c1 'exit 0' && says c1 'cached 0' || no "c1: not a fresh successful run"
cmp -s "$t/local/out/axpy.cubin" "$t/c1/out/axpy.cubin" || no "c1: the executor's cubin differs from the local one"
crun c2 120000 --env "$path" --output out/axpy.cubin -- nvcc -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu ||
	no "c2: the C client failed"
says c2 'cached 1' && says c2 'sent 0' || no "c2: the second identical Execute was not a cached result, or uploaded again"
cmp -s "$t/local/out/axpy.cubin" "$t/c2/out/axpy.cubin" || no "c2: the cached cubin differs"
crun c3 120000 --env "$path" --output out/b.cubin -- nvcc -cubin -arch=sm_90 -o out/b.cubin k/broken.cu ||
	no "c3: a compile error was a failed call"
says c3 'exit 1' || no "c3: a compile error is not exit code 1"
grep -q 'k/broken.cu(1): error: expected an expression' "$t/c3.out" || { cat "$t/c3.out" >&2; no "c3: nvcc's message is missing"; }
# the deadline: a job that takes longer is a failed call, within about the deadline
s0=$(date +%s)
crun c4 2000 --env PATH=/usr/bin:/bin -- sleep 30 && no "c4: a job past its deadline succeeded"
[ $(($(date +%s) - s0)) -le 10 ] || no "c4: the deadline of 2 s was not kept"
grep -q 'Execute: DEADLINE_EXCEEDED' "$t/c4.err" || { cat "$t/c4.err" >&2; no "c4: the error does not name the deadline"; }
exec_stop
crun c5 2000 --env "$path" -- true && no "c5: a dead executor succeeded"
grep -q 'UNAVAILABLE' "$t/c5.err" || { cat "$t/c5.err" >&2; no "c5: the error does not say UNAVAILABLE"; }

# 3. against the farm (one bot offering fbtest=a): the stages, a job no bot takes, a key the
#    scheduler does not know
farm_start "$t/farm" a:fbtest=a || { no "the farm did not start"; exit 1; }
exec_url=$farm_url
crun f1 120000 --prop OSFamily=linux --prop fbtest=a --env "$path" --output out/axpy.cubin -- \
	nvcc -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu || { cat "$t/f1.err" >&2; no "f1: the C client failed on the farm"; }
says f1 'stage 4' && says f1 'exit 0' || no "f1: not COMPLETED with exit 0"
cmp -s "$t/local/out/axpy.cubin" "$t/f1/out/axpy.cubin" || no "f1: the bot's cubin differs from the local one"
crun f2 3000 --prop OSFamily=linux --prop fbtest=zz --env "$path" -- true && no "f2: a job no bot takes succeeded"
says f2 'stage 2' && grep -q 'DEADLINE_EXCEEDED.*the job was QUEUED: no worker took it' "$t/f2.err" ||
	{ cat "$t/f2.err" >&2; no "f2: the deadline's error does not say the job was QUEUED"; }
crun f3 30000 --prop image=x --env "$path" -- true && no "f3: an unregistered property succeeded"
grep -q 'FAILED_PRECONDITION: Unregistered platform property \[image' "$t/f3.err" || { cat "$t/f3.err" >&2; no "f3: not FAILED_PRECONDITION"; }

# 4. calls on threads of one process, as a remote round makes them (compile/offload.c): against a
#    server that never answers (tests/remote/stall_server.py), 8 threads each end at their own
#    deadline (3 s), within 1 s and by gRPC's DEADLINE_EXCEEDED, never by the 2 s backstop
#    ("gRPC did not end the call"); with the stop flag set after 1 s, each call is cancelled
#    within 0.5 s of it (CANCELLED), long before its 30 s deadline
"$bgd_python" "$FB_SOURCE_DIR/tests/remote/stall_server.py" "$t/stall.port" >"$t/stall.log" 2>&1 &
stall_pid=$!
for _ in $(seq 100); do [ -s "$t/stall.port" ] && break; sleep 0.1; done
# threads NAME DEADLINE_MS [STOP_MS] ...: rexec_test threads, its lines in $t/NAME.out
threads() {
	local name=$1
	shift
	"$rt" threads "grpc://127.0.0.1:$(cat "$t/stall.port")" 8 "$@" >"$t/$name.out" 2>&1
	cat "$t/$name.out"
	[ "$(grep -c '^thread [0-9]* rc [1-9]' "$t/$name.out")" = 8 ] || no "$name: not 8 failed calls"
}
# within LO HI NAME: every thread's seconds within [LO, HI]
within() {
	awk -v lo="$1" -v hi="$2" '$1 == "thread" { s = $6 + 0; if (s < lo || s > hi) bad = 1 } END { exit bad }' "$t/$3.out"
}
if [ -s "$t/stall.port" ]; then
	threads td 3000
	within 2.9 4.0 td || no "td: a thread's call did not end within 1 s of its 3 s deadline"
	grep -q 'gRPC did not end the call' "$t/td.out" && no "td: a deadline fired only through the backstop"
	[ "$(grep -c 'FindMissingBlobs: DEADLINE_EXCEEDED' "$t/td.out")" = 8 ] || no "td: not gRPC's DEADLINE_EXCEEDED in every thread"
	threads ts 30000 1000
	within 0.9 1.5 ts || no "ts: a thread's call did not end within 0.5 s of the stop"
	[ "$(grep -c 'CANCELLED: stopped' "$t/ts.out")" = 8 ] || no "ts: not CANCELLED in every thread"
else
	no "the stall server did not start"; cat "$t/stall.log" >&2
fi
kill "$stall_pid" 2>/dev/null
wait "$stall_pid" 2>/dev/null

[ $fail = 0 ] && echo "remote_exec_client: all checks passed"
exit $fail
