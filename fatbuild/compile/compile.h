/* compile.h: private to the compile part (fatbuild/compile/), extension/repro.c and their tests.
 * Not installed; the public API is SECTION compile of fatbuild.h. */
#ifndef FB_COMPILE_H
#define FB_COMPILE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "common/strbuf.h"

/* ---- hash.c: SHA-256 (FIPS 180-4) ---- */

/* The streaming hasher is the portable code: plain data, no cleanup, may be copied or dropped
 * before final. */
struct fb_sha256 {
	uint32_t h[8];
	uint64_t len;            /* bytes hashed so far */
	unsigned char buf[64];
	size_t n;                /* bytes pending in buf */
};

void fb_sha256_init(struct fb_sha256 *s);
void fb_sha256_update(struct fb_sha256 *s, const void *data, size_t size);
void fb_sha256_final(struct fb_sha256 *s, unsigned char out[32]);
/* Hashes a string including its NUL, so that ("ab","c") and ("a","bc") differ. */
void fb_sha256_str(struct fb_sha256 *s, const char *str);
/* SHA-256 of a whole buffer (data may be NULL when size is 0), through libcrypto when the
 * build has it; 1 when libcrypto computed it, 0 when the portable code did. Same digest. */
int fb_sha256_buf(const void *data, size_t size, unsigned char out[32]);
/* SHA-256 of fd read from its offset to the end, in 1 MiB chunks; cancel (may be NULL) is
 * checked before every chunk. 0, or -1 on a read error or when *cancel was set. */
int fb_sha256_fd(int fd, const volatile sig_atomic_t *cancel, unsigned char out[32]);
/* 64 lowercase hex digits + NUL. */
void fb_sha256_hex(const unsigned char digest[32], char out[65]);

/* ---- nvrtc.c: NVRTC through dlopen ---- */

struct fb_nvrtc; /* the loaded library and its entry points */

/* Loads libnvrtc.so.13 (then .12) from cuda_home/lib64 (NULL: ap_cuda_home()), then the
 * plain sonames. FB_ENOTOOL with every path tried when none loads. */
int fb_nvrtc_open(const char *cuda_home, struct fb_nvrtc **out, struct fb_error *err);
void fb_nvrtc_close(struct fb_nvrtc *n);
const char *fb_nvrtc_path(const struct fb_nvrtc *n);
/* What identifies the NVRTC build for cache keys: "nvrtc 13000 <file> <size> <mtime>". */
const char *fb_nvrtc_ident(const struct fb_nvrtc *n);
/* 1000*major + 10*minor, as CUDA_VERSION. */
int fb_nvrtc_version(const struct fb_nvrtc *n);
/* The SASS arches NVRTC accepts (nvrtcGetSupportedArchs), ascending; returns the count. */
int fb_nvrtc_archs(const struct fb_nvrtc *n, int *archs, int max);

/* The outcome of one NVRTC compile. result is the nvrtcResult (0 = success). */
struct fb_nvrtc_out {
	int result;
	char *log;               /* NUL-terminated, possibly empty */
	unsigned char *ptx;      /* PTX text without the NUL; NULL when not asked for or failed */
	size_t ptx_size;
	unsigned char *cubin;
	size_t cubin_size;
	/* nvrtcGetPCHCreateStatus after the compile (-1: NVRTC has no PCH API): 0 made,
	 * 13 not attempted, 14 heap exhausted, 15 failed; the heap the PCH needs when 0 or 14. */
	int pch_status;
	size_t pch_heap_required;
};

/* The nvrtcResult NVRTC_ERROR_INVALID_OPTION: an option NVRTC does not take (a usage error). */
#define FB_NVRTC_INVALID_OPTION 5
/* want_cubin FB_NVRTC_LTOIR: fetch the LTO-IR (-dlto) into cubin/cubin_size instead. */
#define FB_NVRTC_LTOIR 2
/* Compiles src (named name in diagnostics) with options. Returns 0 when NVRTC ran (check
 * out->result), or an FB_E* code when it could not be driven at all. */
int fb_nvrtc_compile(const struct fb_nvrtc *n, const char *src, const char *name, const char *const *opts,
                     int nopts, int want_ptx, int want_cubin, struct fb_nvrtc_out *out, struct fb_error *err);
void fb_nvrtc_out_clear(struct fb_nvrtc_out *o);
/* Whether NVRTC has the automatic-PCH API (nvrtcGetPCHCreateStatus and friends). */
int fb_nvrtc_has_pch(const struct fb_nvrtc *n);
/* The PCH heap of this process: set (when set > 0, nvrtcSetPCHHeapSize), then *size (when
 * size is not NULL). FB_EUNSUPPORTED without the PCH API. */
int fb_nvrtc_pch_heap(const struct fb_nvrtc *n, size_t *size, size_t set);
/* "NVRTC_ERROR_COMPILATION" for an nvrtcResult. */
const char *fb_nvrtc_result_name(int result);

/* Rewrites an NVRTC log: "f.cu(12): error: msg" + source line + caret line becomes
 * "f.cu:12:5: error: msg [tag]" + the same two context lines. malloc'd; NULL on OOM. */
char *fb_nvrtc_log_rewrite(const char *log, const char *tag);
/* The first diagnostic line of a rewritten log (for one-line error messages), into buf. */
void fb_nvrtc_log_first(const char *rewritten, char *buf, size_t size);
/* The first line of log (NULL: empty) that holds one of needles (NULL-terminated), else its first
 * non-empty line, else fallback, into buf (nvrtc.c; dlink.c uses it for link logs). */
void fb_log_first_line(const char *log, const char *const *needles, const char *fallback, char *buf, size_t size);

/* ---- schedule.c: a child with a pipe to its parent (NVRTC jobs, nvJitLink links) ---- */

/* pipe() then fork(). In the child *pid is 0 and *fd the write end, in the parent *pid is the
 * child and *fd the read end; each has closed the other end. *parent: the forking process, for
 * the child's dies-with-its-parent check. FB_EIO (err filled) when no pipe or child was made. */
int fb_fork_piped(pid_t *parent, pid_t *pid, int *fd, struct fb_error *err);

/* ---- depfile.c: #include resolution (NVRTC reports no dependencies) ---- */

/* Appends to deps every file that source includes, transitively: quoted includes are looked
 * up beside the including file, then in dirs; angle includes in dirs. Unresolvable includes
 * (NVRTC built-ins, computed includes, branches for other platforms) are skipped. The scan is
 * conservative: includes inside #if branches count as well. Files already in deps (same
 * device and inode) are not added twice. */
int fb_deps_scan(const char *source, const char *const *dirs, size_t ndirs, struct fb_strlist *deps,
                 struct fb_error *err);
/* Makefile syntax for one path: spaces and '#' escaped with '\', '$' doubled. */
char *fb_depfile_escape(const char *path);

/* ---- cache.c: the content-addressed store ---- */

struct fb_cache_entry {
	unsigned char *cubin;
	size_t cubin_size;
	unsigned char *ptx;
	size_t ptx_size;
	char *log;               /* NUL-terminated */
};

/* 0 and *out filled on a verified hit; FB_ENOIMAGE on a miss; FB_EFORMAT for an entry that
 * failed its size or checksum check (it is removed; err->msg names it); other codes for real
 * I/O trouble. */
/* Before a compile uses the cache dir: 0 when it is missing (created 0700 on the first put) or
 * passes fb_dir_check (explicit: the user named it); else FB_EUNSAFE/FB_EIO with the message. */
int fb_cache_check(const char *dir, bool explicit, struct fb_error *err);
/* *dir, or when it is NULL fb_cache_dir() written into buf (then *dir = buf). */
int fb_cache_dir_default(const char **dir, char *buf, size_t size, struct fb_error *err);
int fb_cache_get(const char *dir, const char *key, struct fb_cache_entry *out, struct fb_error *err);
int fb_cache_put(const char *dir, const char *key, const struct fb_cache_entry *e, struct fb_error *err);
void fb_cache_entry_clear(struct fb_cache_entry *e);
/* The entry file's bytes, both ways (fuzz_cache checks that they agree and that any damage is
 * caught). decode: 0, FB_EFORMAT (size or checksum mismatch) or FB_ENOMEM; encode: 0 or
 * FB_ENOMEM, *out malloc'd. */
int fb_cache_decode(const unsigned char *data, size_t n, struct fb_cache_entry *out);
int fb_cache_encode(const struct fb_cache_entry *e, unsigned char **out, size_t *size);

/* ---- remote.c: the shared cache over Bazel's HTTP cache protocol (docs/remote-cache.md) ---- */

struct fb_remote;

struct fb_remote_opts {
	const char *url;         /* http:// or https://, the root that holds ac/ and cas/ */
	const char *header;      /* one extra request header ("Authorization: Bearer T"), or NULL */
	int writable;            /* 0: never PUT */
	long timeout_ms;         /* per request; <= 0: 10 s */
};

struct fb_remote_counts {
	uint64_t hits, misses, uploads, errors, corrupt, bytes_down, bytes_up;
};

/* FB_ENOTOOL when libcurl does not load (err->msg says so), FB_EINVAL for a bad URL. */
int fb_remote_open(const struct fb_remote_opts *o, struct fb_remote **out, struct fb_error *err);
void fb_remote_close(struct fb_remote *r);
/* 0 and *out filled on a verified hit (every blob's size and SHA-256 checked); FB_ENOIMAGE on
 * a miss; FB_EFORMAT for a damaged record or blob; FB_EIO once the server failed (then for
 * every later call: see fb_remote_broken). */
int fb_remote_get(struct fb_remote *r, const char *key, struct fb_cache_entry *out, struct fb_error *err);
/* Uploads the blobs, then the action record; 0 without a PUT when not writable. */
int fb_remote_put(struct fb_remote *r, const char *key, const struct fb_cache_entry *e, struct fb_error *err);
/* The action record (docs/remote-cache.md §2), a serialized Bazel ActionResult: the digests
 * (hex) and sizes of cubin, PTX, log; an empty output has size 0 and the empty blob's digest. */
enum { FB_REMOTE_RECORD_MAX = 65536, FB_REMOTE_RECORD_ENCODED_MAX = 400 };
struct fb_remote_record {
	char hex[3][65];
	uint64_t size[3];
};
/* Parses a record (unknown fields skipped); 0, or FB_EFORMAT with err->msg naming the message,
 * field and what is wrong. */
int fb_remote_record_decode(const char *text, size_t n, struct fb_remote_record *out, struct fb_error *err);
/* The record's protobuf encoding into buf (FB_REMOTE_RECORD_ENCODED_MAX bytes); returns its
 * length, 0 if it does not fit. */
size_t fb_remote_record_encode(const struct fb_remote_record *rec, char *buf, size_t size);
/* 1 after the first transport failure; *why: its message. */
int fb_remote_broken(const struct fb_remote *r, const char **why);
const struct fb_remote_counts *fb_remote_counts(const struct fb_remote *r);

/* ---- stats.c: hit and miss counters kept in the cache directory ---- */

/* Adds d to the counters in dir/stats under a lock (dir/stats.lock), written atomically. */
int fb_cache_count(const char *dir, const struct fb_cache_counters *d, struct fb_error *err);

/* ---- key.c: how paths enter the compile key ---- */

/* The spelling of path in the key: "@/rest" when path lies under base (a directory, textual
 * prefix at a '/' boundary), else path itself. Into out; 0, or -1 when it does not fit. */
int fb_key_path(const char *base, const char *path, char *out, size_t size);
/* 1 when text spells __FILE__, __builtin_FILE or assert (which expands __FILE__ where it is
 * used) as a whole word: the output may then depend on the path. */
int fb_key_names_file(const char *text, size_t size);

/* What identifies the NVRTC build in the key: "nvrtc 13000 sha256 <digest of the library>",
 * the digest remembered per user in $XDG_CACHE_HOME/fatbuild-digests/ (else
 * ~/.cache/fatbuild-digests/) per (file, device, inode, size, mtime, ctime); without a usable
 * directory it is computed every time. ident is fb_nvrtc_ident's. 0, or -1 (then the caller
 * keys by ident); -1 also, with nothing remembered, when cancel (may be NULL) is set while the
 * library is hashed. */
int fb_key_nvrtc(const char *ident, const volatile sig_atomic_t *cancel, char *out, size_t size);

/* Reads a whole file (NUL-terminated for convenience; *size excludes it). */
int fb_read_file(const char *path, char **data, size_t *size, struct fb_error *err);
/* mkdir -p through fb_dir_make (0700, checked). */
int fb_mkdirs(const char *path, struct fb_error *err);

/* child.c: writes all of p[0..n) to fd, through EINTR; 0, or -1. (Also jitlink.c's worker.) */
int fb_write_all(int fd, const void *p, size_t n);
/* Reads exactly n bytes from fd, retrying on EINTR: 0, or -1 on an error or an early end. */
int fb_read_all(int fd, void *p, size_t n);

/* A copy of p[0..n) with a NUL after it (for text); NULL on OOM. */
static inline unsigned char *
fb_dup_bytes(const unsigned char *p, size_t n)
{
	unsigned char *d = malloc(n + 1);
	if (d) {
		memcpy(d, p, n);
		d[n] = 0;
	}
	return d;
}

#endif
