/* config.c: the one place the toolkit reads its environment (config.h lists every variable,
 * by who reads it), and where a child's environment is made from it. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"

int
fb_config_switch(const char *v)
{
	static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off"};
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

static void
read_archprobe(struct fb_config *c)
{
	c->archprobe_archs = getenv("ARCHPROBE_ARCHS");
	c->archprobe_cache = getenv("ARCHPROBE_CACHE");
	c->archprobe_fallback = getenv("ARCHPROBE_FALLBACK");
	c->archprobe_libcuda = getenv("ARCHPROBE_LIBCUDA");
	c->archprobe_timeout = getenv("ARCHPROBE_TIMEOUT");
	c->cuda_home = getenv("CUDA_HOME");
	c->cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES");
	c->cuda_device_order = getenv("CUDA_DEVICE_ORDER");
	c->nvrtc = getenv("FATBUILD_NVRTC");
	c->ld_library_path = getenv("LD_LIBRARY_PATH");
	c->path = getenv("PATH");
	c->home = getenv("HOME");
	c->xdg_cache_home = getenv("XDG_CACHE_HOME");
}

static void
read_fatbuild(struct fb_config *c)
{
	c->cache_dir = getenv("FATBUILD_CACHE_DIR");
	c->cache_shared = fb_config_switch(getenv("FATBUILD_CACHE_SHARED"));
	c->max_jobs = getenv("MAX_JOBS");
	c->compile_socket = getenv("FATBUILD_COMPILE_SOCKET");
	c->compile_server = fb_config_switch(getenv("FATBUILD_COMPILE_SERVER"));
	c->build_dir = getenv("FATBUILD_BUILD_DIR");
	c->cache_basedir = getenv("FATBUILD_CACHE_BASEDIR");
	c->edge_cache = fb_config_switch(getenv("FATBUILD_EDGE_CACHE"));
	c->host_pch = fb_config_switch(getenv("FATBUILD_HOST_PCH"));
	c->launcher = getenv("FATBUILD_LAUNCHER");
	c->ninja = getenv("FATBUILD_NINJA");
	c->program = getenv("FATBUILD_PROGRAM");
	c->runtime = getenv("FATBUILD_RUNTIME");
	c->include = getenv("FATBUILD_INCLUDE");
	c->cc = getenv("CC");
	c->cxx = getenv("CXX");
	c->torch_cuda_arch_list = getenv("TORCH_CUDA_ARCH_LIST");
	c->pythonpath = getenv("PYTHONPATH");
	c->pythonhome = getenv("PYTHONHOME");
	c->pythonuserbase = getenv("PYTHONUSERBASE");
}

static void
read_edge_key(struct fb_config *c)
{
	c->cpath = getenv("CPATH");
	c->c_include_path = getenv("C_INCLUDE_PATH");
	c->cplus_include_path = getenv("CPLUS_INCLUDE_PATH");
	c->source_date_epoch = getenv("SOURCE_DATE_EPOCH");
	c->gcc_exec_prefix = getenv("GCC_EXEC_PREFIX");
	c->compiler_path = getenv("COMPILER_PATH");
	c->nvcc_prepend_flags = getenv("NVCC_PREPEND_FLAGS");
	c->nvcc_append_flags = getenv("NVCC_APPEND_FLAGS");
	c->lang = getenv("LANG");
	c->lc_all = getenv("LC_ALL");
	c->lc_ctype = getenv("LC_CTYPE");
	c->lc_messages = getenv("LC_MESSAGES");
}

static void
read_cli(struct fb_config *c)
{
	c->remote_cache = getenv("FATBUILD_REMOTE_CACHE");
	c->remote_cache_header = getenv("FATBUILD_REMOTE_CACHE_HEADER");
	c->remote_cache_mode = getenv("FATBUILD_REMOTE_CACHE_MODE");
	c->remote_cache_state = getenv("FATBUILD_REMOTE_CACHE_STATE");
	c->remote_cache_timeout = getenv("FATBUILD_REMOTE_CACHE_TIMEOUT");
	c->cache_max_size = getenv("FATBUILD_CACHE_MAX_SIZE");
	c->compile_verbose = getenv("FATBUILD_COMPILE_VERBOSE");
	c->edge_log = getenv("FATBUILD_EDGE_LOG");
	c->launch_log = getenv("FATBUILD_LAUNCH_LOG");
	c->tmpdir = getenv("TMPDIR");
	c->remote_executor = getenv("FATBUILD_REMOTE_EXECUTOR");
}

void
fb_config_read(struct fb_config *c)
{
	read_archprobe(c);
	read_fatbuild(c);
	read_edge_key(c);
	read_cli(c);
}

const struct fb_config *
fb_config_or_read(const struct fb_config *c, struct fb_config *local)
{
	if (c)
		return c;
	fb_config_read(local);
	return local;
}

/* Whether entry ("NAME=VALUE") is a variable that one of set names (as "NAME=..." or "NAME"). */
static int
named(const char *entry, const char *const *set, size_t n)
{
	size_t len = strcspn(entry, "=");
	for (size_t i = 0; i < n; i++)
		if (strncmp(set[i], entry, len) == 0 && (set[i][len] == '=' || set[i][len] == 0))
			return 1;
	return 0;
}

char **
fb_config_child_env(const char *const *set, size_t n)
{
	extern char **environ;
	size_t nenv = 0, k = 0;
	while (environ[nenv])
		nenv++;
	if (nenv > ((size_t)-1) / sizeof(char *) - n - 1)
		return NULL;
	char **env = malloc((nenv + n + 1) * sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < nenv; i++)
		if (!named(environ[i], set, n))
			env[k++] = environ[i];
	for (size_t i = 0; i < n; i++)
		if (strchr(set[i], '='))
			env[k++] = (char *)set[i];
	env[k] = NULL;
	return env;
}
