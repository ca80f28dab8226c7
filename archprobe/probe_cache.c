/* probe_cache.c: the opt-in probe cache (ARCHPROBE_CACHE): a successful answer stored under a
 * key of what it depends on, valid while the library it came from is unchanged. */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "base/config.h"
#include "base/safefs.h"

/* Formats a path into buf; false when it does not fit. */
static bool
path_printf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool
path_printf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

bool
ap_probe_cache_path(const struct ap_probe_opts *opts, const struct fb_config *cfg, char *buf, size_t size)
{
	const char *c = opts && opts->cache ? opts->cache : cfg->archprobe_cache, *base;
	char dir[PATH_MAX];

	if (!c || !*c)
		return false;
	if (strcmp(c, "1") != 0)
		return path_printf(buf, size, "%s", c);
	if ((base = cfg->xdg_cache_home) && *base) {
		if (!path_printf(dir, sizeof(dir), "%s", base))
			return false;
	} else if (!(base = cfg->home) || !*base || !path_printf(dir, sizeof(dir), "%s/.cache", base)) {
		return false;
	}
	mkdir(dir, 0700);
	if (!path_printf(buf, size, "%s/archprobe", dir))
		return false;
	mkdir(buf, 0700);
	return path_printf(buf, size, "%s/archprobe/probe", dir);
}

/* What the answer depends on, known before probing. */
void
ap_probe_cache_key(const struct fb_config *cfg, const char *libcuda, char *buf, size_t size)
{
	const char *ld = cfg->ld_library_path, *cvd = cfg->cuda_visible_devices;
	const char *cdo = cfg->cuda_device_order;
	char boot[64] = "-";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			snprintf(boot, sizeof(boot), "-");
		boot[strcspn(boot, "\n")] = 0;
		fclose(f);
	}
	snprintf(buf, size, "archprobe-cache 1\nwant %s\nld %s\ncvd %s%s\ncdo %s\nboot %s\n", libcuda ? libcuda : "-",
	         ld ? ld : "-", cvd ? "=" : "-", cvd ? cvd : "", cdo ? cdo : "-", boot);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n')
			*p = ' ';
}

static bool
library_stamp(const char *library, char *buf, size_t size)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(library, real) || stat(real, &st) != 0)
		return false;
	snprintf(buf, size, "lib %lld %ld %lld %s\n", (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
	         (long long)st.st_size, real);
	return true;
}

bool
ap_probe_cache_lookup(const char *path, const char *key, struct ap_probe_result *r)
{
	FILE *f = fb_fopen_regular(path, O_NOFOLLOW);
	char *buf, stamp[PATH_MAX + 96], *line, *rest;
	size_t n, klen = strlen(key);
	bool hit = false;

	if (!f)
		return false;
	buf = malloc(AP_PROBE_MAX_REPLY + 1);
	n = buf ? fread(buf, 1, AP_PROBE_MAX_REPLY, f) : 0;
	fclose(f);
	if (!buf)
		return false;
	buf[n] = 0;
	if (n > klen && !strncmp(buf, key, klen) && !strncmp(buf + klen, "lib ", 4)) {
		line = buf + klen;
		rest = strchr(line, '\n');
		if (rest) {
			*rest++ = 0;
			long long sec = 0, size = 0;
			long nsec = 0;
			int off = 0;
			/* the library the cached answer came from must be unchanged */
			if (sscanf(line, "lib %lld %ld %lld %n", &sec, &nsec, &size, &off) == 3 && off > 0 &&
			    library_stamp(line + off, stamp, sizeof(stamp)) && !strncmp(stamp, line, strlen(line)) &&
			    stamp[strlen(line)] == '\n') {
				struct ap_probe_result *t = calloc(1, sizeof(*t));
				if (t && ap_probe_parse_reply(rest, t, NULL) && t->status == AP_PROBE_OK) {
					snprintf(t->cuda_visible_devices, sizeof(t->cuda_visible_devices), "%s",
					         r->cuda_visible_devices);
					t->cuda_visible_devices_set = r->cuda_visible_devices_set;
					snprintf(t->cuda_device_order, sizeof(t->cuda_device_order), "%s", r->cuda_device_order);
					*r = *t;
					hit = true;
				}
				free(t);
			}
		}
	}
	free(buf);
	return hit;
}

void
ap_probe_cache_store(const char *path, const char *key, const struct ap_probe_result *r)
{
	char stamp[PATH_MAX + 96], tmp[PATH_MAX + 32];
	int fd;

	if (r->status != AP_PROBE_OK || !library_stamp(r->library, stamp, sizeof(stamp)))
		return;
	if (fb_tmp_open(path, 0600, tmp, sizeof(tmp), &fd, NULL) != 0)
		return;
	ap_probe_put(fd, "archprobe-cache", "1");
	if (write(fd, key + strlen("archprobe-cache 1\n"), strlen(key) - strlen("archprobe-cache 1\n")) < 0 ||
	    write(fd, stamp, strlen(stamp)) < 0) {
		close(fd);
		unlink(tmp);
		return;
	}
	{
		struct ap_probe_result *t = malloc(sizeof(*t));
		if (t) {
			*t = *r;
			t->trace[0] = 0; /* the trace of a past run would only confuse */
			ap_probe_serialize(fd, t, NULL);
			free(t);
		}
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
}
