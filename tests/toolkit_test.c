/* toolkit_test.c: the built-in CUDA release tables, version parsing, finding the toolkit
 * (CUDA_HOME / nvcc on PATH) and detecting its arches: NVRTC on the real toolkit (compared with
 * the 13.0 table and with `nvcc --list-gpu-code`), and the nvcc / cuda.h fallbacks on fake
 * toolkit directories generated here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archprobe.h"
#include "check.h"

static bool
same_set(const int *a, int na, const int *b, int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static void
list_str(const int *v, int n, char *buf, size_t size)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? " " : "", v[i]);
}

static void
check_table(int version, const char *sm, const char *a, const char *f)
{
	struct ap_toolkit tk;
	struct ap_error err = {0};
	char buf[512];
	CHECK(ap_toolkit_builtin(version, &tk, &err) == 0);
	CHECK(tk.version == version);
	list_str(tk.sm, tk.nsm, buf, sizeof(buf));
	CHECK_STR(buf, sm);
	list_str(tk.a, tk.na, buf, sizeof(buf));
	CHECK_STR(buf, a);
	list_str(tk.f, tk.nf, buf, sizeof(buf));
	CHECK_STR(buf, f);
	CHECK(strncmp(tk.source, "built-in table for CUDA ", 24) == 0);
}

static void
test_tables(void)
{
	/* read from each release's ptxas --help / NVRTC / nvcc --list-gpu-code (docs/toolkits.md) */
	check_table(13050, "75 80 86 87 88 89 90 100 103 107 110 120 121", "90 100 103 107 110 120 121",
	            "100 103 107 110 120 121");
	check_table(13040, "75 80 86 87 88 89 90 100 103 107 110 120 121", "90 100 103 107 110 120 121",
	            "100 103 107 110 120 121");
	check_table(13030, "75 80 86 87 88 89 90 100 103 110 120 121", "90 100 103 110 120 121", "100 103 110 120 121");
	check_table(13010, "75 80 86 87 88 89 90 100 103 110 120 121", "90 100 103 110 120 121", "100 103 110 120 121");
	check_table(12060, "50 52 53 60 61 62 70 72 75 80 86 87 89 90", "90", "");
	check_table(13000, "75 80 86 87 88 89 90 100 103 110 120 121", "90 100 103 110 120 121", "100 103 110 120 121");
	check_table(12090, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 100 101 103 120 121", "90 100 101 103 120 121",
	            "100 101 103 120 121");
	check_table(12080, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 100 101 120", "90 100 101 120", "");
	check_table(12040, "50 52 53 60 61 62 70 72 75 80 86 87 89 90", "90", "");
	check_table(12000, "50 52 53 60 61 62 70 72 75 80 86 87 89 90", "90", "");
	check_table(11080, "35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90", "", "");
	static const int all[] = {11080, 12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080,
	                          12090, 13000, 13010, 13020, 13030, 13040, 13050};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct ap_toolkit tk;
		CHECK(ap_toolkit_builtin(all[i], &tk, NULL) == 0);
		for (int k = 1; k < tk.nsm; k++)
			CHECK(tk.sm[k - 1] < tk.sm[k]);
	}
	struct ap_toolkit tk;
	struct ap_error err = {0};
	CHECK(ap_toolkit_builtin(10020, &tk, &err) == AP_EINVAL);
	CHECK(strstr(err.msg, "no built-in table for CUDA 10.2") != NULL);
	CHECK(ap_toolkit_builtin(13060, &tk, &err) == AP_EINVAL);
	CHECK(strstr(err.msg, "13.0 to 13.5") != NULL);
	CHECK(ap_toolkit_builtin(12070, &tk, &err) == AP_EINVAL);
	CHECK(strstr(err.msg, "there was no CUDA 12.7") != NULL);
	CHECK(ap_toolkit_builtin(0, &tk, &err) == AP_EINVAL);
	CHECK(ap_toolkit_builtin(13000, NULL, &err) == AP_EINVAL);
}

static void
test_version_parse(void)
{
	CHECK(ap_cuda_version_parse("13.0") == 13000);
	CHECK(ap_cuda_version_parse("12.4") == 12040);
	CHECK(ap_cuda_version_parse("11.8") == 11080);
	CHECK(ap_cuda_version_parse("12.10") == 12100);
	CHECK(ap_cuda_version_parse("13") == -1);
	CHECK(ap_cuda_version_parse("13.") == -1);
	CHECK(ap_cuda_version_parse(".5") == -1);
	CHECK(ap_cuda_version_parse("13.0.1") == -1);
	CHECK(ap_cuda_version_parse("0.5") == -1);
	CHECK(ap_cuda_version_parse("123.0") == -1);
	CHECK(ap_cuda_version_parse("12.4x") == -1);
	CHECK(ap_cuda_version_parse("") == -1);
	CHECK(ap_cuda_version_parse(NULL) == -1);
}

/* The real toolkit: NVRTC's arches = the built-in 13.0 table = nvcc --list-gpu-code. */
static void
test_real_toolkit(void)
{
	const char *home = "/usr/local/cuda";
	if (access("/usr/local/cuda/bin/nvcc", X_OK) != 0) {
		printf("no CUDA toolkit at %s: real-toolkit checks not run\n", home);
		return;
	}
	struct ap_toolkit tk, ref;
	struct ap_error err = {0};
	int rc = ap_toolkit_detect(home, &tk, &err);
	if (rc)
		fprintf(stderr, "ap_toolkit_detect: %s\n", err.msg);
	CHECK(rc == 0);
	printf("detected: CUDA %d, %d arches, source '%s'\n", tk.version, tk.nsm, tk.source);
	CHECK(strncmp(tk.source, "NVRTC /usr/local/cuda/", 22) == 0);

	/* nvcc --list-gpu-code, unsorted, one sm_N per line */
	int nv[AP_MAX_SMS], nnv = 0;
	FILE *p = popen("/usr/local/cuda/bin/nvcc --list-gpu-code", "r");
	CHECK(p != NULL);
	char line[64];
	while (p && fgets(line, sizeof(line), p) && nnv < AP_MAX_SMS) {
		int v;
		char c = 0;
		if (sscanf(line, "sm_%d%c", &v, &c) >= 1 && (c == '\n' || c == 0))
			nv[nnv++] = v;
	}
	CHECK(p && pclose(p) == 0);
	for (int i = 0; i < nnv; i++) /* sort */
		for (int j = i + 1; j < nnv; j++)
			if (nv[j] < nv[i]) {
				int t = nv[i];
				nv[i] = nv[j];
				nv[j] = t;
			}
	CHECK(nnv > 0);
	CHECK(same_set(tk.sm, tk.nsm, nv, nnv));

	if (tk.version == 13000) {
		CHECK(ap_toolkit_builtin(13000, &ref, &err) == 0);
		CHECK(same_set(tk.sm, tk.nsm, ref.sm, ref.nsm));
		CHECK(same_set(tk.a, tk.na, ref.a, ref.na));
		CHECK(same_set(tk.f, tk.nf, ref.f, ref.nf));
	} else {
		printf("toolkit is CUDA %d, not 13.0: table comparison not run\n", tk.version);
	}
}

static char root[PATH_MAX];

static void
write_file(const char *rel, const char *text, int mode)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	/* mkdir -p of the parents */
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(p, (mode_t)mode);
}

static void
test_fake_toolkits(void)
{
	snprintf(root, sizeof(root), "%s/aptk.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	CHECK(mkdtemp(root) != NULL);
	char dir[PATH_MAX * 2], buf[512];
	struct ap_toolkit tk;
	struct ap_error err = {0};

	/* a: only bin/nvcc (no NVRTC, no cuda.h): arches from --list-gpu-code, version from --version */
	write_file("a/bin/nvcc",
	           "#!/bin/sh\n"
	           "case $1 in\n"
	           "--list-gpu-code) printf 'sm_90\\nsm_75\\nsm_90a\\nsm_80\\n' ;;\n"
	           "--version) echo 'Cuda compilation tools, release 12.4, V12.4.131' ;;\n"
	           "*) exit 1 ;;\n"
	           "esac\n",
	           0755);
	snprintf(dir, sizeof(dir), "%s/a", root);
	CHECK(ap_toolkit_detect(dir, &tk, &err) == 0);
	CHECK(tk.version == 12040);
	list_str(tk.sm, tk.nsm, buf, sizeof(buf));
	CHECK_STR(buf, "75 80 90");
	list_str(tk.a, tk.na, buf, sizeof(buf));
	CHECK_STR(buf, "90");
	CHECK(strstr(tk.source, "--list-gpu-code (NVRTC unusable)") != NULL);

	/* b: cuda.h only, with a broken libnvrtc.so.13: the built-in table of its version */
	write_file("b/include/cuda.h", "#pragma once\n#define CUDA_VERSION 12080\n", 0644);
	write_file("b/lib64/libnvrtc.so.13", "not an ELF file\n", 0644);
	snprintf(dir, sizeof(dir), "%s/b", root);
	CHECK(ap_toolkit_detect(dir, &tk, &err) == 0);
	CHECK(tk.version == 12080);
	list_str(tk.sm, tk.nsm, buf, sizeof(buf));
	CHECK_STR(buf, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 100 101 120");
	CHECK(strncmp(tk.source, "built-in table for CUDA 12.8 (no NVRTC or nvcc", 46) == 0);

	/* c: a newer release than any table: arches from nvcc, suffix rules of the newest table */
	write_file("c/include/cuda.h", "#define CUDA_VERSION 13020\n", 0644);
	write_file("c/bin/nvcc", "#!/bin/sh\nprintf 'sm_75\\nsm_100\\nsm_110\\nsm_130\\n'\n", 0755);
	snprintf(dir, sizeof(dir), "%s/c", root);
	CHECK(ap_toolkit_detect(dir, &tk, &err) == 0);
	CHECK(tk.version == 13020);
	list_str(tk.sm, tk.nsm, buf, sizeof(buf));
	CHECK_STR(buf, "75 100 110 130");
	list_str(tk.f, tk.nf, buf, sizeof(buf));
	CHECK_STR(buf, "100 110");

	/* d: an empty directory, e: no directory */
	write_file("d/README", "empty\n", 0644);
	snprintf(dir, sizeof(dir), "%s/d", root);
	CHECK(ap_toolkit_detect(dir, &tk, &err) == AP_ENOTOOLKIT);
	CHECK(strstr(err.msg, dir) != NULL);
	snprintf(dir, sizeof(dir), "%s/nope", root);
	CHECK(ap_toolkit_detect(dir, &tk, &err) == AP_ENOTOOLKIT);

	/* ap_cuda_home: CUDA_HOME, else nvcc on PATH, else /usr/local/cuda */
	char *saved_home = getenv("CUDA_HOME") ? strdup(getenv("CUDA_HOME")) : NULL;
	char *saved_path = strdup(getenv("PATH") ? getenv("PATH") : "");
	char home[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/b", root);
	setenv("CUDA_HOME", dir, 1);
	CHECK(ap_cuda_home(home, sizeof(home), &err) == 0);
	CHECK_STR(home, dir);
	CHECK(ap_toolkit_detect(NULL, &tk, &err) == 0 && tk.version == 12080);
	setenv("CUDA_HOME", "/nonexistent/cuda", 1);
	CHECK(ap_cuda_home(home, sizeof(home), &err) == AP_ENOTOOLKIT);
	CHECK(strstr(err.msg, "CUDA_HOME=/nonexistent/cuda") != NULL);
	CHECK(ap_toolkit_detect(NULL, &tk, &err) == AP_ENOTOOLKIT);
	unsetenv("CUDA_HOME");
	char pathenv[PATH_MAX * 3];
	snprintf(pathenv, sizeof(pathenv), "/nonexistent/bin::%s/a/bin:%s", root, saved_path);
	setenv("PATH", pathenv, 1);
	CHECK(ap_cuda_home(home, sizeof(home), &err) == 0);
	char real[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/a", root);
	CHECK(realpath(dir, real) != NULL);
	CHECK_STR(home, real);
	/* A toolkit that is found but does not fit the buffer is an error, never a truncated path. */
	CHECK(ap_cuda_home(home, 4, &err) == AP_EINVAL);
	CHECK(strstr(err.msg, "too long for a 4-byte buffer") != NULL);
	setenv("PATH", saved_path, 1);
	if (saved_home)
		setenv("CUDA_HOME", saved_home, 1);
	free(saved_home);
	free(saved_path);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

int
main(void)
{
	test_tables();
	test_version_parse();
	test_real_toolkit();
	test_fake_toolkits();
	return check_done();
}
