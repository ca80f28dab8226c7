"""setup.py support: torch.utils.cpp_extension's BuildExtension, built by fatbuild.

    from setuptools import setup
    from fatbuild.setuptools import BuildExtension, CUDAExtension, CUDA_HOME

    setup(name="muladd", ext_modules=[CUDAExtension("muladd._C", ["muladd.cpp", "muladd.cu"])],
          cmdclass={"build_ext": BuildExtension})

The one import line is all that changes: CppExtension, CUDAExtension, SyclExtension,
include_paths, CUDA_HOME and the rest of torch.utils.cpp_extension's names are here with its
signatures and values. Every extension is built by `fatbuild build --torch` with the compile
and link words torch's BuildExtension would use (Python's compiler flags, the Extension's
include_dirs, define_macros, libraries, extra_compile_args as a list or {"cxx": [...], "nvcc":
[...]}, torch's nvcc flags), the project's own nvcc arches when its flags name some, else
TORCH_CUDA_ARCH_LIST (else the visible GPUs, else the fallback). ninja's progress and the
compilers' warnings are shown as they come, as torch shows them; MAX_JOBS caps the parallel
jobs. SYCL sources and device-linked (dlink=True) extensions are refused.
"""
import copy
import os

from setuptools.command.build_ext import build_ext as _build_ext

from . import _torch
from . import (FatbuildError, _torch_build, check_compiler_is_gcc, check_compiler_ok_for_platform,  # noqa: F401
               get_compiler_abi_compatibility_and_version, get_cxx_compiler, get_default_build_root,
               include_paths, is_ninja_available, library_paths, load, load_inline,
               remove_extension_h_precompiler_headers, verify_ninja_availability)

__all__ = ["get_default_build_root", "check_compiler_ok_for_platform", "get_compiler_abi_compatibility_and_version",
           "BuildExtension", "CppExtension", "CUDAExtension", "SyclExtension", "include_paths", "library_paths",
           "load", "load_inline", "is_ninja_available", "verify_ninja_availability",
           "remove_extension_h_precompiler_headers", "get_cxx_compiler", "check_compiler_is_gcc"]


def CppExtension(name, sources, *args, **kwargs):
    """torch's: a setuptools.Extension for C++ with torch's include dirs, library dirs and
    libraries (c10, torch, torch_cpu, torch_python)."""
    return _torch.ce().CppExtension(name, sources, *args, **kwargs)


def CUDAExtension(name, sources, *args, **kwargs):
    """torch's: a setuptools.Extension for CUDA/C++ with torch's and CUDA's include dirs,
    library dirs and libraries (cudart, c10_cuda, torch_cuda too)."""
    return _torch.ce().CUDAExtension(name, sources, *args, **kwargs)


def SyclExtension(name, sources, *args, **kwargs):
    """torch's (BuildExtension then refuses to build it: fatbuild builds no SYCL)."""
    return _torch.ce().SyclExtension(name, sources, *args, **kwargs)


def _lib_options(compiler, ext, libraries):
    """The link's -L, -Wl,-rpath and -l words, as setuptools' link of the extension writes them."""
    try:
        from setuptools._distutils.ccompiler import gen_lib_options
    except ImportError:  # older setuptools
        from distutils.ccompiler import gen_lib_options
    libs, dirs, rdirs = compiler._fix_lib_args(libraries, ext.library_dirs, ext.runtime_library_dirs)
    return gen_lib_options(compiler, dirs, rdirs, libs)


class BuildExtension(_build_ext):
    """torch.utils.cpp_extension.BuildExtension, built by fatbuild: the same options
    (use_ninja, no_python_abi_suffix, with_options), compile and link words, and output file;
    incremental (a rebuild with no change does nothing); the build's progress as it goes."""

    @classmethod
    def with_options(cls, **options):
        """A subclass whose constructor adds options to its keyword arguments, as torch's."""
        class cls_with_options(cls):
            def __init__(self, *args, **kwargs):
                kwargs.update(options)
                super().__init__(*args, **kwargs)

        return cls_with_options

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.no_python_abi_suffix = kwargs.get("no_python_abi_suffix", False)
        self.use_ninja = kwargs.get("use_ninja", True)  # fatbuild's builds always run ninja

    def finalize_options(self):
        super().finalize_options()
        self.force = True  # fatbuild (ninja) decides what is out of date

    def get_ext_filename(self, ext_name):
        """As torch's: without the Python ABI part with no_python_abi_suffix."""
        name = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            parts = name.split(".")
            if len(parts) > 2:
                name = ".".join(parts[:-2] + parts[-1:])
        return name

    def _flags(self, ext):
        """ext's extra_compile_args with what torch's BuildExtension adds to every list: the
        extension API define, Py_LIMITED_API with py_limited_api, the extension's name."""
        args = copy.deepcopy(ext.extra_compile_args)
        add = ["-DTORCH_API_INCLUDE_EXTENSION_H"]
        if getattr(ext, "py_limited_api", False):
            add.append("-DPy_LIMITED_API=%s" % getattr(_torch.ce(), "min_supported_cpython", "0x030A0000"))
        add.append("-DTORCH_EXTENSION_NAME=%s" % ext.name.split(".")[-1])
        if isinstance(args, dict):
            for k in ("cxx", "nvcc", "sycl"):
                args.setdefault(k, [])
            if "nvcc_dlink" in args:
                raise FatbuildError("fatbuild.setuptools.BuildExtension: %s: device linking (dlink=True) is not built "
                                    "by fatbuild.setuptools; use torch's BuildExtension, or `fatbuild build --rdc`"
                                    % ext.name)
            for v in args.values():
                v += add
            return args["cxx"], args["nvcc"]
        args = list(args or []) + add
        return args, list(args)

    def _words(self, ext, sources):
        """The C++ and nvcc words of torch's unix_wrap_ninja_compile for ext: Python's compiler
        flags and the Extension's defines and include dirs first, its own flags after, -std; for
        nvcc torch's COMMON_NVCC_FLAGS too (fatbuild adds -fPIC, the arches and -ccbin $CC as
        torch does)."""
        cxx_args, nvcc_args = self._flags(ext)
        cc = self.compiler
        cc.include_dirs[:] = [os.path.abspath(d) for d in cc.include_dirs]
        macros = list(ext.define_macros or []) + [(u,) for u in ext.undef_macros or []]
        _, _, _, pp_opts, _ = cc._setup_compile(self.build_temp, macros, ext.include_dirs, sources,
                                                ext.depends, cxx_args)
        common = cc._get_cc_args(pp_opts, self.debug, None)
        std = "-std=" + _torch.cxx_std()
        cxx = list(cc.compiler_so[1:]) + common + list(cxx_args)
        if not any(f.startswith("-std=") for f in cxx_args):
            cxx.append(std)
        if not any(map(_torch.is_cuda_file, sources)):
            return cxx, None, nvcc_args
        nvcc = common + list(_torch.ce().COMMON_NVCC_FLAGS) + list(nvcc_args)
        if not any(f.startswith("-std=") for f in nvcc):
            nvcc.append(std)
        return cxx, nvcc, nvcc_args

    def build_extensions(self):
        # .cu and .cuh are sources (torch's builder says so too), so setuptools names their objects
        self.compiler.src_extensions += [".cu", ".cuh"]
        super().build_extensions()

    def build_extension(self, ext):
        sources = [os.path.abspath(s) for s in ext.sources]
        if any(map(_torch.is_sycl_file, sources)):
            _torch.refuse_sycl("fatbuild.setuptools.BuildExtension: %s" % ext.name)
        import torch  # noqa: F401  (torch's builder has it imported; the query reads it)

        compiler = self.compiler.compiler_cxx[0] if getattr(self.compiler, "compiler_cxx", None) else get_cxx_compiler()
        get_compiler_abi_compatibility_and_version(compiler)  # torch's warnings for an odd compiler
        cxx, nvcc, nvcc_args = self._words(ext, sources)
        ldflags = _lib_options(self.compiler, ext, self.get_libraries(ext)) + list(ext.extra_link_args or [])
        output = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        leaf = ext.name.split(".")[-1]
        _torch_build(leaf, sources, output, os.path.join(os.path.abspath(self.build_temp), ext.name + ".fatbuild"),
                     cxx, nvcc, ldflags, nvcc is not None, verbose=True, stream=True,
                     error_prefix="Error compiling objects for extension", arch_from=nvcc_args)


def __getattr__(name):
    """torch's constants (CUDA_HOME, ROCM_HOME, TORCH_LIB_PATH, COMMON_NVCC_FLAGS ...)."""
    if name.isupper():
        ce = _torch.ce()
        if hasattr(ce, name):
            return getattr(ce, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
