/* jitlink.c: nvJitLink loaded with dlopen from the toolkit in use (the device linker NVRTC
 * builds use for relocatable cubins and LTO-IR), one link at a time.
 *
 * The nvJitLink C API is declared here (no CUDA headers at build time): nvJitLinkResult is an
 * int (0 = NVJITLINK_SUCCESS), nvJitLinkHandle an opaque pointer. The plain entry points
 * (nvJitLinkCreate, ...) are exported by both libnvJitLink.so.13 and .so.12. Lookup order as
 * for NVRTC: <cuda_home>/{lib64,lib,targets/<triple>/lib}/libnvJitLink.so.13, then .so.12; the
 * bare sonames only when no toolkit is found at all. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitlink.h"
#include "base/bytes.h"
#include "base/dlload.h"
#include "base/error.h"
#include "base/proc.h"

typedef void *jl_handle;
typedef int (*create_fn)(jl_handle *, uint32_t, const char **);
typedef int (*destroy_fn)(jl_handle *);
typedef int (*add_data_fn)(jl_handle, int, const void *, size_t, const char *);
typedef int (*add_file_fn)(jl_handle, int, const char *);
typedef int (*complete_fn)(jl_handle);
typedef int (*size_fn)(jl_handle, size_t *);
typedef int (*get_fn)(jl_handle, void *);
typedef int (*version_fn)(unsigned *, unsigned *);

struct fb_jitlink {
	void *dl;
	char path[1024];
	int version;
	create_fn create;
	destroy_fn destroy;
	add_data_fn add_data;
	add_file_fn add_file;
	complete_fn complete;
	size_fn cubin_size, ptx_size, err_size, info_size;
	get_fn cubin, ptx, err_log, info_log;
};

static const char *const libdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"};
static const char *const sonames[] = {"libnvJitLink.so.13", "libnvJitLink.so.12"};

static int
bind(struct fb_jitlink *j, char *why, size_t whysize)
{
	const struct fb_dl_sym syms[] = {
		{"nvJitLinkCreate", (void **)&j->create},
		{"nvJitLinkDestroy", (void **)&j->destroy},
		{"nvJitLinkAddData", (void **)&j->add_data},
		{"nvJitLinkAddFile", (void **)&j->add_file},
		{"nvJitLinkComplete", (void **)&j->complete},
		{"nvJitLinkGetLinkedCubinSize", (void **)&j->cubin_size},
		{"nvJitLinkGetLinkedCubin", (void **)&j->cubin},
		{"nvJitLinkGetLinkedPtxSize", (void **)&j->ptx_size},
		{"nvJitLinkGetLinkedPtx", (void **)&j->ptx},
		{"nvJitLinkGetErrorLogSize", (void **)&j->err_size},
		{"nvJitLinkGetErrorLog", (void **)&j->err_log},
		{"nvJitLinkGetInfoLogSize", (void **)&j->info_size},
		{"nvJitLinkGetInfoLog", (void **)&j->info_log},
	};
	if (!fb_dl_bind(j->dl, j->path, syms, sizeof(syms) / sizeof(syms[0]), why, whysize))
		return 0;
	void *v = dlsym(j->dl, "nvJitLinkVersion"); /* 12.3 and later */
	if (v) {
		version_fn fn;
		unsigned major = 0, minor = 0;
		memcpy(&fn, &v, sizeof(v));
		if (fn(&major, &minor) == 0)
			j->version = (int)(1000 * major + 10 * minor);
	}
	return 1;
}

int
fb_jitlink_open(const char *cuda_home, struct fb_jitlink **out, struct fb_error *err)
{
	char home[1024] = "", tried[768] = "", why[256] = "";
	size_t used = 0;
	*out = NULL;
	fb_dl_home(cuda_home, ap_cuda_home, home, sizeof(home));
	struct fb_jitlink *j = calloc(1, sizeof(*j));
	if (!j)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	size_t ndirs = sizeof(libdirs) / sizeof(libdirs[0]);
	for (size_t so = 0; so < sizeof(sonames) / sizeof(sonames[0]); so++)
		for (size_t d = 0; d <= ndirs; d++) {
			if (d < ndirs) {
				if (!home[0])
					continue;
				snprintf(j->path, sizeof(j->path), "%.900s/%s/%s", home, libdirs[d], sonames[so]);
			} else {
				if (home[0])
					continue; /* a toolkit was named: its nvJitLink or none */
				snprintf(j->path, sizeof(j->path), "%s", sonames[so]);
			}
			j->dl = dlopen(j->path, RTLD_NOW | RTLD_LOCAL);
			if (!j->dl) {
				if (d == 0 || d == ndirs) {
					fb_dl_tried(tried, sizeof(tried), &used, j->path);
				}
				continue;
			}
			if (bind(j, why, sizeof(why))) {
				*out = j;
				return 0;
			}
			dlclose(j->dl);
			j->dl = NULL;
		}
	free(j);
	if (why[0])
		return fb_seterr(err, FB_ENOTOOL, "cannot use nvJitLink: %s", why);
	return fb_seterr(err, FB_ENOTOOL,
	                 "nvJitLink not found (tried %s%s); the device link of --rdc/--lto builds needs the toolkit's "
	                 "libnvJitLink (set CUDA_HOME to a CUDA 12 or 13 toolkit)",
	                 tried, home[0] ? "" : "; no CUDA toolkit found");
}

void
fb_jitlink_close(struct fb_jitlink *j)
{
	/* Kept mapped, as NVRTC is: its thread pool may outlive the handle. */
	free(j);
}

const char *
fb_jitlink_path(const struct fb_jitlink *j)
{
	return j->path;
}

int
fb_jitlink_version(const struct fb_jitlink *j)
{
	return j->version;
}

const char *
fb_jitlink_result_name(int result)
{
	static const char *const names[] = {
		"NVJITLINK_SUCCESS", "NVJITLINK_ERROR_UNRECOGNIZED_OPTION", "NVJITLINK_ERROR_MISSING_ARCH",
		"NVJITLINK_ERROR_INVALID_INPUT", "NVJITLINK_ERROR_PTX_COMPILE", "NVJITLINK_ERROR_NVVM_COMPILE",
		"NVJITLINK_ERROR_INTERNAL", "NVJITLINK_ERROR_THREADPOOL", "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
		"NVJITLINK_ERROR_FINALIZE", "NVJITLINK_ERROR_NULL_INPUT", "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
		"NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH", "NVJITLINK_ERROR_OUTDATED_LIBRARY",
		"NVJITLINK_ERROR_MISSING_FATBIN", "NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
		"NVJITLINK_ERROR_LTO_NOT_ENABLED",
	};
	if (result < 0 || (size_t)result >= sizeof(names) / sizeof(names[0]))
		return "NVJITLINK_ERROR_UNKNOWN";
	return names[result];
}

void
fb_jl_out_clear(struct fb_jl_out *o)
{
	free(o->log);
	free(o->image);
	memset(o, 0, sizeof(*o));
}

/* Appends one log (size, then the text) to *log. */
static int
append_log(jl_handle h, size_fn sz, get_fn get, char **log, size_t *len)
{
	size_t n = 0;
	if (sz(h, &n) != 0 || n <= 1)
		return 0;
	char *p = realloc(*log, *len + n + 2);
	if (!p)
		return FB_ENOMEM;
	*log = p;
	if (get(h, p + *len) != 0) {
		p[*len] = 0;
		return 0;
	}
	p[*len + n] = 0;
	*len = strlen(p);
	if (*len && p[*len - 1] != '\n') {
		p[(*len)++] = '\n';
		p[*len] = 0;
	}
	return 0;
}

static int link_here(const struct fb_jitlink *j, const char *const *opts, size_t nopts, const struct fb_jl_input *in,
                     size_t nin, int want_ptx, struct fb_jl_out *out, struct fb_error *err);

/* The forked link: links, writes the answer to fd and leaves with _exit. */
static void __attribute__((noreturn))
link_child(const struct fb_jitlink *j, const char *const *opts, size_t nopts, const struct fb_jl_input *in,
           size_t nin, int want_ptx, pid_t parent, int fd)
{
	fb_child_init(parent); /* the link dies with its parent, even a SIGKILLed one */
	signal(SIGPIPE, SIG_DFL);
	struct fb_jl_out o;
	struct fb_error e = {0};
	int rc = link_here(j, opts, nopts, in, nin, want_ptx, &o, &e);
	const char *log = rc ? e.msg : o.log ? o.log : "";
	unsigned char hdr[32];
	fb_wr64(hdr, (uint64_t)rc);
	fb_wr64(hdr + 8, (uint64_t)(int64_t)o.result);
	fb_wr64(hdr + 16, strlen(log));
	fb_wr64(hdr + 24, rc ? 0 : o.size);
	int bad = fb_write_all(fd, hdr, sizeof(hdr)) || fb_write_all(fd, log, strlen(log)) ||
	          (!rc && o.size && fb_write_all(fd, o.image, o.size));
	_exit(bad ? 3 : 0);
}

/* Reads fd to EOF into *rx (malloc'd, *n bytes; freed by the caller even on failure). */
static int
read_answer(int fd, unsigned char **rx, size_t *n, struct fb_error *err)
{
	size_t cap = 0;
	for (;;) {
		if (cap - *n < 65536) {
			size_t nc = cap ? 2 * cap : 262144;
			unsigned char *b = realloc(*rx, nc);
			if (!b)
				return fb_seterr(err, FB_ENOMEM, "out of memory");
			*rx = b;
			cap = nc;
		}
		ssize_t k = read(fd, *rx + *n, cap - *n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		*n += (size_t)k;
	}
}

/* Turns the child's answer rx[0..n) and its wait status into out. */
static int
take_answer(const struct fb_jitlink *j, const unsigned char *rx, size_t n, int status, struct fb_jl_out *out,
            struct fb_error *err)
{
	if (WIFSIGNALED(status))
		return fb_seterr(err, FB_ECOMPILE, "nvJitLink (%s) died with signal %d", j->path, WTERMSIG(status));
	uint64_t crc = 0, res = 0, nl = 0, ni = 0;
	if (n >= 32) {
		crc = fb_rd64(rx);
		res = fb_rd64(rx + 8);
		nl = fb_rd64(rx + 16);
		ni = fb_rd64(rx + 24);
	}
	if (n < 32 || nl > n || ni > n || 32 + nl + ni != n)
		return fb_seterr(err, FB_ECOMPILE, "the nvJitLink process ended without an answer (exit %d)",
		                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (crc)
		return fb_seterr(err, (int)crc, "%.*s", (int)(nl > 900 ? 900 : nl), (const char *)rx + 32);
	out->result = (int)(int64_t)res;
	out->log = malloc(nl + 1);
	out->image = ni ? malloc(ni) : NULL;
	if (!out->log || (ni && !out->image)) {
		fb_jl_out_clear(out);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	memcpy(out->log, rx + 32, nl);
	out->log[nl] = 0;
	if (ni)
		memcpy(out->image, rx + 32 + nl, ni);
	out->size = ni;
	return 0;
}

/* The link runs in a forked child that only calls nvJitLink and _exits, as NVRTC jobs do: a
 * crash inside nvJitLink (it has segfaulted on malformed LTO entries) becomes an error, and
 * what it keeps allocated after a link goes with the child. The answer is 32 bytes (status,
 * nvJitLinkResult, log and image sizes), then the log and the image. */
int
fb_jitlink_link(const struct fb_jitlink *j, const char *const *opts, size_t nopts, const struct fb_jl_input *in,
                size_t nin, int want_ptx, struct fb_jl_out *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	pid_t parent, pid;
	int fd;
	int rc = fb_fork_piped(&parent, &pid, &fd, err);
	if (rc)
		return rc;
	if (pid == 0)
		link_child(j, opts, nopts, in, nin, want_ptx, parent, fd);
	unsigned char *rx = NULL;
	size_t n = 0;
	rc = read_answer(fd, &rx, &n, err);
	close(fd);
	if (rc)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc)
		rc = take_answer(j, rx, n, status, out, err);
	free(rx);
	return rc;
}

static int
link_here(const struct fb_jitlink *j, const char *const *opts, size_t nopts, const struct fb_jl_input *in,
          size_t nin, int want_ptx, struct fb_jl_out *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	jl_handle h = NULL;
	out->result = j->create(&h, (uint32_t)nopts, (const char **)opts);
	if (out->result != 0 || !h) {
		if (!out->result)
			out->result = 6; /* NVJITLINK_ERROR_INTERNAL: no handle */
		out->log = strdup("");
		return out->log ? 0 : fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nin && out->result == 0; i++)
		out->result = in[i].data ? j->add_data(h, in[i].kind, in[i].data, in[i].size, in[i].name)
		                         : j->add_file(h, in[i].kind, in[i].name);
	if (out->result == 0)
		out->result = j->complete(h);
	size_t len = 0;
	int rc = 0;
	out->log = calloc(1, 1);
	if (!out->log)
		rc = FB_ENOMEM;
	if (!rc)
		rc = append_log(h, j->err_size, j->err_log, &out->log, &len);
	if (!rc)
		rc = append_log(h, j->info_size, j->info_log, &out->log, &len);
	if (!rc && out->result == 0) {
		size_t n = 0;
		int r = (want_ptx ? j->ptx_size : j->cubin_size)(h, &n);
		if (r == 0 && n) {
			out->image = malloc(n);
			if (!out->image)
				rc = FB_ENOMEM;
			else if ((r = (want_ptx ? j->ptx : j->cubin)(h, out->image)) == 0)
				out->size = n;
		}
		if (!rc && r)
			out->result = r;
		while (!rc && want_ptx && out->size && out->image[out->size - 1] == 0)
			out->size--;
		if (!rc && !out->result && !out->size)
			out->result = 6;
	}
	j->destroy(&h);
	if (rc) {
		fb_jl_out_clear(out);
		return fb_seterr(err, rc, "out of memory");
	}
	return 0;
}
