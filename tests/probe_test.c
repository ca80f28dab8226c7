/* probe_test.c: ap_probe against the fake driver (tests/fakecuda) and the toolkit's real stub:
 * statuses, the in-process and child paths agreeing, the _v2 entry points, MIG, the call log
 * (one cuInit(0), no context), timeout/crash isolation, helper lookup and the fork fallback,
 * no environment mutation, no leaked descriptors or children, concurrent callers
 * (docs/probe.md §8 (1)-(5), (7), (8), (10), (13)). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archprobe.h"
#include "check.h"
#include "probe.h"

extern char **environ;

static char fake[1024], fake_legacy[1024], logfile[1024];

static void
clear_fake_env(void)
{
	static const char *const vars[] = {"FAKECUDA_DEVICES", "FAKECUDA_INIT", "FAKECUDA_FAIL", "FAKECUDA_HANG",
	                                   "FAKECUDA_ABORT", "FAKECUDA_SEGV", "FAKECUDA_LOG", "FAKECUDA_DEV0",
	                                   "FAKECUDA_DEV1", "FAKECUDA_DRIVER", "CUDA_VISIBLE_DEVICES",
	                                   "CUDA_DEVICE_ORDER", "ARCHPROBE_TIMEOUT", "ARCHPROBE_LIBCUDA"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static struct ap_probe_result *
probe(const char *lib, bool inproc, int want_rc)
{
	static struct ap_probe_result r;
	struct ap_probe_opts o = {.libcuda = lib, .no_subprocess = inproc};
	struct ap_error e = {0};
	int rc = ap_probe(&o, &r, &e);

	CHECK(rc == want_rc);
	if (rc != want_rc)
		fprintf(stderr, "  ap_probe: %d %s\n", rc, e.msg);
	return &r;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[65536];
	size_t n;

	if (!f)
		return strcpy(buf, "");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int
count_str(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void
test_names(void)
{
	CHECK_STR(ap_cuda_error_name(0), "CUDA_SUCCESS");
	CHECK_STR(ap_cuda_error_name(3), "CUDA_ERROR_NOT_INITIALIZED");
	CHECK_STR(ap_cuda_error_name(34), "CUDA_ERROR_STUB_LIBRARY");
	CHECK_STR(ap_cuda_error_name(100), "CUDA_ERROR_NO_DEVICE");
	CHECK_STR(ap_cuda_error_name(222), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
	CHECK_STR(ap_cuda_error_name(803), "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
	CHECK_STR(ap_cuda_error_name(804), "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
	CHECK_STR(ap_cuda_error_name(999), "CUDA_ERROR_UNKNOWN");
	CHECK(ap_cuda_error_name(35) == NULL); /* cudaErrorInsufficientDriver is runtime-only */
	CHECK(ap_cuda_error_name(12345) == NULL);
	CHECK_STR(ap_probe_status_name(AP_PROBE_OK), "ok");
	CHECK_STR(ap_probe_status_name(AP_PROBE_NO_DEVICE), "no_device");
	CHECK_STR(ap_probe_status_name(AP_PROBE_NO_DRIVER), "no_driver");
	CHECK_STR(ap_probe_status_name(AP_PROBE_STUB), "stub");
	CHECK_STR(ap_probe_status_name(AP_PROBE_DRIVER_ERROR), "driver_error");
	CHECK_STR(ap_probe_status_name(AP_PROBE_TIMEOUT), "timeout");
	CHECK_STR(ap_probe_status_name(AP_PROBE_CRASHED), "crashed");
}

/* The child and the in-process query give the same answer; the _v2 entry points are used
 * (24 GiB survives; the legacy cuDeviceTotalMem would truncate it to 32 bits). */
static void
test_two_devices(void)
{
	struct ap_probe_result a, *b;

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "8.6,9.0", 1);
	setenv("FAKECUDA_DEV1", "name=NVIDIA H100 80GB HBM3;sms=132;mem=80G;pci=0000:3b:00.0", 1);
	setenv("FAKECUDA_DRIVER", "12040", 1);
	a = *probe(fake, false, 0);
	b = probe(fake, true, 0);
	CHECK(a.status == AP_PROBE_OK && b->status == AP_PROBE_OK);
	CHECK(a.ndevices == 2 && b->ndevices == 2);
	CHECK_STR(a.library, fake);
	CHECK(a.driver_version == 12040 && b->driver_version == 12040);
	CHECK(a.reason[0] == 0);
	for (int i = 0; i < 2 && a.ndevices == 2 && b->ndevices == 2; i++) {
		const struct ap_device *x = &a.devices[i], *y = &b->devices[i];
		CHECK(x->ordinal == i && y->ordinal == i);
		CHECK(x->major == y->major && x->minor == y->minor);
		CHECK_STR(x->name, y->name);
		CHECK_STR(x->uuid, y->uuid);
		CHECK_STR(x->pci_bus_id, y->pci_bus_id);
		CHECK(x->total_memory == y->total_memory && x->multiprocessors == y->multiprocessors);
		CHECK(x->error == 0 && !x->mig);
	}
	CHECK(a.devices[0].major == 8 && a.devices[0].minor == 6);
	CHECK(a.devices[0].total_memory == 24ULL << 30);
	CHECK_STR(a.devices[0].uuid, "GPU-fa4ec0da-0000-4000-8000-000000000000");
	CHECK_STR(a.devices[0].pci_bus_id, "0000:01:00.0");
	CHECK_STR(a.devices[1].name, "NVIDIA H100 80GB HBM3");
	CHECK(a.devices[1].total_memory == 80ULL << 30);
	CHECK(a.devices[1].multiprocessors == 132);
	CHECK_STR(a.devices[1].pci_bus_id, "0000:3b:00.0");
	CHECK(a.seconds > 0 && a.seconds < 5);
	CHECK(strstr(a.trace, "--probe-child=1") != NULL);
}

/* The call log: one cuInit(0), no context API, the _v2 symbols. */
static void
test_call_log(void)
{
	struct ap_probe_result *r;
	char *log;

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "8.6,9.0", 1);
	unlink(logfile);
	setenv("FAKECUDA_LOG", logfile, 1);
	r = probe(fake, false, 0);
	CHECK(r->status == AP_PROBE_OK);
	log = slurp(logfile);
	CHECK(count_str(log, "cuInit(0)") == 1);
	CHECK(count_str(log, "cuInit(") == 1);
	CHECK(count_str(log, "CONTEXT") == 0);
	CHECK(count_str(log, "cuDeviceTotalMem_v2(") == 2);
	CHECK(count_str(log, "cuDeviceTotalMem(") == 0);
	CHECK(count_str(log, "cuDeviceGetUuid_v2(") == 2);
	CHECK(count_str(log, "cuDeviceGetCount") == 1);
	unsetenv("FAKECUDA_LOG");
	unlink(logfile);
}

static void
test_mig_and_legacy(void)
{
	struct ap_probe_result *r;

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "9.0,9.0", 1);
	setenv("FAKECUDA_DEV0", "mig=MIG-11111111-2222-3333-4444-555555555555;name=NVIDIA H100 MIG 1g.10gb", 1);
	r = probe(fake, false, 0);
	CHECK(r->ndevices == 2);
	CHECK(r->devices[0].mig);
	CHECK_STR(r->devices[0].uuid, "MIG-11111111-2222-3333-4444-555555555555");
	CHECK(!r->devices[1].mig);
	CHECK_STR(r->devices[1].uuid, "GPU-fa4ec0da-0000-4000-8000-000000000001");
	/* a pre-11.4 driver without cuDeviceGetUuid_v2: the legacy call, GPU- prefix */
	r = probe(fake_legacy, false, 0);
	CHECK(r->status == AP_PROBE_OK && r->ndevices == 2);
	CHECK(!r->devices[0].mig);
	CHECK_STR(r->devices[0].uuid, "GPU-fa4ec0da-0000-4000-8000-000000000000");
	CHECK(strstr(r->trace, "cuDeviceGetUuid_v2\"): missing") != NULL);
}

static void
test_statuses(void)
{
	struct ap_probe_result *r;
	char stub[1024];
	const char *cuda = getenv("CUDA_HOME");

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "8.6", 1);
	/* (1) no library */
	r = probe("/nonexistent/libcuda.so.1", false, 0);
	CHECK(r->status == AP_PROBE_NO_DRIVER && r->ndevices == 0);
	CHECK(strstr(r->reason, "/nonexistent/libcuda.so.1") != NULL);
	CHECK(ap_exit_code(AP_ENODRIVER) == AP_EXIT_NODRIVER);
	/* (2) the toolkit's real stub: 34, named from our own table */
	snprintf(stub, sizeof(stub), "%s/lib64/stubs/libcuda.so", cuda && *cuda ? cuda : "/usr/local/cuda");
	if (access(stub, R_OK) == 0) {
		r = probe(stub, false, 0);
		CHECK(r->status == AP_PROBE_STUB);
		CHECK(r->cuda_error == 34);
		CHECK_STR(r->cuda_error_name, "CUDA_ERROR_STUB_LIBRARY");
		CHECK(strstr(r->reason, "stub") != NULL);
		r = probe(stub, true, 0);
		CHECK(r->status == AP_PROBE_STUB);
	} else {
		printf("note: no CUDA toolkit stub at %s: stub case not run\n", stub);
	}
	/* (3) not a CUDA driver */
	r = probe("libz.so.1", false, 0);
	CHECK(r->status == AP_PROBE_DRIVER_ERROR);
	CHECK(strstr(r->reason, "not a CUDA driver") != NULL);
	/* (4) no device: cuInit 100, count 0 */
	setenv("FAKECUDA_INIT", "100", 1);
	r = probe(fake, false, 0);
	CHECK(r->status == AP_PROBE_NO_DEVICE && r->cuda_error == 100);
	CHECK_STR(r->cuda_error_name, "CUDA_ERROR_NO_DEVICE");
	CHECK(r->driver_version == 13000); /* known even though cuInit failed */
	unsetenv("FAKECUDA_INIT");
	setenv("FAKECUDA_DEVICES", "", 1);
	r = probe(fake, true, 0);
	CHECK(r->status == AP_PROBE_NO_DEVICE && r->cuda_error == 0);
	/* (5) driver errors, each with its own advice */
	setenv("FAKECUDA_DEVICES", "8.6", 1);
	static const struct {
		const char *rc, *hint;
	} errs[] = {{"3", "failed to initialize"}, {"803", "kernel module"}, {"804", "cuda-compat"}, {"999", "unknown"}};
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		setenv("FAKECUDA_INIT", errs[i].rc, 1);
		r = probe(fake, false, 0);
		CHECK(r->status == AP_PROBE_DRIVER_ERROR && r->cuda_error == atoi(errs[i].rc));
		CHECK(strstr(r->reason, errs[i].hint) != NULL);
	}
	unsetenv("FAKECUDA_INIT");
	/* (7) one device failing: the others are kept, the failure is recorded */
	setenv("FAKECUDA_DEVICES", "8.6,9.0,10.0", 1);
	setenv("FAKECUDA_FAIL", "cuDeviceGetAttribute@1#76:999", 1);
	r = probe(fake, false, 0);
	CHECK(r->status == AP_PROBE_OK && r->ndevices == 3);
	CHECK(r->devices[0].error == 0 && r->devices[1].error == 999 && r->devices[2].error == 0);
	CHECK(r->devices[2].major == 10);
	CHECK(strstr(r->reason, "device 1") != NULL);
	unsetenv("FAKECUDA_FAIL");
	/* (8) CUDA_VISIBLE_DEVICES reaches the driver and is reported verbatim */
	setenv("CUDA_VISIBLE_DEVICES", "2", 1);
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
	r = probe(fake, false, 0);
	CHECK(r->status == AP_PROBE_OK && r->ndevices == 1 && r->devices[0].major == 10);
	CHECK(r->cuda_visible_devices_set);
	CHECK_STR(r->cuda_visible_devices, "2");
	CHECK_STR(r->cuda_device_order, "PCI_BUS_ID");
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	r = probe(fake, false, 0);
	CHECK(r->status == AP_PROBE_NO_DEVICE);
	CHECK(strstr(r->reason, "CUDA_VISIBLE_DEVICES") != NULL);
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("CUDA_DEVICE_ORDER");
	/* the default search (libcuda.so.1, then the WSL path) on this driverless machine */
	r = probe(NULL, false, 0);
	if (r->status == AP_PROBE_NO_DRIVER) {
		CHECK(strstr(r->reason, "libcuda.so.1") != NULL);
		CHECK(strstr(r->trace, "dlopen(\"libcuda.so.1\")") != NULL);
	} else {
		printf("note: a libcuda.so.1 is installed (%s): default-search no-driver case not run\n", r->library);
	}
	/* ARCHPROBE_LIBCUDA is the default of opts->libcuda */
	setenv("ARCHPROBE_LIBCUDA", fake, 1);
	r = probe(NULL, false, 0);
	CHECK(r->status == AP_PROBE_OK);
	CHECK_STR(r->library, fake);
	unsetenv("ARCHPROBE_LIBCUDA");
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* No driver but an NVIDIA GPU on the PCI bus: the container hint (fake sysfs tree). */
static void
test_pci_hint(void)
{
	char dir[1024], sub[1100], path[1200];
	struct ap_probe_result r;
	struct ap_probe_detail d;

	snprintf(dir, sizeof(dir), "%s/probe_test.pci.%d", getenv("FB_BINARY_DIR"), (int)getpid());
	mkdir(dir, 0700);
	snprintf(sub, sizeof(sub), "%s/0000:00:02.0", dir);
	mkdir(sub, 0700);
	snprintf(path, sizeof(path), "%s/vendor", sub);
	write_file(path, "0x8086\n");
	CHECK(!ap_pci_has_nvidia(dir));
	memset(&r, 0, sizeof(r));
	r.status = AP_PROBE_NO_DRIVER;
	ap_probe_detail_set(&d, AP_DETAIL_LOAD, "libcuda.so.1: cannot open shared object file");
	ap_probe_explain(&r, &d, NULL, dir);
	CHECK(strstr(r.reason, "no CUDA driver") != NULL);
	CHECK(strstr(r.reason, "NVIDIA_DRIVER_CAPABILITIES") == NULL);
	snprintf(sub, sizeof(sub), "%s/0000:3b:00.0", dir);
	mkdir(sub, 0700);
	snprintf(path, sizeof(path), "%s/vendor", sub);
	write_file(path, "0x10de\n");
	CHECK(ap_pci_has_nvidia(dir));
	memset(&r, 0, sizeof(r));
	r.status = AP_PROBE_NO_DRIVER;
	ap_probe_detail_set(&d, AP_DETAIL_LOAD, "libcuda.so.1: cannot open shared object file");
	ap_probe_explain(&r, &d, NULL, dir);
	CHECK(strstr(r.reason, "NVIDIA GPU is on the PCI bus") != NULL);
	CHECK(strstr(r.reason, "NVIDIA_DRIVER_CAPABILITIES to include compute") != NULL);
	CHECK(strstr(r.reason, "cannot open shared object file") != NULL);
	unlink(path);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/0000:00:02.0", dir);
	snprintf(path, sizeof(path), "%s/vendor", sub);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
	CHECK(!ap_pci_has_nvidia("/nonexistent/pci"));
}

/* (10) a hanging driver is killed at the timeout; a crash is contained. */
static void
test_isolation(void)
{
	struct ap_probe_opts o = {.libcuda = fake, .timeout = 0.5};
	struct ap_probe_result r;
	struct ap_error e = {0};
	int st;

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "8.6", 1);
	setenv("FAKECUDA_HANG", "1", 1);
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_TIMEOUT);
	CHECK(r.seconds >= 0.45 && r.seconds < 1.5);
	CHECK_STR(r.library, fake); /* learnt from the child before it hung */
	CHECK(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD); /* reaped, no zombie */
	/* ARCHPROBE_TIMEOUT when opts->timeout is 0; a bad value is an error */
	o.timeout = 0;
	setenv("ARCHPROBE_TIMEOUT", "0.3", 1);
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_TIMEOUT && r.seconds < 1.0);
	setenv("ARCHPROBE_TIMEOUT", "soon", 1);
	CHECK(ap_probe(&o, &r, &e) == AP_EINVAL);
	CHECK(strstr(e.msg, "ARCHPROBE_TIMEOUT") != NULL);
	unsetenv("ARCHPROBE_TIMEOUT");
	unsetenv("FAKECUDA_HANG");
	setenv("FAKECUDA_ABORT", "1", 1);
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_CRASHED);
	CHECK(strstr(r.reason, "SIGABRT") != NULL);
	unsetenv("FAKECUDA_ABORT");
	setenv("FAKECUDA_SEGV", "1", 1);
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_CRASHED);
	unsetenv("FAKECUDA_SEGV");
	CHECK(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int release;

static void *
idle_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!release)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* Helper lookup: explicit helper, none (fork, single-threaded only), a bad helper. */
static void
test_helpers(void)
{
	struct ap_probe_opts o = {.libcuda = fake};
	struct ap_probe_result r;
	struct ap_error e = {0};
	const char *bin = getenv("ARCHPROBE_BIN");
	pthread_t t;

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "7.5,12.0", 1);
	o.helper = bin;
	CHECK(bin && ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_OK && r.ndevices == 2);
	o.helper = ""; /* no helper: fork this single-threaded process */
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_OK && r.ndevices == 2 && r.devices[1].major == 12);
	CHECK(strstr(r.trace, "fork") != NULL);
	setenv("FAKECUDA_HANG", "1", 1);
	o.timeout = 0.3;
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_TIMEOUT);
	unsetenv("FAKECUDA_HANG");
	o.timeout = 0;
	/* threaded: fork is refused, clearly */
	release = 0;
	CHECK(pthread_create(&t, NULL, idle_thread, NULL) == 0);
	CHECK(ap_probe(&o, &r, &e) == AP_EIO);
	CHECK(strstr(e.msg, "threads") != NULL);
	pthread_mutex_lock(&mu);
	release = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	/* a helper that cannot run, and one that is not archprobe */
	o.helper = "/nonexistent/archprobe";
	CHECK(ap_probe(&o, &r, &e) == AP_EIO);
	CHECK(strstr(e.msg, "/nonexistent/archprobe") != NULL);
	o.helper = "/bin/true";
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_CRASHED);
	CHECK(strstr(r.reason, "without a result") != NULL);
	/* the default lookup finds the archprobe beside this test binary (build/bin) */
	o.helper = NULL;
	CHECK(ap_probe(&o, &r, &e) == 0);
	CHECK(r.status == AP_PROBE_OK);
	CHECK(strstr(r.trace, "/archprobe --probe-child=1") != NULL);
	/* the hidden mode only reacts to its own flag */
	char *argv1[] = {(char *)"archprobe", (char *)"--format", NULL};
	char *argv2[] = {(char *)"archprobe", (char *)"--probe-child=7", NULL};
	CHECK(ap_probe_child_main(2, argv1) == -1);
	CHECK(ap_probe_child_main(1, argv1) == -1);
	CHECK(ap_probe_child_main(2, argv2) == AP_EXIT_USAGE);
}

/* (13) no environment change, no leaked descriptor or child, repeatable. */
static void
test_hygiene(void)
{
	char *before[512];
	int n = 0, fds;
	struct ap_probe_result *r;

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "8.6,9.0", 1);
	setenv("CUDA_VISIBLE_DEVICES", "1,0", 1);
	for (char **e = environ; *e && n < 512; e++)
		before[n++] = strdup(*e);
	fds = count_fds();
	for (int i = 0; i < 10; i++) {
		r = probe(fake, i % 2 == 1, 0);
		CHECK(r->status == AP_PROBE_OK && r->ndevices == 2 && r->devices[0].major == 9);
	}
	r = probe("/nonexistent", false, 0);
	r = probe("libz.so.1", true, 0);
	CHECK(count_fds() == fds);
	int m = 0;
	for (char **e = environ; *e; e++, m++)
		CHECK(m < n && strcmp(*e, before[m]) == 0);
	CHECK(m == n);
	for (int i = 0; i < n; i++)
		free(before[i]);
	unsetenv("CUDA_VISIBLE_DEVICES");
}

static void *
probe_thread(void *arg)
{
	struct ap_probe_opts o = {.libcuda = fake};
	struct ap_probe_result *r = malloc(sizeof(*r));
	struct ap_error e;
	int *ok = arg;

	for (int i = 0; r && i < 3; i++)
		if (ap_probe(&o, r, &e) == 0 && r->status == AP_PROBE_OK && r->ndevices == 2 &&
		    r->devices[1].major == 9)
			(*ok)++;
	free(r);
	return NULL;
}

/* Concurrent callers (posix_spawn children, no shared state). */
static void
test_threads(void)
{
	pthread_t t[4];
	int ok[4] = {0};

	clear_fake_env();
	setenv("FAKECUDA_DEVICES", "8.6,9.0", 1);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, probe_thread, &ok[i]) == 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(ok[i] == 3);
	}
}

int
main(void)
{
	const char *bin = getenv("FB_BINARY_DIR");

	if (!bin) {
		fprintf(stderr, "FB_BINARY_DIR is not set\n");
		return 1;
	}
	snprintf(fake, sizeof(fake), "%s/fakecuda/libcuda.so.1", bin);
	snprintf(fake_legacy, sizeof(fake_legacy), "%s/fakecuda-legacy/libcuda.so.1", bin);
	snprintf(logfile, sizeof(logfile), "%s/probe_test.%d.log", bin, (int)getpid());
	if (access(fake, R_OK) != 0) {
		fprintf(stderr, "the fake driver %s is not built\n", fake);
		return 1;
	}
	test_names();
	test_two_devices();
	test_call_log();
	test_mig_and_legacy();
	test_statuses();
	test_pci_hint();
	test_isolation();
	test_helpers();
	test_hygiene();
	test_threads();
	return check_done();
}
