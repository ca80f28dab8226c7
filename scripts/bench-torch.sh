#!/usr/bin/env bash
# bench-torch.sh: torch.utils.cpp_extension.load against fatbuild.load on the same sources
# (examples/torch: muladd.cpp + muladd.cu) and the same arch list, side by side:
#   cold   empty build directory
#   no-op  nothing changed since the last build (best of RUNS)
# Each build runs in a fresh Python process that has imported torch already; the time is
# that of the load() call alone (what a user waits for at the top of a script), and the ratio
# is torch/fatbuild (> 1: fatbuild is faster). Same flags: torch's load gets extra_cflags=-O2,
# the optimisation fatbuild's host edges use (torch adds none; without it its cold build
# compiles muladd.cpp at -O0); ccache off (CCACHE_DISABLE=1) for both.
#   scripts/bench-torch.sh [ARCH_LIST] [RUNS]      (default "8.0 9.0+PTX", 3)
# Env: PYTHON (a Python with torch and the fatbuild package; default build/venv-torch/bin/python,
# as tests/torch/run.sh leaves it), FATBUILD_EXECUTABLE (default build/bin/fatbuild), MAX_JOBS.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$here/build/venv-torch/bin/python}
export FATBUILD_EXECUTABLE=${FATBUILD_EXECUTABLE:-$here/build/bin/fatbuild}
arch=${1:-8.0 9.0+PTX}
runs=${2:-3}
"$py" -c "import torch, fatbuild" 2>/dev/null ||
	{ echo "bench-torch: $py lacks torch or fatbuild (run ctest -R torch_extension, or pip install torch ./fatbuild/python)" >&2; exit 2; }
[ -x "$FATBUILD_EXECUTABLE" ] || { echo "bench-torch: no fatbuild at $FATBUILD_EXECUTABLE" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-bench-torch.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TORCH_CUDA_ARCH_LIST=$arch
# Cold means cold: torch's load puts ccache in front of c++ and nvcc when it is installed
# (fatbuild does not), and a ccache hit from an earlier run would be timed as a build.
export CCACHE_DISABLE=1
src=$here/examples/torch
cat >"$work/one.py" <<'PY'
import sys, time, warnings
warnings.filterwarnings("ignore")
import torch
which, name, bdir = sys.argv[1:4]
srcs = sys.argv[4:]
if which == "torch":
    from torch.utils.cpp_extension import load
    extra = ["-O2"]  # fatbuild compiles host code with -O2; torch adds no -O of its own
else:
    from fatbuild import load
    extra = []
import resource
def cpu():
    c, s = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    return c.ru_utime + c.ru_stime + s.ru_utime + s.ru_stime
t0, c0 = time.perf_counter(), cpu()
load(name, srcs, build_directory=bdir, is_python_module=False, verbose=False, extra_cflags=extra)
print("%.3f %.3f" % (time.perf_counter() - t0, cpu() - c0))
PY
one() { # one torch|fatbuild DIR: seconds of one load() call
	"$py" "$work/one.py" "$1" "muladd_$1" "$2" "$src/muladd.cpp" "$src/muladd.cu" 2>"$work/$1.err" | tail -n 1 ||
		{ cat "$work/$1.err" >&2; exit 1; }
}
best() { # best TOOL DIR: best of $runs no-op loads, "wall cpu"
	local b=999999 bc=0 t c i
	for i in $(seq "$runs"); do
		read -r t c <<<"$(one "$1" "$2")"
		[ "$(echo "$t < $b" | bc -l)" = 1 ] && { b=$t; bc=$c; }
	done
	echo "$b $bc"
}
ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo "torch.utils.cpp_extension.load vs fatbuild.load: examples/torch (muladd.cpp + muladd.cu), arch list \"$arch\", $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg)"
"$py" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" 2>/dev/null
mkdir -p "$work/t" "$work/f"
read -r t_cold tc_cold <<<"$(one torch "$work/t")"
read -r f_cold fc_cold <<<"$(one fatbuild "$work/f")"
read -r t_noop tc_noop <<<"$(best torch "$work/t")"
read -r f_noop fc_noop <<<"$(best fatbuild "$work/f")"
# wall: what the caller waits; cpu: user+sys of the load() call and everything it ran (the
# compilers), which a loaded machine disturbs far less.
printf '%-6s %12s %12s %9s   %12s %12s %9s\n' case "torch wall" "fb wall" "torch/fb" "torch cpu" "fb cpu" "torch/fb"
printf '%-6s %12s %12s %9s   %12s %12s %9s\n' cold "$t_cold" "$f_cold" "$(ratio "$t_cold" "$f_cold")" \
	"$tc_cold" "$fc_cold" "$(ratio "$tc_cold" "$fc_cold")"
printf '%-6s %12s %12s %9s   %12s %12s %9s\n' no-op "$t_noop" "$f_noop" "$(ratio "$t_noop" "$f_noop")" \
	"$tc_noop" "$fc_noop" "$(ratio "$tc_noop" "$fc_noop")"
# A build script's no-op: a whole process each, `python -c "import torch; load(...)"` against
# the CLI on the build dir fatbuild.load made (the same command line, so ninja has no work).
proc_best() { # proc_best CMD...: best wall of $runs runs of a whole command
	local b=999999 s e t i
	for i in $(seq "$runs"); do
		s=$(date +%s.%N)
		"$@" >"$work/proc.log" 2>&1 || { cat "$work/proc.log" >&2; exit 1; }
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc -l)
		[ "$(echo "$t < $b" | bc -l)" = 1 ] && b=$t
	done
	printf '%.3f\n' "$b"
}
t_proc=$(proc_best "$py" "$work/one.py" torch muladd_torch "$work/t" "$src/muladd.cpp" "$src/muladd.cu")
f_proc=$(proc_best "$FATBUILD_EXECUTABLE" build --torch --python "$py" --name muladd_fatbuild --build-dir "$work/f" \
	-o "$work/f/muladd_fatbuild.so" --arch-list "$arch" "$src/muladd.cpp" "$src/muladd.cu")
grep -q "no work to do" "$work/proc.log" || { echo "bench-torch: the CLI no-op did work:" >&2; cat "$work/proc.log" >&2; exit 1; }
printf '%-6s %12s %12s %9s   (whole process: python + import torch + load, vs fatbuild build --torch)\n' \
	"no-op*" "$t_proc" "$f_proc" "$(ratio "$t_proc" "$f_proc")"
# Both built the same images.
for d in t f; do
	so=$(ls "$work/$d"/*.so | head -n 1)
	echo "$d: $("$FATBUILD_EXECUTABLE" inspect "$so" | awk '$2 == "elf" || $2 == "ptx" { printf "%s %s, ", $2, $3 }')"
done
