/* fatbuild/fatbin.h: fatbinary containers: write, read, CUBIN and host-ELF readers, image selection (docs/fatbin.md).
 * Part of libfatbuild's public API (include/fatbuild.h includes every part); stable as
 * HACKING.md "Public API" says. */
#ifndef FATBUILD_FATBIN_H
#define FATBUILD_FATBIN_H

#include "fatbuild/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fatbinary containers (fatbin.c; docs/fatbin.md) ---------------------------------- */

enum fb_entry_kind { FB_KIND_PTX = 1, FB_KIND_ELF = 2, FB_KIND_LTO = 4 };
enum fb_compress { FB_COMPRESS_NONE = 0, FB_COMPRESS_ZSTD, FB_COMPRESS_LZ4 };

/* SECTION fatbin: fatbinary containers (fatbuild/fatbin/).
 *
 * Format: docs/fatbin.md, summarised at the top of fatbuild/fatbin/format.h (private: magic
 * numbers, header layouts, the container walk). enum fb_entry_kind is the API's kind; on disk
 * LTO-IR is kind 8 (FB_DISK_KIND_LTO). */

/* fb_entry.disk_kind: on-disk entry kinds (u16 at entry+0x00). */
#define FB_DISK_KIND_PTX 1u
#define FB_DISK_KIND_ELF 2u
#define FB_DISK_KIND_OLDCUBIN 4u
#define FB_DISK_KIND_LTO 8u

/* fb_entry.flags: entry flags (u64 at entry+0x28). */
#define FB_FLAG_64BIT      UINT64_C(0x1)
#define FB_FLAG_DEBUG      UINT64_C(0x2)
#define FB_FLAG_CUDA       UINT64_C(0x4)
#define FB_FLAG_OPENCL     UINT64_C(0x8)
#define FB_FLAG_LINUX      UINT64_C(0x10)
#define FB_FLAG_MAC        UINT64_C(0x20)
#define FB_FLAG_WINDOWS    UINT64_C(0x40)
#define FB_FLAG_COMPRESS_OLD UINT64_C(0x1000)
#define FB_FLAG_LZ4        UINT64_C(0x2000)
#define FB_FLAG_ZSTD       UINT64_C(0x8000)
#define FB_FLAG_OBFUSCATED UINT64_C(0x10000)
#define FB_FLAG_ARCH_A     UINT64_C(0x100000)  /* sm_90a, compute_100a */
#define FB_FLAG_FAMILY_F   UINT64_C(0x200000)  /* sm_100f, compute_120f */
#define FB_FLAG_COMPAT     UINT64_C(0x1000000) /* ELF entry carries the .nv.compat blob (sm >= 100) */
#define FB_FLAGS_KNOWN     UINT64_C(0x131b07f)

struct fb_fatbin; /* a container being written */

FB_API struct fb_fatbin *fb_fatbin_new(void);
FB_API void fb_fatbin_free(struct fb_fatbin *fb);
/* Adds one image. target says its arch and variant (kind PTX or SASS must match kind);
 * ident and options may be NULL. The data is copied. */
FB_API int fb_fatbin_add(struct fb_fatbin *fb, enum fb_entry_kind kind, const struct ap_target *target,
                         const void *data, size_t size, const char *ident, const char *options,
                         struct fb_error *err);
/* Serialises the container into a malloc'd buffer. */
FB_API int fb_fatbin_write(const struct fb_fatbin *fb, enum fb_compress compress, unsigned char **out,
                           size_t *outsize, struct fb_error *err);

/* Writer options for fb_fatbin_set_options (default 0: compress every entry when asked). */
#define FB_WRITE_DEBUG        0x1u /* flag 0x2 on every entry (fatbinary -g) */
#define FB_WRITE_COMPRESS_TEXT 0x2u /* compress only PTX, LTO and debug images (fatbinary's default) */
FB_API void fb_fatbin_set_options(struct fb_fatbin *fb, unsigned options);
/* zstd level (default 5, which matches nvcc/fatbinary); 1..22. */
FB_API int fb_fatbin_set_zstd_level(struct fb_fatbin *fb, int level, struct fb_error *err);

/* ---- target names and what a PTX declares (target.c) ---- */

/* Reads "X.Y" from a PTX ".version" and the target from ".target sm_90a" (kind AP_PTX). */
FB_API int fb_ptx_info(const void *ptx, size_t size, int *major, int *minor, struct ap_target *target,
                       struct fb_error *err);
/* Parses "sm_90a", "compute_86" (ap_target_parse) or "lto_90" (as PTX) into t; 0 or FB_EINVAL. */
FB_API int fb_target_parse(const char *name, struct ap_target *t);

/* ---- reading containers (fatbin_read.c) ---- */

/* One entry of a parsed container. Pointers point into the caller's buffer. */
struct fb_entry {
	size_t container;         /* 0-based index of its container in the parsed buffer */
	size_t index;             /* 0-based index of the entry in its container */
	size_t offset;            /* of the entry header from the start of the parsed buffer */
	unsigned disk_kind;       /* FB_DISK_KIND_*; unknown kinds are kept and reported */
	struct ap_target target;  /* sm from +0x1c, variant from the flags, kind SASS for ELF else PTX */
	uint32_t header_size;
	uint16_t major, minor;    /* ELF: 1 and the ELF ABI version; PTX: ISA version */
	uint64_t flags, okey;
	uint64_t payload_size;    /* stored, padded to 8 */
	uint32_t compressed_size; /* 0 when not compressed */
	uint64_t uncompressed_size; /* 0 when not compressed */
	enum fb_compress compress;/* from the flags */
	bool obfuscated;          /* FB_FLAG_OBFUSCATED: never decoded */
	const unsigned char *payload; /* stored bytes: compressed_size of them if compressed */
	size_t stored_size;       /* compressed_size, or payload_size */
	const char *ident;        /* identifier (not NUL-terminated in the buffer), or NULL */
	size_t ident_len;
	const char *options;      /* PTX/LTO option string (not NUL-terminated), or NULL */
	size_t options_len;
	const unsigned char *compat; /* ELF sm>=100 compat blob, or NULL */
	size_t compat_len;
};

struct fb_container {
	size_t offset, size;      /* in the parsed buffer; size = 16 + fatSize */
	size_t first, count;      /* its entries in the entry array */
	size_t blob;              /* fb_scan_entries: index of the fb_blob it came from */
	bool bare;                /* fb_scan_entries: a lone cubin or PTX file, not a container */
};

/* The parsed view of a buffer holding one or more concatenated containers. */
struct fb_parsed {
	struct fb_container *containers;
	size_t ncontainers;
	struct fb_entry *entries;
	size_t nentries;
};

/* Parses every container in data[0..size) (zero padding between containers is skipped;
 * FB_PARSE_FIRST stops after the first, as the driver and nvJitLink do). Every size and
 * offset is checked; errors say which container and entry ("container 2: entry 3: header
 * size 0x44 is not a multiple of 8"). Nothing is decompressed. Free with fb_parsed_free. */
#define FB_PARSE_FIRST 0x1u
FB_API int fb_fatbin_parse(const void *data, size_t size, unsigned flags, struct fb_parsed *out,
                           struct fb_error *err);
FB_API void fb_parsed_free(struct fb_parsed *p);

/* Default cap on an entry's uncompressed size (FB_ETOOBIG above it). */
#define FB_DEFAULT_DECOMPRESS_CAP (UINT64_C(1) << 30)
/* The entry's image, decompressed (zstd, LZ4 block or LZ4 frame) into a malloc'd buffer of
 * exactly the uncompressed size. Uncompressed entries: the stored bytes, except that an ELF
 * is cut to its real extent (the container's zero padding dropped); PTX keeps its NULs.
 * cap 0 means FB_DEFAULT_DECOMPRESS_CAP; above it FB_ETOOBIG, before allocating anything.
 * Unknown kinds and obfuscated payloads: FB_EUNSUPPORTED. Corrupt streams, and streams whose
 * size differs from the header's: FB_EFORMAT. */
FB_API int fb_entry_image(const struct fb_entry *e, uint64_t cap, unsigned char **out, size_t *outsize,
                          struct fb_error *err);
/* "ptx", "elf", "lto", "oldcubin" or "kind7". buf at least 16 bytes. */
FB_API const char *fb_disk_kind_name(unsigned disk_kind, char *buf, size_t size);

/* ---- CUBIN inspection (cubin.c, libelf) ---- */

struct fb_kernel {
	char *name;               /* symbol name as stored (mangled) */
	int registers;            /* from .nv.info REGCOUNT, or -1 */
	int64_t shared_stored;    /* .nv.shared.<k> size, or 0 */
	int64_t shared_user;      /* static shared bytes the code asked for: stored - 1024 on sm >= 90 */
	bool shared_derived;      /* shared_user was derived by subtracting the 1024 reserve */
	uint64_t code_size;       /* st_size */
};

struct fb_cubin {
	int abi_version;          /* EI_ABIVERSION: 7 (CUDA <= 12) or 8 (13.0) */
	int sm;                   /* from e_flags, decoded by ABI version */
	bool arch_a;              /* .nv.compat attribute 9 = 1 */
	bool relocatable;         /* ET_REL (-rdc) rather than ET_EXEC */
	uint32_t e_flags;
	size_t nkernels;
	struct fb_kernel *kernels;
	const unsigned char *compat; /* .nv.compat in the caller's buffer, or NULL */
	size_t compat_len;
};

/* Reads a CUDA ELF (EM_CUDA, ELFCLASS64). Kernels are the STO_CUDA_ENTRY symbols, with
 * registers and static shared memory. The buffer must outlive the result (compat points
 * into it). Free with fb_cubin_free. */
FB_API int fb_cubin_read(const void *data, size_t size, struct fb_cubin *out, struct fb_error *err);
FB_API void fb_cubin_free(struct fb_cubin *c);
/* Demangles an Itanium name with __cxa_demangle from an already-loaded or dlopen'ed
 * libstdc++; copies the name unchanged when that is not possible. Returns buf. */
FB_API char *fb_demangle(const char *name, char *buf, size_t size);

/* ---- finding containers in files (hostelf.c) ---- */

enum fb_blob_kind { FB_BLOB_FATBIN, FB_BLOB_CUBIN, FB_BLOB_PTX };

/* One place inside a file that holds device code. */
struct fb_blob {
	enum fb_blob_kind kind;
	size_t offset, size;      /* in the scanned buffer */
	char where[256];          /* "" for a plain file, ".nv_fatbin", "libx.a(k.o) __nv_relfatbin" */
};

struct fb_scan {
	struct fb_blob *blobs;
	size_t nblobs;
	char type[16];            /* "fatbin", "cubin", "ptx", "elf", "archive" */
};

/* Finds every fatbin container (in .nv_fatbin and __nv_relfatbin sections of ELF host
 * files and of the members of ar archives), or the buffer itself when it is a fatbin, a
 * cubin or PTX. Sections are located only; nothing is decompressed. name is used in
 * messages. Free with fb_scan_free. */
FB_API int fb_scan_buffer(const void *data, size_t size, const char *name, struct fb_scan *out,
                          struct fb_error *err);
FB_API void fb_scan_free(struct fb_scan *s);
/* Parses every blob of a scan of data into one list: the containers of each fatbin blob
 * (offsets relative to data), and a bare one-entry container for a lone cubin (sm from
 * e_flags, 'a' from .nv.compat) or PTX file (arch from .target). Free with fb_parsed_free. */
FB_API int fb_scan_entries(const void *data, const struct fb_scan *s, struct fb_parsed *out,
                           struct fb_error *err);

/* A read-only mmap of a whole file. Regular files only: a FIFO, a device or a directory is
 * refused ("PATH: not a regular file (a FIFO)", FB_EIO) without being read or waited on. */
struct fb_mapped {
	const unsigned char *data;
	size_t size;
};
FB_API int fb_map_file(const char *path, struct fb_mapped *m, struct fb_error *err);
FB_API void fb_unmap_file(struct fb_mapped *m);

/* ---- the image-selection model (select.c, docs/fatbin.md §7) ---- */

/* One candidate image for selection. */
struct fb_image {
	struct ap_target target;  /* sm, variant, kind AP_SASS (ELF) or AP_PTX */
	bool compat;              /* ELF sm >= 100 with the compat blob (FB_FLAG_COMPAT) */
};

enum fb_how { FB_HOW_NONE = 0, FB_HOW_SASS, FB_HOW_PTX_JIT };

/* Which image the driver would use on `device`, and how.
 *
 * device->sm is the compute capability (10*major+minor). device->variant says what the
 * consumer allows: AP_ARCH for a real GPU (it runs its own 'a' code) or nvJitLink
 * -arch=sm_90a; AP_PLAIN models nvJitLink -arch=sm_90, which refuses 'a' images below
 * sm_100. device->kind is ignored.
 *
 * Candidates (observed with nvJitLink/nvlink 13.0, docs/fatbin.md §7):
 * - SASS sm_X (plain): same major and minor(X) <= minor(device); sm_87 and sm_88 only run on
 *   themselves and accept nothing else; for X >= 100 a lower minor needs the compat blob.
 * - SASS sm_Xa: only device sm == X (below sm_100 also device->variant AP_ARCH).
 * - SASS sm_Xf: same major and minor(X) <= minor(device).
 * - PTX compute_X: X <= device sm (any major; JIT). compute_Xa: device sm == X and
 *   variant AP_ARCH. compute_Xf: same major, minor(X) <= minor(device).
 * Among the candidates the highest arch number wins; on a tie SASS wins, then the first.
 * Returns the index into images, or -1 (FB_HOW_NONE) when nothing fits. */
FB_API long fb_select(const struct fb_image *images, size_t n, const struct ap_target *device,
                      enum fb_how *how);

/* Why one image does not fit a device under the rules above (FB_FITS when it does): the first
 * rule it breaks, in this order. */
enum fb_misfit {
	FB_FITS = 0,
	FB_MISFIT_NEWER,    /* the image's arch is above the device's (sm_90 or compute_90 on 8.9) */
	FB_MISFIT_MAJOR,    /* SASS, or an 'f' image, of another major (sm_80 on 9.0) */
	FB_MISFIT_ISOLATED, /* sm_87 / sm_88 SASS, or an 8.7 / 8.8 device, with another minor */
	FB_MISFIT_ARCH,     /* an 'a' image on another arch (sm_90a on 10.0) */
	FB_MISFIT_PLAIN,    /* an 'a' image a plain consumer refuses (sm_90a for -arch=sm_90) */
	FB_MISFIT_COMPAT,   /* SASS sm_X, X >= 100, without the compat blob on a higher minor */
};
FB_API int fb_select_misfit(const struct fb_image *image, const struct ap_target *device);

/* END SECTION fatbin */

#ifdef __cplusplus
}
#endif
#endif
