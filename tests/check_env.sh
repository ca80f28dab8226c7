#!/usr/bin/env bash
# check_env.sh: fatbuild check on real inputs (docs/check-environment.md):
#   1. NVIDIA's libraries in the toolkit ($CUDA_HOME/lib64), by JSON: every library fatbuild
#      inspect finds containers in is a library with device code here, with the same count;
#      cuFFT's .ldata, CUPTI's cubins, NVRTC's built-ins are loaded by other means; libcudadevrt.a
#      is a device-link input; libcudart has none; the links of lib64 are not followed and no
#      file comes twice; the summary adds up. On 7.0 (dropped by CUDA 13) cuBLAS cannot run.
#      The progress line is written on a terminal (script(1)) and never without one.
#   2. A wheel made here from the project's own extension (examples/saxpy built by fatbuild for
#      8.0 and 9.0a), deflated into a .whl with its dist-info: checked as a file, and after pip
#      installs it into a new venv, through --python: sm_90a cannot run on 12.0, and why.
#   3. A PyTorch venv (TORCH_VENV, else the one tests/torch/run.sh makes in the build dir), when
#      there is one: torch's libraries run on 8.0, 9.0 and 12.0, its CPU libraries are counted
#      without device code, NVRTC's built-ins and CUPTI are loaded by other means.
# Skipped (77) only without the toolkit.
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
FB=$FATBUILD_BIN
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -d "$cuda/lib64" ] && [ -e "$cuda/lib64/libnvrtc.so" ] || { echo "no CUDA toolkit at $cuda: skipped"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fbcheckenv.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# 1. The toolkit.
"$FB" check --arch 7.5,8.0,9.0,12.0 --format json "$cuda/lib64" >"$work/tk.json"
rc=$?
[ $rc = 0 ] && ok "toolkit: exit 0" || fail "toolkit: exit $rc"
for f in $(find "$cuda/lib64" -maxdepth 1 -type f -name 'lib*' | sort); do
	n=$("$FB" inspect "$f" 2>/dev/null | sed -n '1s/.*, \([0-9]*\) containers\{0,1\}, .*/\1/p')
	echo "${f##*/} ${n:-0}"
done >"$work/inspect.txt"
python3 - "$work/tk.json" "$work/inspect.txt" <<'PY' || fail "toolkit report (above)"
import json, sys
d = json.load(open(sys.argv[1]))
inspect = dict(l.split() for l in open(sys.argv[2]))
libs = {l["path"]: l for g in d["groups"] for l in g["libraries"]}
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
for name, n in inspect.items():
    if int(n) > 0:
        need(name in libs and libs[name]["containers"] == int(n), f"{name}: {n} containers by inspect, check says {libs.get(name, {}).get('containers')}")
def lib(prefix):
    m = [l for p, l in libs.items() if p.startswith(prefix)]
    need(len(m) == 1, f"one {prefix}*, not {len(m)}")
    return m[0] if m else {"devices": [], "other": {}}
def verdicts(l):
    return {x["device"]: x["verdict"] for x in l["devices"]}
need(set(verdicts(lib("libcublas.so")).values()) == {"sass"}, "cuBLAS runs as SASS everywhere")
cufft = lib("libcufft.so")
need(cufft["other"]["containers"] > 1000 and ".ldata" in cufft["other"]["sections"], "cuFFT's containers in .ldata")
need(set(verdicts(cufft).values()) == {"other"}, "cuFFT loaded by other means")
cupti = lib("libcupti.so")
need(cupti["other"]["cubins"] > 0 and set(verdicts(cupti).values()) == {"other"}, "CUPTI's cubins, other means")
need(lib("libnvrtc-builtins.so")["other"]["nvrtc_min"] == 75, "NVRTC built-ins from sm_75")
need(set(verdicts(lib("libcudadevrt.a")).values()) == {"link"}, "libcudadevrt.a: device-link input")
need(not any(p.startswith("libcudart.so") for p in libs), "libcudart has no device code")
need(d["links_not_followed"] > 0 and len(libs) == len(set(libs)), "links counted, each file once")
for s in d["summary"]:
    ver = [verdicts(l)[s["device"]] for l in libs.values() if "devices" in l]
    need(s["libraries"] == len(libs) and all(s[k] == ver.count(k) for k in ("sass", "jit", "none", "other", "link", "nokernel")),
         f"summary of {s['device']} adds up")
    need(s["none"] == 0, f"nothing fails on {s['device']}")
print("\n".join(bad) or "toolkit report: %d libraries with device code, %d files read" % (len(libs), d["read"]))
sys.exit(1 if bad else 0)
PY
"$FB" check --arch 7.0 "$cuda/lib64" >"$work/tk70.txt"
rc=$?
grep -A1 '^  libcublas.so.13' "$work/tk70.txt" | grep -q '7.0: no kernel image: built for newer GPUs than 7.0 (from 7.5)' && [ $rc = 1 ] &&
	ok "toolkit on 7.0: cuBLAS cannot run (exit 1)" || { fail "toolkit on 7.0 (exit $rc)"; head -20 "$work/tk70.txt" >&2; }

# The progress line: on stderr when it is a terminal (script(1) gives one), never otherwise.
"$FB" check --arch 9.0 "$cuda/lib64" >/dev/null 2>"$work/err"
[ ! -s "$work/err" ] && ok "no progress line without a terminal" || fail "stderr without a terminal: $(head -c 200 "$work/err")"
if command -v script >/dev/null; then
	script -qec "$FB check --arch 9.0 $cuda/lib64 >/dev/null" /dev/null >"$work/tty" 2>&1
	grep -aq 'check: [0-9]*/[0-9]* files, [0-9.]*/[0-9.]* GB: ' "$work/tty" && ok "progress line on a terminal" ||
		fail "no progress line on a terminal: $(head -c 200 "$work/tty")"
fi

# 2. A wheel of the project's own extension.
ex=$FB_SOURCE_DIR/examples/saxpy
pkg=$work/wheel/saxpy_fb
mkdir -p "$pkg" "$work/wheel/saxpy_fb-1.0.dist-info"
if FATBUILD_CACHE_DIR=$work/cache "$FB" build --arch-list "8.0 9.0a" --build-dir "$work/b" -o "$pkg/libsaxpy.so" \
	"$ex/saxpy.cu" "$ex/saxpy_host.c" >"$work/build.log" 2>&1; then
	ok "saxpy built for 8.0 and 9.0a"
else
	fail "fatbuild build saxpy"
	tail -5 "$work/build.log" >&2
fi
touch "$pkg/__init__.py"
printf 'Metadata-Version: 2.1\nName: saxpy-fb\nVersion: 1.0\n' >"$work/wheel/saxpy_fb-1.0.dist-info/METADATA"
printf 'Wheel-Version: 1.0\nGenerator: check_env\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n' \
	>"$work/wheel/saxpy_fb-1.0.dist-info/WHEEL"
whl=$work/saxpy_fb-1.0-py3-none-linux_x86_64.whl
python3 - "$work/wheel" "$whl" <<'PY'
import base64, hashlib, os, sys, zipfile
root, out = sys.argv[1], sys.argv[2]
files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
rec = []
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for f in files:
        data = open(os.path.join(root, f), "rb").read()
        z.writestr(f, data)
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rec.append(f"{f},sha256={h},{len(data)}")
    rec.append("saxpy_fb-1.0.dist-info/RECORD,,")
    z.writestr("saxpy_fb-1.0.dist-info/RECORD", "\n".join(rec) + "\n")
PY
want='  saxpy_fb/libsaxpy.so: 1 container (sm_80, sm_90a)
    8.0: SASS sm_80 (entry 0)
    9.0: SASS sm_90a (entry 1)
    12.0: no kernel image: sm_80, sm_90a only: SASS runs only on GPUs of its own major (8.x); an arch-specific image runs on 9.0 exactly; no PTX to JIT-compile'
"$FB" check --arch 8.0,9.0,12.0 "$whl" >"$work/whl.txt"
rc=$?
head -1 "$work/whl.txt" | grep -q '^saxpy-fb 1.0 (.*saxpy_fb-1.0-py3-none-linux_x86_64.whl): 1 of 5 files with device code$' &&
	[ "$(sed -n 2,5p "$work/whl.txt")" = "$want" ] && [ $rc = 1 ] && ok "wheel: sm_90a cannot run on 12.0 (exit 1)" ||
	{ fail "wheel report (exit $rc)"; cat "$work/whl.txt" >&2; }
if python3 -m venv "$work/venv" >/dev/null 2>&1 &&
	"$work/venv/bin/pip" install -q --no-index --no-deps --disable-pip-version-check "$whl" >"$work/pip.log" 2>&1; then
	"$FB" check --arch 8.0,9.0,12.0 --python "$work/venv/bin/python" >"$work/venv.txt"
	rc=$?
	grep -A4 '^saxpy-fb 1.0 (saxpy_fb-1.0.dist-info): 1 of [0-9]* files with device code$' "$work/venv.txt" | tail -4 >"$work/got"
	[ "$(cat "$work/got")" = "$want" ] && [ $rc = 1 ] && ok "installed by pip: found by its RECORD through --python (exit 1)" ||
		{ fail "--python report (exit $rc)"; cat "$work/venv.txt" >&2; }
else
	fail "pip install of the wheel into a new venv"
	tail -5 "$work/pip.log" >&2
fi

# 3. A PyTorch venv, when there is one.
venv=${TORCH_VENV:-${FB_VENV_DIR:-$FB_BINARY_DIR}/venv-torch}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch' >/dev/null 2>&1; then
	"$FB" check --arch 8.0,9.0,12.0 --format json --python "$venv/bin/python" >"$work/torch.json"
	rc=$?
	python3 - "$work/torch.json" <<'PY' && [ $rc = 0 ] && ok "torch venv: every library with device code runs on 8.0, 9.0 and 12.0" || fail "torch venv report (exit $rc)"
import json, sys
d = json.load(open(sys.argv[1]))
groups = {g["name"]: g for g in d["groups"]}
libs = {l["path"]: l for g in d["groups"] for l in g["libraries"]}
bad = []
torch = groups.get("torch", {"libraries": []})
cuda = [l for l in torch["libraries"] if l["path"].endswith("lib/libtorch_cuda.so")]
if not cuda or cuda[0]["containers"] < 100:
    bad.append("torch's libtorch_cuda.so with its containers")
if any(p.endswith("libtorch_cpu.so") or p.endswith("libc10.so") for p in libs) or d["elf_without_device_code"] < 10:
    bad.append("torch's CPU libraries counted without device code")
for p, l in libs.items():
    if "libnvrtc-builtins" in p or "libcupti.so" in p:
        if any(x["verdict"] != "other" for x in l["devices"]):
            bad.append(p + ": other means")
if any(s["none"] for s in d["summary"]):
    bad.append("something cannot run: " + str(d["summary"]))
print("\n".join(bad) or "torch venv: %d libraries with device code in %d groups" % (len(libs), len(d["groups"])))
sys.exit(1 if bad else 0)
PY
else
	echo "no PyTorch venv at $venv (tests/torch/run.sh makes it): part 3 not run"
fi
[ $fails = 0 ] && { echo "PASS: check_env"; exit 0; }
echo "$fails check(s) failed" >&2
exit 1
