"""setup.py support: build_ext through fatbuild.

    from setuptools import setup
    from fatbuild.setuptools import BuildExtension, CUDAExtension

    setup(name="muladd", ext_modules=[CUDAExtension("muladd._C", ["muladd.cpp", "muladd.cu"])],
          cmdclass={"build_ext": BuildExtension})

Every extension is built by `fatbuild build --torch` for this interpreter's torch, for
TORCH_CUDA_ARCH_LIST (else the visible GPUs, else the fallback), into the file setuptools
expects. extra_compile_args is a list (C++) or a dict {"cxx": [...], "nvcc": [...]} as with
PyTorch's BuildExtension; include_dirs, define_macros, library_dirs, libraries,
runtime_library_dirs and extra_link_args are honoured. MAX_JOBS caps the parallel jobs,
FATBUILD_VERBOSE=1 shows every command.
"""
import os

import setuptools as _setuptools
from setuptools.command.build_ext import build_ext as _build_ext

from . import build as _build


def CUDAExtension(name, sources, *args, **kwargs):
    """A setuptools.Extension for BuildExtension, with torch's CUDA libraries linked."""
    kwargs.setdefault("language", "c++")
    ext = _setuptools.Extension(name, sources, *args, **kwargs)
    ext.fatbuild_with_cuda = True
    return ext


def CppExtension(name, sources, *args, **kwargs):
    """A setuptools.Extension for BuildExtension, C++ only (torch's CUDA libraries not linked)."""
    kwargs.setdefault("language", "c++")
    ext = _setuptools.Extension(name, sources, *args, **kwargs)
    ext.fatbuild_with_cuda = False
    return ext


class BuildExtension(_build_ext):
    """build_ext whose every extension is built by fatbuild (incremental: a rebuild with no
    change does nothing)."""

    def build_extension(self, ext):
        eca = ext.extra_compile_args or []
        cxx, nvcc = (eca.get("cxx", []), eca.get("nvcc", [])) if isinstance(eca, dict) else (eca, [])
        ldflags = ["-L" + d for d in ext.library_dirs or []]
        ldflags += ["-l" + lib for lib in ext.libraries or []]
        ldflags += ["-Wl,-rpath," + d for d in ext.runtime_library_dirs or []]
        ldflags += list(ext.extra_link_args or [])
        defines = [n if v is None else "%s=%s" % (n, v) for n, v in ext.define_macros or []]
        leaf = ext.name.split(".")[-1]
        output = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        _build(leaf, list(ext.sources), output, extra_cflags=cxx, extra_cuda_cflags=nvcc, extra_ldflags=ldflags,
               extra_include_paths=ext.include_dirs, defines=defines,
               build_directory=os.path.join(self.build_temp, ext.name + ".fatbuild"),
               verbose=os.environ.get("FATBUILD_VERBOSE", "") not in ("", "0"),
               with_cuda=getattr(ext, "fatbuild_with_cuda", None))
