/* cpus_test.c: fb_jobs_default against fixture /proc and cgroup trees written here: cgroup v2
 * "max", a 2.5-CPU quota (3 jobs), a parent's quota below a child's "max", the lowest of
 * several levels, cgroup v1 quota/period, missing and unreadable files, and MAX_JOBS; and
 * fb_mem_limit: MemTotal, capped by the lowest cgroup memory limit (v2 and v1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fatbuild.h"
#include "base/cpus.h"

static char base[64], root[4096];

static void
put(const char *rel, const char *text)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* A fresh fixture: proc/self/cgroup holding `cgroup`, an empty cgroup mount. */
static void
fixture(const char *name, const char *cgroup)
{
	if (!base[0]) {
		snprintf(base, sizeof(base), "/tmp/cpus_test.XXXXXX");
		if (!mkdtemp(base)) {
			perror("mkdtemp");
			exit(1);
		}
	}
	snprintf(root, sizeof(root), "%s/%s", base, name);
	mkdir(root, 0755);
	put("proc/self/cgroup", cgroup);
	char cg[8192];
	snprintf(cg, sizeof(cg), "%s/cg", root);
	mkdir(cg, 0755);
}

static struct fb_jobs_info
run(int cpus, const char *max_jobs)
{
	char proc[8192], cg[8192];
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cg, sizeof(cg), "%s/cg", root);
	struct fb_jobs_info ji;
	fb_jobs_default(proc, cg, cpus, max_jobs, FB_JOBS_MAX, &ji);
	return ji;
}

int
main(void)
{
	struct fb_jobs_info ji;

	fixture("v2-max", "0::/a/b\n");
	put("cg/a/b/cpu.max", "max 100000\n");
	put("cg/a/cpu.max", "max 100000\n");
	ji = run(64, NULL);
	CHECK(ji.jobs == 64 && ji.quota == 0 && ji.from == FB_JOBS_FROM_AFFINITY);
	CHECK(strstr(ji.where, "64 CPUs; no cgroup CPU quota") != NULL);

	fixture("v2-quota", "0::/a/b\n");
	put("cg/a/b/cpu.max", "250000 100000\n");
	ji = run(64, NULL);
	CHECK(ji.jobs == 3 && ji.quota == 3 && ji.from == FB_JOBS_FROM_CGROUP);
	CHECK(strstr(ji.where, "cgroup v2 quota") && strstr(ji.where, "/cg/a/b/cpu.max: 250000 100000"));
	ji = run(2, NULL); /* fewer CPUs than the quota: the CPUs win */
	CHECK(ji.jobs == 2 && ji.quota == 3 && ji.from == FB_JOBS_FROM_AFFINITY);
	ji = run(64, "5"); /* MAX_JOBS wins */
	CHECK(ji.jobs == 5 && ji.from == FB_JOBS_FROM_MAX_JOBS);
	CHECK_STR(ji.where, "MAX_JOBS=5");
	ji = run(64, "0"); /* no limit: as many as the compile server serves */
	CHECK(ji.jobs == FB_JOBS_MAX && !ji.capped);
	ji = run(64, "256");
	CHECK(ji.jobs == 256 && !ji.capped);
	CHECK_STR(ji.where, "MAX_JOBS=256");
	ji = run(64, "999999"); /* more than the server can poll: capped, and said */
	CHECK(ji.jobs == FB_JOBS_MAX && ji.capped);
	CHECK_STR(ji.where, "MAX_JOBS=999999, capped at 256");
	ji = run(64, "99999999999999999999999"); /* beyond a long */
	CHECK(ji.jobs == FB_JOBS_MAX && ji.capped);
	ji = run(64, "4x"); /* not a number: ignored, as PyTorch does */
	CHECK(ji.jobs == 3);

	fixture("v2-parent", "0::/kubepods/pod/ctr\n");
	put("cg/kubepods/pod/ctr/cpu.max", "max 100000\n");
	put("cg/kubepods/pod/cpu.max", "150000 100000\n");
	put("cg/kubepods/cpu.max", "800000 100000\n");
	ji = run(64, NULL);
	CHECK(ji.jobs == 2 && ji.quota == 2);
	CHECK(strstr(ji.where, "/cg/kubepods/pod/cpu.max: 150000 100000") != NULL);

	fixture("v2-lowest", "0::/x/y/z\n");
	put("cg/x/y/z/cpu.max", "400000 100000\n");
	put("cg/x/y/cpu.max", "50000 100000\n"); /* half a CPU: one job */
	put("cg/x/cpu.max", "200000 100000\n");
	ji = run(64, NULL);
	CHECK(ji.jobs == 1 && ji.quota == 1);

	fixture("v2-root", "0::/\n");
	put("cg/cpu.max", "300000 100000\n");
	ji = run(8, NULL);
	CHECK(ji.jobs == 3);

	fixture("v2-host-path", "0::/host/only/path\n"); /* not under the mount: its own dir is read */
	put("cg/cpu.max", "100000 100000\n");
	ji = run(8, NULL);
	CHECK(ji.jobs == 1);

	fixture("v1", "12:memory:/docker/c\n4:cpu,cpuacct:/docker/c\n0::/\n");
	put("cg/cpu,cpuacct/docker/c/cpu.cfs_quota_us", "150000\n");
	put("cg/cpu,cpuacct/docker/c/cpu.cfs_period_us", "100000\n");
	put("cg/cpu,cpuacct/docker/cpu.cfs_quota_us", "-1\n");
	put("cg/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
	ji = run(16, NULL);
	CHECK(ji.jobs == 2 && ji.quota == 2 && ji.from == FB_JOBS_FROM_CGROUP);
	CHECK(strstr(ji.where, "cgroup v1 quota") && strstr(ji.where, "cpu.cfs_quota_us: 150000 (period 100000)"));

	fixture("v1-unlimited", "4:cpu:/c\n");
	put("cg/cpu/c/cpu.cfs_quota_us", "-1\n");
	put("cg/cpu/c/cpu.cfs_period_us", "100000\n");
	ji = run(16, NULL);
	CHECK(ji.jobs == 16 && ji.quota == 0);

	fixture("v1-no-period", "4:cpu:/c\n");
	put("cg/cpu/c/cpu.cfs_quota_us", "100000\n");
	ji = run(16, NULL);
	CHECK(ji.jobs == 16);

	fixture("missing", "0::/a\n"); /* no cpu.max anywhere */
	ji = run(6, NULL);
	CHECK(ji.jobs == 6 && ji.quota == 0);

	fixture("garbage", "0::/a\n");
	put("cg/a/cpu.max", "lots\n");
	ji = run(6, NULL);
	CHECK(ji.jobs == 6);

	fixture("unreadable", "0::/a\n");
	put("cg/a/cpu.max", "100000 100000\n");
	if (getuid() != 0) { /* root reads a mode-000 file anyway; a directory in its place stands in */
		char p[8192];
		snprintf(p, sizeof(p), "%s/cg/a/cpu.max", root);
		chmod(p, 0);
	} else {
		char p[8192];
		snprintf(p, sizeof(p), "%s/cg/a/cpu.max", root);
		unlink(p);
		mkdir(p, 0755);
	}
	ji = run(6, NULL);
	CHECK(ji.jobs == 6 && ji.quota == 0);

	fixture("no-proc", ""); /* an empty /proc/self/cgroup */
	ji = run(6, NULL);
	CHECK(ji.jobs == 6);
	{
		struct fb_jobs_info r;
		fb_jobs_default("/nonexistent-proc", "/nonexistent-cg", 7, NULL, FB_JOBS_MAX, &r);
		CHECK(r.jobs == 7 && r.quota == 0);
	}

	/* Memory: MemTotal alone, capped by a parent's memory.max below the child's "max", by the
	 * lowest of two levels, never raised by a limit above MemTotal; v1's limit_in_bytes and its
	 * "unlimited" (a number near 2^63); nothing readable at all. */
	char proc[8192], cg[8192];
	fixture("mem-none", "0::/a/b\n");
	put("proc/meminfo", "MemFree:  1000 kB\nMemTotal:       16384000 kB\n");
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cg, sizeof(cg), "%s/cg", root);
	CHECK(fb_mem_limit(proc, cg) == 16384000ULL * 1024);
	fixture("mem-v2", "0::/pod/ctr\n");
	put("proc/meminfo", "MemTotal:       16384000 kB\n");
	put("cg/pod/ctr/memory.max", "max\n");
	put("cg/pod/memory.max", "4294967296\n");
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cg, sizeof(cg), "%s/cg", root);
	CHECK(fb_mem_limit(proc, cg) == 4294967296ULL);
	put("cg/pod/ctr/memory.max", "2147483648\n");
	CHECK(fb_mem_limit(proc, cg) == 2147483648ULL);
	put("cg/pod/ctr/memory.max", "999999999999999\n"); /* above MemTotal: MemTotal's parent wins */
	CHECK(fb_mem_limit(proc, cg) == 4294967296ULL);
	put("cg/pod/memory.max", "garbage\n");
	CHECK(fb_mem_limit(proc, cg) == 16384000ULL * 1024);
	fixture("mem-v1", "12:memory:/docker/c\n4:cpu:/docker/c\n0::/\n");
	put("proc/meminfo", "MemTotal:       16384000 kB\n");
	put("cg/memory/docker/c/memory.limit_in_bytes", "9223372036854771712\n"); /* unlimited */
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cg, sizeof(cg), "%s/cg", root);
	CHECK(fb_mem_limit(proc, cg) == 16384000ULL * 1024);
	put("cg/memory/docker/memory.limit_in_bytes", "1073741824\n");
	CHECK(fb_mem_limit(proc, cg) == 1073741824ULL);
	CHECK(fb_mem_limit("/nonexistent-proc", "/nonexistent-cg") == 0);
	CHECK(fb_mem_limit(NULL, NULL) > 0); /* this machine's */

	/* The real thing: at least one job, never more than the affinity mask allows. */
	fb_jobs_default(NULL, NULL, 0, NULL, FB_JOBS_MAX, &ji);
	CHECK(ji.jobs >= 1 && ji.jobs <= ji.cpus);
	CHECK(fb_compile_default_jobs() >= 1);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", base);
	CHECK(system(rm) == 0);
	return check_done();
}
