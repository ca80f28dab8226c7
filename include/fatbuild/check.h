/* fatbuild/check.h: will these libraries run on these GPUs, before run time (docs/check-environment.md).
 * Part of libfatbuild's public API (include/fatbuild.h includes every part); stable as
 * HACKING.md "Public API" says. */
#ifndef FATBUILD_CHECK_H
#define FATBUILD_CHECK_H

#include "fatbuild/fatbin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SECTION check: will these libraries run on these GPUs, before run time (fatbuild/check/;
 * docs/check-environment.md). */

/* How one file's device code fares on one device (docs/check-environment.md §2). */
enum fb_check_verdict {
	FB_CHECK_SASS = 1, /* runs: every module with an image for the device has SASS for it */
	FB_CHECK_JIT,      /* runs once the driver JIT-compiles PTX for some module */
	FB_CHECK_NONE,     /* cannot run: no module has an image for the device */
	FB_CHECK_OTHER,    /* device code found, loaded at run time by other means (§3) */
	FB_CHECK_LINK,     /* a device-link input (ar archive, relocatable object): runs once linked */
	FB_CHECK_NOKERNEL, /* its modules define no kernel: nothing to launch, nothing to fail */
};

/* One file on one device. */
struct fb_check_arch {
	int verdict;             /* enum fb_check_verdict */
	size_t sass, jit, none, link; /* its modules (containers) by how they load on the device */
	size_t empty;            /* modules of a library without an image that define no kernel: a
	                          * library loads a module when it launches one of its kernels */
	long entry;              /* a file of one module that runs: the index of the chosen image, else -1 */
	struct ap_target chosen; /* that image's target */
	long first_none;         /* the first module without an image, else -1 */
	char why_images[256];    /* FB_CHECK_NONE: the images of the modules; else those of module
	                          * first_none; "" when every module has an image */
	char why[384];           /* why those images do not fit (docs/check-environment.md §2) */
	int other;               /* the §3 code: enum fb_how of the best image found there; for a
	                          * library of relocatable code and LTO-IR only, among those */
};

/* One file that holds device code, or could not be read. */
struct fb_check_file {
	char *path;              /* relative to its input (an archive's member path), or the input itself */
	size_t input;            /* index into fb_check_report.inputs */
	size_t group;            /* index into fb_check_report.groups */
	uint64_t size;
	char type[16];           /* fb_scan.type ("elf", "archive", "fatbin", "cubin", "ptx") */
	size_t modules, entries; /* the containers the CUDA runtime loads (.nv_fatbin, __nv_relfatbin,
	                          * the file itself) and their entries */
	char images[256];        /* the distinct SASS and PTX images of the modules, sorted */
	size_t other_containers, other_cubins, other_ptx, other_lto; /* §3 */
	char other_sections[160];
	char other_images[256];
	int nvrtc_min, nvrtc_max; /* NVRTC built-in headers (§3): the lowest and highest SM, else 0 */
	size_t nvrtc;            /* how many SMs */
	char error[1024];        /* not read, or malformed: the message (nothing else is set) */
	struct fb_check_arch *arch; /* one per device, in the order of fb_check_opts.devices */
};

/* A distribution (a wheel's or an installed package's metadata) or, without one, a folder or
 * archive: the files of the report are grouped by these. */
struct fb_check_group {
	char *name;              /* METADATA / PKG-INFO Name, else the folder or archive */
	char *version;           /* Version, or "" */
	char *where;             /* the dist-info directory or archive, relative to its input */
	bool dist;               /* named by package metadata, or by an archive's file name */
	bool archive;            /* a zip or tar archive */
	size_t input;
	size_t files, with_code; /* regular files read, and those with device code */
};

struct fb_check_report {
	char **inputs;           /* the paths read: fb_check_opts.paths, then the interpreter's */
	size_t ninputs;
	struct fb_check_group *groups; /* distributions by name, then folders and archives */
	size_t ngroups;
	struct fb_check_file *files;   /* with device code or an error, by group, then path */
	size_t nfiles;
	size_t read, without_code, elf_without_code; /* regular files (and archive members) read */
	size_t links, special, nested, hardlinks; /* symbolic links not followed; FIFOs, sockets and
	                          * devices never opened; archives inside archives not opened; further
	                          * names of a file already read */
	uint64_t bytes;          /* of the files read */
};

struct fb_check_progress {
	size_t done, total;      /* files (an archive counts once) */
	uint64_t bytes_done, bytes_total;
	const char *current;     /* the file just finished, relative to its input */
};

struct fb_check_opts {
	const struct ap_target *devices; /* variant AP_ARCH: a real GPU (see fb_select) */
	size_t ndevices;
	const char *const *paths; /* files, directories, zip or tar archives (wheels, sdists) */
	size_t npaths;
	const char *python;      /* also the purelib and platlib of this interpreter; NULL: none */
	int jobs;                /* files read at once; <= 0: the CPUs this process may use (cgroup quota too) */
	const char *tmpdir;      /* where archive members are inflated to be read (NULL: /tmp) */
	uint64_t max_member;     /* cap on an archive member's size (0: 4 GiB) */
	const char *libarchive;  /* libarchive to dlopen (NULL: libarchive.so.13) */
	/* Called after each file, from the worker threads, one at a time. */
	void (*progress)(const struct fb_check_progress *p, void *ctx);
	void *progress_ctx;
	/* The configuration the environment gave (PATH, for python): archprobe.h's struct
	 * fb_config, read once by the tools; NULL: fb_check reads it when it needs it. */
	const struct fb_config *config;
};

/* Reads every path (a directory is walked with openat, never following a symbolic link nor
 * opening anything but regular files; zip and tar archives are read in place through
 * libarchive, dlopen'ed), finds the device code of each file by its content, and says for each
 * device how the CUDA loader would take it (fb_select). Files are read by threads, each mapped
 * and never held whole in memory. A file that cannot be read (an archive without libarchive
 * too) is a report entry with its error; a path that does not exist or is not a regular file
 * or directory fails the call (FB_EIO), as does an interpreter that does not answer
 * (FB_ENOTOOL). Free with fb_check_report_free (also after a failure). */
FB_API int fb_check(const struct fb_check_opts *opts, struct fb_check_report *out, struct fb_error *err);
FB_API void fb_check_report_free(struct fb_check_report *r);

/* END SECTION check */

#ifdef __cplusplus
}
#endif
#endif
