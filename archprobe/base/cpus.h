/* cpus.h: how many jobs to run at once when none is asked for, and the memory they share
 * (cpus.c). Private; symbols are hidden. */
#ifndef FB_CPUS_H
#define FB_CPUS_H

#include <stdbool.h>

enum fb_jobs_from { FB_JOBS_FROM_AFFINITY = 1, FB_JOBS_FROM_CGROUP, FB_JOBS_FROM_MAX_JOBS };
struct fb_jobs_info {
	int jobs;         /* the figure */
	int from;         /* enum fb_jobs_from: what decided it */
	int cpus;         /* CPUs in the affinity mask (online CPUs where unreadable) */
	int quota;        /* lowest cgroup CPU quota of the process's cgroup and its parents, rounded
	                   * up; 0: none */
	char where[1024]; /* for people: the MAX_JOBS value, or the quota's file and value */
	bool capped;      /* MAX_JOBS asked for more than most */
};
/* The default job count: MAX_JOBS (max_jobs, when all digits; 0 = no limit: most; more than
 * most: that, and capped set), else the CPUs (cpus > 0: that many; else this process's affinity
 * mask) capped by the lowest CPU quota found from the process's cgroup (proc_root/self/cgroup)
 * up to the root of the hierarchy mounted at cgroup_root: v2 cpu.max, v1 cpu.cfs_quota_us /
 * cpu.cfs_period_us, rounded up (2.5 CPUs: 3 jobs). Missing or unreadable files mean no quota.
 * NULL roots: /proc and /sys/fs/cgroup. most: the library's ceiling (fatbuild's FB_JOBS_MAX). */
void fb_jobs_default(const char *proc_root, const char *cgroup_root, int cpus, const char *max_jobs, int most,
                     struct fb_jobs_info *out);

/* The memory this process may use, in bytes: MemTotal of proc_root/meminfo, capped by the lowest
 * cgroup memory limit of its cgroup and every parent (v2 memory.max, v1 memory.limit_in_bytes),
 * read as the CPU quota is; 0 when neither is known. NULL roots: /proc and /sys/fs/cgroup. */
unsigned long long fb_mem_limit(const char *proc_root, const char *cgroup_root);

#endif
