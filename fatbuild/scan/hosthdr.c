/* hosthdr.c: host headers, which NVRTC (device code only) cannot open. The C++ standard
 * library's headers have no extension (<cstdio>, <vector>); NVRTC ships none of them, nor the
 * C library's; CUDA's runtime headers (cuda_runtime.h, cuda_fp16.h) it does have, cuda.h (the
 * driver API, which includes <stdlib.h>) it cannot use. */
#include <stdio.h>
#include <string.h>

#include "fatbuild.h"
#include "plumbing.h"
#include "hosthdr.h"

/* The toolkit's host-only library APIs: found in the toolkit, still host headers. */
bool
fb_host_api_header(const char *name)
{
	static const char *const prefixes[] = {"cublas", "cudnn", "nccl", "cufft", "cusolver", "cusparse", "nvblas",
	                                        "cupti", "nvml", "nv_decode", "nvrtc.h", "nvJitLink", "curand.h",
	                                        "cuda.h", "cuda_profiler_api", "channel_descriptor", "driver_functions",
	                                        "cudaVDPAU", "cuda_vdpau_interop", "cuda_gl_interop", "cudaGL",
	                                        "cuda_egl_interop", "cudaEGL"};
	for (size_t i = 0; name && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

bool
fb_host_header(const char *name)
{
	static const char *const c_headers[] = {
		"assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "iso646.h",
		"limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h", "stdarg.h", "stdatomic.h",
		"stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "stdnoreturn.h", "string.h", "tgmath.h",
		"threads.h", "time.h", "uchar.h", "wchar.h", "wctype.h", "unistd.h", "pthread.h", "dlfcn.h", "fcntl.h",
		"malloc.h", "alloca.h", "cuda.h", "Python.h", "omp.h"};
	static const char *const prefixes[] = {"sys/", "torch/", "ATen/", "c10/", "pybind11/", "thrust/", "cudnn",
	                                        "cublas", "nccl"};
	if (!name || !name[0])
		return false;
	if (fb_host_api_header(name))
		return true;
	if (!strchr(name, '.') && !strchr(name, '/'))
		return true; /* <cstdio>, <vector>, <iostream> */
	for (size_t i = 0; i < sizeof(c_headers) / sizeof(c_headers[0]); i++)
		if (strcmp(name, c_headers[i]) == 0)
			return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

bool
fb_nvrtc_missing_host_header(const char *log, char *header, size_t size)
{
	static const char needle[] = "cannot open source file \"";
	for (const char *p = log ? strstr(log, needle) : NULL; p; p = strstr(p + 1, needle)) {
		const char *name = p + sizeof(needle) - 1, *end = strchr(name, '"');
		if (!end || (size_t)(end - name) >= 256)
			continue;
		char buf[256];
		memcpy(buf, name, (size_t)(end - name));
		buf[end - name] = 0;
		if (fb_host_header(buf)) {
			if (header && size)
				snprintf(header, size, "%s", buf);
			return true;
		}
	}
	return false;
}
