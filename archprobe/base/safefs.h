/* safefs.h: directories and temporary files another user cannot plant, redirect or read into a
 * build, atomic writes, whole-file reads and the checks of an output's name. Private; symbols
 * are hidden. The rules are docs/security.md. */
#ifndef FB_SAFEFS_H
#define FB_SAFEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "error.h"

/* fb_dir_check / fb_dir_make flags. */
#define FB_DIR_EXPLICIT 1u /* the user named this path: group-writable is allowed when the user owns it */
#define FB_DIR_SHARED 2u   /* an opted-in shared cache: any owner, group-writable by one of the user's
                            * groups when setgid; never world-writable */

/* Checks an existing directory before anything is read from it or written into it: opened with
 * O_DIRECTORY|O_NOFOLLOW and fstat'ed, it must be owned by the effective user and writable by
 * nobody else (see the flags). A symlink is followed only when the user owns it and its own
 * directory is writable by nobody else; the directory it names is then checked the same way.
 * what ("build dir", "cache dir") and fix (what the user can do) go into the message.
 * Returns 0, FB_EUNSAFE (err names the path, its owner and mode, and fix), FB_EIO (missing, not
 * a directory, unreadable). */
int fb_dir_check(const char *path, const char *what, const char *fix, unsigned flags, struct fb_error *err);

/* fb_dir_check that hands over the checked directory: *fd (O_RDONLY|O_DIRECTORY, close-on-exec)
 * is the very directory the checks passed, so names below it are opened with openat and no
 * later swap of a path component can redirect them. *fd is -1 on failure. */
int fb_dir_open(const char *path, const char *what, const char *fix, unsigned flags, int *fd, struct fb_error *err);
/* The ownership and mode checks of fb_dir_check on an open directory; path is for messages. */
int fb_dir_check_fd(int fd, const char *path, const char *what, const char *fix, unsigned flags, struct fb_error *err);
/* The directory name inside dirfd, never through a symlink (O_NOFOLLOW: a link there is
 * FB_EUNSAFE, not followed), checked as fb_dir_check does; created first when create (0700,
 * FB_DIR_SHARED: 02770). path names it in messages. *fd: as fb_dir_open. */
int fb_dir_openat(int dirfd, const char *name, const char *path, const char *what, const char *fix, unsigned flags,
                  bool create, int *fd, struct fb_error *err);

/* Whether the file at path may be read, and replaced, without further checks (archprobe's
 * probe cache): its directory (opened O_DIRECTORY|O_NOFOLLOW) is owned by the effective user and
 * writable by nobody else, and the file, if there, is a regular file (not a symlink) of the
 * user's, writable by nobody else. When not, why (one line: the path, its owner and mode) says
 * so. */
bool fb_file_trusted(const char *path, char *why, size_t whysize);

/* mkdir -p: every missing component is created 0700 (FB_DIR_SHARED: 02770), then path is
 * checked with fb_dir_check. */
int fb_dir_make(const char *path, const char *what, const char *fix, unsigned flags, struct fb_error *err);

/* Creates a new temporary file beside target: "TARGET.tmp.XXXXXXXXXX" (random), opened with
 * O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW, so nothing already at the name (a planted symlink or file)
 * is followed, truncated or reused. mode is applied through the umask, as for any new file.
 * Fills tmp (its name) and *fd; returns 0 or FB_EIO/FB_EINVAL. */
int fb_tmp_open(const char *target, int mode, char *tmp, size_t tmpsize, int *fd, struct fb_error *err);
/* The same relative to dirfd (target: a name or path below it; tmp is relative to dirfd too). */
int fb_tmp_openat(int dirfd, const char *target, int mode, char *tmp, size_t tmpsize, int *fd, struct fb_error *err);
/* Writes data as the file name in dirfd through a temporary beside it and renameat: readers see
 * the old file or the whole new one. mode goes through the umask, unless exact_mode (then it
 * is set with fchmod: a team cache's group bits). path names the file in messages. 0 or FB_EIO. */
int fb_write_at(int dirfd, const char *name, const char *path, const void *data, size_t size, int mode,
                bool exact_mode, struct fb_error *err);

/* Writes data to path atomically: a new file with a random name beside it (path.tmp.XXXXXXXXXX,
 * O_CREAT|O_EXCL|O_NOFOLLOW: nothing planted at that name is followed or truncated), then an
 * fsync-free rename; nothing is left on failure. mode goes through the umask (0: 0666). */
int fb_write_file_atomic(const char *path, const void *data, size_t size, int mode, struct fb_error *err);

/* mkdir -p through fb_dir_make (0700, checked). */
int fb_mkdirs(const char *path, struct fb_error *err);
/* mkdir -p for an output directory the user named: missing components are made 0777 through
 * the umask. 0, FB_EINVAL (too long) or FB_EIO naming the component. */
int fb_dir_make_output(const char *path, struct fb_error *err);
/* Checks an output path before anything is made or written (docs/hardening.md): out must not
 * be one of the ninputs inputs, by path or as the same file (device and inode: "./k.cu", a hard
 * link, a symlink to it), and what is at out already, if anything, must be a regular file or a
 * symlink (which the rename replaces): a device node, FIFO, socket or directory is never
 * replaced. what names the option in the message ("-o", "--depfile"). Returns 0 or FB_EINVAL. */
int fb_output_check(const char *what, const char *out, const char *const *inputs, size_t ninputs,
                    struct fb_error *err);
/* Removes dir: its files, and its subdirectories down to depth more levels (deeper ones and
 * anything that cannot be removed stay, and so then does dir). Nothing is followed: dir itself
 * and every directory below are opened O_NOFOLLOW and walked by descriptor, links and special
 * files inside are unlinked, so a symlink planted anywhere (or swapped in mid-walk) can never
 * lead the removal outside. */
void fb_dir_remove(const char *dir, int depth);
/* The same for name inside parentfd; 0 when it is gone, -1 when something stayed (or it is
 * not a directory: then nothing was touched). */
int fb_dir_removeat(int parentfd, const char *name, int depth);
/* "a FIFO", "a character device", "a block device", "a socket", "a directory", "a symlink" or
 * "not a regular file" for any other type: what a file that is not a regular one is, for
 * messages. */
const char *fb_file_kind(mode_t mode);
/* Opens path for reading only when it is a regular file: open(O_RDONLY|O_NONBLOCK|O_NOCTTY|
 * O_CLOEXEC|flags) never waits for a FIFO's writer or a device, and fstat then refuses anything
 * but a regular file, so nothing is ever read from a FIFO, /dev/zero or a terminal. flags adds
 * open flags (O_NOFOLLOW). Fills *fd and st (may be NULL); returns 0, or FB_EIO with err
 * "cannot open PATH: why" or "PATH: not a regular file (a FIFO)" (*fd then -1). */
int fb_open_regular(const char *path, int flags, int *fd, struct stat *st, struct fb_error *err);
/* fb_open_regular as a stdio stream ("re"), for reading line by line; NULL when it cannot be
 * opened or is not a regular file. */
FILE *fb_fopen_regular(const char *path, int flags);
/* Reads a whole regular file (fb_open_regular; NUL-terminated for convenience; *size excludes
 * it). */
int fb_read_file(const char *path, char **data, size_t *size, struct fb_error *err);
/* The same for fd, open on the file path names (for messages); fd is closed. */
int fb_read_fd(int fd, const char *path, char **data, size_t *size, struct fb_error *err);

#endif
