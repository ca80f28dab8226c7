"""cmdline.py WORK: the compile commands fatbuild runs against the ones PyTorch's builder runs,
word by word, for the same extension built the same ways: torch.utils.cpp_extension.load()
against fatbuild.load() (with the project's own nvcc arches and threads, and with the arch list
of TORCH_CUDA_ARCH_LIST), and a setup.py with torch's BuildExtension against the same setup.py
with `from fatbuild.setuptools import ...` instead. The compilers are stand-ins (cmdrec.sh, c++ and
CUDA_HOME/bin/nvcc of a copy of the toolkit) that write each compile command down and answer with
an empty object, so the whole comparison takes seconds. Every word one builder has and the
other lacks must be in ALLOWED below, which says why fatbuild differs; anything else fails, and
so does a gencode set, include order, -std or -O that differs, or a word fatbuild repeats where
torch has it once. Run by tests/torch/run.sh with the venv's python; FATBUILD_EXECUTABLE names
the fatbuild to test."""
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA = os.path.realpath(os.environ.get("CUDA_HOME") or "/usr/local/cuda")

# What fatbuild's compile commands may have that torch's lack (fb) and the reverse (torch), as
# (regular expression over one word, why). Words are compared after an option and its value
# are joined into one ("-Xcompiler -fPIC", "-isystem DIR"), the case's dir spelled <B> and the
# cache <C>.
ALLOWED = {
    "fb": [
        (r"-Xcompiler -ffile-prefix-map=.*|-ffile-prefix-map=.*",
         "paths in debug info and __FILE__ relative to the sources, build dir, torch and "
         "FATBUILD_CACHE_BASEDIR, so an object does not depend on where it was built and the edge "
         "cache can share it between checkouts (docs/caches.md)"),
        (r"-Xcudafe --frandom-seed=[0-9a-f]{16}", "nvcc's front end names internal symbols after its "
         "process id otherwise; the seed is a digest of the source and its headers, so objects are "
         "reproducible (docs/fatbuild-build.md)"),
        (r"-X(cudafe|cicc) --orig_src_path_name=[^/].*", "the front ends hash the source's absolute "
         "path into internal names; fatbuild gives the path below the sources' directory instead"),
        (r"-keep|-keep-dir <B>/.*\.keep", "nvcc's intermediates get fixed names in the build dir: "
         "tmpxft_<pid> names would change a -g object from one run to the next"),
        (r"--threads [0-9]+", "the project gave no --threads: nvcc compiles the targets side by side "
         "with the cores the other edges leave, the same bytes as one by one (build_nvcc_threads)"),
        (r"-Winvalid-pch|-Werror=invalid-pch|-include <B>/(.*/)?pch/[0-9a-f]{16}/h\.h",
         "the torch PCH (docs/pytorch.md \"Precompiled torch headers\"): the same headers first, the "
         "same object; a PCH the compiler finds invalid is an error"),
        (r"--param=ggc-min-heapsize=1048576", "gcc's collector heap: a torch source compiles without a "
         "collection, 15 % less CPU, the same bytes; only where no -g records it and memory leaves "
         "4 GiB a job, and not in the edge cache's key (docs/pytorch.md \"gcc's collector\")"),
        (r"-I(?P<dir>.*)", "the directory of fatbuild_runtime.h, which every fatbuild build offers "
         "its host code", lambda m: os.path.exists(os.path.join(m.group("dir"), "fatbuild_runtime.h"))),
    ],
    "torch": [],
}
# An option and its value, joined into one word before the comparison.
PAIRED = ("-Xcompiler", "--compiler-options", "-Xcudafe", "-Xcicc", "-Xptxas", "-isystem", "-gencode",
          "--threads", "-keep-dir", "-ccbin", "-include")


def sh(cmd, env, cwd, log):
    with open(log, "w") as f:
        r = subprocess.run(cmd, env=env, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.stdout.write(open(log).read()[-4000:])
        raise SystemExit("FAIL: %s (exit %d)" % (" ".join(cmd), r.returncode))


def wrapper(path, name, real):
    with open(path, "w") as f:
        f.write("#!/bin/sh\nCMDREC_NAME=%s CMDREC_REAL=%s exec %s \"$@\"\n" %
                (name, shlex.quote(real), shlex.quote(os.path.join(HERE, "cmdrec.sh"))))
    os.chmod(path, 0o755)


def toolkit(work):
    """A toolkit whose nvcc is the stand-in (everything else links to the real one), and a c++."""
    tk = os.path.join(work, "cuda")
    os.makedirs(os.path.join(tk, "bin"))
    for e in os.listdir(CUDA):
        if e != "bin":
            os.symlink(os.path.join(CUDA, e), os.path.join(tk, e))
    for e in os.listdir(os.path.join(CUDA, "bin")):
        if e != "nvcc":
            os.symlink(os.path.join(CUDA, "bin", e), os.path.join(tk, "bin", e))
    wrapper(os.path.join(tk, "bin", "nvcc"), "nvcc", os.path.join(CUDA, "bin", "nvcc"))
    cxx = os.path.join(work, "cxx", "c++")
    os.makedirs(os.path.dirname(cxx))
    wrapper(cxx, "c++", shutil.which("c++"))
    return tk, cxx


EXT_CPP = """#include <torch/extension.h>
#include <vector>
torch::Tensor scale(torch::Tensor x, double a);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale", &scale, "x * a"); }
"""
EXT_CU = """#include <torch/types.h>
template <typename T> __global__ void k(T *x, T a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }
torch::Tensor scale(torch::Tensor x, double a) { k<float><<<1, 32>>>(x.data_ptr<float>(), (float)a, x.numel()); return x; }
"""
# The common pattern of real extensions: the project's own -O3, fast math, line info, nvcc
# threads and hard-coded gencodes.
NVCC_FLAGS = ["-O3", "--use_fast_math", "-lineinfo", "--threads", "4",
              "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
SETUP = """import os
from setuptools import setup
from {mod} import BuildExtension, CUDAExtension, CUDA_HOME
assert CUDA_HOME
setup(name="ext", ext_modules=[CUDAExtension("ext._C", ["ext.cpp", "kern.cu"],
      include_dirs=[os.path.dirname(os.path.abspath(__file__))], define_macros=[("EXT_FLAG", "1")],
      extra_compile_args={{"cxx": ["-O3"], "nvcc": {nvcc!r}}})],
      cmdclass={{"build_ext": BuildExtension}})
"""
LOAD = """import sys, torch
from {mod} import load
load("ext", ["ext.cpp", "kern.cu"], extra_cflags={cflags!r}, extra_cuda_cflags={nvcc!r},
     build_directory=sys.argv[1], is_python_module=False)
"""


def cases(src):
    return {
        "load": ("load", ["-O3"], NVCC_FLAGS),
        "load-archlist": ("load", [], ["-lineinfo"]),
        "setup": ("setup", None, NVCC_FLAGS),
    }


def run_case(work, tk, cxx, builder, case, spec):
    kind, cflags, nvcc = spec
    d = os.path.join(work, "%s-%s" % (builder, case))
    os.makedirs(d)
    for n, t in (("ext.cpp", EXT_CPP), ("kern.cu", EXT_CU)):
        with open(os.path.join(d, n), "w") as f:
            f.write(t)
    log = os.path.join(d, "commands")
    env = dict(os.environ, CXX=cxx, CUDA_HOME=tk, CMDREC_LOG=log, MAX_JOBS="2",
               PATH=os.path.join(tk, "bin") + os.pathsep + os.environ["PATH"],
               TORCH_CUDA_ARCH_LIST="8.0 9.0+PTX", FATBUILD_CACHE_DIR=os.path.join(d, "cache"),
               TORCH_EXTENSIONS_DIR=os.path.join(d, "ext"), PYTHONDONTWRITEBYTECODE="1",
               # the compilers' own words: torch puts ccache or sccache in front when one is
               # installed (fatbuild's edge cache does that job), which reorders them
               TORCH_NO_COMPILER_WRAPPER="1")
    env.pop("CC", None)
    mod = {("torch", "load"): "torch.utils.cpp_extension", ("fatbuild", "load"): "fatbuild",
           ("torch", "setup"): "torch.utils.cpp_extension", ("fatbuild", "setup"): "fatbuild.setuptools"}[builder, kind]
    if kind == "load":
        with open(os.path.join(d, "load.py"), "w") as f:
            f.write(LOAD.format(mod=mod, cflags=cflags, nvcc=nvcc))
        sh([sys.executable, "load.py", os.path.join(d, "build")], env, d, os.path.join(d, "out.log"))
    else:
        with open(os.path.join(d, "setup.py"), "w") as f:
            f.write(SETUP.format(mod=mod, nvcc=nvcc))
        sh([sys.executable, "setup.py", "-q", "build_ext", "-b", os.path.join(d, "lib"), "-t", os.path.join(d, "build")],
           env, d, os.path.join(d, "out.log"))
    cmds = {}
    srcs = (os.path.join(d, "ext.cpp"), os.path.join(d, "kern.cu"))
    for line in open(log):
        words = line.rstrip("\n").split("\x1f")
        if any(w in srcs for w in words):
            cmds[words[0]] = normal(words[1:], d, srcs)
    return cmds


def normal(words, d, srcs):
    """The words that decide the object: no source, output, depfile or -c; the case's dir <B>."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-o", "-MF"):
            skip = True
            continue
        if w in ("-c", "-MD", "-MMD") or w in srcs:
            continue
        w = w.replace(os.path.join(d, "cache"), "<C>").replace(d, "<B>")
        out.append(w)
    return out


def split_words(ws):
    """torch writes "--compiler-options '-fPIC'" and "-isystem DIR" into build.ninja as one
    word for its shell; the words the compiler gets are compared, each option with its value."""
    flat = []
    for w in ws:
        flat += shlex.split(w) if " " in w or "'" in w else [w]
    out, i = [], 0
    while i < len(flat):
        w = "-Xcompiler" if flat[i] == "--compiler-options" else flat[i]
        if w in PAIRED and i + 1 < len(flat):
            out.append(w + " " + flat[i + 1])
            i += 2
        else:
            out.append(w)
            i += 1
    return out


def allowed(side, w):
    for entry in ALLOWED[side]:
        m = re.fullmatch(entry[0], w)
        if m and (len(entry) < 3 or entry[2](m)):
            return entry[1]
    return None


def gencodes(ws):
    return {w.split(" ", 1)[1] if w.startswith("-gencode ") else w.split("=", 1)[1]
            for w in ws if w.startswith(("-gencode ", "-gencode=", "--generate-code="))}


def includes(ws):
    out = []
    for w in ws:
        if w.startswith("-isystem "):
            out.append(w[9:])
        elif w.startswith("-I") and not allowed("fb", w):
            out.append(w[2:])
    return out


def last(ws, prefix):
    hits = [w for w in ws if w.startswith(prefix)]
    return hits[-1] if hits else None


def compare(case, tool, t, f):
    """Differences between torch's words t and fatbuild's f; returns the failures."""
    fails = []
    t, f = split_words(t), split_words(f)
    rest = list(t)
    extra = []
    for w in f:
        if w in rest:
            rest.remove(w)
        else:
            extra.append(w)
    print("  %s %s: torch %d words, fatbuild %d" % (case, tool, len(t), len(f)))
    for w in extra:
        why = allowed("fb", w)
        print("    + %-60s %s" % (w[:60], why or "NOT EXPLAINED"))
        if not why:
            fails.append("%s %s: fatbuild adds %s" % (case, tool, w))
    for w in rest:
        why = allowed("torch", w)
        print("    - %-60s %s" % (w[:60], why or "NOT EXPLAINED"))
        if not why:
            fails.append("%s %s: fatbuild lacks %s" % (case, tool, w))
    if gencodes(t) != gencodes(f):
        fails.append("%s %s: gencodes %s, torch's %s" % (case, tool, sorted(gencodes(f)), sorted(gencodes(t))))
    if includes(t) != includes(f):
        fails.append("%s %s: include order %s, torch's %s" % (case, tool, includes(f), includes(t)))
    for p in ("-std=", "-O"):
        if last(t, p) != last(f, p):
            fails.append("%s %s: last %s* is %s, torch's %s" % (case, tool, p, last(f, p), last(t, p)))
    if any(w.startswith("--param=ggc-") for w in f) and any(w.startswith("-g") and w != "-g0" for w in f):
        fails.append("%s %s: gcc's collector heap beside -g, which records it in the object" % (case, tool))
    for w in set(f):
        if f.count(w) > max(1, t.count(w)) and not allowed("fb", w):
            fails.append("%s %s: fatbuild repeats %s (%d times, torch %d)" % (case, tool, w, f.count(w), t.count(w)))
    return fails


def main():
    work = os.path.abspath(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tk, cxx = toolkit(work)
    fails = []
    for case, spec in cases(work).items():
        got = {b: run_case(work, tk, cxx, b, case, spec) for b in ("torch", "fatbuild")}
        for tool in ("c++", "nvcc"):
            if tool not in got["torch"] or tool not in got["fatbuild"]:
                fails.append("%s: no %s compile recorded (torch %s, fatbuild %s)" %
                             (case, tool, sorted(got["torch"]), sorted(got["fatbuild"])))
                continue
            fails += compare(case, tool, got["torch"][tool], got["fatbuild"][tool])
    for f in fails:
        print("FAIL: " + f)
    if fails:
        sys.exit(1)
    print("PASS: fatbuild's compile commands are torch's, but for the differences explained above")


if __name__ == "__main__":
    main()
