/* cpus.c: how many jobs to run at once when none is asked for, and the memory they share.
 *
 * The CPUs in this process's affinity mask, capped by the lowest CPU quota of its cgroup and
 * of every parent cgroup, rounded up: what coreutils' nproc, Rust's available_parallelism and
 * Go's container-aware GOMAXPROCS compute. A container limited by quota to 2.5 CPUs of a
 * 64-core host gets 3 jobs, not 64; under Kubernetes the limit often sits on a parent (the pod)
 * while the container's own cgroup says "max", which is why every level is read.
 *   cgroup v2: /proc/self/cgroup has "0::/PATH"; each level's cpu.max is "QUOTA PERIOD" or
 *              "max PERIOD", under the cgroup2 mount (cgroup_root).
 *   cgroup v1: the line whose controller list holds "cpu" ("4:cpu,cpuacct:/PATH"); each
 *              level's cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us, under
 *              cgroup_root/<controllers> (or cgroup_root/cpu).
 * Files that are missing or unreadable count as no limit. When PATH is not found under the
 * mount (a container without its own cgroup namespace sees the host's path), only the mount's
 * own directory is read. The memory (fb_mem_limit) is MemTotal capped the same way by the lowest
 * memory limit: v2 memory.max, v1 memory.limit_in_bytes under the "memory" controller. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpus.h"

#define PMAX 4096

static int
read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static bool
is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A level's quota as (quota, period), or false for none. */
static bool
level_quota(const char *dir, bool v1, long long *q, long long *p, char *shown, size_t size)
{
	char path[PMAX + 32], a[128], b[128];
	if (!v1) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		if (read_line(path, a, sizeof(a)) != 0)
			return false;
		char *end;
		if (strncmp(a, "max", 3) == 0)
			return false;
		*q = strtoll(a, &end, 10);
		if (end == a || *end != ' ')
			return false;
		char *ps = end + 1;
		*p = strtoll(ps, &end, 10);
		if (end == ps)
			return false;
		snprintf(shown, size, "%.3800s: %.100s", path, a);
	} else {
		snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
		if (read_line(path, a, sizeof(a)) != 0)
			return false;
		char ppath[PMAX + 32];
		snprintf(ppath, sizeof(ppath), "%s/cpu.cfs_period_us", dir);
		if (read_line(ppath, b, sizeof(b)) != 0)
			return false;
		char *end;
		*q = strtoll(a, &end, 10);
		if (end == a)
			return false;
		*p = strtoll(b, &end, 10);
		if (end == b)
			return false;
		snprintf(shown, size, "%.3800s: %.60s (period %.60s)", path, a, b);
	}
	return *q > 0 && *p > 0;
}

/* A level's memory limit in bytes (v2 memory.max, v1 memory.limit_in_bytes, where "no limit"
 * is a number near 2^63), or false for none. */
static bool
level_mem(const char *dir, bool v1, long long *bytes)
{
	char path[PMAX + 32], a[128];
	snprintf(path, sizeof(path), "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
	if (read_line(path, a, sizeof(a)) != 0 || strncmp(a, "max", 3) == 0)
		return false;
	char *end;
	errno = 0;
	*bytes = strtoll(a, &end, 10);
	return end != a && errno == 0 && *bytes > 0 && *bytes < (1LL << 62);
}

/* What a walk does at each level of the hierarchy, from the process's cgroup up to the root. */
typedef void level_fn(const char *dir, bool v1, void *ctx);

/* The lowest CPU quota, rounded up (0: none), and the file that set it, for people. */
struct cpu_walk {
	int best;
	char *where;
	size_t size;
};

static void
cpu_level(const char *dir, bool v1, void *ctx)
{
	struct cpu_walk *w = ctx;
	long long q, p;
	char shown[PMAX + 160];
	if (!level_quota(dir, v1, &q, &p, shown, sizeof(shown)))
		return;
	long long n = (q + p - 1) / p;
	int jobs = n < 1 ? 1 : n > 1 << 20 ? 1 << 20 : (int)n;
	if (!w->best || jobs < w->best) {
		w->best = jobs;
		snprintf(w->where, w->size, "cgroup %s quota, %.900s", v1 ? "v1" : "v2", shown);
	}
}

/* The lowest memory limit in bytes (0: none). */
static void
mem_level(const char *dir, bool v1, void *ctx)
{
	long long *best = ctx, b;
	if (level_mem(dir, v1, &b) && (!*best || b < *best))
		*best = b;
}

/* Calls level for root + rel (root itself when that is no directory) and each parent up to
 * root, both included. */
static void
walk(const char *root, const char *rel, bool v1, level_fn *level, void *ctx)
{
	char dir[PMAX];
	if (snprintf(dir, sizeof(dir), "%s%s", root, strcmp(rel, "/") == 0 ? "" : rel) >= (int)sizeof(dir) ||
	    !is_dir(dir))
		snprintf(dir, sizeof(dir), "%s", root);
	size_t rootlen = strlen(root);
	for (;;) {
		level(dir, v1, ctx);
		char *slash = strrchr(dir, '/');
		if (strlen(dir) <= rootlen || !slash || (size_t)(slash - dir) < rootlen)
			break;
		*slash = 0;
	}
}

/* Walks this process's cgroup for controller ("cpu", "memory") and its parents (walk); nothing
 * when /proc/self/cgroup names none. */
static void
cgroup_walk(const char *proc_root, const char *cgroup_root, const char *controller, level_fn *level, void *ctx)
{
	char path[PMAX];
	snprintf(path, sizeof(path), "%s/self/cgroup", proc_root);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[PMAX], v2[PMAX] = "", v1[PMAX] = "", v1ctl[256] = "";
	bool have_v2 = false, have_v1 = false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = 0;
		const char *ctl = c1 + 1, *rel = c2 + 1;
		if (strcmp(line, "0") == 0 && !ctl[0]) {
			snprintf(v2, sizeof(v2), "%s", rel);
			have_v2 = true;
			continue;
		}
		char list[256];
		snprintf(list, sizeof(list), "%s", ctl);
		for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (strcmp(t, controller) == 0 && !have_v1) {
				snprintf(v1, sizeof(v1), "%s", rel);
				snprintf(v1ctl, sizeof(v1ctl), "%s", ctl);
				have_v1 = true;
			}
	}
	fclose(f);
	if (have_v1) { /* the controller is on v1 (a hybrid system's 0:: line has none) */
		char mount[PMAX];
		snprintf(mount, sizeof(mount), "%s/%s", cgroup_root, v1ctl);
		if (!is_dir(mount))
			snprintf(mount, sizeof(mount), "%s/%s", cgroup_root, controller);
		walk(mount, v1, true, level, ctx);
	} else if (have_v2) {
		walk(cgroup_root, v2, false, level, ctx);
	}
}

void
fb_jobs_default(const char *proc_root, const char *cgroup_root, int cpus, const char *max_jobs, int most,
                struct fb_jobs_info *out)
{
	memset(out, 0, sizeof(*out));
	if (cpus <= 0) {
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
			cpus = CPU_COUNT(&set);
		} else {
			long n = sysconf(_SC_NPROCESSORS_ONLN);
			cpus = n > 0 ? (int)n : 1;
		}
	}
	out->cpus = cpus;
	char quota_where[sizeof(out->where)] = "";
	struct cpu_walk cw = {0, quota_where, sizeof(quota_where)};
	cgroup_walk(proc_root ? proc_root : "/proc", cgroup_root ? cgroup_root : "/sys/fs/cgroup", "cpu", cpu_level, &cw);
	out->quota = cw.best;
	if (max_jobs && *max_jobs && strspn(max_jobs, "0123456789") == strlen(max_jobs)) {
		long v = strtol(max_jobs, NULL, 10); /* LONG_MAX when out of range: capped below */
		out->capped = v > most;
		out->jobs = v == 0 || v > most ? most : (int)v; /* 0: no limit, as ninja -j 0 */
		out->from = FB_JOBS_FROM_MAX_JOBS;
		if (v == 0 || out->capped)
			snprintf(out->where, sizeof(out->where), "MAX_JOBS=%.100s, capped at %d", max_jobs, most);
		else
			snprintf(out->where, sizeof(out->where), "MAX_JOBS=%.100s", max_jobs);
		return;
	}
	if (out->quota > 0 && out->quota < cpus) {
		out->jobs = out->quota;
		out->from = FB_JOBS_FROM_CGROUP;
		snprintf(out->where, sizeof(out->where), "%.700s, rounded up (affinity mask: %d CPUs)", quota_where, cpus);
		return;
	}
	out->jobs = cpus;
	out->from = FB_JOBS_FROM_AFFINITY;
	if (out->quota > 0)
		snprintf(out->where, sizeof(out->where), "the affinity mask (%d CPUs; %.700s allows %d)", cpus, quota_where,
		         out->quota);
	else
		snprintf(out->where, sizeof(out->where), "the affinity mask (%d CPUs; no cgroup CPU quota)", cpus);
}

unsigned long long
fb_mem_limit(const char *proc_root, const char *cgroup_root)
{
	proc_root = proc_root ? proc_root : "/proc";
	char path[PMAX + 16], line[256];
	snprintf(path, sizeof(path), "%s/meminfo", proc_root);
	FILE *f = fopen(path, "re");
	unsigned long long total = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &total) == 1)
			break;
	if (f)
		fclose(f);
	total = total > (1ULL << 52) ? 0 : total * 1024;
	long long cap = 0;
	cgroup_walk(proc_root, cgroup_root ? cgroup_root : "/sys/fs/cgroup", "memory", mem_level, &cap);
	return cap > 0 && (!total || (unsigned long long)cap < total) ? (unsigned long long)cap : total;
}
