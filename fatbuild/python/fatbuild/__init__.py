"""fatbuild from Python: build and load PyTorch/CUDA extensions with the fatbuild tool.

    import fatbuild
    muladd = fatbuild.load("muladd", ["muladd.cpp", "muladd.cu"])   # as torch.utils.cpp_extension.load
    fatbuild.arch_flags("8.0 9.0+PTX")      # ['-gencode=arch=compute_80,code=sm_80', ...]
    fatbuild.probe()                       # archprobe's JSON: driver, devices, arch list

setup.py: ``from fatbuild.setuptools import BuildExtension, CUDAExtension``.
"""
import importlib.util
import os
import sys
import sysconfig

from ._tools import FatbuildError, find_executable, run

__all__ = ["load", "build", "arch_list", "arch_flags", "probe", "find_executable", "FatbuildError"]
__version__ = "0.1.0"

_arch_cache = {}


def arch_list(fallback=None, verbose=False):
    """The arch list to build for, in PyTorch's syntax: TORCH_CUDA_ARCH_LIST when set, else the
    visible GPUs, else `fallback` (default $ARCHPROBE_FALLBACK, else all-major) with a notice on
    stderr saying why."""
    env = os.environ.get("TORCH_CUDA_ARCH_LIST", "").strip()
    if env:
        return env
    key = fallback or os.environ.get("ARCHPROBE_FALLBACK") or ""
    if key not in _arch_cache:
        args = ["flags", "--format", "torch", "--arch-list", "auto"]
        if fallback:
            args += ["--fallback", fallback]
        _, out, err = run("fatbuild", args, verbose=verbose)
        if err.strip():
            sys.stderr.write(err if err.endswith("\n") else err + "\n")
        _arch_cache[key] = out.strip()
    return _arch_cache[key]


def arch_flags(arch_list_=None, format="nvcc", fallback=None):
    """The flags for an arch list (default: arch_list()), from `fatbuild flags`: a list of words
    for nvcc and clang, else the text ("8.0 9.0+PTX" for torch, "80-real;90" for cmake)."""
    lst = arch_list_ if arch_list_ is not None else arch_list(fallback)
    _, out, err = run("fatbuild", ["flags", "--format", format, "--arch-list", lst])
    if err.strip():
        sys.stderr.write(err if err.endswith("\n") else err + "\n")
    return out.split() if format in ("nvcc", "clang") else out.strip()


def probe():
    """What archprobe sees: its JSON report (schema archprobe/1) as a dict: status, reason,
    driver, devices, archs. No GPU is not an error here: status says so."""
    import json

    _, out, err = run("archprobe", ["--format", "json"], check=False)
    try:
        return json.loads(out)
    except ValueError:
        raise FatbuildError("archprobe --format json gave no report: " + (err or out).strip())


def _words(what, flags):
    flags = list(flags or [])
    for f in flags:
        if not isinstance(f, str) or any(c.isspace() for c in f):
            raise ValueError(f"{what}: {f!r}: one flag per item, without blanks")
    return " ".join(flags)


def _default_build_dir(name):
    root = os.environ.get("FATBUILD_BUILD_DIR")
    if not root:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        tag = "py%d%d" % sys.version_info[:2]
        root = os.path.join(cache, "fatbuild", "extensions", tag)
    return os.path.join(root, name)


def _seed_torch_query(bdir, python):
    """Writes the answer `fatbuild build --torch` would get from `python -c` (the same keys,
    the format fatbuild/extension/torch.c reads) into bdir/torch.query, when this process has
    torch imported already and bdir has no answer yet: a cold build then does not start a
    second Python to import torch again. fatbuild checks the key and torch's files as always,
    so a stale or foreign answer is asked again, never used."""
    path = os.path.join(bdir, "torch.query")
    if "torch" not in sys.modules or os.path.exists(path):
        return
    import re

    torch = sys.modules["torch"]
    import torch.utils.cpp_extension as ce

    lines = []

    def p(k, v):
        lines.append("fbtq %s=%s" % (k, v))

    p("version", torch.__version__)
    p("cuda", torch.version.cuda or "")
    p("abi", int(bool(torch._C._GLIBCXX_USE_CXX11_ABI)))
    for d in ce.include_paths():
        p("include", d)
    p("libdir", getattr(ce, "TORCH_LIB_PATH", os.path.join(os.path.dirname(torch.__file__), "lib")))
    p("pyinclude", sysconfig.get_path("include", scheme="posix_prefix"))
    p("extsuffix", sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    with open(ce.__file__) as f:
        stds = [int(x) for x in re.findall(r"-std=c\+\+(\d+)", f.read()) if int(x) < 50]
    p("std", "c++%d" % (max(stds) if stds else 17))
    for f in (torch.__file__, os.path.join(os.path.dirname(torch.__file__), "version.py")):
        st = os.stat(f)
        p("stamp", "%d %d %s" % (st.st_mtime_ns, st.st_size, f))
    key = "key %s|%s|%s|%s" % (python, os.environ.get("PYTHONPATH", ""), os.environ.get("PYTHONHOME", ""),
                               os.environ.get("PYTHONUSERBASE", ""))
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write("fatbuild torch query 1\n%s\n%s\n" % (key, "\n".join(lines)))
    os.replace(tmp, path)


def build(name, sources, output, extra_cflags=None, extra_cuda_cflags=None, extra_ldflags=None,
          extra_include_paths=None, build_directory=None, verbose=False, is_python_module=True,
          with_cuda=None, defines=None, arch_list_=None, host_opt=None):
    """Runs `fatbuild build --torch` for this interpreter's torch; returns the output path.
    Host C++ flags (extra_cflags) also reach nvcc's host compiler (through -Xcompiler),
    extra_cuda_cflags are nvcc's own. host_opt: the optimisation of host compiles (None:
    fatbuild's -O2; "" none). MAX_JOBS caps the parallel jobs."""
    if isinstance(sources, str):
        sources = [sources]
    if not sources:
        raise ValueError("fatbuild.build: no sources")
    bdir = os.path.abspath(build_directory or _default_build_dir(name))
    os.makedirs(bdir, mode=0o700, exist_ok=True)
    _seed_torch_query(bdir, sys.executable)
    args = ["build", "--torch", "--python", sys.executable, "--name", name, "--build-dir", bdir,
            "-o", os.path.abspath(output), "--arch-list", arch_list_ or arch_list(verbose=verbose)]
    for d in extra_include_paths or []:
        args += ["-I", os.path.abspath(d)]
    for d in defines or []:
        args += ["-D", d]
    if host_opt is not None:
        args += ["--host-opt", host_opt or "none"]
    if extra_cflags:
        args += ["--cxxflags", _words("extra_cflags", extra_cflags)]
    if extra_cuda_cflags:
        args += ["--nvcc-flags", _words("extra_cuda_cflags", extra_cuda_cflags)]
    if extra_ldflags:
        args += ["--ldflags", _words("extra_ldflags", extra_ldflags)]
    if with_cuda is True:
        args.append("--with-cuda")
    elif with_cuda is False:
        args.append("--no-cuda")
    jobs = os.environ.get("MAX_JOBS", "").strip()
    if jobs.isdigit() and int(jobs) > 0:
        args += ["-j", jobs]
    if verbose:
        args.append("-v")
    args += [os.path.abspath(s) for s in sources]
    _, out, err = run("fatbuild", args, verbose=verbose)
    if verbose or err.strip():
        sys.stdout.write(out)
        sys.stderr.write(err)
    return os.path.abspath(output)


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_ldflags=None,
         extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
         is_python_module=True, is_standalone=False, keep_intermediates=True):
    """Builds (only what changed) and loads a PyTorch extension, as
    torch.utils.cpp_extension.load with the same arguments: with is_python_module the module
    NAME (its PyInit_NAME) is imported and returned, else the library is loaded into the
    process with torch.ops.load_library (its TORCH_LIBRARY operators appear in torch.ops) and
    its path is returned. The arch list: TORCH_CUDA_ARCH_LIST, else the visible GPUs, else the
    fallback (all-major unless ARCHPROBE_FALLBACK says otherwise) with a notice. Host code is
    compiled with torch's load() flags (no -O of fatbuild's own: extra_cflags gives one), so
    the module is the one torch would build."""
    if is_standalone:
        raise ValueError("fatbuild.load: is_standalone (an executable) is not supported; use fatbuild build --executable")
    import torch  # the extension links libtorch: load it first

    bdir = os.path.abspath(build_directory or _default_build_dir(name))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    output = os.path.join(bdir, name + (suffix if is_python_module else ".so"))
    build(name, sources, output, extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags,
          extra_ldflags=extra_ldflags, extra_include_paths=extra_include_paths, build_directory=bdir,
          verbose=verbose, is_python_module=is_python_module, with_cuda=with_cuda, host_opt="")
    if not is_python_module:
        torch.ops.load_library(output)
        return output
    spec = importlib.util.spec_from_file_location(name, output)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module
