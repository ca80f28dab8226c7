/* probe.c: ap_probe: which CUDA devices are visible, asked in a child process with a timeout.
 *
 * Isolation: by default the driver is queried in a child, so that a hanging cuInit (seen in the
 * wild) is bounded by the timeout, a crashing driver does not take the caller down, and libcuda
 * never enters the caller's process. The child is the archprobe binary in its hidden helper mode
 * (posix_spawn, safe from threaded hosts): "archprobe --probe-child=1 [--libcuda PATH]" writes
 * the result on fd 3 in this line protocol (strings have newlines blanked):
 *     archprobe-probe 1
 *     library PATH                        (also sent early, before cuInit)
 *     status N | cuda_error N | driver_version N | reason TEXT | trace TEXT (repeated)
 *     device ORDINAL MAJOR MINOR SMS MEMORY INTEGRATED MODE ERROR MIG
 *     name TEXT | uuid TEXT | pci TEXT    (apply to the last device)
 *     end
 * Without a helper, a single-threaded caller forks instead; a threaded one gets an error.
 * The environment is never changed: CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER reach the driver
 * untouched and are reported verbatim (the driver's reading of them is authoritative). */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch_int.h"
#include "probe_int.h"
#include "error_int.h"
#include "safefile_int.h"

extern char **environ;

#define CHILD_FLAG "--probe-child=1"
#define CHILD_PREFIX "--probe-child"
#define RESULT_FD 3
#define PROTO "archprobe-probe 1"
#define MAX_REPLY (1 << 20)
#define SYSFS_PCI "/sys/bus/pci/devices"

static const char *const status_names[] = {
	[AP_PROBE_OK] = "ok",
	[AP_PROBE_NO_DEVICE] = "no_device",
	[AP_PROBE_NO_DRIVER] = "no_driver",
	[AP_PROBE_STUB] = "stub",
	[AP_PROBE_DRIVER_ERROR] = "driver_error",
	[AP_PROBE_TIMEOUT] = "timeout",
	[AP_PROBE_CRASHED] = "crashed",
};

const char *
ap_probe_status_name(enum ap_probe_status s)
{
	if ((unsigned)s >= sizeof(status_names) / sizeof(status_names[0]))
		return "unknown";
	return status_names[s];
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sets r->reason (truncating: the line is advice, not data). */
static void
say(struct ap_probe_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Formats a path into buf; false when it does not fit. */
static bool
path_printf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool
path_printf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

/* ---- the result protocol --------------------------------------------------------------- */

static void
put(int fd, const char *key, const char *value)
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
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, line + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

static void
put_int(int fd, const char *key, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	put(fd, key, buf);
}

void
ap_probe_serialize(int fd, const struct ap_probe_result *r)
{
	char buf[256];
	const char *t = r->trace;

	put(fd, "archprobe-probe", "1");
	put_int(fd, "status", r->status);
	put_int(fd, "cuda_error", r->cuda_error);
	put_int(fd, "driver_version", r->driver_version);
	put(fd, "library", r->library);
	put(fd, "reason", r->reason);
	while (*t) {
		size_t n = strcspn(t, "\n");
		char line[sizeof(r->trace)];
		memcpy(line, t, n);
		line[n] = 0;
		put(fd, "trace", line);
		t += n + (t[n] == '\n');
	}
	for (int i = 0; i < r->ndevices; i++) {
		const struct ap_device *d = &r->devices[i];
		snprintf(buf, sizeof(buf), "%d %d %d %d %llu %d %d %d %d", d->ordinal, d->major, d->minor,
		         d->multiprocessors, (unsigned long long)d->total_memory, d->integrated, d->compute_mode,
		         d->error, d->mig);
		put(fd, "device", buf);
		put(fd, "name", d->name);
		put(fd, "uuid", d->uuid);
		put(fd, "pci", d->pci_bus_id);
	}
	put(fd, "end", "");
}

bool
ap_probe_parse_reply(char *buf, struct ap_probe_result *r)
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

int
ap_probe_child_main(int argc, char **argv)
{
	struct ap_probe_result *r;
	const char *libcuda = NULL;

	if (argc < 2 || strncmp(argv[1], CHILD_PREFIX, strlen(CHILD_PREFIX)) != 0)
		return -1;
	if (strcmp(argv[1], CHILD_FLAG) != 0 || fcntl(RESULT_FD, F_GETFD) < 0)
		return AP_EXIT_USAGE; /* another protocol version, or not started by ap_probe */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--libcuda") && i + 1 < argc)
			libcuda = argv[++i];
		else
			return AP_EXIT_USAGE;
	}
	/* Die with the parent, even a SIGKILLed one. If it is gone already, the pipe's read end
	 * is closed and the write end polls POLLERR. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd pf = {.fd = RESULT_FD, .events = 0};
	if (poll(&pf, 1, 0) > 0 && (pf.revents & POLLERR))
		return AP_EXIT_FAIL;
	if (!(r = calloc(1, sizeof(*r))))
		return AP_EXIT_FAIL;
	ap_cuda_query(libcuda, r, RESULT_FD);
	ap_probe_serialize(RESULT_FD, r);
	free(r);
	return AP_EXIT_OK;
}

/* ---- finding the helper ------------------------------------------------------------------ */

static bool
executable(const char *path)
{
	return access(path, X_OK) == 0;
}

static bool
beside(const char *file, const char *rel, char *buf, size_t size)
{
	const char *slash = strrchr(file, '/');
	int n;

	if (!slash)
		return false;
	n = snprintf(buf, size, "%.*s/%s", (int)(slash - file), file, rel);
	return n > 0 && (size_t)n < size && executable(buf);
}

/* The archprobe binary to run as the child: next to this executable (archprobe itself, or
 * fatbuild in the same bin/), next to libarchprobe (../bin), else on PATH. */
static bool
find_helper(char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	Dl_info info;
	const char *path;
	void *self;
	int (*fn)(const struct ap_probe_opts *, struct ap_probe_result *, struct ap_error *) = ap_probe;

	memcpy(&self, &fn, sizeof(self));
	if (n > 0) {
		exe[n] = 0;
		if (beside(exe, "archprobe", buf, size))
			return true;
	}
	if (dladdr(self, &info) && info.dli_fname && strchr(info.dli_fname, '/') &&
	    (beside(info.dli_fname, "../bin/archprobe", buf, size) || beside(info.dli_fname, "archprobe", buf, size)))
		return true;
	path = getenv("PATH");
	while (path && *path) {
		size_t len = strcspn(path, ":");
		int m = snprintf(buf, size, "%.*s/archprobe", (int)len, path);
		if (len > 0 && m > 0 && (size_t)m < size && executable(buf))
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

static int
thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ---- running the child ------------------------------------------------------------------- */

static int
spawn_helper(const char *helper, const char *libcuda, int wfd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	char *argv[5];
	int rc, argc = 0;

	argv[argc++] = (char *)helper;
	argv[argc++] = (char *)CHILD_FLAG;
	if (libcuda) {
		argv[argc++] = (char *)"--libcuda";
		argv[argc++] = (char *)libcuda;
	}
	argv[argc] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, wfd, RESULT_FD);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGCHLD);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(pid, helper, &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

static const char *
signal_name(int sig, char *buf, size_t size)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGABRT: return "SIGABRT";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	case SIGTRAP: return "SIGTRAP";
	default: snprintf(buf, size, "signal %d", sig); return buf;
	}
}

/* Reads the child's reply until EOF or the deadline, reaps it (killing it at the deadline) and
 * turns the outcome into r. */
static void
collect(pid_t pid, int rfd, double timeout, const char *what, struct ap_probe_result *r)
{
	double deadline = now() + timeout;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), sig[32];
	bool eof = false, killed = false, complete, reaped = false;
	int wstatus = 0;

	while (buf && !eof) {
		double left = deadline - now();
		struct pollfd p = {.fd = rfd, .events = POLLIN};
		int pr;
		if (left <= 0)
			break;
		pr = poll(&p, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		if (len + 1024 >= cap && cap < MAX_REPLY) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(rfd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eof = true;
		else
			len += (size_t)n;
	}
	/* The child closes the pipe when it exits; give it until the deadline to be reaped. */
	for (;;) {
		pid_t w = waitpid(pid, &wstatus, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR)) {
			reaped = w == pid;
			break;
		}
		if (now() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
				;
			killed = reaped = true;
			break;
		}
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	if (buf)
		buf[len] = 0;
	complete = buf && ap_probe_parse_reply(buf, r);
	free(buf);
	if (complete) {
		if (killed)
			ap_probe_trace(r, "%s: killed after its reply (it did not exit within the timeout)", what);
		return;
	}
	r->ndevices = 0;
	r->cuda_error = 0;
	r->cuda_error_name[0] = 0;
	if (killed) {
		r->status = AP_PROBE_TIMEOUT;
		say(r, "%g", timeout);
	} else if (reaped && WIFSIGNALED(wstatus)) {
		r->status = AP_PROBE_CRASHED;
		say(r, "died by %s", signal_name(WTERMSIG(wstatus), sig, sizeof(sig)));
	} else if (reaped && WIFEXITED(wstatus)) {
		r->status = AP_PROBE_CRASHED;
		say(r, "%s exited with status %d without a result%s", what, WEXITSTATUS(wstatus),
		    WEXITSTATUS(wstatus) == AP_EXIT_USAGE ? " (not an archprobe of this version?)"
		    : WEXITSTATUS(wstatus) == 127 ? " (it could not be executed)" : "");
	} else {
		r->status = AP_PROBE_CRASHED;
		say(r, "%s ended without a result", what);
	}
}

static int
probe_child(const struct ap_probe_opts *opts, const char *libcuda, double timeout, struct ap_probe_result *r,
            struct ap_error *err)
{
	char helper[PATH_MAX], what[PATH_MAX + 32];
	int fds[2], rc;
	pid_t pid;

	if (opts && opts->helper && *opts->helper) {
		snprintf(helper, sizeof(helper), "%s", opts->helper);
		if (access(helper, X_OK) != 0) {
			ap_seterr(err, AP_EIO, "cannot run the probe helper %s: %s", helper, strerror(errno));
			return AP_EIO;
		}
	} else if (opts && opts->helper) {
		helper[0] = 0; /* "": fork */
	} else if (!find_helper(helper, sizeof(helper))) {
		helper[0] = 0;
		ap_probe_trace(r, "no archprobe helper next to this program, next to libarchprobe or on PATH");
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		ap_seterr(err, AP_EIO, "cannot create a pipe for the probe child: %s", strerror(errno));
		return AP_EIO;
	}
	if (fds[1] == RESULT_FD) { /* dup2 onto itself would keep O_CLOEXEC */
		int w = fcntl(fds[1], F_DUPFD_CLOEXEC, RESULT_FD + 1);
		close(fds[1]);
		fds[1] = w;
		if (w < 0) {
			close(fds[0]);
			ap_seterr(err, AP_EIO, "cannot set up the probe child's pipe: %s", strerror(errno));
			return AP_EIO;
		}
	}
	if (*helper) {
		ap_probe_trace(r, "probe child: %s %s%s%s", helper, CHILD_FLAG, libcuda ? " --libcuda " : "",
		               libcuda ? libcuda : "");
		snprintf(what, sizeof(what), "probe helper %s", helper);
		if ((rc = spawn_helper(helper, libcuda, fds[1], &pid)) != 0) {
			close(fds[0]);
			close(fds[1]);
			ap_seterr(err, AP_EIO, "cannot run the probe helper %s: %s", helper, strerror(rc));
			return AP_EIO;
		}
	} else {
		int threads = thread_count();
		if (threads != 1) {
			close(fds[0]);
			close(fds[1]);
			ap_seterr(err, AP_EIO,
			       "no archprobe helper found (next to this program, next to libarchprobe, on PATH) and "
			       "this process has %d threads, so it cannot fork safely: install archprobe on PATH, "
			       "set ap_probe_opts.helper, or use no_subprocess", threads);
			return AP_EIO;
		}
		ap_probe_trace(r, "probe child: fork() of this single-threaded process");
		snprintf(what, sizeof(what), "forked probe child");
		pid_t parent = getpid();
		pid = fork();
		if (pid < 0) {
			close(fds[0]);
			close(fds[1]);
			ap_seterr(err, AP_EIO, "fork failed: %s", strerror(errno));
			return AP_EIO;
		}
		if (pid == 0) {
			/* dies with the parent; a stopping signal ends it as by default */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			struct ap_probe_result *c = calloc(1, sizeof(*c));
			close(fds[0]);
			if (c) {
				ap_cuda_query(libcuda, c, fds[1]);
				ap_probe_serialize(fds[1], c);
			}
			_exit(c ? 0 : 1);
		}
	}
	close(fds[1]);
	collect(pid, fds[0], timeout, what, r);
	close(fds[0]);
	return 0;
}

/* ---- advice ------------------------------------------------------------------------------- */

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

static void
say(struct ap_probe_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

void
ap_probe_explain(struct ap_probe_result *r, const char *libcuda, const char *pci_devices_dir)
{
	char detail[sizeof(r->reason)], dir[512], err[96];
	const char *name = ap_cuda_error_name(r->cuda_error);
	const char *lib = *r->library ? r->library : "libcuda.so.1";

	snprintf(detail, sizeof(detail), "%s", r->reason);
	if (r->cuda_error)
		snprintf(err, sizeof(err), "%s = %d", name ? name : "unknown CUresult", r->cuda_error);
	else
		err[0] = 0;
	snprintf(r->cuda_error_name, sizeof(r->cuda_error_name), "%s", r->cuda_error && name ? name : "");
	switch (r->status) {
	case AP_PROBE_OK:
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
		break;
	case AP_PROBE_NO_DRIVER:
		/* dlerror() starts with the file name: do not say it twice */
		if (libcuda && !strncmp(detail, libcuda, strlen(libcuda)) && !strncmp(detail + strlen(libcuda), ": ", 2))
			say(r, "cannot load %s", detail);
		else if (libcuda)
			say(r, "cannot load %s: %s", libcuda, detail);
		else if (ap_pci_has_nvidia(pci_devices_dir))
			say(r,
			         "an NVIDIA GPU is on the PCI bus but libcuda.so.1 cannot be loaded (%s): install the "
			         "NVIDIA driver; in a container, set NVIDIA_DRIVER_CAPABILITIES to include compute", detail);
		else
			say(r, "no CUDA driver: libcuda.so.1 cannot be loaded (%s)", detail);
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
		if (strstr(detail, ", which no GPU has")) {
			say(r, "%s (driver %s): the driver or its answer is broken; check nvidia-smi", detail, lib);
			break;
		}
		if (!strncmp(detail, "missing symbol ", 15)) {
			say(r, "%s is not a CUDA driver (no %s): point ARCHPROBE_LIBCUDA (archprobe --libcuda) at "
			    "libcuda.so.1", lib, detail + 15);
			break;
		}
		{
			const char *hint;
			switch (r->cuda_error) {
			case 3: hint = "the driver failed to initialize: check nvidia-smi and dmesg"; break;
			case 46: hint = "the devices are busy or unavailable (exclusive-process compute mode?)"; break;
			case 802: hint = "the system is not ready: start nvidia-fabricmanager / nvidia-persistenced"; break;
			case 803: hint = "libcuda does not match the loaded kernel module: reboot after a driver update, "
			                 "or remove a cuda-compat libcuda from the library path"; break;
			case 804: hint = "a forward-compatibility libcuda (cuda-compat) is loaded on a GPU that does not "
			                 "support it: remove cuda-compat from the library path"; break;
			case 999: hint = "unknown driver error: check nvidia-smi and dmesg"; break;
			default: hint = "check nvidia-smi and dmesg"; break;
			}
			say(r, "%s failed with %s in %s: %s",
			         !strcmp(detail, "device") ? "every device query" : detail, *err ? err : "an error", lib, hint);
		}
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

/* ---- the opt-in cache ------------------------------------------------------------------------ */

static bool
cache_path(const struct ap_probe_opts *opts, char *buf, size_t size)
{
	const char *c = opts && opts->cache ? opts->cache : getenv("ARCHPROBE_CACHE"), *base;
	char dir[PATH_MAX];

	if (!c || !*c)
		return false;
	if (strcmp(c, "1") != 0)
		return path_printf(buf, size, "%s", c);
	if ((base = getenv("XDG_CACHE_HOME")) && *base) {
		if (!path_printf(dir, sizeof(dir), "%s", base))
			return false;
	} else if (!(base = getenv("HOME")) || !*base || !path_printf(dir, sizeof(dir), "%s/.cache", base)) {
		return false;
	}
	mkdir(dir, 0700);
	if (!path_printf(buf, size, "%s/archprobe", dir))
		return false;
	mkdir(buf, 0700);
	return path_printf(buf, size, "%s/archprobe/probe", dir);
}

/* What the answer depends on, known before probing. */
static void
cache_key(const char *libcuda, char *buf, size_t size)
{
	const char *ld = getenv("LD_LIBRARY_PATH"), *cvd = getenv("CUDA_VISIBLE_DEVICES");
	const char *cdo = getenv("CUDA_DEVICE_ORDER");
	char boot[64] = "-";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			snprintf(boot, sizeof(boot), "-");
		boot[strcspn(boot, "\n")] = 0;
		fclose(f);
	}
	snprintf(buf, size, "archprobe-cache 1\nwant %s\nld %s\ncvd %s%s\ncdo %s\nboot %s\n", libcuda ? libcuda : "-",
	         ld ? ld : "-", cvd ? "=" : "-", cvd ? cvd : "", cdo ? cdo : "-", boot);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n')
			*p = ' ';
}

static bool
library_stamp(const char *library, char *buf, size_t size)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(library, real) || stat(real, &st) != 0)
		return false;
	snprintf(buf, size, "lib %lld %ld %lld %s\n", (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
	         (long long)st.st_size, real);
	return true;
}

static bool
cache_lookup(const char *path, const char *key, struct ap_probe_result *r)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	char *buf, stamp[PATH_MAX + 96], *line, *rest;
	size_t n, klen = strlen(key);
	bool hit = false;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	buf = malloc(MAX_REPLY + 1);
	n = buf ? fread(buf, 1, MAX_REPLY, f) : 0;
	fclose(f);
	if (!buf)
		return false;
	buf[n] = 0;
	if (n > klen && !strncmp(buf, key, klen) && !strncmp(buf + klen, "lib ", 4)) {
		line = buf + klen;
		rest = strchr(line, '\n');
		if (rest) {
			*rest++ = 0;
			long long sec = 0, size = 0;
			long nsec = 0;
			int off = 0;
			/* the library the cached answer came from must be unchanged */
			if (sscanf(line, "lib %lld %ld %lld %n", &sec, &nsec, &size, &off) == 3 && off > 0 &&
			    library_stamp(line + off, stamp, sizeof(stamp)) && !strncmp(stamp, line, strlen(line)) &&
			    stamp[strlen(line)] == '\n') {
				struct ap_probe_result *t = calloc(1, sizeof(*t));
				if (t && ap_probe_parse_reply(rest, t) && t->status == AP_PROBE_OK) {
					snprintf(t->cuda_visible_devices, sizeof(t->cuda_visible_devices), "%s",
					         r->cuda_visible_devices);
					t->cuda_visible_devices_set = r->cuda_visible_devices_set;
					snprintf(t->cuda_device_order, sizeof(t->cuda_device_order), "%s", r->cuda_device_order);
					*r = *t;
					hit = true;
				}
				free(t);
			}
		}
	}
	free(buf);
	return hit;
}

static void
cache_store(const char *path, const char *key, const struct ap_probe_result *r)
{
	char stamp[PATH_MAX + 96], tmp[PATH_MAX + 32];
	int fd;

	if (r->status != AP_PROBE_OK || !library_stamp(r->library, stamp, sizeof(stamp)))
		return;
	if ((fd = ap_tmpfile_open(path, tmp, sizeof(tmp))) < 0)
		return;
	put(fd, "archprobe-cache", "1");
	if (write(fd, key + strlen("archprobe-cache 1\n"), strlen(key) - strlen("archprobe-cache 1\n")) < 0 ||
	    write(fd, stamp, strlen(stamp)) < 0) {
		close(fd);
		unlink(tmp);
		return;
	}
	{
		struct ap_probe_result *t = malloc(sizeof(*t));
		if (t) {
			*t = *r;
			t->trace[0] = 0; /* the trace of a past run would only confuse */
			ap_probe_serialize(fd, t);
			free(t);
		}
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
}

/* ---- the entry point ------------------------------------------------------------------------ */

static int
probe_timeout(const struct ap_probe_opts *opts, double *out, struct ap_error *err)
{
	const char *v = getenv("ARCHPROBE_TIMEOUT");
	char *end;

	if (opts && opts->timeout > 0) {
		*out = opts->timeout;
		return 0;
	}
	*out = 10;
	if (!v || !*v)
		return 0;
	errno = 0;
	*out = strtod(v, &end);
	if (errno || *end || !(*out > 0) || *out > 1e6) {
		ap_seterr(err, AP_EINVAL, "ARCHPROBE_TIMEOUT='%s' is not a number of seconds (e.g. 10 or 0.5)", v);
		return AP_EINVAL;
	}
	return 0;
}

void
ap_probe_check_devices(struct ap_probe_result *r)
{
	if (r->ndevices < 0 || r->ndevices > AP_MAX_DEVICES)
		r->ndevices = 0;
	int usable = 0, bad = -1;
	for (int i = 0; i < r->ndevices; i++) {
		struct ap_device *d = &r->devices[i];
		if (!d->error && !ap_cc_possible(d->major, d->minor)) {
			d->error = AP_DEVICE_BAD_CC;
			if (bad < 0)
				bad = i;
		}
		usable += !d->error;
	}
	/* like every device query failing: a driver error, not "no device" */
	if (r->status == AP_PROBE_OK && !usable && bad >= 0) {
		r->status = AP_PROBE_DRIVER_ERROR;
		r->cuda_error = 0;
		snprintf(r->reason, sizeof(r->reason), "device %d reports compute capability %d.%d, which no GPU has",
		         r->devices[bad].ordinal, r->devices[bad].major, r->devices[bad].minor);
	}
}

int
ap_probe(const struct ap_probe_opts *opts, struct ap_probe_result *out, struct ap_error *err)
{
	const char *libcuda = opts ? opts->libcuda : NULL, *v;
	double timeout, t0 = now();
	char cache[PATH_MAX], key[PATH_MAX + 1024];
	bool cached;
	int rc;

	if (!out) {
		ap_seterr(err, AP_EINVAL, "ap_probe: no result buffer");
		return AP_EINVAL;
	}
	memset(out, 0, sizeof(*out));
	if ((rc = probe_timeout(opts, &timeout, err)) != 0)
		return rc;
	if (!libcuda && (v = getenv("ARCHPROBE_LIBCUDA")) && *v)
		libcuda = v;
	if ((v = getenv("CUDA_VISIBLE_DEVICES"))) {
		out->cuda_visible_devices_set = true;
		snprintf(out->cuda_visible_devices, sizeof(out->cuda_visible_devices), "%s", v);
	}
	if ((v = getenv("CUDA_DEVICE_ORDER")))
		snprintf(out->cuda_device_order, sizeof(out->cuda_device_order), "%s", v);
	if ((cached = cache_path(opts, cache, sizeof(cache)))) {
		char why[PATH_MAX + 160];
		if (!ap_cachefile_trusted(cache, why, sizeof(why))) {
			ap_probe_trace(out, "cache not used (neither read nor written): %s", why);
			cached = false;
		}
	}
	if (cached) {
		cache_key(libcuda, key, sizeof(key));
		if (cache_lookup(cache, key, out)) {
			ap_probe_trace(out, "cache hit: %s", cache);
			ap_probe_check_devices(out);
			ap_probe_explain(out, libcuda, SYSFS_PCI);
			out->seconds = now() - t0;
			return 0;
		}
		ap_probe_trace(out, "cache miss: %s", cache);
	}
	if (opts && opts->no_subprocess) {
		ap_probe_trace(out, "probing in this process");
		ap_cuda_query(libcuda, out, -1);
	} else if ((rc = probe_child(opts, libcuda, timeout, out, err)) != 0) {
		return rc;
	}
	ap_probe_check_devices(out);
	ap_probe_explain(out, libcuda, SYSFS_PCI);
	if (cached) {
		cache_store(cache, key, out);
		if (out->status == AP_PROBE_OK)
			ap_probe_trace(out, "cache stored: %s", cache);
	}
	out->seconds = now() - t0;
	return 0;
}
