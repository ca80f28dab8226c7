/* hostpch.c: precompiled torch headers for the host C++ edges of a --torch build.
 * A source whose first lines are #include <...> of torch headers gets those lines as a header
 * of their own, h.h, precompiled once with the build's compiler and flags into h.h.gch (gcc)
 * or h.h.pch (clang, whose driver reads it for -include h.h), and
 * compiled with -include h.h: the same headers in the same order before the rest of the file
 * (its own #includes of them are then skipped by their guards), so the object is the same,
 * byte for byte, as without the PCH (tests/build_hostpch.sh compares them).
 * The PCH lives in CACHE/hostpch/KEY/ (fb_cache_dir; 0700, checked as docs/security.md says),
 * KEY the SHA-256 of its identity: the compiler (its resolved path, size and mtime, as ccache's
 * default compiler check), the flags, torch's version and version.py, and the block. The
 * identity is also written beside it (id): a PCH whose id differs (copied in, made by another
 * torch) is foreign and remade, and so is one whose size, inode or mtime are not those the edge
 * that made it wrote down (stamp: a PCH copied or written in from elsewhere). The compiler's
 * own -MD list of the headers it read is kept (h.h.d): one modified or changed after the PCH
 * (mtime or ctime newer: a touched header, or one reinstalled with its old mtime) makes it stale
 * and remade before a compile reads it. gcc would then read the stale PCH in silence; clang
 * checks each header's size and mtime and fails ("has been modified since the precompiled
 * header was built"), so the remake must come first for both. Every compile that uses it runs
 * with -Winvalid-pch -Werror=invalid-pch, so one gcc refuses fails loudly instead of being
 * silently parsed anew (clang's refusals are errors anyway).
 * A build names the PCH by BUILD_DIR/pch/ID (fb_hostpch_link), whose links lead to the cache and
 * whose pch.sh makes it (fb_hostpch_script): the compile commands then hold no cache path. */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "edgecache.h"
#include "hostpch.h"
#include "ninja.h"

#define ID_MAGIC "fatbuild host pch 1"

static void old_mtime(const char *path);

bool
fb_hostpch_enabled(const struct fb_config *cfg, bool *eager)
{
	int v = cfg->host_pch;
	*eager = v == 1;
	return v != 0 && cfg->cache_shared != 1;
}

/* Whether the last component of path names a compiler of flavor f. */
static bool
named(const char *path, enum fb_hostpch_flavor f)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (f == FB_HOSTPCH_CLANG)
		return strstr(base, "clang") != NULL;
	return strstr(base, "g++") || strstr(base, "gcc") || strcmp(base, "c++") == 0 ||
	       (n > 4 && strcmp(base + n - 4, "-c++") == 0);
}

/* The flavor of compiler (found on PATH at found; NULL: not found) by its name and its real
 * path's name, as ccache tells compilers apart: clang, clang++, clang-14 ...; gcc, g++, c++,
 * x86_64-linux-gnu-g++-12 ...; else none. */
static enum fb_hostpch_flavor
flavor_of(const char *compiler, const char *found)
{
	char real[PATH_MAX];
	const char *names[2] = {compiler, NULL};
	if (found && realpath(found, real))
		names[1] = real; /* c++ is g++ or clang++ by the alternatives' links */
	static const enum fb_hostpch_flavor order[] = {FB_HOSTPCH_CLANG, FB_HOSTPCH_GCC}; /* clang++ holds "g++" */
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < 2; i++)
			if (names[i] && named(names[i], order[k]))
				return order[k];
	return FB_HOSTPCH_NONE;
}

enum fb_hostpch_flavor
fb_hostpch_flavor(const struct fb_config *cfg, const char *compiler)
{
	char found[PATH_MAX], tool[PATH_MAX + 64];
	int trc = fb_edge_tool_id(cfg->path, compiler, found, tool, sizeof(tool));
	return flavor_of(compiler, trc == 0 ? found : NULL);
}

/* ---- the leading include block ---- */

/* "#include <NAME>" with only blanks or a // comment after: NAME into name, else false. */
static bool
angle_include(const char *line, char *name, size_t size)
{
	const char *p = line + strspn(line, " \t");
	if (*p++ != '#')
		return false;
	p += strspn(p, " \t");
	if (strncmp(p, "include", 7) != 0)
		return false;
	p += 7;
	p += strspn(p, " \t");
	if (*p++ != '<')
		return false;
	size_t n = strcspn(p, ">\n");
	if (p[n] != '>' || n == 0 || n >= size)
		return false;
	memcpy(name, p, n);
	name[n] = 0;
	p += n + 1;
	p += strspn(p, " \t\r");
	return !*p || strncmp(p, "//", 2) == 0;
}

static bool
torch_header(const char *name)
{
	static const char *const pre[] = {"torch/", "ATen/", "c10/", "pybind11/"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (strncmp(name, pre[i], strlen(pre[i])) == 0)
			return true;
	return false;
}

/* Takes one line of the leading block: 1 to go on, 0 at its end. */
static int
block_line(char *line, bool *in_comment, struct fb_buf *b, bool *torch)
{
	const char *p = line + strspn(line, " \t\r");
	if (*in_comment) {
		const char *e = strstr(p, "*/");
		if (!e)
			return 1;
		*in_comment = false;
		p = e + 2;
		p += strspn(p, " \t\r");
		return !*p;
	}
	if (!*p || strncmp(p, "//", 2) == 0)
		return 1;
	if (strncmp(p, "/*", 2) == 0) {
		const char *e = strstr(p + 2, "*/");
		if (!e) {
			*in_comment = true;
			return 1;
		}
		e += 2;
		return !e[strspn(e, " \t\r")];
	}
	char name[1024];
	if (!angle_include(p, name, sizeof(name)))
		return 0;
	*torch |= torch_header(name);
	fb_buf_puts(b, "#include <");
	fb_buf_puts(b, name);
	fb_buf_puts(b, ">\n");
	return 1;
}

int
fb_hostpch_block(const char *src, char **block, struct fb_error *err)
{
	*block = NULL;
	char *text = NULL;
	size_t size = 0;
	int rc = fb_read_file(src, &text, &size, err);
	if (rc)
		return rc;
	struct fb_buf b = {0};
	bool in_comment = false, torch = false;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);
		if (n && line[n - 1] == '\\')
			break; /* a continued line: not worth reading as the preprocessor would */
		if (!block_line(line, &in_comment, &b, &torch))
			break;
	}
	free(text);
	if (b.oom) {
		free(b.s);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (torch)
		*block = b.s;
	else
		free(b.s);
	return 0;
}

/* ---- identity and key ---- */

/* The identity text (what id holds) and its digest, the key. tool: the compiler as ccache's
 * default check sees it, "PATH SIZE MTIME_NS" (fb_edge_tool_id). */
static int
identity(const char *block, const char *tool, const char *flags, const char *torch_version,
         const char *torch_dir, char **text, char key[65], struct fb_error *err)
{
	struct fb_buf id = {0};
	fb_buf_puts(&id, ID_MAGIC "\ncompiler ");
	fb_buf_puts(&id, tool);
	fb_buf_puts(&id, "\n");
	char vpath[FB_HOSTPCH_PATH + 16], *ver = NULL;
	size_t vsize = 0;
	snprintf(vpath, sizeof(vpath), "%s/version.py", torch_dir);
	unsigned char d[32];
	char hex[65] = "-";
	if (fb_read_file(vpath, &ver, &vsize, NULL) == 0 && fb_sha256_buf(ver, vsize, d) == 0)
		fb_sha256_hex(d, hex);
	free(ver);
	fb_buf_puts(&id, "torch ");
	fb_buf_puts(&id, torch_version);
	fb_buf_puts(&id, " ");
	fb_buf_puts(&id, torch_dir);
	fb_buf_puts(&id, " version.py ");
	fb_buf_puts(&id, hex);
	fb_buf_puts(&id, "\nflags ");
	fb_buf_puts(&id, flags);
	fb_buf_puts(&id, "\nblock\n");
	fb_buf_puts(&id, block);
	if (id.oom) {
		free(id.s);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	fb_sha256_buf(id.s, id.len, d);
	fb_sha256_hex(d, key);
	*text = id.s;
	return 0;
}

/* ---- the directory and its files ---- */

#define FIX "chmod 700 it or remove it (it is remade), or build with --no-host-pch (docs/security.md)"

/* Whether path holds exactly text. */
static bool
holds(const char *path, const char *text)
{
	char *data = NULL;
	size_t size = 0;
	bool same = fb_read_file(path, &data, &size, NULL) == 0 && size == strlen(text) && memcmp(data, text, size) == 0;
	free(data);
	return same;
}

/* Whether a is later than b. */
static bool
later(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Stale when a header the compiler read is gone, or was modified or replaced after the PCH
 * was made (why says which). */
static bool
deps_stale(const struct fb_hostpch *p, const struct stat *gch, char *why, size_t size)
{
	char *text = NULL;
	size_t n = 0;
	if (fb_read_file(p->dep, &text, &n, NULL) != 0) {
		snprintf(why, size, "its header list is missing");
		return true;
	}
	bool stale = false;
	char path[FB_HOSTPCH_PATH];
	struct stat st;
	for (const char *pos = fb_depfile_deps(text); !stale && fb_depfile_next(&pos, path, sizeof(path));) {
		if (stat(path, &st) != 0 || later(&st.st_mtim, &gch->st_mtim) || later(&st.st_ctim, &gch->st_mtim)) {
			snprintf(why, size, "%.200s changed", path);
			stale = true;
		}
	}
	free(text);
	return stale;
}

/* Whether the PCH is the one its edge made: stamp holds its size, inode and mtime as GNU stat
 * printed them ("%s %i %.9Y"). */
static bool
stamp_ok(const struct fb_hostpch *p, const struct stat *gch)
{
	char *text = NULL;
	size_t n = 0;
	if (fb_read_file(p->stamp, &text, &n, NULL) != 0)
		return false;
	long long size = -1, ino = -1, sec = -1, nsec = -1;
	bool ok = sscanf(text, "%lld %lld %lld.%lld", &size, &ino, &sec, &nsec) == 4 && size == (long long)gch->st_size &&
	          ino == (long long)gch->st_ino && sec == (long long)gch->st_mtim.tv_sec &&
	          nsec == (long long)gch->st_mtim.tv_nsec;
	free(text);
	return ok;
}

/* CACHE/hostpch/KEY made (0700) and checked, the cache dir itself checked as the compile
 * cache's. */
static int
make_dir(const struct fb_config *cfg, const char *key, struct fb_hostpch *p, struct fb_error *err)
{
	char cache[FB_HOSTPCH_PATH - 256], sub[FB_HOSTPCH_PATH - 128];
	int rc = fb_cache_local_dir(cfg, NULL, cache, sizeof(cache), err);
	if (rc)
		return rc;
	snprintf(sub, sizeof(sub), "%s/hostpch", cache);
	if ((rc = fb_dir_make(sub, "host PCH dir", FIX, 0, err)))
		return rc;
	snprintf(p->dir, sizeof(p->dir), "%s/%s", sub, key);
	return fb_dir_make(p->dir, "host PCH dir", FIX, 0, err);
}

/* A shared flock on CACHE/hostpch/KEY, kept open (p->hold) for as long as the build runs:
 * 'fatbuild cache trim' takes an exclusive one before it removes a PCH dir and skips one it
 * cannot lock (docs/caches.md "Size"), so no compile of this build finds its PCH gone. Taken
 * before the PCH is checked or written; a dir a trim removed between its making and the lock
 * (no links left) is made again. */
static int
hold_dir(const struct fb_config *cfg, const char *key, struct fb_hostpch *p, struct fb_error *err)
{
	for (int tries = 0; tries < 3; tries++) {
		int rc = make_dir(cfg, key, p, err);
		if (rc)
			return rc;
		int fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return fb_seterr(err, FB_EIO, "host PCH: cannot open %s: %s", p->dir, strerror(errno));
		while (flock(fd, LOCK_SH) != 0 && errno == EINTR)
			;
		struct stat st;
		if (fstat(fd, &st) == 0 && st.st_nlink > 0) {
			p->hold = fd;
			return 0;
		}
		close(fd);
	}
	return fb_seterr(err, FB_EIO, "host PCH: %s is removed as soon as it is made (a 'fatbuild cache trim' "
	                 "with a tiny --max-size?); build with --no-host-pch", p->dir);
}

int
fb_hostpch_prepare(const struct fb_config *cfg, const char *block, const char *compiler, const char *flags,
                   const char *torch_version, const char *torch_dir, bool eager, struct fb_hostpch *p,
                   struct fb_error *err)
{
	memset(p, 0, sizeof(*p));
	p->hold = -1;
	char found[PATH_MAX], tool[PATH_MAX + 64]; /* one PATH search for the flavor and the key */
	int trc = fb_edge_tool_id(cfg->path, compiler, found, tool, sizeof(tool));
	p->flavor = flavor_of(compiler, trc == 0 ? found : NULL);
	if (p->flavor == FB_HOSTPCH_NONE)
		return 0;
	if (trc == -1)
		return fb_seterr(err, FB_ENOTOOL, "host PCH: %s not found on PATH", compiler);
	if (trc)
		return fb_seterr(err, FB_ENOTOOL, "host PCH: %s: %s", found, strerror(errno));
	char *id = NULL, key[65];
	int rc = identity(block, tool, flags, torch_version, torch_dir, &id, key, err);
	if (!rc)
		rc = hold_dir(cfg, key, p, err);
	char idpath[FB_HOSTPCH_PATH + 8];
	snprintf(idpath, sizeof(idpath), "%s/id", p->dir);
	snprintf(p->header, sizeof(p->header), "%s/h.h", p->dir);
	snprintf(p->gch, sizeof(p->gch), "%s/h.h.%s", p->dir, p->flavor == FB_HOSTPCH_CLANG ? "pch" : "gch");
	snprintf(p->dep, sizeof(p->dep), "%s/h.h.d", p->dir);
	snprintf(p->stamp, sizeof(p->stamp), "%s/stamp", p->dir);
	struct stat st;
	bool first = !rc && access(idpath, F_OK) != 0;
	if (!rc && !holds(idpath, id)) {
		snprintf(p->why, sizeof(p->why), "%s", first ? "none yet" : "foreign (made for another identity)");
		p->stale = true;
	} else if (!rc && !holds(p->header, block)) {
		snprintf(p->why, sizeof(p->why), "its header differs");
		p->stale = true;
	} else if (!rc && stat(p->gch, &st) != 0) {
		snprintf(p->why, sizeof(p->why), "none yet");
		p->stale = true;
	} else if (!rc && !stamp_ok(p, &st)) {
		snprintf(p->why, sizeof(p->why), "foreign (not the one made here)");
		p->stale = true;
	} else if (!rc) {
		p->stale = deps_stale(p, &st, p->why, sizeof(p->why));
	}
	p->use = !rc && (eager || !first);
	if (!rc) {
		snprintf(p->key, sizeof(p->key), "%s", key);
		unsigned char d[32];
		char hex[65];
		fb_sha256_buf(block, strlen(block), d);
		fb_sha256_hex(d, hex);
		snprintf(p->id, sizeof(p->id), "%.16s", hex);
	}
	if (!rc && p->stale) {
		/* Gone before ninja runs, so it is remade whatever this build dir's log says. */
		unlink(p->gch);
		unlink(p->dep);
		unlink(p->stamp);
		/* Rewritten only when different: compiles name h.h in their depfiles, and a new mtime
		 * would rebuild them. */
		if (!holds(p->header, block))
			rc = fb_write_file_atomic(p->header, block, strlen(block), 0600, err);
		if (!rc && !holds(idpath, id))
			rc = fb_write_file_atomic(idpath, id, strlen(id), 0600, err);
	}
	if (!rc)
		old_mtime(p->header);
	/* Its id's mtime says when a build last used it: trim evicts the least recently used. */
	if (!rc)
		utimensat(p->hold, "id", NULL, AT_SYMLINK_NOFOLLOW);
	if (rc)
		fb_hostpch_release(p);
	free(id);
	return rc;
}

void
fb_hostpch_release(struct fb_hostpch *p)
{
	if (p->hold >= 0)
		close(p->hold);
	p->hold = -1;
}

/* ---- the build dir's view of it ---- */

/* Gives h.h one fixed, old mtime: its text follows from KEY, and compiles that read it as a
 * plain header name it in their depfiles, so a new copy (another cache dir, a cleared cache)
 * must not look newer than their objects to ninja. */
static void
old_mtime(const char *path)
{
	struct stat st;
	const struct timespec t[2] = {{1000000000, 0}, {1000000000, 0}}; /* 2001-09-09 */
	if (stat(path, &st) == 0 && (st.st_mtim.tv_sec != t[1].tv_sec || st.st_mtim.tv_nsec != 0))
		utimensat(AT_FDCWD, path, t, 0);
}

/* dir/name as a symbolic link to target, replaced only when it points elsewhere. */
static int
link_to(const char *dir, const char *name, const char *target, struct fb_error *err)
{
	char path[FB_HOSTPCH_PATH + 64], tmp[FB_HOSTPCH_PATH + 96], now[FB_HOSTPCH_PATH];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ssize_t n = readlink(path, now, sizeof(now) - 1);
	if (n >= 0 && (now[n] = 0, strcmp(now, target) == 0))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid());
	unlink(tmp);
	if (symlink(target, tmp) != 0 || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return fb_seterr(err, FB_EIO, "host PCH: cannot link %s: %s", path, strerror(e));
	}
	return 0;
}

int
fb_hostpch_link(struct fb_hostpch *p, const char *build_dir, const char *script, struct fb_error *err)
{
	char top[FB_HOSTPCH_PATH - 32];
	if (snprintf(top, sizeof(top), "%s/pch", build_dir) >= (int)sizeof(top))
		return fb_seterr(err, FB_EINVAL, "host PCH: %s: path too long", build_dir);
	int rc = fb_dir_make(top, "host PCH links", FIX, 0, err);
	snprintf(p->link, sizeof(p->link), "%s/%s", top, p->id);
	if (!rc)
		rc = fb_dir_make(p->link, "host PCH links", FIX, 0, err);
	const char *ext = strrchr(p->gch, '.');
	char name[16];
	snprintf(name, sizeof(name), "h.h%s", ext ? ext : ".gch");
	if (!rc)
		rc = link_to(p->link, "h.h", p->header, err);
	if (!rc)
		rc = link_to(p->link, name, p->gch, err);
	if (!rc)
		rc = link_to(p->link, "h.h.d", p->dep, err);
	char sh[FB_HOSTPCH_PATH + 16];
	snprintf(sh, sizeof(sh), "%s/pch.sh", p->link);
	if (!rc && !holds(sh, script))
		rc = fb_write_file_atomic(sh, script, strlen(script), 0700, err);
	return rc;
}

/* Appends s shell-quoted. */
static void
put_quoted(struct fb_buf *b, const char *s)
{
	char *q = NULL;
	if (fb_shell_quote(s, &q, NULL) != 0) {
		b->oom = true;
		return;
	}
	fb_buf_puts(b, q);
	free(q);
}

/* The part of pch.sh that makes the PCH (in its dir, as "make"): the compiler in the
 * background, watched: once the build has failed it is stopped with its own children (the
 * driver leaves its cc1plus running when stopped alone); a stop of the edge reaches it with its
 * process group. Not a session of its own: with the scheduler's autogroups that would give it
 * a share of the CPU of its own, beside the whole build's. The header list is kept without h.h
 * itself (the name is relative), then the stamp of the PCH made here. */
static void
script_make(struct fb_buf *b, const struct fb_hostpch *p, const char *make, const char *failed)
{
	const char *gch = strrchr(p->gch, '/') + 1;
	fb_buf_puts(b, "cd \"$d\" || exit 0\nt=.tmp.$$\nclean() { rm -f ");
	fb_buf_puts(b, gch);
	fb_buf_puts(b, "$t h.h.d$t stamp$t; }\nc=\ntrap '[ -z \"$c\" ] || wait $c; clean; exit 1' INT TERM HUP\n");
	fb_buf_puts(b, make);
	fb_buf_puts(b, " -x c++-header h.h -MD -MF h.h.d$t -o ");
	fb_buf_puts(b, gch);
	fb_buf_puts(b, "$t &\nc=$!\nwhile kill -0 $c 2>/dev/null; do\n\tif [ -e ");
	put_quoted(b, failed);
	fb_buf_puts(b, " ]; then pkill -TERM -P $c; kill -TERM $c; wait $c; clean; exit 1; fi\n\tsleep 0.2\ndone\n"
	               "wait $c || { clean; exit 0; }\n"
	               "sed '1s/: *h\\.h\\( \\|$\\)/:\\1/' h.h.d$t >h.h.d && mv -f ");
	fb_buf_puts(b, gch);
	fb_buf_puts(b, "$t ");
	fb_buf_puts(b, gch);
	fb_buf_puts(b, " && stat -c '%s %i %.9Y' ");
	fb_buf_puts(b, gch);
	fb_buf_puts(b, " >stamp$t && mv -f stamp$t stamp\nclean\n");
}

int
fb_hostpch_script(const struct fb_hostpch *p, const char *make, const char *failed, bool eager, char **out,
                  struct fb_error *err)
{
	struct fb_buf b = {0};
	const char *gch = strrchr(p->gch, '/') + 1;
	fb_buf_puts(&b, "#!/bin/sh\n# Made by fatbuild build: makes the torch PCH of this build's C++ compiles\n"
	                "# (docs/pytorch.md \"Precompiled torch headers\").\nd=");
	put_quoted(&b, p->dir);
	fb_buf_puts(&b, "\n[ -e ");
	put_quoted(&b, failed);
	fb_buf_puts(&b, " ] && exit 1\n[ -f \"$d/");
	fb_buf_puts(&b, gch);
	fb_buf_puts(&b, "\" ] && exit 0\ncase $1 in\n"
	                "bg) exec flock -n -o \"$d/bg\" flock -n -o \"$d/lock\" /bin/sh \"$0\" make ;;\nmake) ;;\n*)\n"
	                "\t[ -f \"$d/seen\" ] || { : >\"$d/seen\"; ");
	fb_buf_puts(&b, eager ? "}\n" : "exit 0; }\n");
	fb_buf_puts(&b, "\tflock -n \"$d/bg\" true || exit 0\n\texec flock -o \"$d/lock\" /bin/sh \"$0\" make ;;\nesac\n"
	                "[ -f \"$d/");
	fb_buf_puts(&b, gch);
	fb_buf_puts(&b, "\" ] && exit 0\n");
	script_make(&b, p, make, failed);
	if (b.oom) {
		free(b.s);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	*out = b.s;
	return 0;
}
