/* fatbuild/prune.h: pruning containers to the arches kept, and their size report (docs/prune.md).
 * Part of libfatbuild's public API (include/fatbuild.h includes every part); stable as
 * HACKING.md "Public API" says. */
#ifndef FATBUILD_PRUNE_H
#define FATBUILD_PRUNE_H

#include "fatbuild/fatbin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SECTION prune: fatbin/prune.c, fatbin/size.c; docs/prune.md. */

/* What to keep. targets is a resolved arch list (ap_archlist_get): for each SASS target
 * sm_X the image a real X GPU would load (fb_select with variant AP_ARCH: its SASS, or the
 * PTX it would JIT), for each PTX target compute_X the PTX a compute_X JIT starts from (the
 * highest PTX arch <= X). Obfuscated entries and unknown kinds are always kept. */
struct fb_prune_opts {
	const struct ap_target *targets;
	size_t ntargets;
	bool allow_missing;     /* prune even when a container keeps no image for a listed GPU */
	bool prune_lto;         /* also drop LTO-IR whose arch is not listed (kept otherwise) */
	bool prune_relocatable; /* linked files: also prune __nv_relfatbin and ET_REL-cubin containers */
	int mode;               /* output file mode; 0: the input's */
};

struct fb_prune_report {
	char type[16];          /* "fatbin", "relocatable", "archive", "linked" */
	bool in_place;          /* linked: containers rewritten inside their sections, file size kept */
	size_t ncontainers, nentries;
	size_t kept_entries, removed_entries;
	uint64_t kept_bytes, removed_bytes; /* entry headers + stored payloads */
	size_t kept_other;      /* obfuscated or unknown entries, kept as they are */
	size_t kept_lto;        /* LTO-IR entries kept */
	size_t kept_relocatable;/* linked files: containers left whole (relocatable code) */
	size_t missing;         /* containers with no image for some listed GPU */
	size_t missing_ptx;     /* (container, compute_X) pairs with no PTX to keep */
	uint64_t in_size, out_size;
	char *notes;            /* findings, one per line (first 20, then a count), or NULL */
};

/* Prunes a .fatbin, a relocatable object (.o), an ar archive (.a), a shared library or an
 * executable held in data. *out (malloc'd) is the new file. A container that would keep no
 * image for a listed GPU is FB_ENOIMAGE unless opts->allow_missing (rep is filled either
 * way). rep may be NULL; free it with fb_prune_report_free. */
FB_API int fb_prune_buffer(const void *data, size_t size, const char *name, const struct fb_prune_opts *opts,
                           unsigned char **out, size_t *outsize, struct fb_prune_report *rep, struct fb_error *err);
/* The same from file to file, written atomically (out may be in: the file is replaced). */
FB_API int fb_prune(const char *in, const char *out, const struct fb_prune_opts *opts, struct fb_prune_report *rep,
                    struct fb_error *err);
FB_API void fb_prune_report_free(struct fb_prune_report *r);

/* Bytes per kind and arch (entry header + stored payload, and uncompressed). */
struct fb_size_row {
	unsigned disk_kind;     /* FB_DISK_KIND_* */
	struct ap_target target;
	bool obfuscated;
	uint64_t entries, stored, uncompressed;
	uint64_t kept_entries, kept_stored, kept_uncompressed; /* with targets: what a prune keeps */
};

struct fb_size_container {
	char where[256];        /* as fb_blob.where */
	size_t offset, size;    /* in the file */
	size_t entries, kept_entries;
	uint64_t stored, kept_stored;
};

struct fb_size_opts {
	const struct ap_target *targets; /* NULL: no prune estimate */
	size_t ntargets;
	bool prune_lto, prune_relocatable; /* as fb_prune_opts */
	int zstd_level;         /* > 0: zstd-compress the file (and the pruned file) at this level */
};

struct fb_size_report {
	char type[16];          /* fb_scan.type */
	uint64_t file_size;
	size_t ncontainers, nentries;
	uint64_t stored, uncompressed;
	struct fb_size_row *rows; size_t nrows;           /* sorted by kind, arch */
	struct fb_size_container *containers;            /* ncontainers of them */
	bool pruned;            /* targets were given: the kept_* fields and the below are set */
	struct fb_prune_report prune;
	uint64_t kept_stored, kept_uncompressed;
	size_t kept_entries;
	uint64_t pruned_file_size;
	uint64_t zstd_before, zstd_after; /* compressed file sizes when zstd_level > 0 */
};

/* Sizes of the device code in a file; with targets, what fb_prune_buffer would keep (missing
 * images are allowed and counted in prune.missing). Free with fb_size_report_free. */
FB_API int fb_size(const void *data, size_t size, const char *name, const struct fb_size_opts *opts,
                   struct fb_size_report *out, struct fb_error *err);
FB_API void fb_size_report_free(struct fb_size_report *r);

/* END SECTION prune */

#ifdef __cplusplus
}
#endif
#endif
