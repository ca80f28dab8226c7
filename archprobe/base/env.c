/* env.c: where the toolkit reads its environment. Both libraries and both CLIs read every
 * variable through fb_env_get (tests/layout_check.sh fails on a getenv anywhere else); the
 * runtime (fatbuild/runtime/) is a library of its own, linked into users' extensions, and reads
 * its FBRT_* variables itself. The variables read today, by who reads them:
 *
 *   archprobe     ARCHPROBE_ARCHS ARCHPROBE_CACHE ARCHPROBE_FALLBACK ARCHPROBE_LIBCUDA
 *                 ARCHPROBE_TIMEOUT CUDA_HOME CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER
 *                 FATBUILD_NVRTC LD_LIBRARY_PATH PATH HOME XDG_CACHE_HOME
 *   cache         FATBUILD_CACHE_DIR FATBUILD_CACHE_SHARED HOME XDG_CACHE_HOME
 *   compile       MAX_JOBS FATBUILD_COMPILE_SOCKET FATBUILD_COMPILE_SERVER
 *   extension     FATBUILD_BUILD_DIR FATBUILD_CACHE_BASEDIR FATBUILD_EDGE_CACHE FATBUILD_HOST_PCH
 *                 FATBUILD_LAUNCHER FATBUILD_NINJA FATBUILD_PROGRAM FATBUILD_RUNTIME
 *                 FATBUILD_INCLUDE CC CXX TORCH_CUDA_ARCH_LIST PYTHONPATH PYTHONHOME
 *                 PYTHONUSERBASE HOME XDG_CACHE_HOME; the edge cache's key and roots also
 *                 take CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH SOURCE_DATE_EPOCH
 *                 GCC_EXEC_PREFIX COMPILER_PATH NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS
 *   the CLIs      FATBUILD_REMOTE_CACHE FATBUILD_REMOTE_CACHE_HEADER FATBUILD_REMOTE_CACHE_MODE
 *                 FATBUILD_REMOTE_CACHE_STATE FATBUILD_REMOTE_CACHE_TIMEOUT FATBUILD_REMOTE_EXECUTOR
 *                 FATBUILD_CACHE_MAX_SIZE FATBUILD_COMPILE_VERBOSE FATBUILD_EDGE_LOG TMPDIR,
 *                 and some of the above (`fatbuild env` shows them, `archprobe` its own)
 *
 * The on/off switches have one reading for all of them (docs/caches.md names them):
 * FATBUILD_EDGE_CACHE=no and FATBUILD_HOST_PCH=off mean the same as =0. */
#include <stdlib.h>
#include <strings.h>

#include "env.h"

const char *
fb_env_get(const char *name)
{
	return getenv(name);
}

int
fb_env_switch(const char *name)
{
	static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off"};
	const char *v = fb_env_get(name);
	if (!v)
		return -1;
	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		if (strcasecmp(v, on[i]) == 0)
			return 1;
		if (strcasecmp(v, off[i]) == 0)
			return 0;
	}
	return -1;
}
