"""What torch.utils.cpp_extension would put on its command lines, from torch's own module.

fatbuild.load and fatbuild.setuptools.BuildExtension hand these words to `fatbuild build --torch
--no-torch-flags`, so the compilers see what torch's builder would give them (docs/pytorch.md,
"The same commands as torch"): its include dirs (include_paths(), so CUDA_INC_PATH and
CUDNN_HOME count as with torch), COMMON_NVCC_FLAGS, its C++ standard, its link flags. fatbuild
adds -fPIC, the arches (unless the project's nvcc flags name them: torch's rule), -ccbin $CC,
its own reproducibility flags and the torch PCH. torch is imported only when one is needed."""
import hashlib
import os
import sys
import sysconfig

from . import _torch_query
from ._tools import write_text_atomic

_std = None


def ce():
    """torch.utils.cpp_extension (imports torch)."""
    import torch.utils.cpp_extension as m

    return m


def cxx_std():
    """The C++ standard torch's builder names ("c++20" for torch 2.15), as `fatbuild build
    --torch` reads it (_torch_query.cxx_std)."""
    global _std
    if _std is None:
        _std = _torch_query.cxx_std(ce())
    return _std


def names_archs(flags):
    """torch's rule (_get_cuda_arch_flags): nvcc flags name the arches when a word holds "arch"
    and is not the extension's name define. Then torch adds none, and neither does fatbuild."""
    return any("arch" in f and "TORCH_EXTENSION_NAME" not in f for f in flags or [])


def is_cuda_file(path):
    return os.path.splitext(path)[1] in (".cu", ".cuh")


def is_sycl_file(path):
    return os.path.splitext(path)[1] == ".sycl"


def refuse_sycl(what):
    """torch without SYCL fails a SYCL build when it looks for the SYCL runtime; fatbuild builds
    none at all. OSError, as torch's."""
    raise OSError("%s: SYCL sources (.sycl) and with_sycl=True are not built by fatbuild; this is "
                  "torch.utils.cpp_extension's job (it needs torch built for Intel GPUs and the SYCL "
                  "runtime): build them with it" % what)


def load_words(name, with_cuda, extra_cflags, extra_cuda_cflags, extra_include_paths, is_standalone):
    """The C++ and nvcc words of torch's load() (_write_ninja_file_to_build_library, Linux):
    the extension's defines (none for a program), -I the extra include paths, -isystem torch's,
    CUDA's and Python's include dirs; C++: -std, the extra C++ flags; nvcc: COMMON_NVCC_FLAGS,
    the extra nvcc flags, -std unless they hold one. (C++ words, nvcc words or None.)"""
    m = ce()
    user = [os.path.abspath(p.strip()) for p in extra_include_paths or []]
    system = m.include_paths("cuda" if with_cuda else "cpu")
    system.append(sysconfig.get_path("include", scheme="posix_prefix"))
    common = [] if is_standalone else ["-DTORCH_EXTENSION_NAME=%s" % name, "-DTORCH_API_INCLUDE_EXTENSION_H"]
    common += ["-I" + d for d in user]
    for d in system:
        common += ["-isystem", d]
    cxx = common + ["-std=" + cxx_std()] + [f.strip() for f in extra_cflags or []]
    if not with_cuda:
        return cxx, None
    nvcc = common + list(m.COMMON_NVCC_FLAGS) + [f.strip() for f in extra_cuda_cflags or []]
    if not any(f.startswith("-std=") for f in nvcc):
        nvcc.append("-std=" + cxx_std())
    return cxx, nvcc


def load_ldflags(extra_ldflags, with_cuda, verbose, is_standalone):
    """The link flags of torch's load(): the extra ones, then torch's libraries (and cudart)."""
    m = ce()
    flags = [f.strip() for f in extra_ldflags or []]
    prep = getattr(m, "_prepare_ldflags", None)
    if prep is not None:
        import inspect

        params = inspect.signature(prep).parameters
        kw = dict(extra_ldflags=flags, with_cuda=with_cuda, verbose=verbose, is_standalone=is_standalone)
        if "with_sycl" in params:
            kw["with_sycl"] = False
        return prep(**kw)
    flags += ["-L" + m.TORCH_LIB_PATH, "-lc10"] + (["-lc10_cuda"] if with_cuda else [])
    flags += ["-ltorch_cpu"] + (["-ltorch_cuda"] if with_cuda else []) + ["-ltorch"]
    flags += ["-Wl,-rpath," + m.TORCH_LIB_PATH] if is_standalone else ["-ltorch_python"]
    if with_cuda:
        lib = "lib64" if os.path.exists(os.path.join(m.CUDA_HOME, "lib64")) else "lib"
        flags += ["-L" + os.path.join(m.CUDA_HOME, lib), "-lcudart"]
    return flags


class Versioner:
    """torch's JIT versions (ExtensionVersioner): a second load() of a name in this process
    with other sources or arguments builds NAME_v1, NAME_v2 ... (a module of the same name and
    path could not be loaded again)."""

    def __init__(self):
        self.entries = {}

    def bump(self, name, sources, build_arguments, **flags):
        h = hashlib.sha256()
        for s in sources:
            with open(s, "rb") as f:
                h.update(f.read())
        h.update(repr((build_arguments, sorted(flags.items()))).encode())
        digest = h.hexdigest()
        seen = self.entries.get(name)
        if seen is None:
            self.entries[name] = (digest, 0)
        elif seen[0] != digest:
            self.entries[name] = (digest, seen[1] + 1)
        return self.entries[name][1]


VERSIONER = Versioner()


def inline_sources(build_directory, cpp_sources, cuda_sources, functions, with_pytorch_error_handling,
                   no_implicit_headers, gil_not_used):
    """load_inline's files, as torch writes them: main.cpp (torch/extension.h first, then the
    sources, then the bindings of functions) and cuda.cu (torch/types.h, cuda.h,
    cuda_runtime.h first), each rewritten only when its text changes. Returns their paths."""
    cpp = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    cuda = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources or [])
    if not no_implicit_headers:
        cpp.insert(0, "#include <torch/extension.h>")
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f for f in functions}
        elif not isinstance(functions, dict):
            raise ValueError("Expected 'functions' to be a list or dict, but was %s" % type(functions))
        opener = "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m%s) {" % (", pybind11::mod_gil_not_used()" if gil_not_used else "")
        lines = [opener]
        for fn, doc in functions.items():
            body = "torch::wrap_pybind_function(%s)" % fn if with_pytorch_error_handling else fn
            lines.append('m.def("%s", %s, "%s");' % (fn, body, doc))
        lines.append("}")
        cpp += lines
    os.makedirs(build_directory, exist_ok=True)
    paths = [_maybe_write(os.path.join(build_directory, "main.cpp"), "\n".join(cpp))]
    if cuda:
        if not no_implicit_headers:
            cuda = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"] + cuda
        paths.append(_maybe_write(os.path.join(build_directory, "cuda.cu"), "\n".join(cuda)))
    return paths


def _maybe_write(path, text):
    """Writes text to path unless it holds it already (its mtime then stays: no rebuild)."""
    try:
        with open(path) as f:
            if f.read() == text:
                return path
    except OSError:
        pass
    write_text_atomic(path, text)
    return path


def default_build_root():
    """Where load() builds when build_directory is not given: $FATBUILD_BUILD_DIR, else
    $TORCH_EXTENSIONS_DIR/fatbuild, else ~/.cache/fatbuild/extensions/pyXY (fatbuild's build
    dirs hold its own graph: never torch's)."""
    root = os.environ.get("FATBUILD_BUILD_DIR")
    if root:
        return root
    torch_root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if torch_root:
        return os.path.join(torch_root, "fatbuild")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "fatbuild", "extensions", "py%d%d" % sys.version_info[:2])
