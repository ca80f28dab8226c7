/* probe_advice.c: turning a probe's outcome (status, CUresult, raw detail) into one line saying
 * what happened and what to do. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"

bool
ap_pci_has_nvidia(const char *devices_dir)
{
	DIR *d = opendir(devices_dir);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		char path[512], v[16] = "";
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/vendor", devices_dir, e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		if (fgets(v, sizeof(v), f) && !strncmp(v, "0x10de", 6))
			found = true;
		fclose(f);
	}
	closedir(d);
	return found;
}

static void
dirname_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (slash)
		snprintf(buf, size, "%.*s", (int)(slash - path), path);
	else
		snprintf(buf, size, ".");
}

/* Sets r->reason (truncating: the line is advice, not data). */
static void
say(struct ap_probe_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
say(struct ap_probe_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* AP_PROBE_OK: names the first device left out of the arch list, if any. */
static void
explain_devices(struct ap_probe_result *r)
{
	r->reason[0] = 0;
	for (int i = 0; i < r->ndevices; i++) {
		if (r->devices[i].error == AP_DEVICE_BAD_CC) {
			say(r, "device %d reports compute capability %d.%d, which no GPU has: it is left out of the "
			    "arch list", r->devices[i].ordinal, r->devices[i].major, r->devices[i].minor);
			break;
		}
		if (r->devices[i].error) {
			const char *n = ap_cuda_error_name(r->devices[i].error);
			say(r,
			         "device %d could not be queried (%s): it is left out of the arch list",
			         r->devices[i].ordinal, n ? n : "unknown CUresult");
			break;
		}
	}
}

static void
explain_no_driver(struct ap_probe_result *r, const struct ap_probe_detail *d, const char *libcuda,
                  const char *pci_devices_dir)
{
	const char *detail = d->text;

	/* dlerror() starts with the file name: do not say it twice */
	if (libcuda && d->kind == AP_DETAIL_LOAD_NAMED)
		say(r, "cannot load %s", detail);
	else if (libcuda)
		say(r, "cannot load %s: %s", libcuda, detail);
	else if (ap_pci_has_nvidia(pci_devices_dir))
		say(r,
		         "an NVIDIA GPU is on the PCI bus but libcuda.so.1 cannot be loaded (%s): install the "
		         "NVIDIA driver; in a container, set NVIDIA_DRIVER_CAPABILITIES to include compute", detail);
	else
		say(r, "no CUDA driver: libcuda.so.1 cannot be loaded (%s)", detail);
}

/* What to do about a CUresult that failed the probe. */
static const char *
driver_error_hint(int cuda_error)
{
	switch (cuda_error) {
	case CUDA_ERROR_NOT_INITIALIZED: return "the driver failed to initialize: check nvidia-smi and dmesg";
	case CUDA_ERROR_DEVICE_UNAVAILABLE: return "the devices are busy or unavailable (exclusive-process compute mode?)";
	case CUDA_ERROR_SYSTEM_NOT_READY: return "the system is not ready: start nvidia-fabricmanager / nvidia-persistenced";
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "libcuda does not match the loaded kernel module: reboot after a driver update, "
	                 "or remove a cuda-compat libcuda from the library path";
	case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return "a forward-compatibility libcuda (cuda-compat) is loaded on a GPU that does not "
	                 "support it: remove cuda-compat from the library path";
	case CUDA_ERROR_UNKNOWN: return "unknown driver error: check nvidia-smi and dmesg";
	default: return "check nvidia-smi and dmesg";
	}
}

/* AP_PROBE_DRIVER_ERROR; err: "NAME = code", or empty. */
static void
explain_driver_error(struct ap_probe_result *r, const struct ap_probe_detail *d, const char *lib, const char *err)
{
	const char *detail = d->text;

	if (d->kind == AP_DETAIL_BAD_CC)
		say(r, "%s (driver %s): the driver or its answer is broken; check nvidia-smi", detail, lib);
	else if (d->kind == AP_DETAIL_SYMBOL)
		say(r, "%s is not a CUDA driver (no %s): point ARCHPROBE_LIBCUDA (archprobe --libcuda) at "
		    "libcuda.so.1", lib, detail);
	else
		say(r, "%s failed with %s in %s: %s",
		         d->kind == AP_DETAIL_DEVICES ? "every device query" : detail, *err ? err : "an error", lib,
		         driver_error_hint(r->cuda_error));
}

void
ap_probe_explain(struct ap_probe_result *r, const struct ap_probe_detail *d, const char *libcuda,
                 const char *pci_devices_dir)
{
	const char *detail = d->text;
	char dir[512], err[96];
	const char *name = ap_cuda_error_name(r->cuda_error);
	const char *lib = *r->library ? r->library : "libcuda.so.1";

	if (r->cuda_error)
		snprintf(err, sizeof(err), "%s = %d", name ? name : "unknown CUresult", r->cuda_error);
	else
		err[0] = 0;
	snprintf(r->cuda_error_name, sizeof(r->cuda_error_name), "%s", r->cuda_error && name ? name : "");
	switch (r->status) {
	case AP_PROBE_OK:
		explain_devices(r);
		break;
	case AP_PROBE_NO_DRIVER:
		explain_no_driver(r, d, libcuda, pci_devices_dir);
		break;
	case AP_PROBE_STUB:
		dirname_of(lib, dir, sizeof(dir));
		if (libcuda)
			say(r, "%s is the CUDA toolkit's stub library (%s), which only serves linking: point "
			    "ARCHPROBE_LIBCUDA (archprobe --libcuda) at the driver's libcuda.so.1", lib,
			    *err ? err : "CUDA_ERROR_STUB_LIBRARY");
		else
			say(r, "the loaded %s is the CUDA toolkit's stub library (%s): remove %s from "
			    "LD_LIBRARY_PATH so that the driver's libcuda.so.1 is found", lib,
			    *err ? err : "CUDA_ERROR_STUB_LIBRARY", dir);
		break;
	case AP_PROBE_NO_DEVICE:
		if (r->cuda_visible_devices_set)
			say(r, "no CUDA device is visible (%s) with CUDA_VISIBLE_DEVICES='%s': unset it or list valid "
			    "indices or GPU- UUIDs (nvidia-smi -L)", *err ? err : "device count 0",
			    r->cuda_visible_devices);
		else
			say(r, "the CUDA driver reports no device (%s): check nvidia-smi", *err ? err : "device count 0");
		break;
	case AP_PROBE_DRIVER_ERROR:
		explain_driver_error(r, d, lib, err);
		break;
	case AP_PROBE_TIMEOUT:
		say(r,
		         "the device probe did not finish within %s s (the driver %s hung): check nvidia-smi, enable "
		         "persistence mode, or raise ARCHPROBE_TIMEOUT (archprobe --timeout)", detail, lib);
		break;
	case AP_PROBE_CRASHED:
		say(r, "the device probe crashed (%s) while using %s: check nvidia-smi "
		         "and dmesg", detail, lib);
		break;
	}
}
