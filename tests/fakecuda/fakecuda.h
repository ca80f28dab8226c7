/* fakecuda.h: shared state of the libcuda test double (every tests/fakecuda/ source -> libcuda.so.1).
 *
 * The fake is configured per process by environment variables, read once on first use:
 *   FAKECUDA_DEVICES=8.6,9.0     physical devices in PCI order ("" or unset: none, cuInit still 0)
 *   FAKECUDA_DEV<i>=k=v;k=v      attributes of physical device i: name, sms, mem (bytes, or 24G/512M),
 *                                uuid (GPU-…), mig (MIG-…: makes it a MIG instance), pci (dddd:bb:dd.f),
 *                                integrated, mode (compute mode), rank (FASTEST_FIRST position)
 *   FAKECUDA_INIT=<CUresult>     what cuInit returns (default 0)
 *   FAKECUDA_DRIVER=13000        cuDriverGetVersion (works before cuInit, like the real driver)
 *   FAKECUDA_FAIL=F[@ord][#attr]:rc,...   per-call error injection (ord = visible ordinal)
 *   FAKECUDA_HANG=1 / FAKECUDA_ABORT=1 / FAKECUDA_SEGV=1 / FAKECUDA_SLEEP_MS=n   inside cuInit
 *   FAKECUDA_LOG=file            append one line per call received
 * CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER are emulated as documented by NVIDIA (docs/probe.md §3):
 * unset = all, "" = none, indices / GPU-<unique prefix> / MIG-<uuid>, the first invalid entry ends
 * the list, a repeated device hides everything; none visible => cuInit returns 100.
 * Calls other than cuInit, cuDriverGetVersion and cuGetError* return 3 (NOT_INITIALIZED) until a
 * cuInit(0) succeeded. Test-only code: global state is fine here. */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_MAX_DEV 32

typedef int CUresult;
typedef int CUdevice;

struct fake_device {
	int major, minor;
	char name[256];
	int sms;
	unsigned long long mem;
	unsigned char uuid[16];
	unsigned char mig[16];
	int is_mig;
	char pci[32];
	int integrated, mode, rank;
};

struct fake_state {
	int ndev;                       /* physical devices */
	struct fake_device dev[FAKE_MAX_DEV];
	int nvis;                       /* visible devices, in CUDA enumeration order */
	int vis[FAKE_MAX_DEV];          /* visible ordinal -> physical index */
	int init_rc;
	int driver;
	int inited;                     /* a cuInit(0) succeeded */
	int config_error;               /* malformed FAKECUDA_* variable: cuInit returns 999 */
};

/* The configuration, parsed on first use (thread-safe). */
struct fake_state *fake_state(void);
/* Appends one line to $FAKECUDA_LOG. */
void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The injected result for a call of func on visible ordinal dev (-1: any) with attribute attr
 * (-1: none), or 0. */
int fake_fail(const char *func, int dev, int attr);
/* 0 when initialized and dev is a visible ordinal; else 3 or 101 (INVALID_DEVICE). */
int fake_check(CUdevice dev);
/* The physical device behind visible ordinal dev (call fake_check first). */
struct fake_device *fake_device(CUdevice dev);

#endif
