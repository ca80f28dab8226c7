#!/usr/bin/env bash
# remote_exec_infra.sh: the remote-execution test infrastructure works and the facts of
# docs/remote-cache.md §9 hold, against (1) buildbox-casd as a single-node executor
# (tests/remote/executor.sh) and (2) BuildGrid 0.9.1 with PostgreSQL and two test bots of
# different platform properties, each running the real buildbox-run (tests/remote/farm.sh).
# A small REAPI client (tests/remote/rexec_client.py) sends an Action running nvcc -cubin
# -arch=sm_90 on a kernel in the input root; the cubin must be byte-identical to a local nvcc
# run's, a second identical Execute must be a cached_result, a job no bot can take must still be
# QUEUED at the client's deadline, and a platform property the scheduler does not know must be
# refused with FAILED_PRECONDITION. Everything is installed (pip, into venvs under the build
# dir) and started and stopped here. Skipped (77) only without nvcc, bubblewrap, PostgreSQL or
# Python 3.13, or when pip cannot install buildstream or buildgrid.
source "$FB_SOURCE_DIR/tests/remote/rexec_lib.sh" rxinfra

nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || { echo "SKIP: no $nvcc"; exit 77; }
rx_need_infra

# the input root: one kernel; the reference: the same command run here, in the same layout
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
ref=$t/local/out/axpy.cubin

# rx NAME URL [client args] -- ARGV: one Execute; its JSON in $t/NAME.json, outputs under $t/NAME/
rx() {
	local name=$1 url=$2
	shift 2
	"$bgd_python" "$FB_SOURCE_DIR/tests/remote/rexec_client.py" "$url" --root "$t/root" --out "$t/$name" "$@" \
		>"$t/$name.json" 2>"$t/$name.err"
}
nvcc_job() { rx "$@" --output out/axpy.cubin --env PATH=/usr/local/cuda/bin:/usr/bin:/bin -- \
	nvcc -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu; }
# is NAME KEY VALUE: the JSON answer's KEY is VALUE (Python's spelling: True, None, 'a')
is() {
	local v
	v=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$t/$1.json" "$2" 2>/dev/null)
	[ "$v" = "$3" ] && return 0
	echo "$1: $2 is '$v', want '$3'" >&2
	cat "$t/$1.json" "$t/$1.err" >&2
	return 1
}

# 1. buildbox-casd as the executor (the unnamed instance; platform properties are not matched)
export FB_RX_CLIENT_ONLY=leak # in the environment of casd and the runner, never of the job
exec_start "$t/exec" 2 || { no "buildbox-casd did not start"; exit 1; }
nvcc_job e1 "$exec_url" || no "e1: the client failed"
is e1 status OK && is e1 exit_code 0 && is e1 cached False || no "e1: not a fresh successful run"
cmp -s "$ref" "$t/e1/out/axpy.cubin" || no "e1: the executor's cubin differs from the local one"
nvcc_job e2 "$exec_url" || no "e2: the client failed"
is e2 cached True || no "e2: a second identical Execute was not a cached_result"
cmp -s "$ref" "$t/e2/out/axpy.cubin" || no "e2: the cached cubin differs from the local one"
# the job sees the Command's environment only, and the input root as /
rx env "$exec_url" --env PATH=/usr/bin:/bin -- sh -c 'env; echo "cwd=$(pwd)"; ls /k' || no "env: the client failed"
grep -q 'FB_RX_CLIENT_ONLY\|HOME=' "$t/env.json" && no "env: the job saw variables the Command did not set"
grep -q 'cwd=/\\n' "$t/env.json" && grep -q 'axpy.cu' "$t/env.json" || { cat "$t/env.json" >&2; no "env: the input root is not /"; }
# the runner's binds hide an input root's own top-level bin/, lib/, lib64/, usr/: inputs go below
# a directory of their own
mkdir -p "$t/shadow/lib" "$t/shadow/fbx/lib"
echo hidden >"$t/shadow/lib/marker"
echo seen >"$t/shadow/fbx/lib/marker"
"$bgd_python" "$FB_SOURCE_DIR/tests/remote/rexec_client.py" "$exec_url" --root "$t/shadow" --env PATH=/usr/bin:/bin \
	-- sh -c 'cat fbx/lib/marker; cat lib/marker' >"$t/shadow.json" 2>"$t/shadow.err" || no "shadow: the client failed"
grep -q '"stdout": "seen\\n"' "$t/shadow.json" && grep -q 'lib/marker: No such file' "$t/shadow.json" ||
	{ cat "$t/shadow.json" >&2; no "shadow: the input root's lib/ is not hidden by the runner's /lib as §9 says"; }
# the deprecated output_files: buildbox-run 1.4.25 neither makes their parents nor captures them
rx legacy "$exec_url" --legacy-outputs --output out/axpy.cubin --env PATH=/usr/local/cuda/bin:/usr/bin:/bin \
	-- sh -c 'mkdir -p out && nvcc -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu' || no "legacy: the client failed"
is legacy exit_code 0 && is legacy outputs '[]' || no "legacy: output_files behave otherwise than §9 says"
# a compile error: a result with nvcc's exit code and message, not a failed call
rx err "$exec_url" --output out/b.cubin --env PATH=/usr/local/cuda/bin:/usr/bin:/bin -- \
	nvcc -cubin -arch=sm_90 -o out/b.cubin k/broken.cu || no "err: the client failed"
is err status OK && is err exit_code 1 || no "err: a compile error is not exit code 1"
grep -q 'k/broken.cu(1): error: expected an expression' "$t/err.json" || { cat "$t/err.json" >&2; no "err: nvcc's message is not in stderr"; }
exec_stop

# 2. the farm: bot a offers fbtest=a, bot b fbtest=b; each on its own CPU when there are two
pin_a=a pin_b=b
[ "$(nproc)" -ge 2 ] && pin_a=a@0 pin_b=b@1
farm_start "$t/farm" "$pin_a:fbtest=a" "$pin_b:fbtest=b" || { no "the farm did not start"; exit 1; }
for b in a b; do
	nvcc_job "f$b" "$farm_url" --prop OSFamily=linux --prop "fbtest=$b" --timeout 120 || no "f$b: the client failed"
	is "f$b" status OK && is "f$b" exit_code 0 && is "f$b" worker "$b" || no "f$b: not run by bot $b"
	cmp -s "$ref" "$t/f$b/out/axpy.cubin" || no "f$b: bot $b's cubin differs from the local one"
	grep -q ': ACTIVE, payload Action$' "$t/farm/$b/bot.log" || { cat "$t/farm/$b/bot.log" >&2; no "bot $b: no lease arrived ACTIVE with an Action"; }
done
nvcc_job fa2 "$farm_url" --prop OSFamily=linux --prop fbtest=a --timeout 120 || no "fa2: the client failed"
is fa2 cached True || no "fa2: a second identical Execute was not a cached_result"
cmp -s "$ref" "$t/fa2/out/axpy.cubin" || no "fa2: the cached cubin differs"
[ "$(grep -c ': exit 0$' "$t/farm/a/bot.log")" -eq 1 ] || no "bot a ran the cached job again"
# no bot offers fbtest=c: the job waits QUEUED until the client gives up
nvcc_job fc "$farm_url" --prop OSFamily=linux --prop fbtest=c --timeout 5
[ $? = 3 ] && is fc status DEADLINE_EXCEEDED && is fc stage QUEUED || no "fc: a job no bot can take is not left QUEUED"
# a key the scheduler does not know is refused
nvcc_job fx "$farm_url" --prop OSFamily=linux --prop container-image=docker://x --timeout 30
[ $? = 4 ] && is fx status FAILED_PRECONDITION || no "fx: an unregistered property is not FAILED_PRECONDITION"
grep -q 'Unregistered platform property' "$t/fx.json" || no "fx: the refusal does not name the property"

[ $fail = 0 ] && echo "remote_exec_infra: all checks passed"
exit $fail
