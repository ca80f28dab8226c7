/* cuda.c: the CUDA driver, dlopen'ed: symbol table, CUresult names, and the in-process query.
 *
 * Loading: an exact file (--libcuda / ARCHPROBE_LIBCUDA), else "libcuda.so.1" through the system
 * search, else /usr/lib/wsl/lib/libcuda.so.1; never the unversioned "libcuda.so" (that is the
 * toolkit's link-time stub on most machines). The legacy unversioned exports differ in ABI from
 * what cuda.h's macros name: "cuDeviceTotalMem" takes an unsigned int * (truncated above 4 GiB),
 * "cuDeviceGetUuid" returns the parent GPU's UUID for a MIG instance; so the _v2 names are
 * resolved explicitly. No context is ever created: attributes need none. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "base/proc.h"

typedef int CUresult;
typedef int CUdevice;

enum {
	ATTR_MULTIPROCESSOR_COUNT = 16,
	ATTR_INTEGRATED = 18,
	ATTR_COMPUTE_MODE = 20,
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
};

#define WSL_LIBCUDA "/usr/lib/wsl/lib/libcuda.so.1"

/* Generated from CUDA 13.0 cuda.h (enum cudaError_enum). */
static const struct {
	int code;
	const char *name;
} cuda_errors[] = {
	{0, "CUDA_SUCCESS"},
	{1, "CUDA_ERROR_INVALID_VALUE"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY"},
	{3, "CUDA_ERROR_NOT_INITIALIZED"},
	{4, "CUDA_ERROR_DEINITIALIZED"},
	{5, "CUDA_ERROR_PROFILER_DISABLED"},
	{6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED"},
	{7, "CUDA_ERROR_PROFILER_ALREADY_STARTED"},
	{8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED"},
	{34, "CUDA_ERROR_STUB_LIBRARY"},
	{36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
	{46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
	{100, "CUDA_ERROR_NO_DEVICE"},
	{101, "CUDA_ERROR_INVALID_DEVICE"},
	{102, "CUDA_ERROR_DEVICE_NOT_LICENSED"},
	{200, "CUDA_ERROR_INVALID_IMAGE"},
	{201, "CUDA_ERROR_INVALID_CONTEXT"},
	{202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"},
	{205, "CUDA_ERROR_MAP_FAILED"},
	{206, "CUDA_ERROR_UNMAP_FAILED"},
	{207, "CUDA_ERROR_ARRAY_IS_MAPPED"},
	{208, "CUDA_ERROR_ALREADY_MAPPED"},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
	{210, "CUDA_ERROR_ALREADY_ACQUIRED"},
	{211, "CUDA_ERROR_NOT_MAPPED"},
	{212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"},
	{213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER"},
	{214, "CUDA_ERROR_ECC_UNCORRECTABLE"},
	{215, "CUDA_ERROR_UNSUPPORTED_LIMIT"},
	{216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"},
	{217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"},
	{218, "CUDA_ERROR_INVALID_PTX"},
	{219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"},
	{220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"},
	{221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
	{223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
	{224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"},
	{225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"},
	{226, "CUDA_ERROR_CONTAINED"},
	{300, "CUDA_ERROR_INVALID_SOURCE"},
	{301, "CUDA_ERROR_FILE_NOT_FOUND"},
	{302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"},
	{303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"},
	{304, "CUDA_ERROR_OPERATING_SYSTEM"},
	{400, "CUDA_ERROR_INVALID_HANDLE"},
	{401, "CUDA_ERROR_ILLEGAL_STATE"},
	{402, "CUDA_ERROR_LOSSY_QUERY"},
	{500, "CUDA_ERROR_NOT_FOUND"},
	{600, "CUDA_ERROR_NOT_READY"},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
	{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
	{702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
	{703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"},
	{704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
	{705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"},
	{708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"},
	{709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
	{710, "CUDA_ERROR_ASSERT"},
	{711, "CUDA_ERROR_TOO_MANY_PEERS"},
	{712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
	{713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
	{714, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
	{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
	{716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
	{717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
	{718, "CUDA_ERROR_INVALID_PC"},
	{719, "CUDA_ERROR_LAUNCH_FAILED"},
	{720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
	{721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
	{800, "CUDA_ERROR_NOT_PERMITTED"},
	{801, "CUDA_ERROR_NOT_SUPPORTED"},
	{802, "CUDA_ERROR_SYSTEM_NOT_READY"},
	{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
	{804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
	{805, "CUDA_ERROR_MPS_CONNECTION_FAILED"},
	{806, "CUDA_ERROR_MPS_RPC_FAILURE"},
	{807, "CUDA_ERROR_MPS_SERVER_NOT_READY"},
	{808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED"},
	{809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED"},
	{810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"},
	{811, "CUDA_ERROR_CDP_NOT_SUPPORTED"},
	{812, "CUDA_ERROR_CDP_VERSION_MISMATCH"},
	{900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
	{901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
	{902, "CUDA_ERROR_STREAM_CAPTURE_MERGE"},
	{903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"},
	{904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"},
	{905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"},
	{906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"},
	{907, "CUDA_ERROR_CAPTURED_EVENT"},
	{908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"},
	{909, "CUDA_ERROR_TIMEOUT"},
	{910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
	{911, "CUDA_ERROR_EXTERNAL_DEVICE"},
	{912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"},
	{913, "CUDA_ERROR_FUNCTION_NOT_LOADED"},
	{914, "CUDA_ERROR_INVALID_RESOURCE_TYPE"},
	{915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION"},
	{916, "CUDA_ERROR_KEY_ROTATION"},
	{999, "CUDA_ERROR_UNKNOWN"},
};

const char *
ap_cuda_error_name(int curesult)
{
	if (curesult == AP_DEVICE_BAD_CC)
		return "ARCHPROBE_INVALID_COMPUTE_CAPABILITY";
	for (size_t i = 0; i < sizeof(cuda_errors) / sizeof(cuda_errors[0]); i++)
		if (cuda_errors[i].code == curesult)
			return cuda_errors[i].name;
	return NULL;
}

/* The driver entry points; the first four are mandatory. */
struct driver {
	CUresult (*init)(unsigned);
	CUresult (*get_count)(int *);
	CUresult (*get)(CUdevice *, int);
	CUresult (*attribute)(int *, int, CUdevice);
	CUresult (*driver_version)(int *);
	CUresult (*name)(char *, int, CUdevice);
	CUresult (*total_mem)(size_t *, CUdevice);
	CUresult (*uuid_v2)(unsigned char *, CUdevice);
	CUresult (*uuid_v1)(unsigned char *, CUdevice);
	CUresult (*pci_bus_id)(char *, int, CUdevice);
};

static const struct {
	const char *name;
	size_t offset;
	bool mandatory;
} symbols[] = {
	{"cuInit", offsetof(struct driver, init), true},
	{"cuDeviceGetCount", offsetof(struct driver, get_count), true},
	{"cuDeviceGet", offsetof(struct driver, get), true},
	{"cuDeviceGetAttribute", offsetof(struct driver, attribute), true},
	{"cuDriverGetVersion", offsetof(struct driver, driver_version), false},
	{"cuDeviceGetName", offsetof(struct driver, name), false},
	{"cuDeviceTotalMem_v2", offsetof(struct driver, total_mem), false},
	{"cuDeviceGetUuid_v2", offsetof(struct driver, uuid_v2), false},
	{"cuDeviceGetUuid", offsetof(struct driver, uuid_v1), false},
	{"cuDeviceGetPCIBusId", offsetof(struct driver, pci_bus_id), false},
};

static void
set_error(struct ap_probe_result *r, enum ap_probe_status st, int code, struct ap_probe_detail *d,
          enum ap_probe_detail_kind kind, const char *text)
{
	const char *name = ap_cuda_error_name(code);

	r->status = st;
	r->cuda_error = code;
	snprintf(r->cuda_error_name, sizeof(r->cuda_error_name), "%s", code && name ? name : "");
	ap_probe_detail_set(d, kind, "%s", text);
}

static void
format_uuid(const char *prefix, const unsigned char u[16], char *buf, size_t size)
{
	snprintf(buf, size, "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix,
	         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static const char *
curesult_text(int rc, char *buf, size_t size)
{
	const char *name = ap_cuda_error_name(rc);

	if (name)
		snprintf(buf, size, "%s (%d)", name, rc);
	else
		snprintf(buf, size, "CUresult %d", rc);
	return buf;
}

/* One device; returns 0 or the CUresult that makes it unusable. */
static int
query_device(const struct driver *d, int ordinal, struct ap_device *dev, struct ap_probe_result *r)
{
	CUdevice h = 0;
	unsigned char u2[16], u1[16];
	char txt[96];
	int rc;

	dev->ordinal = ordinal;
	if ((rc = d->get(&h, ordinal)) != CUDA_SUCCESS) {
		ap_probe_trace(r, "device %d: cuDeviceGet failed: %s", ordinal, curesult_text(rc, txt, sizeof(txt)));
		return rc;
	}
	if ((rc = d->attribute(&dev->major, ATTR_CC_MAJOR, h)) != CUDA_SUCCESS ||
	    (rc = d->attribute(&dev->minor, ATTR_CC_MINOR, h)) != CUDA_SUCCESS) {
		ap_probe_trace(r, "device %d: compute capability query failed: %s", ordinal,
		               curesult_text(rc, txt, sizeof(txt)));
		dev->major = dev->minor = 0;
		return rc;
	}
	/* The rest is informative: a failure leaves the field empty and is traced. */
	if (d->name && (rc = d->name(dev->name, (int)sizeof(dev->name), h)) != CUDA_SUCCESS) {
		dev->name[0] = 0;
		ap_probe_trace(r, "device %d: cuDeviceGetName failed: %s", ordinal, curesult_text(rc, txt, sizeof(txt)));
	}
	dev->name[sizeof(dev->name) - 1] = 0;
	if ((rc = d->attribute(&dev->multiprocessors, ATTR_MULTIPROCESSOR_COUNT, h)) != CUDA_SUCCESS) {
		dev->multiprocessors = 0;
		ap_probe_trace(r, "device %d: multiprocessor count failed: %s", ordinal, curesult_text(rc, txt, sizeof(txt)));
	}
	if ((rc = d->attribute(&dev->integrated, ATTR_INTEGRATED, h)) != CUDA_SUCCESS)
		dev->integrated = 0;
	if ((rc = d->attribute(&dev->compute_mode, ATTR_COMPUTE_MODE, h)) != CUDA_SUCCESS)
		dev->compute_mode = 0;
	if (d->total_mem) {
		size_t bytes = 0;
		if ((rc = d->total_mem(&bytes, h)) == CUDA_SUCCESS)
			dev->total_memory = bytes;
		else
			ap_probe_trace(r, "device %d: cuDeviceTotalMem_v2 failed: %s", ordinal,
			               curesult_text(rc, txt, sizeof(txt)));
	}
	if (d->uuid_v2 && d->uuid_v2(u2, h) == CUDA_SUCCESS) {
		/* MIG: the v2 UUID is the instance's, the legacy one the parent GPU's. */
		dev->mig = d->uuid_v1 && d->uuid_v1(u1, h) == CUDA_SUCCESS && memcmp(u1, u2, 16) != 0;
		format_uuid(dev->mig ? "MIG-" : "GPU-", u2, dev->uuid, sizeof(dev->uuid));
	} else if (d->uuid_v1 && d->uuid_v1(u1, h) == CUDA_SUCCESS) {
		format_uuid("GPU-", u1, dev->uuid, sizeof(dev->uuid));
	} else {
		ap_probe_trace(r, "device %d: no UUID", ordinal);
	}
	if (d->pci_bus_id && (rc = d->pci_bus_id(dev->pci_bus_id, (int)sizeof(dev->pci_bus_id), h)) != CUDA_SUCCESS) {
		dev->pci_bus_id[0] = 0;
		ap_probe_trace(r, "device %d: cuDeviceGetPCIBusId failed: %s", ordinal, curesult_text(rc, txt, sizeof(txt)));
	}
	dev->pci_bus_id[sizeof(dev->pci_bus_id) - 1] = 0;
	return 0;
}

/* Fills d (AP_DETAIL_LOAD or _LOAD_NAMED) when libcuda cannot be loaded. */
static void *
load(const char *libcuda, struct ap_probe_result *r, struct ap_probe_detail *d)
{
	char first[400] = "";
	void *h;

	if (libcuda) {
		h = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(first, sizeof(first), "%s", dlerror());
		ap_probe_trace(r, "dlopen(\"%s\"): %s", libcuda, h ? "ok" : first);
		if (!h) {
			size_t n = strlen(libcuda);
			/* dlerror() usually starts with the file name; the advice then does not repeat it */
			ap_probe_detail_set(d, !strncmp(first, libcuda, n) && !strncmp(first + n, ": ", 2)
			                    ? AP_DETAIL_LOAD_NAMED : AP_DETAIL_LOAD, "%s", first);
			snprintf(r->library, sizeof(r->library), "%s", libcuda);
		}
		return h;
	}
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		snprintf(first, sizeof(first), "%s", dlerror());
	ap_probe_trace(r, "dlopen(\"libcuda.so.1\"): %s", h ? "ok" : first);
	if (h)
		return h;
	if (access(WSL_LIBCUDA, F_OK) == 0) {
		h = dlopen(WSL_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
		ap_probe_trace(r, "dlopen(\"%s\"): %s", WSL_LIBCUDA, h ? "ok" : dlerror());
		if (h)
			return h;
	} else {
		ap_probe_trace(r, "%s: not present (not WSL)", WSL_LIBCUDA);
	}
	ap_probe_detail_set(d, AP_DETAIL_LOAD, "%s", first);
	snprintf(r->library, sizeof(r->library), "libcuda.so.1");
	return NULL;
}

/* Resolves the entry points into *d; false (r and det filled) when a mandatory one is missing. */
static bool
resolve(void *h, const char *libcuda, struct driver *d, struct ap_probe_result *r, struct ap_probe_detail *det)
{
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		void *p = dlsym(h, symbols[i].name);
		memcpy((char *)d + symbols[i].offset, &p, sizeof(p));
		if (!p && symbols[i].mandatory) {
			snprintf(r->library, sizeof(r->library), "%s", libcuda ? libcuda : "libcuda.so.1");
			ap_probe_trace(r, "dlsym(\"%s\"): missing", symbols[i].name);
			set_error(r, AP_PROBE_DRIVER_ERROR, 0, det, AP_DETAIL_SYMBOL, symbols[i].name);
			return false;
		}
		if (!p)
			ap_probe_trace(r, "dlsym(\"%s\"): missing (optional)", symbols[i].name);
	}
	return true;
}

/* Sets r->library to the file the driver was loaded from and reports it on progress_fd. */
static void
name_library(const struct driver *d, const char *libcuda, struct ap_probe_result *r, int progress_fd)
{
	Dl_info info;
	void *addr;

	memcpy(&addr, &d->init, sizeof(addr));
	if (dladdr(addr, &info) && info.dli_fname)
		snprintf(r->library, sizeof(r->library), "%s", info.dli_fname);
	else
		snprintf(r->library, sizeof(r->library), "%s", libcuda ? libcuda : "libcuda.so.1");
	ap_probe_trace(r, "loaded %s", r->library);
	if (progress_fd >= 0) {
		char line[sizeof(r->library) + 16];
		int n = snprintf(line, sizeof(line), "library %s\n", r->library);
		if (n > 0)
			fb_write_all(progress_fd, line, strlen(line)); /* a lost line only loses the early name */
	}
}

/* Counts and queries the devices of an initialized driver; fills r's status. */
static void
query_devices(const struct driver *d, struct ap_probe_result *r, struct ap_probe_detail *det)
{
	int rc, count = 0, usable = 0, first_err = 0;

	if ((rc = d->get_count(&count)) != CUDA_SUCCESS) {
		set_error(r, AP_PROBE_DRIVER_ERROR, rc, det, AP_DETAIL_CALL, "cuDeviceGetCount");
		return;
	}
	ap_probe_trace(r, "cuDeviceGetCount: %d", count);
	if (count <= 0) {
		set_error(r, AP_PROBE_NO_DEVICE, 0, det, AP_DETAIL_CALL, "count");
		return;
	}
	if (count > AP_MAX_DEVICES) {
		ap_probe_trace(r, "only the first %d of %d devices are reported", AP_MAX_DEVICES, count);
		count = AP_MAX_DEVICES;
	}
	for (int i = 0; i < count; i++) {
		struct ap_device *dev = &r->devices[r->ndevices++];
		if ((dev->error = query_device(d, i, dev, r)) == 0)
			usable++;
		else if (!first_err)
			first_err = dev->error;
	}
	if (!usable) {
		set_error(r, AP_PROBE_DRIVER_ERROR, first_err, det, AP_DETAIL_DEVICES, "");
		return;
	}
	r->status = AP_PROBE_OK;
}

void
ap_cuda_query(const char *libcuda, struct ap_probe_result *r, struct ap_probe_detail *det, int progress_fd)
{
	struct driver d;
	char txt[96];
	void *h;
	int rc;

	memset(&d, 0, sizeof(d));
	if (!(h = load(libcuda, r, det))) {
		r->status = AP_PROBE_NO_DRIVER;
		r->cuda_error = 0;
		r->cuda_error_name[0] = 0;
		return;
	}
	if (!resolve(h, libcuda, &d, r, det)) {
		dlclose(h);
		return;
	}
	name_library(&d, libcuda, r, progress_fd);
	if (d.driver_version && d.driver_version(&r->driver_version) != CUDA_SUCCESS)
		r->driver_version = 0;
	rc = d.init(0);
	ap_probe_trace(r, "cuInit(0): %s", curesult_text(rc, txt, sizeof(txt)));
	if (rc != CUDA_SUCCESS) {
		if (rc == CUDA_ERROR_STUB_LIBRARY || strstr(r->library, "/stubs/"))
			set_error(r, AP_PROBE_STUB, rc, det, AP_DETAIL_CALL, "cuInit");
		else if (rc == CUDA_ERROR_NO_DEVICE)
			set_error(r, AP_PROBE_NO_DEVICE, rc, det, AP_DETAIL_CALL, "cuInit");
		else
			set_error(r, AP_PROBE_DRIVER_ERROR, rc, det, AP_DETAIL_CALL, "cuInit");
		dlclose(h);
		return;
	}
	/* From here on the driver is initialized: it stays loaded (unloading an initialized
	 * libcuda is not safe), as with the CUDA runtime. */
	if (!r->driver_version && d.driver_version && d.driver_version(&r->driver_version) != CUDA_SUCCESS)
		r->driver_version = 0;
	query_devices(&d, r, det);
}
