#!/usr/bin/env bash
# bench-torch.sh: torch.utils.cpp_extension.load against fatbuild.load on the same extension,
# the same arch list, the same flags and the same MAX_JOBS, ROUNDS rounds, medians:
#   cold          empty build dir; fatbuild also with an empty cache (no host PCH, no cached
#                 edges), uploading to a remote cache (nginx on loopback) as a CI job would
#   cold+pch      fatbuild: empty build dir, the cache holding only the torch PCH (made once
#                 per torch, compiler and flags, by the second build that wants it;
#                 docs/pytorch.md), made here by an untimed build after the cold one
#   remote-warm   fatbuild: empty build dir and local cache, the remote holding what cold
#                 uploaded (a second machine, a CI job)
#   no-op         nothing changed since the last build
# Each build runs in a fresh Python process that has imported torch already; the time is that
# of the load() call alone. Ratios are torch/fatbuild (> 1: fatbuild is faster), remote-warm's
# also cold/remote-warm. Same flags: the default command, load(name, sources), for both
# (fatbuild.load compiles host code with torch's load() flags: no -O); BENCH_FLAGS="-O2" gives
# both extra_cflags and extra_cuda_cflags; ccache off (CCACHE_DISABLE=1) for both.
#   scripts/bench-torch.sh [ARCH_LIST] [ROUNDS]      (default "8.0 9.0", 3)
# The extension: EXT=cub (default: examples/torch_cub, three CUB .cu files and one .cpp) or
# EXT=muladd (examples/torch); or TORCH_EXT_DIR=DIR, any extension's sources (the *.cpp and
# *.cu directly in DIR, built as one extension; a real one: clone it and point at its csrc
# directory; it is not kept in this repository). The one measured in docs/pytorch.md:
#   git clone https://github.com/Dao-AILab/causal-conv1d && git -C causal-conv1d checkout 0d2252d
#   TORCH_EXT_DIR=$PWD/causal-conv1d/csrc scripts/bench-torch.sh "8.0 9.0" 1   (~30 min a round)
# Env: PYTHON (a Python with torch and the fatbuild package; default build/venv-torch/bin/python,
# as tests/torch/run.sh leaves it), FATBUILD_EXECUTABLE (default build/bin/fatbuild), MAX_JOBS
# (default: the CPUs).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$here/build/venv-torch/bin/python}
export FATBUILD_EXECUTABLE=${FATBUILD_EXECUTABLE:-$here/build/bin/fatbuild}
arch=${1:-8.0 9.0}
rounds=${2:-3}
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
"$py" -c "import torch, fatbuild" 2>/dev/null ||
	{ echo "bench-torch: $py lacks torch or fatbuild (run ctest -R torch_extension, or pip install torch ./fatbuild/python)" >&2; exit 2; }
[ -x "$FATBUILD_EXECUTABLE" ] || { echo "bench-torch: no fatbuild at $FATBUILD_EXECUTABLE" >&2; exit 2; }
if [ -n "${TORCH_EXT_DIR:-}" ]; then
	dir=$TORCH_EXT_DIR
	name=ext
elif [ "${EXT:-cub}" = muladd ]; then
	dir=$here/examples/torch
	name=muladd
else
	dir=$here/examples/torch_cub
	name=fb_cub
fi
srcs=()
for f in "$dir"/*.cpp "$dir"/*.cu; do [ -e "$f" ] && srcs+=("$f"); done
[ ${#srcs[@]} -gt 0 ] || { echo "bench-torch: no .cpp or .cu in $dir" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-bench-torch.XXXXXX")
source "$here/tests/remote/nginx.sh"
trap 'nginx_stop; rm -rf "$work"' EXIT
export TORCH_CUDA_ARCH_LIST=$arch
# Cold means cold: torch's load puts ccache in front of c++ and nvcc when it is installed
# (fatbuild does not), and a ccache hit from an earlier run would be timed as a build.
export CCACHE_DISABLE=1
unset FATBUILD_REMOTE_CACHE FATBUILD_EDGE_CACHE FATBUILD_HOST_PCH
cat >"$work/one.py" <<'PY'
import os, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
which, name, bdir = sys.argv[1:4]
srcs = sys.argv[4:]
if which == "torch":
    from torch.utils.cpp_extension import load
else:
    from fatbuild import load
flags = os.environ.get("BENCH_FLAGS", "").split()
extra = dict(extra_cflags=flags, extra_cuda_cflags=flags) if flags else {}
t0 = time.perf_counter()
load(name, srcs, build_directory=bdir, is_python_module=False, verbose=False, **extra)
print("%.3f" % (time.perf_counter() - t0))
PY
one() { # one torch|fatbuild BUILD_DIR: seconds of one load() call
	mkdir -p "$2"
	"$py" "$work/one.py" "$1" "$name" "$2" "${srcs[@]}" 2>"$work/$1.err" | tail -n 1 | grep . ||
		{ cat "$work/$1.err" >&2; exit 1; }
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }
nginx_start "$work/srv" >/dev/null 2>&1 || { echo "bench-torch: nginx did not start (scripts/deps.sh): no remote-warm case" >&2; NGINX_URL=; }
echo "torch.utils.cpp_extension.load vs fatbuild.load: $dir (${#srcs[@]} files), arch list \"$arch\", flags \"${BENCH_FLAGS:-}\", MAX_JOBS=$MAX_JOBS, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
"$py" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" 2>/dev/null
declare -a tc fc fp fr tn fn
for r in $(seq "$rounds"); do
	d=$work/r$r
	rm -rf "$work/srv/store"/* 2>/dev/null || true
	tc+=("$(one torch "$d/t")")
	export FATBUILD_CACHE_DIR=$d/cache FATBUILD_REMOTE_CACHE=$NGINX_URL
	[ -n "$NGINX_URL" ] || unset FATBUILD_REMOTE_CACHE
	fc+=("$(one fatbuild "$d/f")")
	# cold+pch: the PCH made (by a second build that compiles, as by default; untimed: a build
	# whose compiles all come from the cache makes none), then the cache less every compiled
	# entry; no remote
	unset FATBUILD_REMOTE_CACHE
	find "$d/cache" -mindepth 1 -maxdepth 1 -name '??' -exec rm -rf {} +
	one fatbuild "$d/fmake" >/dev/null
	ls "$d"/cache/hostpch/*/h.h.gch >/dev/null 2>&1 ||
		{ echo "bench-torch: the second build made no torch PCH (no torch #include block in a .cpp?)" >&2; exit 1; }
	find "$d/cache" -mindepth 1 -maxdepth 1 -name '??' -exec rm -rf {} +
	fp+=("$(one fatbuild "$d/fp")")
	if [ -n "$NGINX_URL" ]; then
		export FATBUILD_CACHE_DIR=$d/cache-empty FATBUILD_REMOTE_CACHE=$NGINX_URL
		fr+=("$(one fatbuild "$d/fr")")
		unset FATBUILD_REMOTE_CACHE
	fi
	# no-op: after one untimed load each (fatbuild's cold build dir compiled without the PCH
	# that exists now: its first rebuild switches to it, from the cache)
	export FATBUILD_CACHE_DIR=$d/cache
	one torch "$d/t" >/dev/null
	one fatbuild "$d/f" >/dev/null
	tn+=("$(one torch "$d/t")")
	fn+=("$(one fatbuild "$d/f")")
	echo "round $r: torch cold ${tc[-1]} s, fatbuild cold ${fc[-1]} s, cold+pch ${fp[-1]} s, remote-warm ${fr[-1]:-n/a} s, no-op ${tn[-1]} / ${fn[-1]} s"
done
T=$(median "${tc[@]}") F=$(median "${fc[@]}") P=$(median "${fp[@]}") TN=$(median "${tn[@]}") FN=$(median "${fn[@]}")
# Each round's torch/fb ratio, then their median: on a machine shared with other work a round's
# two builds see the same load, so this is steadier than the ratio of the medians.
rr() { local -n a=$1 b=$2; local i out=(); for i in "${!a[@]}"; do out+=("$(ratio "${a[$i]}" "${b[$i]}")"); done; median "${out[@]}"; }
printf '%-12s %10s %10s %9s %14s\n' case "torch s" "fb s" "torch/fb" "rounds' ratio"
printf '%-12s %10s %10s %9s %14s\n' cold "$T" "$F" "$(ratio "$T" "$F")" "$(rr tc fc)"
printf '%-12s %10s %10s %9s %14s\n' cold+pch "$T" "$P" "$(ratio "$T" "$P")" "$(rr tc fp)"
if [ ${#fr[@]} -gt 0 ]; then
	R=$(median "${fr[@]}")
	printf '%-12s %10s %10s %9s   (fatbuild cold / remote-warm: %s)\n' remote-warm "$T" "$R" "$(ratio "$T" "$R")" "$(ratio "$F" "$R")"
fi
printf '%-12s %10s %10s %9s\n' no-op "$TN" "$FN" "$(ratio "$TN" "$FN")"
# Both built the same images.
for d in t f; do
	so=$(ls "$work/r1/$d"/*.so | head -n 1)
	echo "$d: $("$FATBUILD_EXECUTABLE" inspect "$so" | awk '$2 == "elf" || $2 == "ptx" { printf "%s %s, ", $2, $3 }')"
done
