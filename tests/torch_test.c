/* torch_test.c: the parts of `fatbuild build` that decide what each compiler sees: host flags
 * on nvcc's command line (extension/flags.c), --backend auto (scan/backend.c), host headers under
 * NVRTC (scan/hosthdr.c), and --torch's query, its cache and the words it adds
 * (extension/torch.c, against a stand-in interpreter that answers as the real query does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fatbuild.h"
#include "plumbing.h"
#include "scan/backend.h"
#include "extension/flags.h"
#include "scan/ppcond.h"
#include "extension/torch.h"
#include "scan/hosthdr.h"

static char dir[256];

static void
put(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (char *c = p + strlen(dir) + 1; (c = strchr(c, '/')); c++) {
		*c = 0;
		mkdir(p, 0755);
		*c = '/';
	}
	FILE *f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void
test_nvcc_host_words(void)
{
	char *w = fb_nvcc_host_words("-O3 -fdiagnostics-color=always");
	CHECK_STR(w, "-Xcompiler -O3 -Xcompiler -fdiagnostics-color=always");
	free(w);
	w = fb_nvcc_host_words(" -I inc -Ifoo -DX=1 -U Y -std=c++17 -g -isystem /s -include pre.h\t-Wall ");
	CHECK_STR(w, "-I inc -Ifoo -DX=1 -U Y -std=c++17 -g -isystem /s -include pre.h -Xcompiler -Wall");
	free(w);
	w = fb_nvcc_host_words("-fsanitize=address,undefined -Wl,-z,now");
	CHECK_STR(w, "-Xcompiler -fsanitize=address\\,undefined -Xcompiler -Wl\\,-z\\,now");
	free(w);
	w = fb_nvcc_host_words(NULL);
	CHECK_STR(w, "");
	free(w);
	w = fb_nvcc_host_words(",,,,");
	CHECK_STR(w, "-Xcompiler \\,\\,\\,\\,");
	free(w);
	w = fb_nvcc_host_words("-I"); /* a dangling -I is left to the compiler to complain about */
	CHECK_STR(w, "-I");
	free(w);
}

/* The project's own flags, read as torch's builder reads them: arches (any word holding "arch"
 * but the extension's name), an -O, -fPIC, the targets of its -gencode words. */
static void
test_project_flags(void)
{
	CHECK(fb_flags_name_archs("-O3 -gencode arch=compute_80,code=sm_80"));
	CHECK(fb_flags_name_archs("-gencode=arch=compute_90,code=sm_90"));
	CHECK(fb_flags_name_archs("-arch=sm_90"));
	CHECK(fb_flags_name_archs("-Xcompiler -march=native")); /* torch's rule, quirk and all */
	CHECK(!fb_flags_name_archs("-DTORCH_EXTENSION_NAME=search_arch -O3 --use_fast_math"));
	CHECK(!fb_flags_name_archs(NULL) && !fb_flags_name_archs(""));
	CHECK(!fb_flags_name_archs("-I/home/research/inc -isystem /research -DSEARCH=1 -U search"));
	CHECK(fb_flags_have_opt("-lineinfo -O3") && fb_flags_have_opt("--optimize=2") && fb_flags_have_opt("-Ofast"));
	CHECK(!fb_flags_have_opt("-lineinfo --use_fast_math -DO3") && !fb_flags_have_opt(NULL));
	CHECK(fb_flags_have_pic("-Xcompiler -fPIC") && fb_flags_have_pic("--compiler-options '-fPIC'") &&
	      fb_flags_have_pic("-Xcompiler=-Wall,-fPIC") && fb_flags_have_pic("-g -fPIC"));
	CHECK(!fb_flags_have_pic("-fPIE -fpic"));
	CHECK(fb_flags_ntargets("-gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90") == 2);
	CHECK(fb_flags_ntargets("-arch=sm_90") == 1 && fb_flags_ntargets(NULL) == 1);
}

static void
test_host_headers(void)
{
	CHECK(fb_host_header("cstdio"));
	CHECK(fb_host_header("vector"));
	CHECK(fb_host_header("stdio.h"));
	CHECK(fb_host_header("torch/extension.h"));
	CHECK(fb_host_header("ATen/ATen.h"));
	CHECK(fb_host_header("sys/types.h"));
	CHECK(fb_host_header("cuda.h"));
	CHECK(!fb_host_header("cuda_fp16.h"));
	CHECK(!fb_host_header("cuda_runtime.h"));
	CHECK(!fb_host_header("cub/cub.cuh"));
	CHECK(!fb_host_header("cuda/std/cstdint"));
	CHECK(!fb_host_header("my.cuh"));
	CHECK(!fb_host_header(""));
	char h[64] = "";
	CHECK(fb_nvrtc_missing_host_header("k.cu(1): catastrophic error: cannot open source file \"cstdio\"\n", h, sizeof(h)));
	CHECK_STR(h, "cstdio");
	CHECK(!fb_nvrtc_missing_host_header("k.cu:2:25: catastrophic error: cannot open source file \"not_there.cuh\"", h,
	                                    sizeof(h)));
	CHECK(!fb_nvrtc_missing_host_header("error: identifier \"x\" is undefined", h, sizeof(h)));
	CHECK(!fb_nvrtc_missing_host_header(NULL, h, sizeof(h)));
	CHECK(fb_nvrtc_missing_host_header("cannot open source file \"a.cuh\"\ncannot open source file \"vector\"", h,
	                                   sizeof(h)));
	CHECK_STR(h, "vector");
}

/* needs: whether path (written with text) goes to nvcc; want_why: a piece of the reason. */
static void
backend_case_home(const char *name, const char *text, const char *home, bool want, const char *want_why)
{
	put(name, text);
	char p[512], why[700] = "";
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	const char *inc[] = {dir};
	bool got = fb_cu_needs_nvcc(p, inc, 1, home, why, sizeof(why));
	CHECK(got == want);
	if (got != want || !strstr(why, want_why))
		fprintf(stderr, "  %s: %s: %s (want '%s')\n", name, got ? "nvcc" : "nvrtc", why, want_why);
	CHECK(strstr(why, want_why) != NULL);
}

static void
backend_case(const char *name, const char *text, bool want, const char *want_why)
{
	backend_case_home(name, text, NULL, want, want_why);
}

static void
test_backend(void)
{
	backend_case("k1.cu", "extern \"C\" __global__ void k(float *p) { *p = 1; }\n", false, "device code only");
	backend_case("k2.cu", "template <class T, int N = (2)>\n__global__ void __launch_bounds__(256) k(T *p) { *p = N; }\n"
	                      "template __global__ void k<float>(float *);\n",
	             false, "device code only");
	backend_case("k3.cu", "/* void host() { } <<< */\n// int main() {}\n#define F(x) int x() { return 0; }\n"
	                      "__device__ const char *s = \"<<<\";\n__device__ char c = '{';\n",
	             false, "device code only");
	backend_case("k4.cu", "struct __align__(16) V { float a[4]; };\nunion U { int i; float f; };\n"
	                      "enum E { A = 1 };\n__device__ int t[] = {1, 2};\nnamespace a { namespace b {\n"
	                      "__host__ __device__ inline int f(int x) { return x; }\n} }\n",
	             false, "device code only");
	backend_case("h1.cu", "#include <cstdio>\n__global__ void k() {}\n", true, "h1.cu:1 includes the host header <cstdio>");
	backend_case("h2.cu", "  #  include   <torch/extension.h>\n", true, "<torch/extension.h>");
	backend_case("h3.cu", "__global__ void k() {}\nvoid go() {\n\tk<<<1, 1>>>();\n}\n", true, "h3.cu:3 launches");
	backend_case("h4.cu", "__global__ void k() {}\n\nint\nmain(int argc, char **argv)\n{\n\treturn 0;\n}\n", true,
	             "h4.cu:4 defines main");
	backend_case("h5.cu", "extern \"C\" {\nint add(int a, int b) { return a + b; }\n}\n", true,
	             "h5.cu:2 defines the host function add");
	backend_case("h6.cu", "namespace n {\nstruct S { int v; };\nS::S make() const { return S{}; }\n}\n", true,
	             "host function");
	backend_case("h7.cu", "__host__ int f() { return 1; }\n", true, "host function f");
	/* Through headers: "..." beside the file, <...> in the -I dirs, a cycle, a missing one. */
	put("inc1.cuh", "#pragma once\n#include \"inc2.cuh\"\n");
	put("inc2.cuh", "#include \"inc1.cuh\"\n#include <iostream>\n");
	backend_case("h8.cu", "#include \"inc1.cuh\"\n__global__ void k() {}\n", true, "inc2.cuh:2 includes the host header <iostream>");
	char lib[300];
	snprintf(lib, sizeof(lib), "%s/lib", dir);
	mkdir(lib, 0755);
	put("lib/x.cuh", "int host_helper() { return 1; }\n");
	backend_case("h9.cu", "#include <lib/x.cuh>\n", true, "x.cuh:1 defines the host function host_helper");
	backend_case("k5.cu", "#include \"nosuch.cuh\"\n#include <cuda_fp16.h>\n__global__ void k() {}\n", false,
	             "device code only");
	/* Unreadable: left to the compiler. */
	char why[256];
	CHECK(!fb_cu_needs_nvcc("/nonexistent/x.cu", NULL, 0, NULL, why, sizeof(why)));
}

/* #if expressions as NVRTC reads them: 1, 0, or -1 where the scan cannot tell. */
static void
test_ppeval(void)
{
	CHECK(fb_pp_eval("defined(__CUDACC_RTC__)") == 1);
	CHECK(fb_pp_eval(" defined __CUDACC_RTC__ ") == 1);
	CHECK(fb_pp_eval("!defined(__CUDACC_RTC__)") == 0);
	CHECK(fb_pp_eval("__CUDACC_RTC__") == 1);
	CHECK(fb_pp_eval("defined(__NVCC__)") == 0);
	CHECK(fb_pp_eval("defined(__CUDACC__) && !defined(__CUDACC_RTC__)") == 0);
	CHECK(fb_pp_eval("defined(FOO) && !defined(__CUDACC_RTC__)") == 0);
	CHECK(fb_pp_eval("defined(FOO) || defined(__CUDACC_RTC__)") == 1);
	CHECK(fb_pp_eval("defined(FOO) || !defined(__CUDACC_RTC__)") == -1);
	CHECK(fb_pp_eval("defined(FOO)") == -1);
	CHECK(fb_pp_eval("FOO") == -1);
	CHECK(fb_pp_eval("0") == 0);
	CHECK(fb_pp_eval("1") == 1);
	CHECK(fb_pp_eval("0x10L") == 1);
	CHECK(fb_pp_eval("!_CCCL_COMPILER(NVRTC)") == 0);
	CHECK(fb_pp_eval("_CCCL_COMPILER( NVRTC )") == 1);
	CHECK(fb_pp_eval("_CCCL_COMPILER(GCC)") == -1);
	CHECK(fb_pp_eval("__CUDACC_VER_MAJOR__ >= 12 && !defined(__CUDACC_RTC__)") == 0);
	CHECK(fb_pp_eval("__CUDACC_VER_MAJOR__ >= 12 || defined(__CUDACC_RTC__)") == 1);
	CHECK(fb_pp_eval("__CUDACC_VER_MAJOR__ >= 12") == -1);
	CHECK(fb_pp_eval("(defined(__CUDACC_RTC__))") == 1);
	CHECK(fb_pp_eval("defined(__CUDACC_RTC__) ? 0 : 1") == -1);
	CHECK(fb_pp_eval("defined(") == -1);
	CHECK(fb_pp_eval("(1") == -1);
	CHECK(fb_pp_eval("") == -1);
	CHECK(fb_pp_eval("1 1") == -1);
}

/* Conditionals in a user's file: the branch NVRTC skips is not read, an undecided one is. */
static void
test_backend_guards(void)
{
	backend_case("g1.cu", "#ifndef __CUDACC_RTC__\n#include <cstdio>\n#endif\n__global__ void k() {}\n", false,
	             "device code only");
	backend_case("g2.cu", "#ifdef __CUDACC_RTC__\n#include <cuda/std/cstdint>\n#else\n#include <cstdint>\n#endif\n"
	                      "__global__ void k() {}\n",
	             false, "device code only");
	backend_case("g3.cu", "#if !defined(__CUDACC_RTC__)\nvoid host() {}\n#elif 1\n#else\n#include <vector>\n#endif\n"
	                      "__global__ void k() {}\n",
	             false, "device code only");
	backend_case("g4.cu", "#ifdef __CUDACC_RTC__\n#else\n#include <vector>\n#endif\n", false, "device code only");
	/* Undecided: both branches are read. */
	backend_case("g5.cu", "#ifdef USE_IO\n#include <cstdio>\n#endif\n__global__ void k() {}\n", true,
	             "g5.cu:2 includes the host header <cstdio>");
	backend_case("g6.cu", "#ifdef __CUDACC_RTC__\n#else\n#include <cstdio>\n#endif\n#ifdef USE_IO\n#else\n"
	                      "#include <vector>\n#endif\n",
	             true, "g6.cu:7 includes the host header <vector>");
	backend_case("g7.cu", "#ifdef __CUDACC_RTC__\n#include <cstdio>\n#endif\n", true, "g7.cu:2 includes");
	/* A user's include guard, nesting, a continued condition. */
	put("guarded.cuh", "#ifndef GUARDED_CUH\n#define GUARDED_CUH\n#if !defined(__CUDACC_RTC__) && \\\n    1\n"
	                   "#include <iostream>\n#endif\n#ifdef X\n#ifndef __CUDACC_RTC__\n#else\n"
	                   "#include <map>\n#endif\n#endif\n#endif\n");
	backend_case("g8.cu", "#include \"guarded.cuh\"\n__global__ void k() {}\n", true, "guarded.cuh:10 includes the host header <map>");
}

/* A toolkit's headers: their #includes are read where NVRTC reads them, their code is not. */
static void
test_backend_toolkit(void)
{
	char home[400];
	snprintf(home, sizeof(home), "%s/tk", dir);
	put("tk/include/cccl/cub/cub.cuh", "#pragma once\n#if !_CCCL_COMPILER(NVRTC)\n#  include <assert.h>\n#endif\n"
	                                   "#include <cub/util.cuh>\nvoid host_only_in_toolkit() {}\n");
	put("tk/include/cccl/cub/util.cuh", "#pragma once\n#if defined(SOMETHING)\n#include <cstdio>\n#endif\n");
	put("tk/include/cccl/thrust/complex.h", "#pragma once\n#include <thrust/detail/c.h>\n");
	put("tk/include/cccl/thrust/detail/c.h", "#pragma once\n#ifndef __CUDACC_RTC__\n#include <iostream>\n#endif\n#include <cmath>\n");
	put("tk/include/cccl/thrust/functional.h", "#pragma once\n");
	put("tk/include/rt.h", "#if !defined(RT_H)\n#define RT_H\n#include \"rt2.h\"\n#endif\n");
	put("tk/include/rt2.h", "#if !defined ( RT2_H )\n#define RT2_H\n#include <cstdlib>\n#endif\n");
	backend_case_home("t1.cu", "#include <cub/cub.cuh>\n__global__ void k() {}\n", home, false,
	                  "2 toolkit headers read as NVRTC reads them");
	backend_case_home("t2.cu", "#include <thrust/complex.h>\n__global__ void k() {}\n", home, true,
	                  "thrust/detail/c.h:5 includes the host header <cmath> outside any NVRTC guard");
	backend_case_home("t3.cu", "#include <thrust/functional.h>\n__global__ void k() {}\n", home, false,
	                  "1 toolkit headers");
	/* An include guard spelled #if !defined(X) is read as taken. */
	backend_case_home("t5.cu", "#include <rt.h>\n__global__ void k() {}\n", home, true, "rt2.h:3 includes the host header <cstdlib>");
	/* A host-only library API of the toolkit is a host header wherever it is found. */
	put("tk/include/cufft.h", "#pragma once\nint cufftPlan1d(void);\n");
	backend_case_home("t6.cu", "#include <cufft.h>\n__global__ void k() {}\n", home, true, "t6.cu:1 includes the host header <cufft.h>");
	/* One scan for many sources: what was found clean is not read again, what was not still
	 * decides. */
	struct fb_backend_scan *sc = fb_backend_scan_new(NULL, 0, home);
	CHECK(sc != NULL);
	char p[512], why[700];
	put("m1.cu", "#include \"m.cuh\"\n#include <cub/cub.cuh>\n__global__ void k() {}\n");
	put("m.cuh", "#pragma once\n__device__ int one() { return 1; }\n");
	put("m2.cu", "#include \"m.cuh\"\n#include \"mh.cuh\"\n__global__ void k() {}\n");
	put("mh.cuh", "#pragma once\nint host_side() { return 0; }\n");
	put("m3.cu", "#include \"mh.cuh\"\n#include <cub/cub.cuh>\n");
	snprintf(p, sizeof(p), "%s/m1.cu", dir);
	CHECK(!fb_backend_scan_needs_nvcc(sc, p, why, sizeof(why)));
	CHECK(strstr(why, "2 toolkit headers") != NULL);
	snprintf(p, sizeof(p), "%s/m2.cu", dir);
	CHECK(fb_backend_scan_needs_nvcc(sc, p, why, sizeof(why)));
	CHECK(strstr(why, "mh.cuh:2 defines the host function host_side") != NULL);
	snprintf(p, sizeof(p), "%s/m3.cu", dir);
	CHECK(fb_backend_scan_needs_nvcc(sc, p, why, sizeof(why)));
	snprintf(p, sizeof(p), "%s/m1.cu", dir);
	CHECK(!fb_backend_scan_needs_nvcc(sc, p, why, sizeof(why)));
	CHECK(strstr(why, "toolkit headers") == NULL); /* all read for the first m1.cu */
	fb_backend_scan_free(sc);
	fb_backend_scan_free(NULL);
	/* Without the toolkit, thrust/ stays a host library, as before. */
	backend_case("t4.cu", "#include <thrust/functional.h>\n__global__ void k() {}\n", true, "<thrust/functional.h>");
}

/* A stand-in Python: answers the query as the real one does, counts its runs in ./calls. */
static void
fake_python(const char *name, const char *answer)
{
	char script[4096];
	snprintf(script, sizeof(script),
	         "#!/bin/sh\n[ \"$1\" = -c ] || exit 9\necho run >>'%s/calls'\necho 'a warning of Python'\n%s\n", dir,
	         answer);
	put(name, script);
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	chmod(p, 0755);
}

static int
calls(void)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/calls", dir);
	FILE *f = fopen(p, "r");
	int n = 0;
	char line[64];
	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n;
}

/* The index of w in v, or a large number. */
static size_t
at(char **v, const char *w)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], w) == 0)
			return i;
	return (size_t)-1;
}

static void
test_torch_query(void)
{
	char answer[3000], stamp[512];
	snprintf(stamp, sizeof(stamp), "%s/version.py", dir);
	put("version.py", "__version__ = '2.15.0'\n");
	struct stat st;
	stat(stamp, &st);
	snprintf(answer, sizeof(answer),
	         "echo 'fbtq version=2.15.0+cu132'\necho 'fbtq cuda=13.2'\necho 'fbtq abi=1'\n"
	         "echo 'fbtq include=/t/include'\necho 'fbtq include=/t/include/torch/csrc/api/include'\n"
	         "echo 'fbtq libdir=/t/lib'\necho 'fbtq pyinclude=/py/include'\n"
	         "echo 'fbtq extsuffix=.cpython-311-x86_64-linux-gnu.so'\necho 'fbtq std=c++20'\n"
	         "echo 'fbtq stamp=%lld %lld %s'\n",
	         (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, (long long)st.st_size, stamp);
	fake_python("py", answer);
	char py[512];
	snprintf(py, sizeof(py), "%s/py", dir);
	struct fb_torch *t = calloc(1, sizeof(*t));
	struct fb_error err = {0};
	unsetenv("PYTHONPATH");
	CHECK(fb_torch_query(NULL, py, dir, t, &err) == 0);
	CHECK(!t->cached && calls() == 1);
	CHECK_STR(t->version, "2.15.0+cu132");
	CHECK_STR(t->cuda, "13.2");
	CHECK(t->cxx11_abi == 1 && t->ninclude == 2);
	CHECK_STR(t->include[1], "/t/include/torch/csrc/api/include");
	CHECK_STR(t->ext_suffix, ".cpython-311-x86_64-linux-gnu.so");
	CHECK_STR(t->python, py);
	/* Cached: Python is not run again. */
	CHECK(fb_torch_query(NULL, py, dir, t, &err) == 0);
	CHECK(t->cached && calls() == 1);
	CHECK_STR(t->lib_dir, "/t/lib");
	/* Another PYTHONPATH, another torch: asked again. */
	setenv("PYTHONPATH", "/elsewhere", 1);
	CHECK(fb_torch_query(NULL, py, dir, t, &err) == 0);
	CHECK(!t->cached && calls() == 2);
	CHECK(fb_torch_query(NULL, py, dir, t, &err) == 0);
	CHECK(t->cached && calls() == 2);
	/* torch reinstalled (its files changed): asked again. */
	put("version.py", "__version__ = '2.16.0'  # longer\n");
	CHECK(fb_torch_query(NULL, py, dir, t, &err) == 0);
	CHECK(!t->cached && calls() == 3);
	unsetenv("PYTHONPATH");

	/* The words, as torch 2.15's load() has them: defines, then torch's, CUDA's and Python's
	 * include dirs in that order; no ABI macro for a new-ABI torch. */
	char **v = fb_torch_cxx_words(t, "muladd", "/cuda");
	CHECK(check_has(v, "-DTORCH_EXTENSION_NAME=muladd") && check_has(v, "-DTORCH_API_INCLUDE_EXTENSION_H"));
	CHECK(!check_has(v, "-D_GLIBCXX_USE_CXX11_ABI=1") && check_has(v, "-std=c++20"));
	CHECK(check_has(v, "/t/include") && check_has(v, "/py/include") && check_has(v, "/cuda/include") && check_has(v, "-isystem"));
	CHECK(at(v, "/t/include") < at(v, "/cuda/include") && at(v, "/cuda/include") < at(v, "/py/include"));
	CHECK(!check_has(v, "--expt-relaxed-constexpr"));
	fb_torch_words_free(v);
	v = fb_torch_cxx_words(t, NULL, NULL); /* a program without CUDA: no name, no CUDA dir */
	CHECK(!check_has(v, "-DTORCH_EXTENSION_NAME=muladd") && !check_has(v, "-DTORCH_API_INCLUDE_EXTENSION_H") &&
	      !check_has(v, "/cuda/include") && check_has(v, "/py/include"));
	fb_torch_words_free(v);
	t->cxx11_abi = 0; /* an old-ABI torch gets the macro, as its builder added it */
	v = fb_torch_cxx_words(t, "m", NULL);
	CHECK(check_has(v, "-D_GLIBCXX_USE_CXX11_ABI=0"));
	fb_torch_words_free(v);
	t->cxx11_abi = 1;
	v = fb_torch_nvcc_words(t, "m", "/usr", "-O2 -std=c++17");
	CHECK(check_has(v, "--expt-relaxed-constexpr") && check_has(v, "-D__CUDA_NO_HALF_OPERATORS__") &&
	      check_has(v, "-D__CUDA_NO_BFLOAT16_CONVERSIONS__"));
	CHECK(!check_has(v, "-std=c++20")); /* the user's -std wins (nvcc refuses two) */
	CHECK(!check_has(v, "/usr/include"));
	fb_torch_words_free(v);
	/* A module: no RUNPATH of this machine's torch (torch is loaded first, as with torch's own
	 * builds); a program: the rpath, and no torch_python. */
	v = fb_torch_link_words(t, "/cuda", true, false);
	CHECK(check_has(v, "-L/t/lib") && check_has(v, "-lc10") && check_has(v, "-lc10_cuda") && check_has(v, "-ltorch_cpu") &&
	      check_has(v, "-ltorch_cuda") && check_has(v, "-ltorch") && check_has(v, "-ltorch_python") && !check_has(v, "-Wl,-rpath,/t/lib") &&
	      check_has(v, "-lcudart"));
	fb_torch_words_free(v);
	v = fb_torch_link_words(t, "/cuda", false, false);
	CHECK(check_has(v, "-ltorch_python") && !check_has(v, "-lc10_cuda") && !check_has(v, "-ltorch_cuda") && !check_has(v, "-lcudart"));
	fb_torch_words_free(v);
	v = fb_torch_link_words(t, "/cuda", false, true);
	CHECK(!check_has(v, "-ltorch_python") && check_has(v, "-Wl,-rpath,/t/lib"));
	fb_torch_words_free(v);

	/* The CUDA check: major differs -> a warning; minor only -> none. */
	char w[512];
	fb_torch_cuda_check(t, 13000, "/usr/local/cuda", w, sizeof(w));
	CHECK_STR(w, "");
	snprintf(t->cuda, sizeof(t->cuda), "12.8");
	fb_torch_cuda_check(t, 13000, "/usr/local/cuda", w, sizeof(w));
	CHECK(strstr(w, "(13.0, /usr/local/cuda) differs in major version") && strstr(w, "(12.8)"));
	t->cuda[0] = 0;
	fb_torch_cuda_check(t, 13000, "/usr/local/cuda", w, sizeof(w));
	CHECK_STR(w, "");

	/* No torch: Python's reason, and what to do. */
	fake_python("notorch", "echo \"fbtq error=ModuleNotFoundError: No module named 'torch'\"\nexit 3");
	snprintf(py, sizeof(py), "%s/notorch", dir);
	CHECK(fb_torch_query(NULL, py, dir, t, &err) == FB_ENOTOOL);
	CHECK(strstr(err.msg, "cannot import torch (ModuleNotFoundError: No module named 'torch')") != NULL);
	CHECK(strstr(err.msg, "-m pip install torch") != NULL);
	/* A crash without an answer: the last thing it said. */
	fake_python("crash", "echo 'Segmentation fault'\nexit 139");
	snprintf(py, sizeof(py), "%s/crash", dir);
	CHECK(fb_torch_query(NULL, py, dir, t, &err) == FB_ENOTOOL);
	CHECK(strstr(err.msg, "Segmentation fault") != NULL);
	CHECK(fb_torch_query(NULL, "/nonexistent/python", dir, t, &err) == FB_ENOTOOL);
	CHECK(strstr(err.msg, "/nonexistent/python not found") != NULL);
	free(t);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "%s/fbtorchtest.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_nvcc_host_words();
	test_project_flags();
	test_host_headers();
	test_backend();
	test_ppeval();
	test_backend_guards();
	test_backend_toolkit();
	test_torch_query();
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_done();
}
