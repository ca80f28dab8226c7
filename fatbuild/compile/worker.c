/* worker.c: what a long-lived NVRTC worker needs to parse the headers once per option set:
 * its private PCH directory, the PCH options, the PCH heap (sized from what NVRTC says it
 * needs, retried once when exhausted) and the per-job verdict (made, used, refused and why).
 *
 * NVRTC's automatic PCH (--pch) lives in a heap inside the process that made it: a PCH file
 * is only usable by the same process and only for the same options, so compile.c groups the
 * jobs of one option set (arch and include path) and runs each group in one forked worker.
 * By default NVRTC writes its PCH files to /tmp/__nvrtc_auto_pch_<pid>_N, a predictable name
 * in a shared directory; here they go to a directory made by mkdtemp (mode 0700) under the
 * cache directory, checked with lstat (ours, a directory, no access for group or others)
 * before use and removed after the run. The PCH never changes an output (with the seeded
 * options the images are the same bytes with and without it), so it is not in the cache key,
 * and any PCH trouble only costs speed: the job is compiled plainly. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"
#include "base/error.h"
#include "base/safefs.h"

int
fb_pch_dir_check(const char *dir, char *why, size_t size)
{
	struct stat st;
	if (lstat(dir, &st) != 0) {
		snprintf(why, size, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, size, "%s is not a directory (a link?)", dir);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, size, "%s belongs to uid %ld, not to us", dir, (long)st.st_uid);
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(why, size, "%s has mode %03o: other users could reach it", dir, (unsigned)(st.st_mode & 0777));
		return -1;
	}
	return 0;
}

int
fb_pch_dir_new(const char *parent, char *out, size_t size, struct fb_error *err)
{
	char why[PATH_MAX + 128];
	if (!parent || !*parent)
		return fb_seterr(err, FB_EINVAL, "no directory for precompiled headers");
	int rc = fb_mkdirs(parent, err);
	if (rc)
		return rc;
	if (snprintf(out, size, "%s/pch.XXXXXX", parent) >= (int)size)
		return fb_seterr(err, FB_EINVAL, "%s: path too long", parent);
	if (!mkdtemp(out)) /* mode 0700, a fresh name */
		return fb_seterr(err, FB_EIO, "cannot create a PCH directory in %s: %s", parent, strerror(errno));
	if (fb_pch_dir_check(out, why, sizeof(why)) != 0) {
		rmdir(out);
		return fb_seterr(err, FB_EIO, "PCH directory refused: %s", why);
	}
	return 0;
}

void
fb_pch_dir_remove(const char *dir)
{
	fb_dir_remove(dir, 1); /* the run's directory and one per worker */
}

int
fb_pch_worker_dir(const char *run_dir, size_t worker, char *out, size_t size, char *why, size_t whysize)
{
	if (snprintf(out, size, "%s/w%zu", run_dir, worker) >= (int)size) {
		snprintf(why, whysize, "PCH directory path too long");
		return -1;
	}
	if (mkdir(out, 0700) != 0 && errno != EEXIST) {
		snprintf(why, whysize, "cannot create %s: %s", out, strerror(errno));
		return -1;
	}
	return fb_pch_dir_check(out, why, whysize);
}

int
fb_pch_options(const char *dir, char *buf, size_t size, const char *opts[2])
{
	if (snprintf(buf, size, "--pch-dir=%s", dir) >= (int)size)
		return -1;
	opts[0] = "--pch";
	opts[1] = buf;
	return 0;
}

static int
has(const char *l, size_t n, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i + kl <= n; i++)
		if (memcmp(l + i, key, kl) == 0)
			return 1;
	return 0;
}

/* Lines NVRTC adds about PCH files ("creating/using precompiled header file", warning 630
 * "... not compatible with those of precompiled header file") are not diagnostics of the
 * user's code: they would make the cached log differ between PCH on and off. */
static int
pch_line(const char *l, size_t n)
{
	return has(l, n, "precompiled header") || has(l, n, "PCH heap") || has(l, n, "PCH Heap");
}

static int
blank_line(const char *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] != ' ' && l[i] != '\t' && l[i] != '\n' && l[i] != '\r')
			return 0;
	return 1;
}

size_t
fb_pch_log_strip(char *log, int *used)
{
	char *w = log, *p = log;
	int removed = 0, warnings = 0;
	*used = 0;
	while (*p) {
		char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
		if (pch_line(p, n)) {
			removed = 1;
			*used |= has(p, n, "using precompiled header");
		} else {
			warnings |= (has(p, n, "warning") || has(p, n, "Warning")) && !has(p, n, "Remark:");
			memmove(w, p, n);
			w += n;
		}
		p += n;
	}
	*w = 0;
	/* The "Remark: The warnings can be suppressed..." that followed a PCH warning goes too
	 * when no other warning is left; so does a log left with nothing but blank lines. */
	if (removed && !warnings) {
		w = p = log;
		while (*p) {
			char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
			if (!has(p, n, "Remark: The warnings can be suppressed")) {
				memmove(w, p, n);
				w += n;
			}
			p += n;
		}
		*w = 0;
	}
	if (removed && blank_line(log, strlen(log)))
		log[0] = 0;
	return strlen(log);
}

int
fb_pch_verdict(struct fb_pch_state *s, int status, size_t required, int used, size_t heap, char *note, size_t size)
{
	double mib = (double)required / (1024.0 * 1024.0);
	if (status == 0) {
		s->made++;
		snprintf(note, size, "PCH made (%.0f MiB)", mib);
		return FB_PCH_MADE;
	}
	if (status == 14) {
		if (!s->retried && required > heap) {
			s->retried = 1;
			s->heap = required + required / 8;
			snprintf(note, size, "PCH refused: heap exhausted (%.0f MiB needed), retried with a larger heap%s",
			         mib, used ? "; PCH used" : "");
			return FB_PCH_REFUSED | (used ? FB_PCH_USED : 0);
		}
		s->off = 1;
		snprintf(note, size, "PCH refused: heap exhausted again (%.0f MiB needed); plain compiles from here", mib);
		return FB_PCH_REFUSED;
	}
	if (status == 15) {
		s->off = 1;
		snprintf(note, size, "PCH refused: NVRTC could not create it; plain compiles from here");
		return FB_PCH_REFUSED;
	}
	snprintf(note, size, used ? "PCH used" : "PCH not made (NVRTC chose not to)");
	return used ? FB_PCH_USED : 0;
}
