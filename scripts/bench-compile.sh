#!/usr/bin/env bash
# bench-compile.sh: fatbuild compile (NVRTC, parallel, cached) against nvcc on the bundled
# kernels, side by side in one run:
#   1. nvcc -fatbin with the -gencode flags of the arch list
#   2. the same with --threads $(nproc)
#   3. fatbuild compile -o DIR/ (one fatbin per file, as nvcc writes), cold cache (emptied before every run)
#   4. fatbuild compile, warm cache
# Each is timed by hyperfine, in BENCH_RUNS interleaved rounds (default 3); medians and ratios
# are printed.
#
#   scripts/bench-compile.sh [BUILD_DIR]      (default: build)
#
# The multi-file case (BENCH_CASES has "multi"): the six CUB kernels of bench/cub/, which share
# one header, for the same arch list, built cold six ways in interleaved rounds:
#   a. nvcc -fatbin --threads N, one file after the other (N = the CPUs)
#   b. nvcc -fatbin per file under ninja -j N (one edge per file)
#   c. fatbuild compile -j N -o DIR/, cold cache, precompiled headers (the default)
#   d. the same with --no-pch
#   e. fatbuild build -j N (one ninja edge per file and target), with the build's compile server:
#      the default command, no --backend, with -I CUDA/include/cccl as users write it
#   f. the same with --no-compile-server (each edge its own NVRTC processes, no PCH across edges)
# Then, once: fatbuild build -v of e says "backend nvrtc" for every file, and its .so and fatbins
# are byte-identical to a build with --backend nvrtc.
# Timed here (wall and the children's CPU time, no hyperfine needed); medians and ratios are
# printed, and c and d (e and f, with the .so) are checked to give byte-identical fatbins.
#
# The small case (BENCH_CASES has "small"): one small multi-kernel file
# (examples/kernels/softmax.cu), the cold start a new user or CI job pays, in interleaved rounds:
#   nvcc -fatbin with the gencodes; fatbuild compile with an empty cache dir and a fresh
#   XDG_CACHE_HOME (the first compile ever: NVRTC is hashed once); with an empty cache dir but
#   NVRTC's digest known (a new build dir or CI cache); --no-cache. Then bench-remote.sh on the
#   same file: a second machine whose local cache is empty and whose remote cache has every image.
#
# Env: BENCH_ARCHS (default "7.5 8.0 8.6 8.9 9.0 10.0 12.0+PTX"), BENCH_RUNS, CUDA_HOME,
# BENCH_CASES (default "small multi bundled").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
fb=$build/bin/fatbuild
[ -x "$fb" ] || { echo "bench-compile: $fb not built (cmake --build $build)" >&2; exit 2; }
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}
nvcc=$cuda/bin/nvcc
archs=${BENCH_ARCHS:-7.5 8.0 8.6 8.9 9.0 10.0 12.0+PTX}
runs=${BENCH_RUNS:-3}
cpus=$(nproc)
kernels=("$here"/examples/kernels/*.cu)
gencode=$("$fb" flags --arch-list "$archs" --format nvcc)
t=$(mktemp -d "${TMPDIR:-/tmp}/fbbench.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/nvcc" "$t/nvcct"
q() { printf '%q ' "$@"; }
cases=" ${BENCH_CASES:-small multi bundled} "

if [[ $cases == *" small "* ]]; then
	small=$here/examples/kernels/softmax.cu
	echo "small case: ${small##*/}; arch list: $archs; cpus: $cpus"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$runs" "$t/small" "$fb" "$nvcc" "$archs" "$gencode" "$small" <<'PY'
import os, shutil, statistics, subprocess, sys, time
runs, work, fb, nvcc, archs, gencode, src = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6].split(), sys.argv[7]
def fbc(d, *extra, xdg=None):
    env = dict(os.environ, FATBUILD_CACHE_DIR=os.path.join(d, "cache"), XDG_CACHE_HOME=xdg or os.path.join(work, "xdg-known"))
    return [fb, "compile"] + list(extra) + ["--arch-list", archs, "-o", os.path.join(d, "k.fatbin"), src], env
rows = {
    "nvcc -fatbin": lambda d: ([nvcc, "-fatbin"] + gencode + ["-o", os.path.join(d, "k.fatbin"), src], None),
    "fatbuild, first compile ever (hashes NVRTC)": lambda d: fbc(d, xdg=os.path.join(d, "xdg")),
    "fatbuild, new cache dir, NVRTC known": lambda d: fbc(d),
    "fatbuild --no-cache": lambda d: fbc(d, "--no-cache"),
}
os.makedirs(work, exist_ok=True)
subprocess.run(fbc(os.path.join(work, "prime"))[0], env=fbc(os.path.join(work, "prime"))[1], check=True,
               stdout=subprocess.DEVNULL)  # NVRTC's digest becomes known in xdg-known
res = {k: [] for k in rows}
for r in range(runs):
    for i, (name, mk) in enumerate(rows.items()):
        d = os.path.join(work, "r%d" % i)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        cmd, env = mk(d)
        t0 = time.monotonic()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        res[name].append(time.monotonic() - t0)
print("load after: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
print("\n| build (%s, %s) | median wall | runs |\n|---|---:|---:|" % (os.path.basename(src), archs))
med = {k: statistics.median(v) for k, v in res.items()}
for k in rows:
    print("| %s | %.3f s | %d |" % (k, med[k], len(res[k])))
n = list(rows)
print("\nnew cache dir vs --no-cache:        %+.0f%% (goal within 15%%)" % (100 * (med[n[2]] / med[n[3]] - 1)))
print("nvcc / fatbuild new cache dir:       %.1fx (goal >= 4x)" % (med[n[0]] / med[n[2]]))
print("first compile ever vs NVRTC known:   %+.3f s (the one-time hash)" % (med[n[1]] - med[n[2]]))
PY
	echo
	if command -v nginx >/dev/null; then
		BENCH_KERNELS=$small BENCH_ARCHS=$archs BENCH_RUNS=$runs bash "$here/scripts/bench-remote.sh" "$build"
	else
		echo "bench-compile: nginx not found: the warm-remote row of the small case is not run" >&2
	fi
	echo
fi

if [[ $cases == *" multi "* ]]; then
	multi=("$here"/bench/cub/*.cu)
	echo "multi-file case: ${multi[*]##*/} (shared: bench/cub/cub_common.cuh)"
	echo "arch list: $archs; cpus: $cpus; $("$nvcc" --version | tail -1)"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$runs" "$cpus" "$t/multi" "$fb" "$nvcc" "$archs" "$gencode" "${multi[@]}" <<'PY'
import os, resource, shutil, statistics, subprocess, sys, time, filecmp
runs, cpus, work, fb, nvcc, archs, gencode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7].split()
files = sys.argv[8:]
cccl = os.path.join(os.path.dirname(os.path.dirname(nvcc)), "include", "cccl")
stem = lambda f: os.path.basename(f)[:-3]
def ninja_file(d):
    with open(os.path.join(d, "build.ninja"), "w") as o:
        o.write("rule nvcc\n  command = %s -fatbin %s -o $out $in\n" % (nvcc, " ".join(gencode)))
        for f in files:
            o.write("build %s.fatbin: nvcc %s\n" % (stem(f), f))
def prep(name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d
builds = {
    "nvcc --threads %s, file after file" % cpus: lambda d: [["bash", "-c", " && ".join(
        "%s -fatbin --threads %s %s -o %s/%s.fatbin %s" % (nvcc, cpus, " ".join(gencode), d, stem(f), f) for f in files)]],
    "nvcc, ninja -j %s" % cpus: lambda d: (ninja_file(d), [["ninja", "-C", d, "-j", cpus, "--quiet"]])[1],
    "fatbuild cold, PCH": lambda d: [["env", "FATBUILD_CACHE_DIR=%s/cache" % d, fb, "compile", "--arch-list", archs,
                                      "-j", cpus, "-o", d + "/out/"] + files],
    "fatbuild cold, --no-pch": lambda d: [["env", "FATBUILD_CACHE_DIR=%s/cache" % d, fb, "compile", "--no-pch",
                                           "--arch-list", archs, "-j", cpus, "-o", d + "/out/"] + files],
    "fatbuild build -j %s, compile server" % cpus: lambda d: [["env", "FATBUILD_CACHE_DIR=%s/cache" % d, fb, "build",
        "--arch-list", archs, "-I", cccl, "-j", cpus, "--build-dir", d + "/bd", "-o", d + "/ext.so"] + files],
    "fatbuild build -j %s, --no-compile-server" % cpus: lambda d: [["env", "FATBUILD_CACHE_DIR=%s/cache" % d, fb, "build",
        "--no-compile-server", "--arch-list", archs, "-I", cccl, "-j", cpus, "--build-dir", d + "/bd", "-o",
        d + "/ext.so"] + files],
}
res = {k: {"wall": [], "cpu": []} for k in builds}
for r in range(runs):
    print("round %d/%d (load %s)" % (r + 1, runs, open("/proc/loadavg").read().split()[0]), flush=True)
    for i, (name, mk) in enumerate(builds.items()):
        d = prep("b%d" % i)
        cmds = mk(d)
        u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        for c in cmds:
            subprocess.run(c, check=True, stdout=subprocess.DEVNULL)
        wall = time.monotonic() - t0
        u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res[name]["wall"].append(wall)
        res[name]["cpu"].append(u1.ru_utime - u0.ru_utime + u1.ru_stime - u0.ru_stime)
        print("  %-34s %7.2f s" % (name, wall), flush=True)
same = all(filecmp.cmp(os.path.join(work, "b2/out", stem(f) + ".fatbin"), os.path.join(work, "b3/out", stem(f) + ".fatbin"),
                       shallow=False) for f in files)
bfat = sorted(f for f in os.listdir(os.path.join(work, "b4/bd/obj")) if f.endswith(".fatbin"))
bsame = filecmp.cmp(os.path.join(work, "b4/ext.so"), os.path.join(work, "b5/ext.so"), shallow=False) and all(
    filecmp.cmp(os.path.join(work, "b4/bd/obj", f), os.path.join(work, "b5/bd/obj", f), shallow=False) for f in bfat)
def auto_vs_nvrtc():
    """The default command's choice for every file, and its bytes against --backend nvrtc."""
    out = {}
    for name, extra in (("auto", ["-v"]), ("nvrtc", ["--backend", "nvrtc"])):
        d = prep("check_" + name)
        p = subprocess.run(["env", "FATBUILD_CACHE_DIR=%s/cache" % d, fb, "build"] + extra + ["--arch-list", archs,
                            "-I", cccl, "-j", cpus, "--build-dir", d + "/bd", "-o", d + "/ext.so"] + files,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        out[name] = (d, p.stderr)
    chose = sum(1 for l in out["auto"][1].splitlines() if "backend nvrtc: " in l)
    a, n = out["auto"][0], out["nvrtc"][0]
    fats = sorted(f for f in os.listdir(os.path.join(a, "bd/obj")) if f.endswith(".fatbin"))
    ident = filecmp.cmp(os.path.join(a, "ext.so"), os.path.join(n, "ext.so"), shallow=False) and all(
        filecmp.cmp(os.path.join(a, "bd/obj", f), os.path.join(n, "bd/obj", f), shallow=False) for f in fats)
    return chose, ident
chose, ident = auto_vs_nvrtc()
print("default command (no --backend, -I %s): %d of %d files to NVRTC; .so and fatbins vs --backend nvrtc: %s"
      % (cccl, chose, len(files), "byte-identical" if ident else "DIFFERENT"))
print("load after: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
print("PCH and --no-pch fatbins: %s" % ("byte-identical" if same else "DIFFERENT"))
print("fatbuild build with and without the compile server (fatbins, .so): %s" % ("byte-identical" if bsame else "DIFFERENT"))
print()
print("| build (%d CUB files, %s) | median wall | min | max | CPU (user+sys, median) | runs |" % (len(files), archs))
print("|---|---:|---:|---:|---:|---:|")
med = {}
for k, v in res.items():
    med[k] = statistics.median(v["wall"])
    print("| %s | %.2f s | %.2f s | %.2f s | %.2f s | %d |" % (k, med[k], min(v["wall"]), max(v["wall"]),
                                                           statistics.median(v["cpu"]), len(v["wall"])))
names = list(builds)
best = min(med[names[0]], med[names[1]])
bestname = names[0] if med[names[0]] <= med[names[1]] else names[1]
cpu = {k: statistics.median(v["cpu"]) for k, v in res.items()}
print()
print("better nvcc way: %s" % bestname)
print("fatbuild cold, PCH     vs better nvcc: %.2fx faster (goal >= 2x)" % (best / med[names[2]]))
print("fatbuild cold, no PCH  vs better nvcc: %.2fx faster" % (best / med[names[3]]))
print("PCH vs no PCH (fatbuild):              %.2fx faster wall, %.2fx less CPU" % (med[names[3]] / med[names[2]],
                                                                               cpu[names[3]] / cpu[names[2]]))
print("CPU, better nvcc / fatbuild PCH:       %.2fx less work" % (cpu[bestname] / cpu[names[2]]))
print("fatbuild build, server vs better nvcc: %.2fx faster" % (best / med[names[4]]))
print("fatbuild build, server vs no server:   %.2fx faster wall, %.2fx less CPU" % (med[names[5]] / med[names[4]],
                                                                               cpu[names[5]] / cpu[names[4]]))
PY
	echo
fi
[[ $cases == *" bundled "* ]] || exit 0
command -v hyperfine >/dev/null || { echo "bench-compile: hyperfine not found (BENCH_CASES=multi skips this part)" >&2; exit 2; }

echo "kernels: ${kernels[*]##*/}"
echo "arch list: $archs"
echo "gencode: $gencode"
echo "cpus: $cpus; $("$nvcc" --version | tail -1); $("$fb" --version | sed -n 2p)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

cold="rm -rf $t/cache"
# Rounds: every round runs the four builds once each, one after the other, so that a change in
# the machine's load (other jobs) hits all four alike; medians are over the rounds.
# --prepare pairs with the commands in order: only the cold run empties the cache; the warm run
# follows the cold one and finds its cache.
for i in $(seq 1 "$runs"); do
	echo "round $i/$runs (load $(cut -d' ' -f1 /proc/loadavg))"
	hyperfine --runs 1 --export-json "$t/h$i.json" --style none \
		--prepare true --prepare true --prepare "$cold" --prepare true \
		--command-name "nvcc -fatbin" \
		"$(q "$nvcc" -fatbin $gencode -odir "$t/nvcc" "${kernels[@]}")" \
		--command-name "nvcc -fatbin --threads $cpus" \
		"$(q "$nvcc" -fatbin --threads "$cpus" $gencode -odir "$t/nvcct" "${kernels[@]}")" \
		--command-name "fatbuild cold" \
		"$(q env FATBUILD_CACHE_DIR="$t/cache" "$fb" compile --arch-list "$archs" -o "$t/cold/" "${kernels[@]}")" \
		--command-name "fatbuild warm" \
		"$(q env FATBUILD_CACHE_DIR="$t/cache" "$fb" compile --arch-list "$archs" -o "$t/warm/" "${kernels[@]}")"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
diff -r "$t/cold" "$t/warm" >/dev/null && echo "cold and warm outputs: byte-identical"

python3 - "$cpus" "$t"/h*.json <<'PY'
import json, statistics, sys
cpus = sys.argv[1]
r = {}
for f in sys.argv[2:]:
    for x in json.load(open(f))["results"]:
        e = r.setdefault(x["command"], {"times": [], "cpu": []})
        e["times"] += x["times"]
        e["cpu"].append(x["user"] + x["system"])
for v in r.values():
    v["median"], v["min"], v["max"] = statistics.median(v["times"]), min(v["times"]), max(v["times"])
    v["cpumean"] = statistics.mean(v["cpu"])
med = {k: v["median"] for k, v in r.items()}
nv, nvt = med["nvcc -fatbin"], med[f"nvcc -fatbin --threads {cpus}"]
cold, warm = med["fatbuild cold"], med["fatbuild warm"]
print()
print("| build | median wall | min | max | CPU (user+sys, mean) | runs |")
print("|---|---:|---:|---:|---:|---:|")
for k, v in r.items():
    print(f"| {k} | {v['median']:.2f} s | {v['min']:.2f} s | {v['max']:.2f} s | {v['cpumean']:.2f} s | {len(v['times'])} |")
print()
print(f"fatbuild cold vs nvcc:              {nv / cold:.2f}x faster (goal >= 3x)")
print(f"fatbuild cold vs nvcc --threads {cpus}:  {nvt / cold:.2f}x faster (goal >= 2x)")
print(f"fatbuild warm vs cold:              {cold / warm:.1f}x faster (goal >= 20x)")
cpu = {k: v["cpumean"] for k, v in r.items()}
# the same ratios within each round (both builds saw the same load), median over rounds
def per_round(a, b):
    return statistics.median(x / y for x, y in zip(r[a]["times"], r[b]["times"]))
print(f"per round (median): cold vs nvcc {per_round('nvcc -fatbin', 'fatbuild cold'):.2f}x, "
      f"cold vs nvcc --threads {per_round(f'nvcc -fatbin --threads {cpus}', 'fatbuild cold'):.2f}x, "
      f"warm vs cold {per_round('fatbuild cold', 'fatbuild warm'):.1f}x")
print(f"CPU time, nvcc / fatbuild cold:     {cpu['nvcc -fatbin'] / cpu['fatbuild cold']:.2f}x less work")
PY
