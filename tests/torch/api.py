"""api.py: fatbuild's Python layer against torch.utils.cpp_extension, without compiling.

  1. the API: every name of torch's __all__ is in `fatbuild` and in `fatbuild.setuptools`, each
     function with torch's signature (parameter names, kinds and defaults, so keyword and
     positional calls mean the same), BuildExtension with torch's options and with_options;
     torch's constants (CUDA_HOME ...) with torch's values; the one-line import swap works;
  2. SYCL is refused with OSError, as torch without SYCL refuses it;
  3. load_inline writes the files torch's load_inline writes, byte for byte (torch's own, its
     build step replaced);
  4. load()'s words are the ones torch's builder writes into its build.ninja (torch's own
     function writing it), but for what fatbuild adds itself (-fPIC, arches);
  5. torch's rule for the project's own arches; in-process versions (NAME_v1) as torch's;
  6. a failed build's message starts at the failed edge (the compiler's message first).
Run with the venv's python (tests/torch/run.sh); exits 1 on any failure."""
import copy
import inspect
import os
import shlex
import sys
import tempfile

import torch.utils.cpp_extension as ce

import fatbuild
import fatbuild.setuptools as fst

fails = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        fails.append(what)


def params(f):
    return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]


# 1. the API
for mod in (fatbuild, fst):
    for name in ce.__all__:
        theirs = getattr(ce, name)
        ours = getattr(mod, name, None)
        if ours is None:
            check(False, "%s.%s exists" % (mod.__name__, name))
            continue
        if inspect.isclass(theirs):
            check(inspect.isclass(ours), "%s.%s is a class" % (mod.__name__, name))
            for m in ("__init__", "with_options", "get_ext_filename", "finalize_options", "build_extensions"):
                if hasattr(theirs, m):
                    check(hasattr(ours, m) and params(getattr(ours, m)) == params(getattr(theirs, m)),
                          "%s.%s.%s has torch's signature" % (mod.__name__, name, m))
        else:
            check(params(ours) == params(theirs), "%s.%s%s is torch's %s" % (
                mod.__name__, name, inspect.signature(ours), inspect.signature(theirs)))
    for name in ("CUDA_HOME", "ROCM_HOME", "SYCL_HOME", "CUDNN_HOME", "TORCH_LIB_PATH", "COMMON_NVCC_FLAGS",
                 "IS_HIP_EXTENSION"):
        check(getattr(mod, name) == getattr(ce, name), "%s.%s is torch's (%r)" % (mod.__name__, name, getattr(ce, name)))
ns = {}
exec("from fatbuild.setuptools import BuildExtension, CUDAExtension, CppExtension, CUDA_HOME, include_paths", ns)
check(ns["CUDA_HOME"] == ce.CUDA_HOME and issubclass(ns["BuildExtension"], ce.BuildExtension.__bases__[0]),
      "from fatbuild.setuptools import BuildExtension, CUDAExtension, CppExtension, CUDA_HOME, include_paths")
check(fatbuild.include_paths("cuda") == ce.include_paths("cuda"), "include_paths('cuda') is torch's")
check(fatbuild.library_paths("cuda") == ce.library_paths("cuda"), "library_paths('cuda') is torch's")
check(fatbuild.get_compiler_abi_compatibility_and_version("c++") == ce.get_compiler_abi_compatibility_and_version("c++"),
      "get_compiler_abi_compatibility_and_version is torch's")
check(fatbuild.is_ninja_available() is True, "is_ninja_available: fatbuild finds ninja")
ext = fst.CUDAExtension("pkg._C", ["a.cpp", "b.cu"])
ref = ce.CUDAExtension("pkg._C", ["a.cpp", "b.cu"])
check((ext.include_dirs, ext.library_dirs, ext.libraries, ext.language) ==
      (ref.include_dirs, ref.library_dirs, ref.libraries, ref.language), "CUDAExtension is torch's")
from setuptools import Distribution

Opt = fst.BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)
cmd = Opt(Distribution({"name": "x"}))
check(cmd.no_python_abi_suffix is True and cmd.use_ninja is False and isinstance(cmd, fst.BuildExtension),
      "BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)")
check(cmd.get_ext_filename("pkg._C") == os.path.join("pkg", "_C.so"), "no_python_abi_suffix: pkg/_C.so")
check(fatbuild.BuildExtension is fst.BuildExtension, "fatbuild.BuildExtension is fatbuild.setuptools'")

try:
    from fatbuild import _torch
except ImportError as e:
    check(False, "fatbuild._torch (torch's words and rules): %s" % e)
    sys.exit(1)

# 2. SYCL
with tempfile.TemporaryDirectory() as d:
    for call, what in ((lambda: fatbuild.load("s", [os.path.join(d, "a.cpp")], with_sycl=True), "load(with_sycl=True)"),
                       (lambda: fatbuild.load("s", [os.path.join(d, "k.sycl")]), "load of a .sycl source"),
                       (lambda: fatbuild.load_inline("s", "", sycl_sources="int x;", build_directory=d),
                        "load_inline(sycl_sources=...)")):
        try:
            call()
            check(False, what + " is refused")
        except OSError as e:
            check("SYCL" in str(e), what + " is refused: " + str(e)[:80])

# 3. load_inline's files: torch's own, its build step replaced by one that keeps the sources
cases = [dict(cpp_sources="int f(int x) { return x; }", functions=["f"]),
         dict(cpp_sources=["int f(int);", "int g(int x) { return x; }"], cuda_sources="__global__ void k() {}",
              functions={"g": "doc of g"}, with_pytorch_error_handling=False, gil_not_used=True),
         dict(cpp_sources="int f(int x) { return x; }", cuda_sources=["int h;", "int i;"], no_implicit_headers=True)]
seen = {}
real = ce._jit_compile
ce._jit_compile = lambda name, sources, *a, **k: seen.setdefault("sources", list(sources))
try:
    for i, kw in enumerate(cases):
        with tempfile.TemporaryDirectory() as t, tempfile.TemporaryDirectory() as f:
            seen.clear()
            ce.load_inline("inl", build_directory=t, **copy.deepcopy(kw))  # torch's changes the lists
            theirs = {os.path.basename(p): open(p).read() for p in seen["sources"]}
            ours_paths = _torch.inline_sources(f, kw["cpp_sources"], kw.get("cuda_sources"), kw.get("functions"),
                                               kw.get("with_pytorch_error_handling", True),
                                               kw.get("no_implicit_headers", False), kw.get("gil_not_used", False))
            ours = {os.path.basename(p): open(p).read() for p in ours_paths}
            check(ours == theirs, "load_inline case %d: the files torch writes (%s)" % (i, sorted(theirs)))
finally:
    ce._jit_compile = real

# 4. load()'s words against torch's build.ninja (torch's own writer)
os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"  # torch's arch flags fail with no GPU and no list
real = ce._run_ninja_build
ce._run_ninja_build = lambda *a, **k: None  # torch writes its build.ninja and builds nothing
with tempfile.TemporaryDirectory() as d:
    for with_cuda in (True, False):
        path = os.path.join(d, "build.ninja")
        ce._write_ninja_file_and_build_library("ext", [os.path.join(d, "a.cpp")], ["-O3", "-g"], ["-lineinfo"], [],
                                               ["-lfoo"], [d], d, False, with_cuda, False)
        var = {}
        for line in open(path):
            if " = " in line and not line.startswith(" "):
                k, v = line.rstrip("\n").split(" = ", 1)
                var[k] = shlex.split(v)
        cxx, nvcc = _torch.load_words("ext", with_cuda, ["-O3", "-g"], ["-lineinfo"], [d], False)
        # fatbuild adds -fPIC (C++) and -Xcompiler -fPIC, the arches (nvcc) itself
        theirs = [w for w in var["cflags"] if w != "-fPIC"]
        check(cxx == theirs, "load words, C++ (with_cuda=%s): %s" % (with_cuda, " ".join(cxx)))
        if with_cuda:
            tn = var["cuda_cflags"]
            tn = [w for i, w in enumerate(tn) if w not in ("--compiler-options", "-fPIC") and not w.startswith("-gencode")]
            check(nvcc == tn, "load words, nvcc: %s" % " ".join(nvcc))
        ld = _torch.load_ldflags(["-lfoo"], with_cuda, False, False)
        check(["-shared"] + ld == var["ldflags"], "load link words (with_cuda=%s): %s" % (with_cuda, " ".join(ld)))
ce._run_ninja_build = real

# 5. arches, versions
check(_torch.names_archs(["-O3", "-gencode", "arch=compute_80,code=sm_80"]) and _torch.names_archs(["-arch=sm_90"]),
      "the project's -gencode / -arch name the arches")
check(not _torch.names_archs(["-O3", "-DTORCH_EXTENSION_NAME=search_arch"]) and not _torch.names_archs(None),
      "the extension's name define names none")
with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "a.cpp")
    open(src, "w").write("int a;\n")
    v = _torch.Versioner()
    r = [v.bump("x", [src], [None], build_directory=d)]
    r.append(v.bump("x", [src], [None], build_directory=d))
    open(src, "w").write("int b;\n")
    r.append(v.bump("x", [src], [None], build_directory=d))
    r.append(v.bump("x", [src], [["-O2"]], build_directory=d))
    check(r == [0, 0, 1, 2], "versions as torch's: same 0, changed source 1, changed flags 2 (%s)" % r)

# 6. a failed build's message
out = "[1/3] NVCC k.cu\nFAILED: obj/0_a.cpp.o \na.cpp:3:1: error: x\ncommand: c++ -c a.cpp\nninja: build stopped.\n"
check(fatbuild._failure(out).splitlines()[1] == "a.cpp:3:1: error: x", "the failure starts at the failed edge")

print("PASS: api" if not fails else "%d check(s) failed" % len(fails))
sys.exit(1 if fails else 0)
