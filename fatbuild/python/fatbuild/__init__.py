"""fatbuild from Python: build and load PyTorch/CUDA extensions with the fatbuild tool.

    import fatbuild
    muladd = fatbuild.load("muladd", ["muladd.cpp", "muladd.cu"])   # as torch.utils.cpp_extension.load
    fatbuild.arch_flags("8.0 9.0+PTX")      # ['-gencode=arch=compute_80,code=sm_80', ...]
    fatbuild.probe()                       # archprobe's JSON: driver, devices, arch list

The whole of torch.utils.cpp_extension's API is here with its names, signatures and defaults
(load, load_inline, include_paths, CUDA_HOME, BuildExtension ...): swap the import line. setup.py:
``from fatbuild.setuptools import BuildExtension, CUDAExtension, CUDA_HOME``.
"""
import importlib.util
import os
import sys
import sysconfig
from typing import Dict, List, Optional, Sequence, Union

from ._tools import FatbuildError, _tool_env, find_executable, ninja_path, run, run_streamed, write_text_atomic
from . import _torch, _torch_query

# torch.utils.cpp_extension's names (its __all__), then fatbuild's own.
__all__ = ["get_default_build_root", "check_compiler_ok_for_platform", "get_compiler_abi_compatibility_and_version",
           "BuildExtension", "CppExtension", "CUDAExtension", "SyclExtension", "include_paths", "library_paths",
           "load", "load_inline", "is_ninja_available", "verify_ninja_availability",
           "remove_extension_h_precompiler_headers", "get_cxx_compiler", "check_compiler_is_gcc",
           "build", "arch_list", "arch_flags", "probe", "find_executable", "FatbuildError"]
__version__ = "0.1.0"

_arch_cache: Dict[str, str] = {}


def arch_list(fallback: Optional[str] = None, verbose: bool = False) -> str:
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


def arch_flags(arches: Optional[str] = None, fmt: str = "nvcc", fallback: Optional[str] = None) -> Union[List[str], str]:
    """The flags for an arch list (default: arch_list()), from `fatbuild flags --format FMT`: a
    list of words for nvcc and clang, else the text ("8.0 9.0+PTX" for torch, "80-real;90" for
    cmake)."""
    lst = arches if arches is not None else arch_list(fallback)
    _, out, err = run("fatbuild", ["flags", "--format", fmt, "--arch-list", lst])
    if err.strip():
        sys.stderr.write(err if err.endswith("\n") else err + "\n")
    return out.split() if fmt in ("nvcc", "clang") else out.strip()


def probe() -> dict:
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
    return os.path.join(_torch.default_build_root(), name)


def _seed_torch_query(bdir, python):
    """Writes the answer `fatbuild build --torch` would get from `python -c` (the same keys,
    the format fatbuild/extension/torch.c reads) into bdir/torch.query, when this process has
    torch imported already and bdir has no answer yet: a cold build then does not start a
    second Python to import torch again. fatbuild checks the key and torch's files as always,
    so a stale or foreign answer is asked again, never used."""
    path = os.path.join(bdir, "torch.query")
    if "torch" not in sys.modules or os.path.exists(path):
        return
    lines = _torch_query.answer(sys.modules["torch"], _torch.ce())
    key = "key %s|%s|%s|%s" % (python, os.environ.get("PYTHONPATH", ""), os.environ.get("PYTHONHOME", ""),
                               os.environ.get("PYTHONUSERBASE", ""))
    write_text_atomic(path, "fatbuild torch query 1\n%s\n%s\n" % (key, "\n".join(lines)))


def build(name: str, sources: Union[str, Sequence[str]], output: str, extra_cflags: Optional[Sequence[str]] = None,
          extra_cuda_cflags: Optional[Sequence[str]] = None, extra_ldflags: Optional[Sequence[str]] = None,
          extra_include_paths: Optional[Sequence[str]] = None, build_directory: Optional[str] = None,
          verbose: bool = False, is_python_module: bool = True, with_cuda: Optional[bool] = None,
          defines: Optional[Sequence[str]] = None, arches: Optional[str] = None,
          host_opt: Optional[str] = None) -> str:
    """Runs `fatbuild build --torch` for this interpreter's torch, with fatbuild's own torch
    words (as the CLI); returns the path of what it built. output: the file to write, or a
    directory, which gets DIR/NAME<EXT_SUFFIX> (importable as NAME) with is_python_module, else
    DIR/NAME.so. extra_cflags are the C++ compiles', as with torch, extra_cuda_cflags nvcc's.
    arches: the arch list (default: the project's own arches in extra_cuda_cflags, else
    arch_list()). host_opt: the optimisation of host compiles (None: fatbuild's -O2 unless the
    flags give one; "" none). MAX_JOBS caps the parallel jobs."""
    if isinstance(sources, str):
        sources = [sources]
    if not sources:
        raise ValueError("fatbuild.build: no sources")
    bdir = os.path.abspath(build_directory or _default_build_dir(name))
    os.makedirs(bdir, mode=0o700, exist_ok=True)
    _seed_torch_query(bdir, sys.executable)
    args = ["build", "--torch", "--python", sys.executable, "--name", name, "--build-dir", bdir,
            "-o", os.path.abspath(output)]
    if not _torch.names_archs(extra_cuda_cflags):
        args += ["--arch-list", arches or arch_list(verbose=verbose)]
    out_dir = os.path.isdir(output)
    if out_dir and is_python_module:
        args.append("--python-module")
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
    args += _jobs()
    if verbose:
        args.append("-v")
    args += [os.path.abspath(s) for s in sources]
    _, out, err = run("fatbuild", args, verbose=verbose)
    if verbose or err.strip():
        sys.stdout.write(out)
        sys.stderr.write(err)
    else:
        _notices(out)
    if not out_dir:
        return os.path.abspath(output)
    suffix = (sysconfig.get_config_var("EXT_SUFFIX") or ".so") if is_python_module else ".so"
    return os.path.join(os.path.abspath(output), name + suffix)


def _jobs():
    jobs = os.environ.get("MAX_JOBS", "").strip()
    return ["-j", jobs] if jobs.isdigit() and int(jobs) > 0 else []


def _notices(output):
    """fatbuild's own notices in a build's output (the arch list's fallback, a CUDA version
    warning, the remote executor's one fallback warning, which an NVRTC edge prints in ninja's
    output), not ninja's lines, to stderr."""
    notes = [l for l in output.splitlines() if l.startswith("fatbuild: ")]
    if notes:
        sys.stderr.write("\n".join(notes) + "\n")


def _failure(output):
    """What a failed build said, from its first failed edge on (output.c puts the compiler's
    message right after "FAILED: ..."), else all of it."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("FAILED: "):
            return "\n".join(lines[i:])
    return output.strip()


class _Unchanged:
    """A load() that asks for exactly what the last successful one in bdir built (the same
    fatbuild program, arguments and environment: bdir/.fatbuild-load) while ninja has nothing to
    do (`ninja -n`) is done without running fatbuild: as torch's load(), which only runs ninja.
    Anything else, or any doubt, runs `fatbuild build` as always (docs/pytorch.md)."""

    def __init__(self, bdir, output, args, env):
        import hashlib
        import json

        self.path = os.path.join(bdir, ".fatbuild-load")
        self.bdir, self.output = bdir, output
        exe = find_executable("fatbuild")
        st = os.stat(exe)
        environ = _tool_env(env) or os.environ
        what = [exe, st.st_size, st.st_mtime_ns, list(args), sorted(environ.items())]
        self.key = hashlib.sha256(json.dumps(what).encode()).hexdigest()

    def idle(self, stream):
        try:
            with open(self.path) as f:
                if f.read().strip() != self.key or not os.path.exists(self.output):
                    return False
        except OSError:
            return False
        ninja = ninja_path()
        if not ninja:
            return False
        import subprocess

        p = subprocess.run([ninja, "-C", self.bdir, "-n"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        if p.returncode != 0 or "ninja: no work to do." not in p.stdout:
            return False
        if stream:
            sys.stdout.write(p.stdout)
            sys.stdout.flush()
        return True

    def forget(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def remember(self):
        try:
            write_text_atomic(self.path, self.key + "\n")
        except OSError:
            self.forget()


def _torch_build(name, sources, output, bdir, cxx, nvcc, ldflags, with_cuda, verbose, stream, error_prefix,
                 program=False, eager_pch=False, arch_from=None, show_command=False):
    """`fatbuild build --torch --no-torch-flags` with the words torch's builder would use (cxx,
    nvcc: lists, nvcc None without CUDA; ldflags). The arch list is fatbuild's unless the nvcc
    words name the arches (torch's rule); arch_from: the project's nvcc flags that decide it.
    Shows ninja's output as it comes with stream (and -v's commands with verbose), else keeps
    it for an error: RuntimeError (FatbuildError) error_prefix + ": " + what failed; with stream
    the error was shown as it came, so the exception says error_prefix alone, as torch's does.
    show_command: print the fatbuild command first (load(verbose=True) asks for it; a setup.py
    build does not: its log is torch's progress and the compilers' words)."""
    os.makedirs(bdir, mode=0o700, exist_ok=True)
    _seed_torch_query(bdir, sys.executable)
    args = ["build", "--torch", "--no-torch-flags", "--backend", "nvcc", "--python", sys.executable,
            "--name", name, "--build-dir", bdir, "-o", os.path.abspath(output), "--host-opt", "none",
            "--with-cuda" if with_cuda else "--no-cuda"]
    if with_cuda and not _torch.names_archs(arch_from if arch_from is not None else nvcc):
        args += ["--arch-list", arch_list(verbose=verbose)]
    args += ["--cxxflags", _words("C++ flags", cxx)]
    if nvcc is not None:
        args += ["--nvcc-flags", _words("nvcc flags", nvcc)]
    if ldflags:
        args += ["--ldflags", _words("link flags", ldflags)]
    if program:
        args.append("--executable")
    args += _jobs()
    if verbose:
        args.append("-v")
    args += [os.path.abspath(s) for s in sources]
    env = {"FATBUILD_HOST_PCH": "1"} if eager_pch and not os.environ.get("FATBUILD_HOST_PCH") else None
    stamp = _Unchanged(bdir, output, args, env)
    if stamp.idle(stream):
        return os.path.abspath(output)
    stamp.forget()
    if show_command:
        print("fatbuild.py: " + " ".join([find_executable("fatbuild")] + args), flush=True)
    rc, out = run_streamed("fatbuild", args, stream=stream, env=env)
    if rc != 0:
        stamp.forget()
        raise FatbuildError(error_prefix if stream else "%s: %s" % (error_prefix, _failure(out)))
    stamp.remember()
    if not stream:
        _notices(out)
    return os.path.abspath(output)


def _import_module(name, path, is_python_module):
    """As torch's _import_module_from_library: the module, or the library loaded with
    torch.ops.load_library and its path."""
    if not is_python_module:
        import torch

        torch.ops.load_library(path)
        return path
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise AssertionError(f"Failed to create spec for module {name} at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _jit(name, sources, extra_cflags, extra_cuda_cflags, extra_sycl_cflags, extra_ldflags, extra_include_paths,
         build_directory, verbose, with_cuda, with_sycl, is_python_module, is_standalone, keep_intermediates,
         eager_pch=False):
    """torch's _jit_compile, built by fatbuild: the same checks, versions, words and result."""
    if is_python_module and is_standalone:
        raise ValueError("`is_python_module` and `is_standalone` are mutually exclusive.")
    if with_cuda is None:
        with_cuda = any(map(_torch.is_cuda_file, sources))
    if with_sycl or (with_sycl is None and any(map(_torch.is_sycl_file, sources))):
        _torch.refuse_sycl("fatbuild.load")
    import torch  # the extension links libtorch: load it first

    version = _torch.VERSIONER.bump(name, sources,
                                    [extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths],
                                    build_directory=build_directory, with_cuda=with_cuda,
                                    is_python_module=is_python_module, is_standalone=is_standalone)
    if version > 0:
        name = f"{name}_v{version}"
    cxx, nvcc = _torch.load_words(name, with_cuda, extra_cflags, extra_cuda_cflags, extra_include_paths,
                                  is_standalone)
    ld = _torch.load_ldflags(extra_ldflags, with_cuda, verbose, is_standalone)
    suffix = "" if is_standalone else ".so"
    output = os.path.join(build_directory, name + suffix)
    _torch_build(name, sources, output, build_directory, cxx, nvcc, ld, with_cuda, verbose, stream=verbose,
                 error_prefix=f"Error building extension '{name}'", program=is_standalone, eager_pch=eager_pch,
                 arch_from=[f.strip() for f in extra_cuda_cflags or []], show_command=verbose)
    if is_standalone:
        return output
    return _import_module(name, output, is_python_module)


def load(name,
         sources,
         extra_cflags=None,
         extra_cuda_cflags=None,
         extra_sycl_cflags=None,
         extra_ldflags=None,
         extra_include_paths=None,
         build_directory=None,
         verbose=False,
         with_cuda=None,
         with_sycl=None,
         is_python_module=True,
         is_standalone=False,
         keep_intermediates=True):
    """torch.utils.cpp_extension.load, built by fatbuild: the same arguments, compile and link
    commands and result (the module NAME; with is_python_module=False the library loaded with
    torch.ops.load_library, its path returned; with is_standalone a program, its path). The arch
    list: the extra nvcc flags' own arches when they name some (-gencode, -arch), else
    TORCH_CUDA_ARCH_LIST, else the visible GPUs, else the fallback (all-major unless
    ARCHPROBE_FALLBACK says otherwise) with a notice. verbose shows every command as it runs;
    a failed build raises RuntimeError with the compiler's message first. The build dir
    (default $FATBUILD_BUILD_DIR/NAME, else $TORCH_EXTENSIONS_DIR/fatbuild/NAME, else
    ~/.cache/fatbuild/extensions/pyXY/NAME) holds fatbuild's graph, never torch's. SYCL sources
    are refused (OSError). keep_intermediates is torch's switch for the sources it hipifies for
    ROCm; fatbuild makes none, so it changes nothing here, as it changes nothing in a CUDA build
    of torch's. FATBUILD_REMOTE_EXECUTOR in the environment reaches the build (docs/pytorch.md,
    "Remote execution"): a URL that is not grpc:// or grpcs:// raises at once."""
    sources = [sources] if isinstance(sources, str) else list(sources)
    bdir = os.path.abspath(build_directory or _default_build_dir(name))
    return _jit(name, sources, extra_cflags, extra_cuda_cflags, extra_sycl_cflags, extra_ldflags,
                extra_include_paths, bdir, verbose, with_cuda, with_sycl, is_python_module, is_standalone,
                keep_intermediates)


def load_inline(name,
                cpp_sources,
                cuda_sources=None,
                sycl_sources=None,
                functions=None,
                extra_cflags=None,
                extra_cuda_cflags=None,
                extra_sycl_cflags=None,
                extra_ldflags=None,
                extra_include_paths=None,
                build_directory=None,
                verbose=False,
                with_cuda=None,
                with_sycl=None,
                is_python_module=True,
                with_pytorch_error_handling=True,
                keep_intermediates=True,
                use_pch=False,
                no_implicit_headers=False,
                gil_not_used=False):
    """torch.utils.cpp_extension.load_inline, built by fatbuild: the sources written as torch
    writes them (main.cpp after #include <torch/extension.h>, with pybind11 bindings for
    functions; cuda.cu after torch/types.h, cuda.h and cuda_runtime.h) into the build dir, then
    built as load() builds. use_pch: fatbuild's torch PCH is made at once rather than by the
    second build that wants it (torch's own extension.h.gch is left alone)."""
    if sycl_sources or with_sycl:
        _torch.refuse_sycl("fatbuild.load_inline")
    bdir = os.path.abspath(build_directory or _default_build_dir(name))
    sources = _torch.inline_sources(bdir, cpp_sources, cuda_sources, functions, with_pytorch_error_handling,
                                    no_implicit_headers, gil_not_used)
    return _jit(name, sources, extra_cflags, extra_cuda_cflags, extra_sycl_cflags, extra_ldflags,
                extra_include_paths, bdir, verbose, with_cuda, with_sycl, is_python_module, False,
                keep_intermediates, eager_pch=use_pch)


# ---- the rest of torch.utils.cpp_extension's functions: torch's own, with its signatures ----

def get_default_build_root():
    """torch's (the root under which torch's load() builds); fatbuild.load builds under
    $FATBUILD_BUILD_DIR, $TORCH_EXTENSIONS_DIR/fatbuild or ~/.cache/fatbuild/extensions."""
    return _torch.ce().get_default_build_root()


def check_compiler_ok_for_platform(compiler):
    """torch's: whether compiler is the expected kind for the platform (gcc or clang on Linux)."""
    return _torch.ce().check_compiler_ok_for_platform(compiler)


def get_compiler_abi_compatibility_and_version(compiler):
    """torch's: (whether compiler is ABI-compatible with torch, its version)."""
    return _torch.ce().get_compiler_abi_compatibility_and_version(compiler)


def include_paths(device_type="cpu", torch_include_dirs=True):
    """torch's: the include dirs an extension needs."""
    return _torch.ce().include_paths(device_type, torch_include_dirs)


def library_paths(device_type="cpu", torch_include_dirs=True, cross_target_platform=None):
    """torch's: the library dirs an extension needs."""
    return _torch.ce().library_paths(device_type, torch_include_dirs, cross_target_platform)


def is_ninja_available():
    """Whether fatbuild finds ninja ($FATBUILD_NINJA, PATH, or the one pip installed beside this
    Python)."""
    return ninja_path() is not None


def verify_ninja_availability():
    """RuntimeError when fatbuild finds no ninja, as torch's."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")


def remove_extension_h_precompiler_headers():
    """torch's: removes torch's own precompiled torch/extension.h (load_inline(use_pch=True) of
    torch's builder). fatbuild's PCHs live in its cache: `fatbuild cache clear`."""
    return _torch.ce().remove_extension_h_precompiler_headers()


def get_cxx_compiler():
    """torch's: $CXX, else c++ (the C++ compiler both builders run)."""
    return _torch.ce().get_cxx_compiler()


def check_compiler_is_gcc(compiler):
    """torch's: whether compiler is gcc."""
    return _torch.ce().check_compiler_is_gcc(compiler)


def __getattr__(name):
    """The setuptools classes (fatbuild.setuptools, imported on first use) and torch's constants
    (CUDA_HOME, ROCM_HOME, TORCH_LIB_PATH, COMMON_NVCC_FLAGS ...: torch's values)."""
    if name in ("BuildExtension", "CppExtension", "CUDAExtension", "SyclExtension"):
        from . import setuptools as st

        return getattr(st, name)
    if name.isupper():
        ce = _torch.ce()
        if hasattr(ce, name):
            return getattr(ce, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
