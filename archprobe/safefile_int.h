/* safefile_int.h: the probe cache file's trust check and its temporary files (archprobe's own
 * small counterpart of fatbuild's safefs; archprobe uses no fatbuild code). */
#ifndef AP_SAFEFILE_INT_H
#define AP_SAFEFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether the cache file at path may be read and replaced: its directory (opened with
 * O_DIRECTORY|O_NOFOLLOW) is owned by the effective user and writable by nobody else, and the
 * file, if present, is a regular file (not a symlink) owned by the user and writable by nobody
 * else. When not, why (one line: the path, its owner and mode) says so. */
bool ap_cachefile_trusted(const char *path, char *why, size_t whysize);

/* Opens path for reading ("re") only when it is a regular file: opened with O_NONBLOCK (never
 * waiting for a FIFO's writer) plus flags (O_NOFOLLOW), then fstat'ed; NULL for anything else,
 * a FIFO, a device or a directory, and when it cannot be opened (errno set). */
FILE *ap_fopen_regular(const char *path, int flags);

/* Creates "TARGET.tmp.XXXXXXXXXX" (random) with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600; returns
 * the fd (tmp filled) or -1. */
int ap_tmpfile_open(const char *target, char *tmp, size_t tmpsize);

#endif
