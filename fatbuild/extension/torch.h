/* torch.h: what a PyTorch extension needs, asked of a Python's torch (build --torch). */
#ifndef FB_BUILD_TORCH_H
#define FB_BUILD_TORCH_H

#include <stdbool.h>
#include <stddef.h>

#include "fatbuild.h"

#define FB_TORCH_PATH 4096
#define FB_TORCH_MAXINC 8

struct fb_torch {
	char python[FB_TORCH_PATH];     /* the interpreter, absolute, links kept (a venv's python is one) */
	char version[64];               /* torch.__version__ */
	char cuda[32];                  /* torch.version.cuda; "" for a CPU-only torch */
	int cxx11_abi;                  /* torch._C._GLIBCXX_USE_CXX11_ABI */
	char std[16];                   /* the C++ standard torch's headers need: "c++20" */
	char ext_suffix[64];            /* sysconfig EXT_SUFFIX: ".cpython-311-x86_64-linux-gnu.so" */
	char lib_dir[FB_TORCH_PATH];    /* libc10.so, libtorch*.so */
	char py_include[FB_TORCH_PATH]; /* Python.h */
	char include[FB_TORCH_MAXINC][FB_TORCH_PATH]; /* torch.utils.cpp_extension.include_paths() */
	size_t ninclude;
	/* torch/__init__.py and torch/version.py: an install or upgrade of torch rewrites them, so a
	 * build's edges take them as inputs in place of torch's thousands of headers. */
	char stamp[2][FB_TORCH_PATH];
	size_t nstamp;
	bool cached;                    /* read from the build dir's cache, Python not run */
};

/* The query's Python: the text of fatbuild/python/fatbuild/_torch_query.py, which the Python
 * package also runs in-process (CMake writes it into a generated source as a C string). */
extern const char fb_torch_query_py[];

/* Fills t from `python`'s torch (NULL: python3, else python, on PATH): one `python -c`, its
 * answer cached in cache_dir/torch.query, reused while the interpreter path, PYTHONPATH,
 * PYTHONHOME, PYTHONUSERBASE and torch's own files (size, mtime) are unchanged. FB_ENOTOOL with
 * what Python said when torch cannot be imported. cfg: PATH and the PYTHON* variables; NULL: read
 * here. */
int fb_torch_query(const struct fb_config *cfg, const char *python, const char *cache_dir, struct fb_torch *t,
                   struct fb_error *err);

/* NULL-terminated, malloc'd word vectors (free with fb_torch_words_free); NULL on OOM. The
 * words torch.utils.cpp_extension.load() adds on Linux (docs/pytorch.md). name: the extension's
 * (NULL for a program: no TORCH_EXTENSION_NAME); cuda_home: set when CUDA is used (its include
 * dir, cudart), else NULL.
 * cxx: torch's defines, -isystem dirs (torch, CUDA, Python), -std.
 * nvcc: the same plus PyTorch's nvcc flags (-D__CUDA_NO_HALF_OPERATORS__ ... --expt-relaxed-constexpr),
 * -std unless user_flags has one.
 * link: -L torch's lib dir, c10 torch_cpu torch (c10_cuda torch_cuda cudart with with_cuda), and
 * torch_python for a module or an rpath to torch's lib dir for a program. */
char **fb_torch_cxx_words(const struct fb_torch *t, const char *name, const char *cuda_home);
char **fb_torch_nvcc_words(const struct fb_torch *t, const char *name, const char *cuda_home, const char *user_flags);
char **fb_torch_link_words(const struct fb_torch *t, const char *cuda_home, bool with_cuda, bool program);
void fb_torch_words_free(char **v);

/* A warning for the build, as PyTorch's: the toolkit's CUDA major (toolkit_version as 13000)
 * differs from torch.version.cuda's. Writes "" when they agree or either is unknown. */
void fb_torch_cuda_check(const struct fb_torch *t, int toolkit_version, const char *cuda_home, char *buf,
                         size_t size);

#endif
