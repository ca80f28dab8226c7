/* check.h: what the files of the environment check share (fatbuild/check/; fb_check in
 * fatbuild.h; docs/check-environment.md). Private; symbols are hidden. */
#ifndef FB_CHECK_PRIV_H
#define FB_CHECK_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fatbuild.h"

/* ---- what a file's first bytes say it is (sniff.c) ---- */

enum fb_sniff {
	FB_SNIFF_PLAIN = 0, /* nothing that can hold device code */
	FB_SNIFF_ELF_OTHER, /* an ELF file that is not 64-bit little-endian: no device code either */
	FB_SNIFF_ELF,       /* 64-bit little-endian ELF: host library, executable, object, or a cubin */
	FB_SNIFF_FATBIN,
	FB_SNIFF_AR,
	FB_SNIFF_PTX,
	FB_SNIFF_ARCHIVE,   /* zip, tar, or a compressed stream that may hold a tar */
};
#define FB_SNIFF_BYTES 4096
/* What head[0..n) (a file's first bytes, at most FB_SNIFF_BYTES) says the file is. */
enum fb_sniff fb_sniff(const unsigned char *head, size_t n);

/* ---- distribution metadata (distinfo.c) ---- */

/* Name and Version of a METADATA or PKG-INFO text (RFC 822 headers up to the first blank line),
 * malloc'd, control bytes as '?'; *version "" when absent. 0, FB_EFORMAT (no Name), FB_ENOMEM. */
int fb_dist_metadata(const char *text, size_t n, char **name, char **version);
/* Calls fn(path, len, ctx) with the first field of each line of a RECORD text (CSV: a quoted
 * field may hold commas and "" for a quote), until fn returns non-zero (then that value). */
int fb_dist_record(const char *text, size_t n, int (*fn)(const char *path, size_t len, void *ctx), void *ctx);
/* base "/" path[0..len), lexically normalised (".", "..", empty components): 0, or -1 when it
 * leaves the root above base, is absolute, or does not fit in out. base may be "". */
int fb_path_join(const char *base, const char *path, size_t len, char *out, size_t size);
/* Name and version from an archive's file name: NAME-VERSION(-...).whl, NAME-VERSION.tar.gz,
 * .zip...; 0, or -1 when it has no such shape (then *name is the base name, *version ""). */
int fb_dist_from_filename(const char *file, char **name, char **version);

/* ---- libarchive, dlopen'ed (larchive.c) ---- */

#define FB_LA_OK 0
#define FB_LA_EOF 1
#define FB_LA_WARN (-20)
#define FB_LA_IFMT 0170000u
#define FB_LA_IFREG 0100000u
#define FB_LA_IFLNK 0120000u
#define FB_LA_IFDIR 0040000u

/* The entry points used, as libarchive 3 declares them (struct archive and struct archive_entry
 * are opaque; la_int64_t is int64_t, la_ssize_t ssize_t, __LA_MODE_T mode_t). */
struct fb_la {
	void *dl;
	void *(*read_new)(void);
	int (*support_filter_all)(void *a);
	int (*support_format_zip)(void *a);
	int (*support_format_tar)(void *a);
	int (*open_fd)(void *a, int fd, size_t block);
	int (*next_header)(void *a, void **entry);
	ssize_t (*read_data)(void *a, void *buf, size_t n);
	int (*data_skip)(void *a);
	int (*read_free)(void *a);
	const char *(*error_string)(void *a);
	const char *(*entry_pathname)(void *e);
	mode_t (*entry_filetype)(void *e);
	int64_t (*entry_size)(void *e);
	const char *(*entry_hardlink)(void *e);
	int64_t (*filter_bytes)(void *a, int n); /* n -1: the bytes read from the file so far */
};
/* dlopen's libarchive (path, else libarchive.so.13) and binds every entry point; 0, or
 * FB_ENOTOOL with what is missing in err. */
int fb_la_load(struct fb_la *la, const char *path, struct fb_error *err);
void fb_la_unload(struct fb_la *la);

/* ---- the run (check.c) and what a worker fills (analyse.c, members.c) ---- */

/* The run's shared state: options, the inputs' root directories, libarchive (loaded at the first
 * archive, under lock). */
struct fb_chk {
	const struct fb_check_opts *o;
	pthread_mutex_t lock;
	struct fb_la la;
	int la_state;            /* 0 not tried, 1 loaded, -1 failed (la_err) */
	struct fb_error la_err;
};

/* What reading one walked file gives: its files with device code (several for an archive) and
 * counts; an archive's distribution when its metadata names one. */
struct fb_chk_result {
	struct fb_check_file *files;
	size_t n, cap;
	size_t read, without_code, elf_without_code, links, special, nested;
	bool archive;
	char *dist_name, *dist_version; /* from the archive's METADATA / PKG-INFO, or NULL */
	bool dist_from_metadata;
};

/* Appends a zeroed file with path (copied) to r; NULL when out of memory. */
struct fb_check_file *fb_chk_add_file(struct fb_chk_result *r, const char *path);
void fb_chk_result_free(struct fb_chk_result *r);
/* Frees each file's path and verdicts, then files. */
void fb_chk_files_free(struct fb_check_file *files, size_t n);

/* Analyses the file p[0..size) (path: for the entry and messages) into r: a new entry when it
 * holds device code or cannot be parsed, else a count. text: it only looked like PTX, so a parse
 * failure means no device code. mapped: p is a read-only mapping of a file, whose pages the scan
 * of other sections drops behind it (they are read again from the file if needed). */
void fb_chk_analyse(const struct fb_chk *c, const unsigned char *p, size_t size, const char *path, bool text,
                    bool mapped, struct fb_chk_result *r);
/* Reads the archive open on fd (name for messages) member by member into r. walked: found in a
 * directory, so a file libarchive cannot read as an archive is a plain file, not an error. An
 * error of the archive itself is an entry with path "". */
void fb_chk_archive(struct fb_chk *c, int fd, const char *name, bool walked, struct fb_chk_result *r);

/* ---- walking a directory (walk.c) ---- */

/* One regular file found, below input's root (rel; "" for an input that is a file). */
struct fb_chk_item {
	size_t input;
	char *rel;
	uint64_t size;
	dev_t dev;
	ino_t ino;
	bool linked;             /* st_nlink > 1: the same file may come again by another name */
};

/* A distribution found as a NAME.dist-info directory. */
struct fb_chk_dist {
	char *name, *version;
	char *where;             /* the dist-info directory, below the input's root */
	size_t input;
};

/* A file a RECORD names, lexically normalised below the input's root, and its distribution. */
struct fb_chk_owner {
	size_t input, dist;
	char *path;
};

struct fb_chk_walk {
	struct fb_chk_item *items;
	size_t n, cap;
	struct fb_chk_dist *dists;
	size_t nd, dcap;
	struct fb_chk_owner *rec;
	size_t nrec, rcap;
	struct fb_chk_result errors; /* what could not be read, as entries (input set) */
	size_t links, special;
	int oom;
};

/* Adds the regular files below the directory open on rootfd (closed here) to w, with input as
 * their input. 0, or FB_ENOMEM / FB_EIO; what could not be read goes to w->errors. */
int fb_chk_walk(struct fb_chk_walk *w, int rootfd, size_t input);
void fb_chk_walk_free(struct fb_chk_walk *w);
/* Opens rel below the directory rootfd one component at a time (O_NOFOLLOW each, O_NONBLOCK for
 * the file): a link anywhere on the way fails (ELOOP or ENOTDIR). The descriptor, or -1. */
int fb_chk_open_below(int rootfd, const char *rel);

/* ---- the report (report.c) ---- */

/* Puts the results res[k] of the items w->items[k] (those with skip[k] not read) into out: the
 * groups, the files (moved out of res and w->errors), the counts; inputs become out's. 0 or
 * FB_ENOMEM. */
int fb_chk_report(struct fb_chk_walk *w, struct fb_chk_result *res, const bool *skip, char **inputs, size_t ninputs,
                  struct fb_check_report *out);

/* ---- verdicts (verdict.c) and their reasons (why.c) ---- */

/* Fills f->arch[0..ndev) and f->images from the file's modules (p, parsed from the scan sc) and
 * its §3 code dc (NULL: none). link_file: an ar archive or relocatable object; lazy: a host ELF,
 * whose modules load when a kernel of theirs is launched. 0 or FB_ENOMEM. */
struct fb_devcode;
int fb_chk_verdicts(const struct fb_parsed *p, const struct fb_scan *sc, bool link_file, bool lazy,
                    const struct fb_devcode *dc, const struct ap_target *dev, size_t ndev, struct fb_check_file *f);
/* Why none of images[0..n) fits dev, one line into buf: "an arch-specific image runs on 9.0
 * exactly; no PTX to JIT-compile" (the rules they break, each once). */
void fb_chk_why(const struct fb_image *images, size_t n, const struct ap_target *dev, char *buf, size_t size);
/* The names of images[0..n), distinct and sorted (SASS before PTX, by arch), ", "-joined. */
void fb_chk_image_names(const struct fb_image *images, size_t n, char *buf, size_t size);

#endif
