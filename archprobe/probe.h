/* probe.h: private to libarchprobe: the probe's modules, each using only those after it:
 * probe.c, the entry point; probe_cache.c, the opt-in cache; probe_spawn.c, the child and its
 * deadline (ap_probe_now); probe_advice.c, outcome to advice; cuda.c, the in-process driver
 * query; probe_proto.c, the record (its trace and raw detail) and the reply protocol. The
 * arch-list resolver (arch.c), which calls ap_probe, takes ap_cc_possible from here. */
#ifndef AP_PROBE_H
#define AP_PROBE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "archprobe.h"

/* The CUresults the probe acts on: cuda.c's query and probe_advice.c's advice (values of cuda.h,
 * which is not included). */
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_SYSTEM_NOT_READY = 802,
	CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
	CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
	CUDA_ERROR_UNKNOWN = 999,
};

/* What a failed probe's raw detail is. The kind decides the advice (ap_probe_explain); the
 * text only fills it in. It travels beside the result (the child's "detail" line), never in
 * r->reason, which only ever holds the advice. */
enum ap_probe_detail_kind {
	AP_DETAIL_NONE,       /* no detail: AP_PROBE_OK, or a record without one */
	AP_DETAIL_LOAD,       /* text: dlerror() of loading libcuda */
	AP_DETAIL_LOAD_NAMED, /* text: dlerror(), which starts with "LIBCUDA: " of the asked-for file */
	AP_DETAIL_SYMBOL,     /* text: the mandatory symbol libcuda lacks */
	AP_DETAIL_CALL,       /* text: the failing call ("cuInit", "cuDeviceGetCount"), or "count" */
	AP_DETAIL_DEVICES,    /* every device query failed; no text */
	AP_DETAIL_BAD_CC,     /* text: "device N reports compute capability M.m, which no GPU has" */
	AP_DETAIL_CHILD,      /* text: the timeout in seconds, or how the probe child ended */
};
#define AP_DETAIL_LAST AP_DETAIL_CHILD

struct ap_probe_detail {
	enum ap_probe_detail_kind kind;
	char text[512];
};

/* Sets d's kind and text (truncating). */
void ap_probe_detail_set(struct ap_probe_detail *d, enum ap_probe_detail_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Loads libcuda (libcuda: exact file, or NULL for libcuda.so.1 then the WSL path), queries the
 * visible devices without creating a context and fills r's status, cuda_error, library,
 * driver_version, devices and, on failure, d (probe_advice.c turns it into advice). When
 * progress_fd >= 0 the loaded library is written there ("library PATH\n") before cuInit, so
 * that a parent learns it even if the driver then hangs or crashes. */
void ap_cuda_query(const char *libcuda, struct ap_probe_result *r, struct ap_probe_detail *d, int progress_fd);
/* Appends one line to r->trace (truncating). */
void ap_probe_trace(struct ap_probe_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when a PCI device under devices_dir ("/sys/bus/pci/devices") has NVIDIA's vendor id 0x10de. */
bool ap_pci_has_nvidia(const char *devices_dir);
/* Sets r->reason to one line saying what happened (r's status, d's detail) and what to do, and
 * fills r->cuda_error_name. pci_devices_dir: where to look for an NVIDIA GPU when there is no
 * driver (tests pass a fake tree). */
void ap_probe_explain(struct ap_probe_result *r, const struct ap_probe_detail *d, const char *libcuda,
                      const char *pci_devices_dir);

/* The child's reply protocol ("key value" lines, "archprobe-probe 1" first, "end" last; the
 * opt-in cache stores the same record). serialize writes r, and d unless NULL or AP_DETAIL_NONE, to
 * fd (newlines in values become blanks); parse_reply reads one NUL-terminated record into r and
 * d (NULL: its detail is dropped), editing buf in place, and returns true when it was complete. Neither trusts the other: fuzz_probe feeds parse_reply anything. */
void ap_probe_serialize(int fd, const struct ap_probe_result *r, const struct ap_probe_detail *d);
bool ap_probe_parse_reply(char *buf, struct ap_probe_result *r, struct ap_probe_detail *d);
/* Whether a GPU could have this compute capability (major 1..99, minor 0..9): what ap_probe
 * marks AP_DEVICE_BAD_CC and the resolver refuses, so that 8.12 never becomes sm_92. */
static inline bool
ap_cc_possible(int major, int minor)
{
	return major >= 1 && major <= 99 && minor >= 0 && minor <= 9;
}

/* Marks devices whose compute capability cannot be real (a broken driver, a corrupt answer from
 * the child or the cache) with AP_DEVICE_BAD_CC, so they never turn into an arch (8.12 must not
 * become 9.2); when no device is left it makes the result a driver error (d: AP_DETAIL_BAD_CC). Keeps ndevices in
 * 0..AP_MAX_DEVICES. */
void ap_probe_check_devices(struct ap_probe_result *r, struct ap_probe_detail *d);

/* The most a child's reply or a cache file may hold. */
#define AP_PROBE_MAX_REPLY (1 << 20)

/* CLOCK_MONOTONIC seconds. */
double ap_probe_now(void);
/* Writes "key value\n" to fd, newlines in value blanked; a write error drops the line. */
void ap_probe_put(int fd, const char *key, const char *value);

/* Runs the probe in a child (opts->helper, else a found archprobe, else fork() of a
 * single-threaded caller) and fills r from its reply, or with a timeout/crash status and a raw
 * detail in d. Returns 0, or AP_EIO (err filled) when no child could be started. */
int ap_probe_run_child(const struct ap_probe_opts *opts, const struct fb_config *cfg, const char *libcuda,
                       double timeout, struct ap_probe_result *r, struct ap_probe_detail *d, struct ap_error *err);

/* The opt-in cache. cache_path: the cache file from opts->cache or ARCHPROBE_CACHE ("1": under
 * XDG_CACHE_HOME or ~/.cache), false when off or too long. cache_key: what the answer depends
 * on, known before probing. lookup fills r (keeping its CUDA_* fields) from a matching record of
 * an unchanged library; store writes an AP_PROBE_OK r atomically, and nothing otherwise. */
bool ap_probe_cache_path(const struct ap_probe_opts *opts, const struct fb_config *cfg, char *buf, size_t size);
void ap_probe_cache_key(const struct fb_config *cfg, const char *libcuda, char *buf, size_t size);
bool ap_probe_cache_lookup(const char *path, const char *key, struct ap_probe_result *r);
void ap_probe_cache_store(const char *path, const char *key, const struct ap_probe_result *r);

#endif
