/* fakecuda.c: configuration, call log, error injection and the probing part of the driver API
 * of the libcuda.so.1 test double. See fakecuda.h for the environment it reads. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakecuda.h"

static struct fake_state state;
static pthread_once_t once = PTHREAD_ONCE_INIT;

void
fake_log(const char *fmt, ...)
{
	const char *path = getenv("FAKECUDA_LOG");
	char line[512];
	va_list ap;
	int fd, n;

	if (!path || !*path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		(void)0;
	close(fd);
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (prefix optional) -> 16 bytes. */
static int
parse_uuid(const char *s, unsigned char out[16])
{
	int n = 0;

	if (!strncmp(s, "GPU-", 4) || !strncmp(s, "MIG-", 4))
		s += 4;
	for (; *s && n < 32; s++) {
		int v;
		if (*s == '-')
			continue;
		if ((v = hexval((unsigned char)*s)) < 0)
			return -1;
		if (n % 2 == 0)
			out[n / 2] = (unsigned char)(v << 4);
		else
			out[n / 2] |= (unsigned char)v;
		n++;
	}
	return n == 32 && !*s ? 0 : -1;
}

static void
format_uuid(const char *prefix, const unsigned char u[16], char *buf, size_t size)
{
	snprintf(buf, size, "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix,
	         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static unsigned long long
parse_mem(const char *v)
{
	char *end;
	unsigned long long x = strtoull(v, &end, 10);

	switch (toupper((unsigned char)*end)) {
	case 'K': x <<= 10; break;
	case 'M': x <<= 20; break;
	case 'G': x <<= 30; break;
	case 'T': x <<= 40; break;
	default: break;
	}
	return x;
}

static void
parse_attrs(struct fake_device *d, const char *spec)
{
	char buf[1024], *save = NULL, *kv;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');
		const char *k = kv, *v;
		if (!eq) {
			state.config_error = 1;
			continue;
		}
		*eq = 0;
		v = eq + 1;
		if (!strcmp(k, "name"))
			snprintf(d->name, sizeof(d->name), "%s", v);
		else if (!strcmp(k, "sms"))
			d->sms = atoi(v);
		else if (!strcmp(k, "mem"))
			d->mem = parse_mem(v);
		else if (!strcmp(k, "uuid")) {
			if (parse_uuid(v, d->uuid))
				state.config_error = 1;
		} else if (!strcmp(k, "mig")) {
			if (parse_uuid(v, d->mig))
				state.config_error = 1;
			d->is_mig = 1;
		} else if (!strcmp(k, "pci"))
			snprintf(d->pci, sizeof(d->pci), "%s", v);
		else if (!strcmp(k, "integrated"))
			d->integrated = atoi(v);
		else if (!strcmp(k, "mode"))
			d->mode = atoi(v);
		else if (!strcmp(k, "rank"))
			d->rank = atoi(v);
		else
			state.config_error = 1;
	}
}

static int
uuid_prefix_match(const char *want, const unsigned char u[16], const char *prefix)
{
	char s[64];

	format_uuid(prefix, u, s, sizeof(s));
	return !strncasecmp(s, want, strlen(want));
}

/* CUDA_VISIBLE_DEVICES over the ordered physical list. */
static void
apply_visibility(const int *order)
{
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	char buf[1024], *save = NULL, *tok;
	int seen[FAKE_MAX_DEV] = {0};

	if (!cvd) {
		for (int i = 0; i < state.ndev; i++)
			state.vis[i] = order[i];
		state.nvis = state.ndev;
		return;
	}
	state.nvis = 0;
	snprintf(buf, sizeof(buf), "%s", cvd);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int phys = -1;
		while (isspace((unsigned char)*tok))
			tok++;
		if (!strncmp(tok, "GPU-", 4) || !strncmp(tok, "MIG-", 4)) {
			int mig = tok[0] == 'M', hits = 0;
			for (int i = 0; i < state.ndev; i++) {
				const struct fake_device *d = &state.dev[order[i]];
				if (mig ? d->is_mig && uuid_prefix_match(tok, d->mig, "MIG-")
				        : !d->is_mig && uuid_prefix_match(tok, d->uuid, "GPU-")) {
					phys = order[i];
					hits++;
				}
			}
			if (hits != 1)
				break; /* unknown or ambiguous: the list ends */
		} else {
			char *end;
			long v;
			if (!isdigit((unsigned char)*tok))
				break;
			v = strtol(tok, &end, 10);
			if (v < 0 || v >= state.ndev)
				break;
			phys = order[v];
		}
		if (seen[phys]) {
			state.nvis = 0; /* a repeated device hides everything */
			return;
		}
		seen[phys] = 1;
		state.vis[state.nvis++] = phys;
	}
}

static void
load(void)
{
	const char *devs = getenv("FAKECUDA_DEVICES"), *v;
	int order[FAKE_MAX_DEV];

	memset(&state, 0, sizeof(state));

	state.driver = (v = getenv("FAKECUDA_DRIVER")) ? atoi(v) : 13000;
	state.init_rc = (v = getenv("FAKECUDA_INIT")) ? atoi(v) : 0;
	if (devs && *devs) {
		char buf[1024], *save = NULL, *tok;
		snprintf(buf, sizeof(buf), "%s", devs);
		for (tok = strtok_r(buf, ",", &save); tok && state.ndev < FAKE_MAX_DEV; tok = strtok_r(NULL, ",", &save)) {
			struct fake_device *d = &state.dev[state.ndev];
			char key[32];
			int i = state.ndev++;
			if (sscanf(tok, "%d.%d", &d->major, &d->minor) != 2)
				state.config_error = 1;
			snprintf(d->name, sizeof(d->name), "Fake GPU sm_%d%d", d->major, d->minor);
			d->sms = 20 + 4 * i;
			d->mem = (24ULL + (unsigned long long)i) << 30;
			memcpy(d->uuid, (const unsigned char[16]){0xfa, 0x4e, 0xc0, 0xda, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0,
			                                         (unsigned char)i}, 16);
			snprintf(d->pci, sizeof(d->pci), "0000:%02x:00.0", i + 1);
			d->rank = i;
			snprintf(key, sizeof(key), "FAKECUDA_DEV%d", i);
			if ((v = getenv(key)))
				parse_attrs(d, v);
		}
	}
	/* Enumeration order: FASTEST_FIRST (default) by rank, PCI_BUS_ID by bus id; stable. */
	for (int i = 0; i < state.ndev; i++)
		order[i] = i;
	v = getenv("CUDA_DEVICE_ORDER");
	for (int i = 1; i < state.ndev; i++) {
		for (int j = i; j > 0; j--) {
			const struct fake_device *a = &state.dev[order[j - 1]], *b = &state.dev[order[j]];
			int gt = v && !strcmp(v, "PCI_BUS_ID") ? strcmp(a->pci, b->pci) > 0 : a->rank > b->rank;
			if (!gt)
				break;
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	}
	apply_visibility(order);
}

struct fake_state *
fake_state(void)
{
	pthread_once(&once, load);
	return &state;
}

int
fake_fail(const char *func, int dev, int attr)
{
	const char *spec = getenv("FAKECUDA_FAIL");
	size_t flen = strlen(func);

	while (spec && *spec) {
		const char *p = spec, *end = strchr(spec, ',');
		int want_dev = -1, want_attr = -1;
		if (!end)
			end = spec + strlen(spec);
		if ((size_t)(end - p) > flen && !strncmp(p, func, flen) && strchr("@#:", p[flen])) {
			char *q = (char *)p + flen;
			if (*q == '@')
				want_dev = (int)strtol(q + 1, &q, 10);
			if (*q == '#')
				want_attr = (int)strtol(q + 1, &q, 10);
			if (*q == ':' && (want_dev < 0 || want_dev == dev) && (want_attr < 0 || want_attr == attr))
				return atoi(q + 1);
		}
		spec = *end ? end + 1 : end;
	}
	return 0;
}

int
fake_check(CUdevice dev)
{
	struct fake_state *s = fake_state();

	if (!s->inited)
		return 3;
	if (dev < 0 || dev >= s->nvis)
		return 101;
	return 0;
}

struct fake_device *
fake_device(CUdevice dev)
{
	return &fake_state()->dev[fake_state()->vis[dev]];
}

/* ---- the driver API ------------------------------------------------------------------ */

FAKE_EXPORT CUresult cuInit(unsigned int flags);
FAKE_EXPORT CUresult cuDriverGetVersion(int *v);
FAKE_EXPORT CUresult cuDeviceGetCount(int *n);
FAKE_EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal);
FAKE_EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d);
FAKE_EXPORT CUresult cuDeviceGetName(char *buf, int len, CUdevice d);
FAKE_EXPORT CUresult cuDeviceGetPCIBusId(char *buf, int len, CUdevice d);
FAKE_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice d);
FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d);
FAKE_EXPORT CUresult cuDeviceGetUuid(unsigned char *uuid, CUdevice d);
#ifndef FAKECUDA_LEGACY
FAKE_EXPORT CUresult cuDeviceGetUuid_v2(unsigned char *uuid, CUdevice d);
#endif
FAKE_EXPORT CUresult cuGetErrorName(CUresult rc, const char **s);
FAKE_EXPORT CUresult cuGetErrorString(CUresult rc, const char **s);
FAKE_EXPORT CUresult cuCtxCreate(void **ctx, unsigned flags, CUdevice d);
FAKE_EXPORT CUresult cuCtxCreate_v2(void **ctx, unsigned flags, CUdevice d);
FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice d);

CUresult
cuInit(unsigned int flags)
{
	struct fake_state *s = fake_state();
	const char *v;
	int rc;

	fake_log("cuInit(%u)", flags);
	if ((v = getenv("FAKECUDA_ABORT")) && *v == '1')
		abort();
	if ((v = getenv("FAKECUDA_SEGV")) && *v == '1')
		raise(SIGSEGV);
	if ((v = getenv("FAKECUDA_HANG")) && *v == '1')
		for (;;)
			pause();
	if ((v = getenv("FAKECUDA_SLEEP_MS"))) {
		long ms = atol(v);
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	if (flags != 0)
		return 1;
	/* Re-read the configuration: a test probing in its own process twice (in-process mode
	 * keeps an initialized driver loaded) sees its new settings, as a fresh process would. */
	load();
	if (s->config_error)
		return 999;
	if ((rc = s->init_rc) != 0 || (rc = fake_fail("cuInit", -1, -1)) != 0)
		return rc;
	if (s->ndev > 0 && s->nvis == 0)
		return 100; /* CUDA_VISIBLE_DEVICES hides every device */
	s->inited = 1;
	return 0;
}

CUresult
cuDriverGetVersion(int *v)
{
	int rc;

	fake_log("cuDriverGetVersion");
	if ((rc = fake_fail("cuDriverGetVersion", -1, -1)))
		return rc;
	if (!v)
		return 1;
	*v = fake_state()->driver;
	return 0;
}

CUresult
cuDeviceGetCount(int *n)
{
	struct fake_state *s = fake_state();
	int rc;

	fake_log("cuDeviceGetCount");
	if (!s->inited)
		return 3;
	if ((rc = fake_fail("cuDeviceGetCount", -1, -1)))
		return rc;
	if (!n)
		return 1;
	*n = s->nvis;
	return 0;
}

CUresult
cuDeviceGet(CUdevice *d, int ordinal)
{
	int rc;

	fake_log("cuDeviceGet(%d)", ordinal);
	if ((rc = fake_check(ordinal)) || (rc = fake_fail("cuDeviceGet", ordinal, -1)))
		return rc;
	if (!d)
		return 1;
	*d = ordinal;
	return 0;
}

CUresult
cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
	const struct fake_device *dev;
	unsigned bus = 0, devno = 0, dom = 0;
	int rc;

	fake_log("cuDeviceGetAttribute(%d,%d)", attr, d);
	if ((rc = fake_check(d)) || (rc = fake_fail("cuDeviceGetAttribute", d, attr)))
		return rc;
	if (!v)
		return 1;
	dev = fake_device(d);
	sscanf(dev->pci, "%x:%x:%x", &dom, &bus, &devno);
	switch (attr) {
	case 75: *v = dev->major; break;
	case 76: *v = dev->minor; break;
	case 16: *v = dev->sms; break;
	case 18: *v = dev->integrated; break;
	case 20: *v = dev->mode; break;
	case 33: *v = (int)bus; break;
	case 34: *v = (int)devno; break;
	case 50: *v = (int)dom; break;
	case 35: case 84: case 133: *v = 0; break;
	default: return 1; /* CUDA_ERROR_INVALID_VALUE, as the driver does for unknown attributes */
	}
	return 0;
}

CUresult
cuDeviceGetName(char *buf, int len, CUdevice d)
{
	int rc;

	fake_log("cuDeviceGetName(%d)", d);
	if ((rc = fake_check(d)) || (rc = fake_fail("cuDeviceGetName", d, -1)))
		return rc;
	if (!buf || len <= 0)
		return 1;
	snprintf(buf, (size_t)len, "%s", fake_device(d)->name);
	return 0;
}

CUresult
cuDeviceGetPCIBusId(char *buf, int len, CUdevice d)
{
	int rc;

	fake_log("cuDeviceGetPCIBusId(%d)", d);
	if ((rc = fake_check(d)) || (rc = fake_fail("cuDeviceGetPCIBusId", d, -1)))
		return rc;
	if (!buf || len <= 0)
		return 1;
	snprintf(buf, (size_t)len, "%s", fake_device(d)->pci);
	return 0;
}

/* The legacy 32-bit entry point: a caller that dlsyms "cuDeviceTotalMem" gets a truncated value. */
CUresult
cuDeviceTotalMem(unsigned int *bytes, CUdevice d)
{
	int rc;

	fake_log("cuDeviceTotalMem(%d)", d);
	if ((rc = fake_check(d)) || (rc = fake_fail("cuDeviceTotalMem", d, -1)))
		return rc;
	if (!bytes)
		return 1;
	*bytes = (unsigned int)fake_device(d)->mem;
	return 0;
}

CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	int rc;

	fake_log("cuDeviceTotalMem_v2(%d)", d);
	if ((rc = fake_check(d)) || (rc = fake_fail("cuDeviceTotalMem_v2", d, -1)))
		return rc;
	if (!bytes)
		return 1;
	*bytes = (size_t)fake_device(d)->mem;
	return 0;
}

/* Legacy: the parent GPU's UUID even for a MIG instance. */
CUresult
cuDeviceGetUuid(unsigned char *uuid, CUdevice d)
{
	int rc;

	fake_log("cuDeviceGetUuid(%d)", d);
	if ((rc = fake_check(d)) || (rc = fake_fail("cuDeviceGetUuid", d, -1)))
		return rc;
	if (!uuid)
		return 1;
	memcpy(uuid, fake_device(d)->uuid, 16);
	return 0;
}

#ifndef FAKECUDA_LEGACY
CUresult
cuDeviceGetUuid_v2(unsigned char *uuid, CUdevice d)
{
	const struct fake_device *dev;
	int rc;

	fake_log("cuDeviceGetUuid_v2(%d)", d);
	if ((rc = fake_check(d)) || (rc = fake_fail("cuDeviceGetUuid_v2", d, -1)))
		return rc;
	if (!uuid)
		return 1;
	dev = fake_device(d);
	memcpy(uuid, dev->is_mig ? dev->mig : dev->uuid, 16);
	return 0;
}
#endif

static const struct {
	int rc;
	const char *name, *text;
} errors[] = {
	{0, "CUDA_SUCCESS", "no error"},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
	{804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"},
	{999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult
error_lookup(CUresult rc, const char **s, int text)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		if (errors[i].rc == rc) {
			if (s)
				*s = text ? errors[i].text : errors[i].name;
			return 0;
		}
	}
	if (s)
		*s = NULL;
	return 1;
}

CUresult
cuGetErrorName(CUresult rc, const char **s)
{
	fake_log("cuGetErrorName(%d)", rc);
	return error_lookup(rc, s, 0);
}

CUresult
cuGetErrorString(CUresult rc, const char **s)
{
	fake_log("cuGetErrorString(%d)", rc);
	return error_lookup(rc, s, 1);
}

/* Context creation is never needed for probing: these only log, so a test can assert absence. */
CUresult
cuCtxCreate(void **ctx, unsigned flags, CUdevice d)
{
	(void)ctx;
	fake_log("CONTEXT cuCtxCreate(%u,%d)", flags, d);
	return 999;
}

CUresult
cuCtxCreate_v2(void **ctx, unsigned flags, CUdevice d)
{
	(void)ctx;
	fake_log("CONTEXT cuCtxCreate_v2(%u,%d)", flags, d);
	return 999;
}

CUresult
cuDevicePrimaryCtxRetain(void **ctx, CUdevice d)
{
	(void)ctx;
	fake_log("CONTEXT cuDevicePrimaryCtxRetain(%d)", d);
	return 999;
}
