/* probe_proto.c: the probe's record: the trace and the raw detail as the query and the child's
 * parent fill them, and the child's reply protocol, also the record the opt-in cache stores.
 * "archprobe --probe-child=1 [--libcuda PATH]" writes the result on fd 3 in this line protocol
 * (strings have newlines blanked):
 *     archprobe-probe 1
 *     library PATH                        (also sent early, before cuInit)
 *     status N | cuda_error N | driver_version N | reason TEXT | trace TEXT (repeated)
 *     detail KIND TEXT                    (a failure's raw detail, enum ap_probe_detail_kind)
 *     device ORDINAL MAJOR MINOR SMS MEMORY INTEGRATED MODE ERROR MIG
 *     name TEXT | uuid TEXT | pci TEXT    (apply to the last device)
 *     end */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "base/proc.h"

void
ap_probe_trace(struct ap_probe_result *r, const char *fmt, ...)
{
	size_t len = strlen(r->trace);
	va_list ap;

	if (len + 2 >= sizeof(r->trace))
		return;
	va_start(ap, fmt);
	vsnprintf(r->trace + len, sizeof(r->trace) - len - 1, fmt, ap);
	va_end(ap);
	len = strlen(r->trace);
	r->trace[len] = '\n';
	r->trace[len + 1] = 0;
}

void
ap_probe_detail_set(struct ap_probe_detail *d, enum ap_probe_detail_kind kind, const char *fmt, ...)
{
	va_list ap;

	d->kind = kind;
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
	va_end(ap);
}

void
ap_probe_put(int fd, const char *key, const char *value)
{
	char line[2200];
	size_t n;
	int len = snprintf(line, sizeof(line), "%s %s", key, value);

	if (len < 0)
		return;
	n = strlen(line);
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	fb_write_all(fd, line, n); /* a write error drops the line */
}

static void
put_int(int fd, const char *key, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	ap_probe_put(fd, key, buf);
}

void
ap_probe_serialize(int fd, const struct ap_probe_result *r, const struct ap_probe_detail *det)
{
	char buf[256];
	const char *t = r->trace;

	ap_probe_put(fd, "archprobe-probe", "1");
	put_int(fd, "status", r->status);
	put_int(fd, "cuda_error", r->cuda_error);
	put_int(fd, "driver_version", r->driver_version);
	ap_probe_put(fd, "library", r->library);
	ap_probe_put(fd, "reason", r->reason);
	if (det && det->kind != AP_DETAIL_NONE) {
		char line[sizeof(det->text) + 16];
		snprintf(line, sizeof(line), "%d %s", (int)det->kind, det->text);
		ap_probe_put(fd, "detail", line);
	}
	while (*t) {
		size_t n = strcspn(t, "\n");
		char line[sizeof(r->trace)];
		memcpy(line, t, n);
		line[n] = 0;
		ap_probe_put(fd, "trace", line);
		t += n + (t[n] == '\n');
	}
	for (int i = 0; i < r->ndevices; i++) {
		const struct ap_device *d = &r->devices[i];
		snprintf(buf, sizeof(buf), "%d %d %d %d %llu %d %d %d %d", d->ordinal, d->major, d->minor,
		         d->multiprocessors, (unsigned long long)d->total_memory, d->integrated, d->compute_mode,
		         d->error, d->mig);
		ap_probe_put(fd, "device", buf);
		ap_probe_put(fd, "name", d->name);
		ap_probe_put(fd, "uuid", d->uuid);
		ap_probe_put(fd, "pci", d->pci_bus_id);
	}
	ap_probe_put(fd, "end", "");
}

bool
ap_probe_parse_reply(char *buf, struct ap_probe_result *r, struct ap_probe_detail *det)
{
	struct ap_device *dev = NULL;
	bool header = false, complete = false;
	char *save = NULL;

	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *val = strchr(line, ' ');
		const char *key = line;
		if (val)
			*val++ = 0;
		else
			val = line + strlen(line);
		if (!strcmp(key, "archprobe-probe")) {
			header = !strcmp(val, "1");
		} else if (!header) {
			if (!strcmp(key, "library")) /* the early progress line */
				snprintf(r->library, sizeof(r->library), "%s", val);
			continue;
		} else if (!strcmp(key, "status")) {
			int s = atoi(val);
			r->status = s >= AP_PROBE_OK && s <= AP_PROBE_CRASHED ? (enum ap_probe_status)s : AP_PROBE_CRASHED;
		} else if (!strcmp(key, "cuda_error")) {
			r->cuda_error = atoi(val);
		} else if (!strcmp(key, "driver_version")) {
			r->driver_version = atoi(val);
		} else if (!strcmp(key, "library")) {
			snprintf(r->library, sizeof(r->library), "%s", val);
		} else if (!strcmp(key, "reason")) {
			snprintf(r->reason, sizeof(r->reason), "%s", val);
		} else if (!strcmp(key, "detail")) {
			char *end;
			long k = strtol(val, &end, 10);
			if (det && end != val && (*end == ' ' || !*end) && k > AP_DETAIL_NONE && k <= AP_DETAIL_LAST) {
				det->kind = (enum ap_probe_detail_kind)k;
				snprintf(det->text, sizeof(det->text), "%s", *end ? end + 1 : end);
			}
		} else if (!strcmp(key, "trace")) {
			ap_probe_trace(r, "  child: %s", val);
		} else if (!strcmp(key, "device")) {
			unsigned long long mem = 0;
			int mig = 0;
			if (r->ndevices >= AP_MAX_DEVICES) {
				dev = NULL;
				continue;
			}
			dev = &r->devices[r->ndevices++];
			memset(dev, 0, sizeof(*dev));
			if (sscanf(val, "%d %d %d %d %llu %d %d %d %d", &dev->ordinal, &dev->major, &dev->minor,
			           &dev->multiprocessors, &mem, &dev->integrated, &dev->compute_mode, &dev->error, &mig) != 9)
				return false;
			dev->total_memory = mem;
			dev->mig = mig != 0;
		} else if (dev && !strcmp(key, "name")) {
			snprintf(dev->name, sizeof(dev->name), "%s", val);
		} else if (dev && !strcmp(key, "uuid")) {
			snprintf(dev->uuid, sizeof(dev->uuid), "%s", val);
		} else if (dev && !strcmp(key, "pci")) {
			snprintf(dev->pci_bus_id, sizeof(dev->pci_bus_id), "%s", val);
		} else if (!strcmp(key, "end")) {
			complete = true;
		}
	}
	return header && complete;
}
