/* edgecache.c: host and nvcc compile edges cached as the NVRTC images are, through the same
 * get and put of the compile cache (cache/cache.h: the local store, then the remote over Bazel
 * HTTP or REAPI on gRPC), so a second build dir, machine or CI job takes what another compiled
 * (docs/caches.md "Host and nvcc edges"). This file makes the keys and the manifests and checks
 * what a get finds; the tiers are the cache's. The key follows ccache's direct mode, in two steps:
 *   K0 = SHA-256("fatbuild edge 1", each tool's resolved path, size and mtime, the environment
 *        that moves include paths, the command's words with the bases spelled @Bn and nvcc's
 *        --threads N and nice -n N left out)
 *   K1 = SHA-256(K0, then for each file the last compile's depfile named: path (bases spelled
 *        @Bn), SHA-256 of its content)
 * The entry under K0 is the manifest: that file list (as the ptx field: a remote record must
 * name a cubin or a PTX, docs/remote-cache.md §2). The entry under K1 is
 * the object (as the cubin field). A lookup reads K0's manifest, hashes the files it lists, and
 * takes K1's object: every header read, the source among them, is in the key, as ccache's
 * direct mode has it. A header that would now be found earlier on the include path without
 * being in the old list is the one case direct mode cannot see (ccache's too); changing flags,
 * -I dirs or the compiler changes K0. The bases are the build dir (nvcc's keep dir, -o, -MF
 * and the -ffile-prefix-map that makes objects independent of it, repro.c), then those the
 * command maps with -ffile-prefix-map too, FATBUILD_CACHE_BASEDIR (the checkout: sources, -I
 * dirs) and torch's install dir, and the dir of a torch PCH (its -include and header): so
 * checkouts, venvs and caches at other paths share entries, and the object a hit gives names
 * none of them (docs/caches.md "Host and nvcc edges"). A base matches whole path components
 * only.
 *
 * A manifest may come from a remote anyone could have written, so its files are read only
 * inside the build's roots (the bases, each tool's install prefix, the directories the
 * command names, the include path variables, and /usr), by their
 * real paths, and only as regular files opened without blocking: /dev/zero, a FIFO or a
 * file of the user's outside the build is never read, and the server never learns a key made
 * from one; nor does one make an edge hash more than HASH_FILE_MAX a file or HASH_LIST_MAX in
 * all: that edge is compiled here and not kept, with a note. The object must be a
 * relocatable object of this machine. An entry that fails is
 * a miss: removed from the local cache, never kept from the remote, reported once
 * (docs/caches.md "Host and nvcc edges"). */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/config.h"
#include "base/error.h"
#include "base/safefs.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "edge_remote.h"
#include "edgecache.h"
#include "fatbin/elfid.h"
#include "base/words.h"
#include "plumbing.h"

extern char **environ;

#define TAG "fatbuild edge 2"

/* ---- keys ---- */

/* Whether c may go on a file name: a base followed by it is a prefix of another name. */
static bool
name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c && strchr("._-+~", c));
}

/* Appends s with every occurrence of a base spelled @Bn (n its index), the longest first. */
static void
put_rebased(struct fb_buf *b, const char *s, const char *const *bases, size_t nbases)
{
	for (const char *p = s; *p;) {
		size_t hit = nbases, len = 0;
		for (size_t i = 0; i < nbases; i++) {
			size_t n = strlen(bases[i]);
			if (n && n > len && strncmp(p, bases[i], n) == 0 && !name_char(p[n])) {
				hit = i;
				len = n;
			}
		}
		if (hit == nbases) {
			fb_buf_put(b, p, 1);
			p++;
			continue;
		}
		char tag[24];
		snprintf(tag, sizeof(tag), "@B%zu", hit);
		fb_buf_puts(b, tag);
		p += len;
	}
}

/* The local path of a manifest line: "@Bn/rest" becomes BASE_n/rest. Into out; false when it
 * does not fit or names no base. */
static bool
local_path(const char *line, size_t n, const char *const *bases, size_t nbases, char *out, size_t size)
{
	if (n > 2 && line[0] == '@' && line[1] == 'B') {
		char *end = NULL;
		unsigned long i = strtoul(line + 2, &end, 10);
		if (end == line + 2 || i >= nbases || (size_t)(end - line) > n)
			return false;
		int k = snprintf(out, size, "%s%.*s", bases[i], (int)(n - (size_t)(end - line)), end);
		return k >= 0 && (size_t)k < size;
	}
	if (n >= size)
		return false;
	memcpy(out, line, n);
	out[n] = 0;
	return true;
}

int
fb_edge_tool_id(const char *path, const char *tool, char *found, char *out, size_t size)
{
	char real[PATH_MAX];
	const char *pos = path;
	struct stat st;
	if (strchr(tool, '/'))
		snprintf(found, PATH_MAX, "%s", tool);
	else if (!fb_path_next(&pos, tool, found, PATH_MAX))
		return -1;
	if (!realpath(found, real) || stat(real, &st) != 0)
		return -2;
	snprintf(out, size, "%s %lld %lld", real, (long long)st.st_size,
	         (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
	return 0;
}

/* "tool PATH SIZE MTIME_NS" for a program found as a shell would (a name on PATH). */
static void
put_tool(struct fb_buf *b, const char *path, const char *tool)
{
	char found[PATH_MAX], id[PATH_MAX + 64];
	fb_buf_puts(b, "tool ");
	if (fb_edge_tool_id(path, tool, found, id, sizeof(id)) == 0) {
		fb_buf_puts(b, id);
	} else {
		fb_buf_puts(b, tool);
		fb_buf_puts(b, " missing");
	}
	fb_buf_puts(b, "\n");
}

/* Removes each " --threads N" and "nice -n N " from b after at: nvcc's thread count and
 * priority follow the machine's job slots and the build's other edges (graph_nvcc.c) and do
 * not change the object, so machines with other CPU counts, and builds with and without C++,
 * share entries. */
static void
drop_threads(struct fb_buf *b, size_t at)
{
	if (b->oom || !b->s)
		return;
	char *w = b->s + at;
	for (char *r = b->s + at; *r;) {
		if (strncmp(r, " --threads ", 11) == 0 && r[11] >= '0' && r[11] <= '9') {
			r += 11;
			while (*r >= '0' && *r <= '9')
				r++;
			continue;
		}
		if ((r == b->s + at || r[-1] == ' ') && strncmp(r, "nice -n ", 8) == 0 && r[8] >= '0' && r[8] <= '9') {
			char *q = r + 8;
			while (*q >= '0' && *q <= '9')
				q++;
			if (*q == ' ') {
				r = q + 1;
				continue;
			}
		}
		*w++ = *r++;
	}
	*w = 0;
	b->len = (size_t)(w - b->s);
}

/* Removes from b after at each blank-separated occurrence of the word w, with the blank before
 * it: a setting the edge's caller says cannot change the object (fb_edge_opts.unkeyed). */
static void
drop_word(struct fb_buf *b, size_t at, const char *w)
{
	size_t n = strlen(w);
	if (b->oom || !b->s || !n)
		return;
	char *wr = b->s + at;
	for (char *r = b->s + at; *r;) {
		if (*r == ' ' && strncmp(r + 1, w, n) == 0 && (r[1 + n] == ' ' || !r[1 + n])) {
			r += 1 + n;
			continue;
		}
		*wr++ = *r++;
	}
	*wr = 0;
	b->len = (size_t)(wr - b->s);
}

/* K0: the command and its tools. */
static int
key0(const struct fb_edge_opts *o, const struct fb_config *cfg, char hex[65])
{
	const struct {
		const char *name, *value;
	} env[] = {{"CPATH", cfg->cpath},
	           {"C_INCLUDE_PATH", cfg->c_include_path},
	           {"CPLUS_INCLUDE_PATH", cfg->cplus_include_path},
	           {"SOURCE_DATE_EPOCH", cfg->source_date_epoch},
	           {"GCC_EXEC_PREFIX", cfg->gcc_exec_prefix},
	           {"COMPILER_PATH", cfg->compiler_path},
	           {"NVCC_PREPEND_FLAGS", cfg->nvcc_prepend_flags},
	           {"NVCC_APPEND_FLAGS", cfg->nvcc_append_flags}};
	struct fb_buf b = {0};
	fb_buf_puts(&b, TAG "\n");
	for (size_t i = 0; i < o->ntools; i++)
		put_tool(&b, cfg->path, o->tools[i]);
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *v = env[i].value;
		if (v) {
			fb_buf_puts(&b, env[i].name);
			fb_buf_puts(&b, "=");
			fb_buf_puts(&b, v);
			fb_buf_puts(&b, "\n");
		}
	}
	for (size_t i = 0; o->argv[i]; i++) {
		fb_buf_puts(&b, "arg ");
		size_t at = b.len;
		put_rebased(&b, o->argv[i], o->bases, o->nbases);
		drop_threads(&b, at);
		for (size_t k = 0; k < o->nunkeyed; k++)
			drop_word(&b, at, o->unkeyed[k]);
		fb_buf_puts(&b, "\n");
	}
	int rc = b.oom ? FB_ENOMEM : 0;
	if (!rc)
		fb_sha256_buf_hex(b.s, b.len, hex);
	free(b.s);
	return rc;
}

/* ---- the roots: where a manifest's files may lie ---- */

/* path with "//", "." and ".." resolved by their spelling (an absolute path) into out; false
 * for a relative path or one that does not fit. */
static bool
lexical(const char *path, char *out, size_t size)
{
	if (path[0] != '/' || size < 2)
		return false;
	size_t n = 0;
	out[n++] = '/';
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t k = strcspn(p, "/");
		if (k == 0 || (k == 1 && p[0] == '.')) {
			p += k;
			continue;
		}
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 1 && out[n - 1] != '/')
				n--;
			if (n > 1)
				n--;
			p += k;
			continue;
		}
		if (n > 1)
			out[n++] = '/';
		if (n + k + 1 > size)
			return false;
		memcpy(out + n, p, k);
		n += k;
		p += k;
	}
	out[n] = 0;
	return true;
}

/* Adds dir as a root, by its spelling and by its real path; never "/" or a tree of devices
 * and kernel files. */
static void
add_root(struct fb_strlist *roots, const char *dir)
{
	static const char *const never[] = {"/", "/dev", "/proc", "/sys", "/run"};
	char lex[PATH_MAX], real[PATH_MAX];
	const char *v[2] = {lexical(dir, lex, sizeof(lex)) ? lex : NULL, realpath(dir, real) ? real : NULL};
	for (int i = 0; i < 2; i++) {
		bool bad = !v[i];
		for (size_t k = 0; !bad && k < sizeof(never) / sizeof(*never); k++)
			bad = strcmp(v[i], never[k]) == 0 || (k && strncmp(v[i], never[k], strlen(never[k])) == 0 &&
			                                          v[i][strlen(never[k])] == '/');
		if (!bad)
			fb_strlist_add(roots, v[i]);
	}
}

/* A directory a command word names: the word itself when it is a directory, else its
 * parent (a source, an -include, -o) and, for a file that is a link, its target's: the torch
 * PCH's -include BUILD/pch/ID/h.h links into the cache's hostpch/, and a compile that reads
 * it as a plain header names it in its depfile (docs/pytorch.md "Precompiled torch headers"). */
static void
add_word_root(struct fb_strlist *roots, const char *w, size_t n)
{
	char path[PATH_MAX], real[PATH_MAX];
	struct stat st;
	if (n == 0 || n >= sizeof(path))
		return;
	memcpy(path, w, n);
	path[n] = 0;
	bool found = stat(path, &st) == 0;
	if (found && !S_ISDIR(st.st_mode) && realpath(path, real)) {
		char *sl = strrchr(real, '/');
		if (sl && sl != real) {
			*sl = 0;
			add_root(roots, real);
		}
	}
	if (!found || !S_ISDIR(st.st_mode)) {
		char *sl = strrchr(path, '/');
		if (!sl || sl == path)
			return;
		*sl = 0;
	}
	add_root(roots, path);
}

/* Every path in s (a command word, or a shell command line): each absolute one, from a '/'
 * that starts a token or follows an option's name ("-I/x", "--include-path=/x"), to a blank,
 * quote, '=', ',' or ':'; and each token that is no option and names a file or directory from
 * the working directory ("a.c": the compile reads relative paths from there). */
static void
add_command_roots(struct fb_strlist *roots, const char *s)
{
	for (const char *p = s; *p;) {
		p += strspn(p, " \t'\"");
		size_t n = strcspn(p, " \t'\"");
		struct stat st;
		char rel[PATH_MAX], real[PATH_MAX];
		if (n && n < sizeof(rel) && p[0] != '-' && p[0] != '/') {
			memcpy(rel, p, n);
			rel[n] = 0;
			if (stat(rel, &st) == 0 && realpath(rel, real))
				add_word_root(roots, real, strlen(real));
		}
		p += n;
	}
	for (const char *p = s; *p; p++) {
		if (*p != '/')
			continue;
		const char *t = p;
		while (t > s && !strchr(" \t'\"=,:", t[-1]))
			t--;
		bool opt = t == p || (t[0] == '-' && strspn(t, "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_+") ==
		                                         (size_t)(p - t));
		size_t n = strcspn(p, " \t'\"=,:");
		if (opt)
			add_word_root(roots, p, n);
		p += n ? n - 1 : 0;
	}
}

/* The build's roots (see the top of this file), each by spelling and real path. */
static void
make_roots(const struct fb_edge_opts *o, const struct fb_config *cfg, struct fb_strlist *roots)
{
	const char *const env[] = {cfg->cpath, cfg->c_include_path, cfg->cplus_include_path};
	for (size_t i = 0; i < o->nbases; i++)
		add_root(roots, o->bases[i]);
	for (size_t i = 0; i < o->ntools; i++) {
		char found[PATH_MAX], id[PATH_MAX + 64], real[PATH_MAX];
		if (fb_edge_tool_id(cfg->path, o->tools[i], found, id, sizeof(id)) != 0)
			continue;
		const char *v[2] = {found, realpath(found, real)};
		for (int k = 0; k < 2 && v[k]; k++) { /* PREFIX of PREFIX/bin/TOOL */
			char d[PATH_MAX];
			snprintf(d, sizeof(d), "%s", v[k]);
			for (int up = 0; up < 2; up++) {
				char *sl = strrchr(d, '/');
				if (sl)
					*sl = 0;
			}
			if (d[0])
				add_root(roots, d);
		}
	}
	for (size_t i = 0; o->argv[i]; i++)
		add_command_roots(roots, o->argv[i]);
	for (size_t i = 0; i < sizeof(env) / sizeof(*env); i++) {
		for (const char *p = env[i] ? env[i] : ""; *p;) {
			size_t n = strcspn(p, ":");
			if (n && p[0] == '/')
				add_word_root(roots, p, n);
			p += n + (p[n] == ':');
		}
	}
	add_root(roots, "/usr"); /* the system's headers and its compilers' own (/usr/lib/gcc/...) */
}

static bool
under_roots(const struct fb_strlist *roots, const char *path)
{
	for (size_t i = 0; i < roots->n; i++) {
		size_t n = strlen(roots->v[i]);
		if (strncmp(path, roots->v[i], n) == 0 && (path[n] == '/' || path[n] == 0))
			return true;
	}
	return false;
}

/* The real paths of the directories a manifest's files lie in, asked once each an edge (the
 * lookup's K1 and the one kept after a compile share them: struct store): a torch compile
 * reads about 1,400 headers from a few dozen directories, and realpath() asks the kernel for
 * every component of each (12,500 readlink calls an edge). */
enum { NREALDIRS = 256 };
struct realdirs {
	char *dir[NREALDIRS], *real[NREALDIRS];
	unsigned n;
};

static void
realdirs_free(struct realdirs *d)
{
	for (unsigned i = 0; d && i < d->n; i++)
		free(d->dir[i]), free(d->real[i]);
	free(d);
}

/* realpath(path) through d: the directory's real path (remembered while there is room) and the
 * last component, which must be no symbolic link (lstat; else realpath() as it is). NULL when
 * path is missing. */
static char *
real_path(struct realdirs *d, const char *path, char *real)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : "";
	size_t dn = slash ? (size_t)(slash - path) : 0;
	if (!d || dn == 0 || dn >= PATH_MAX || !*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return realpath(path, real);
	const char *rdir = NULL;
	char dir[PATH_MAX], rbuf[PATH_MAX];
	for (unsigned i = 0; i < d->n && !rdir; i++)
		if (strncmp(d->dir[i], path, dn) == 0 && d->dir[i][dn] == 0)
			rdir = d->real[i];
	if (!rdir) {
		memcpy(dir, path, dn);
		dir[dn] = 0;
		if (!realpath(dir, rbuf))
			return NULL;
		rdir = rbuf;
		if (d->n < NREALDIRS && (d->dir[d->n] = strdup(dir)) && (d->real[d->n] = strdup(rbuf)))
			d->n++;
		else if (d->n < NREALDIRS)
			free(d->dir[d->n]), d->dir[d->n] = NULL;
	}
	struct stat st;
	if (snprintf(real, PATH_MAX, "%s/%s", strcmp(rdir, "/") ? rdir : "", base) >= PATH_MAX || lstat(real, &st) != 0)
		return NULL;
	return S_ISLNK(st.st_mode) ? realpath(path, real) : real;
}

/* Opens the file a manifest line names: its local path inside the roots by its spelling and
 * by its real path, opened without blocking (a FIFO) and only as a regular file. *fd, or -1
 * when it is missing (a plain miss: a header went away) or -2 with why (a manifest that
 * names what no compile of this build reads). */
static int
open_listed(const struct fb_edge_opts *o, const struct fb_strlist *roots, struct realdirs *rd, const char *line,
            size_t n, int *fd, char *why, size_t wsize)
{
	char path[PATH_MAX], lex[PATH_MAX], real[PATH_MAX];
	struct stat st;
	*fd = -1;
	if (!local_path(line, n, o->bases, o->nbases, path, sizeof(path)) || !lexical(path, lex, sizeof(lex))) {
		snprintf(why, wsize, "names '%.200s', not an absolute path below a base", path);
		return -2;
	}
	if (!under_roots(roots, lex)) {
		snprintf(why, wsize, "names %.300s, outside the build's roots", lex);
		return -2;
	}
	if (!real_path(rd, path, real))
		return -1;
	if (!under_roots(roots, real)) {
		snprintf(why, wsize, "names %.300s, which is %.300s, outside the build's roots", lex, real);
		return -2;
	}
	if (fb_open_regular(real, 0, fd, &st, NULL) == 0)
		return 0;
	if (stat(real, &st) != 0 || S_ISREG(st.st_mode))
		return -1; /* gone, or unreadable: a plain miss */
	snprintf(why, wsize, "names %.300s, not a regular file", real);
	return -2;
}

/* What a manifest may make an edge hash: a torch compile's 5,500 headers are some 100 MB, its
 * largest header a few MB; a manifest (from the remote, or of a header since grown) naming a
 * 3 GB file cost 20 s an edge. Beyond either, the edge is compiled, not cached. */
#define HASH_FILE_MAX ((long long)256 << 20)
#define HASH_LIST_MAX ((long long)1 << 30)

/* Whether the file open on fd (the manifest's line) keeps what the manifest makes the edge hash
 * within the caps, *total the bytes so far; else why, naming it by its local path. */
static bool
within_hash_caps(const struct fb_edge_opts *o, int fd, const char *line, size_t n, long long *total, char *why,
                 size_t wsize)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return true; /* the hash then fails: a miss */
	long long size = (long long)st.st_size;
	*total += size;
	if (size <= HASH_FILE_MAX && *total <= HASH_LIST_MAX)
		return true;
	char path[PATH_MAX];
	if (!local_path(line, n, o->bases, o->nbases, path, sizeof(path)))
		snprintf(path, sizeof(path), "%.*s", (int)(n < 300 ? n : 300), line);
	if (size > HASH_FILE_MAX)
		snprintf(why, wsize, "%.300s is %lld bytes, more than the %lld an edge hashes for one file; compiled here",
		         path, size, HASH_FILE_MAX);
	else
		snprintf(why, wsize, "the files up to %.300s are %lld bytes, more than the %lld an edge hashes; compiled here",
		         path, *total, HASH_LIST_MAX);
	return false;
}

/* K1 from K0 and the files the manifest lists (one path a line, bases spelled @Bn): each
 * spelling and the content of the local file; -1 when one cannot be read (a miss), -2 with
 * why when the manifest names a file that is not to be read (open_listed), -3 with why when
 * its files are more than an edge hashes (HASH_FILE_MAX). rd: the edge's real paths (NULL:
 * realpath() for each). */
static int
key1(const struct fb_edge_opts *o, const struct fb_strlist *roots, struct realdirs *rd, const char *k0,
     const char *list, char hex[65], char *why, size_t wsize)
{
	struct fb_buf b = {0};
	fb_buf_puts(&b, k0);
	fb_buf_puts(&b, "\n");
	int rc = 0;
	long long total = 0;
	for (const char *p = list; !rc && *p;) {
		size_t n = strcspn(p, "\n");
		const char *line = p;
		p += n + (p[n] == '\n');
		if (!n)
			continue;
		unsigned char d[32];
		char dh[65];
		int fd;
		rc = open_listed(o, roots, rd, line, n, &fd, why, wsize);
		if (!rc && !within_hash_caps(o, fd, line, n, &total, why, wsize))
			rc = -3;
		if (!rc && fb_sha256_fd(fd, o->cancel, d) != 0)
			rc = -1;
		if (fd >= 0)
			close(fd);
		if (rc)
			break;
		fb_sha256_hex(d, dh);
		fb_buf_put(&b, line, n);
		fb_buf_puts(&b, " ");
		fb_buf_puts(&b, dh);
		fb_buf_puts(&b, "\n");
	}
	if (!rc && b.oom)
		rc = -1;
	if (!rc)
		fb_sha256_buf_hex(b.s, b.len, hex);
	free(b.s);
	return rc;
}

/* ---- the caches ---- */

struct store {
	const struct fb_edge_opts *o;
	const struct fb_config *cfg; /* the edge's configuration, read once */
	struct fb_cache *cache;    /* the local store and the remote (cache.h); NULL: neither */
	struct fb_edge_result *r;
	struct fb_strlist roots;   /* make_roots */
	struct realdirs *rd;       /* the real paths both K1s of the edge read; NULL: none kept */
	const char *k0;            /* the key of the manifest being looked up */
	char capped[512];          /* why a manifest named more than an edge hashes; "": none */
	struct fb_strlist known;   /* a manifest's files when its object missed: a remote run's inputs */
	char k1[65];               /* the object's key, from the manifest that passed */
};

static void
note(struct store *s, const char *what, const char *msg)
{
	if (!s->r->note[0])
		snprintf(s->r->note, sizeof(s->r->note), "%s: %.400s", what, msg[0] ? msg : "failed");
}

/* A damaged entry (from the remote: 1, else local), as compile.c says it for an image. */
static void
corrupt(struct store *s, int from, const char *msg)
{
	const char *obj = strrchr(s->o->output, '/');
	if (!s->r->note[0])
		snprintf(s->r->note, sizeof(s->r->note), "corrupt %scache entry for %.100s %s and compiled: %.340s",
		         from ? "remote " : "", obj ? obj + 1 : s->o->output, from ? "ignored" : "removed", msg);
}

/* What the cache tells (cache.h): the first of it is the edge's note. */
static void
on_cache_event(void *ctx, enum fb_cache_event ev, const char *msg)
{
	struct store *s = ctx;
	switch (ev) {
	case FB_CACHE_LOCAL_DAMAGED:
		corrupt(s, 0, msg);
		break;
	case FB_CACHE_REMOTE_DAMAGED:
		corrupt(s, 1, msg);
		break;
	case FB_CACHE_REMOTE_OFF:
		note(s, "remote cache off", msg);
		break;
	case FB_CACHE_REMOTE_FAILED:
		note(s, "remote cache off for this build", msg);
		break;
	case FB_CACHE_UPLOAD_FAILED:
		note(s, "remote cache", msg);
		break;
	case FB_CACHE_LOCAL_UNKEPT:
		note(s, "edge cache", msg);
		break;
	}
}

/* The compile cache's tiers: its local store when the directory passes its checks, and the
 * remote when one is named, either without the other. */
static void
store_open(struct store *s)
{
	struct fb_error e = {0};
	char dir[PATH_MAX];
	bool local = fb_cache_local_dir(s->cfg, s->o->cache_dir, dir, sizeof(dir), &e) == 0;
	if (!local)
		note(s, "edge cache off", e.msg);
	struct fb_cache_opts co = {.dir = local ? dir : NULL, .remote = &s->o->remote, .config = s->cfg};
	struct fb_cache_hooks h = {NULL, on_cache_event, s};
	fb_cache_open(&co, &h, &s->cache, NULL); /* out of memory: no cache, the command runs */
}

/* What a manifest (K0) holds: text, one absolute or @Bn path a line, whose files can be read
 * inside the build's roots (open_listed); K1 comes of them into s->k1. FB_ENOIMAGE (a miss)
 * when one of them is gone. */
static int
manifest_fits(void *ctx, const struct fb_cache_entry *e, struct fb_error *err)
{
	struct store *s = ctx;
	if (e->cubin_size)
		return fb_seterr(err, FB_EFORMAT, "a manifest with an object (%zu bytes)", e->cubin_size);
	if (!e->ptx_size || memchr(e->ptx, 0, e->ptx_size))
		return fb_seterr(err, FB_EFORMAT, "a manifest %s", e->ptx_size ? "with a NUL byte" : "naming no file");
	for (const char *p = (const char *)e->ptx, *end = p + e->ptx_size; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n && p[0] != '/' && !(n > 2 && p[0] == '@' && p[1] == 'B'))
			return fb_seterr(err, FB_EFORMAT, "a manifest line is not a path");
		p += n + 1;
	}
	char *list = strndup((const char *)e->ptx, e->ptx_size), why[sizeof(err->msg)];
	int k = list ? key1(s->o, &s->roots, s->rd, s->k0, list, s->k1, why, sizeof(why)) : -1;
	free(list);
	if (k == -3) /* not damaged: a miss, said when no tier serves the edge */
		snprintf(s->capped, sizeof(s->capped), "%.500s", why);
	return k == -2 ? fb_seterr(err, FB_EFORMAT, "%s", why) : k ? FB_ENOIMAGE : 0;
}

/* An object (K1): a relocatable object of this machine. */
static int
object_fits(void *ctx, const struct fb_cache_entry *e, struct fb_error *err)
{
	(void)ctx;
	return fb_elf_host_object(e->cubin, e->cubin_size, err);
}

/* ---- hit and miss ---- */

/* Writes the object and a depfile naming the manifest's files. */
static int
serve(const struct fb_edge_opts *o, const struct fb_cache_entry *obj, const char *list, struct fb_error *err)
{
	struct fb_strlist deps = {0};
	char path[PATH_MAX];
	int rc = 0;
	for (const char *p = list; *p && !rc;) {
		size_t n = strcspn(p, "\n");
		if (n && local_path(p, n, o->bases, o->nbases, path, sizeof(path)))
			fb_strlist_add(&deps, path);
		else if (n)
			rc = fb_seterr(err, FB_EINVAL, "edge cache: a manifest names an unknown base");
		p += n + (p[n] == '\n');
	}
	if (!rc && deps.oom)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	if (!rc)
		rc = fb_write_file_atomic(o->output, obj->cubin, obj->cubin_size, 0644, err);
	if (!rc)
		rc = fb_edge_write_depfile(o, deps.v, deps.n, err);
	fb_strlist_free(&deps);
	return rc;
}

/* A manifest's files, spelled locally, into s->known (what a remote run sends). */
static void
known_files(struct store *s, const char *list)
{
	char path[PATH_MAX];
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, "\n");
		if (n && local_path(p, n, s->o->bases, s->o->nbases, path, sizeof(path)))
			fb_strlist_add(&s->known, path);
		p += n + (p[n] == '\n');
	}
}

/* 1 when the manifest and the object under its K1 were found and served; what came from the
 * remote is kept locally once it passed its checks (cache.h). */
static int
lookup(struct store *s, const char *k0)
{
	struct fb_cache_entry man = {0}, obj = {0};
	struct fb_cache_hooks hm = {manifest_fits, on_cache_event, s}, ho = {object_fits, on_cache_event, s};
	s->k0 = k0;
	int from = fb_cache_get(s->cache, k0, &hm, &man), from1 = FB_CACHE_MISS;
	char *list = from != FB_CACHE_MISS ? strndup((const char *)man.ptx, man.ptx_size) : NULL;
	bool ok = list && (from1 = fb_cache_get(s->cache, s->k1, &ho, &obj)) != FB_CACHE_MISS;
	struct fb_error e = {0};
	if (ok && serve(s->o, &obj, list, &e) != 0) {
		note(s, "edge cache", e.msg);
		ok = false;
	}
	if (ok)
		s->r->hit = from == FB_CACHE_REMOTE || from1 == FB_CACHE_REMOTE ? FB_EDGE_REMOTE : FB_EDGE_LOCAL;
	else if (list)
		known_files(s, list);
	free(list);
	fb_cache_entry_clear(&man);
	fb_cache_entry_clear(&obj);
	return ok;
}

/* Runs argv; its exit status (128+signal when killed) into *status. */
static int
run(const struct fb_edge_opts *o, int *status, struct fb_error *err)
{
	pid_t pid;
	int src = posix_spawnp(&pid, o->argv[0], NULL, NULL, (char *const *)o->argv, environ);
	if (src != 0)
		return fb_seterr(err, FB_EIO, "edge: cannot run %s: %s", o->argv[0], strerror(src));
	int st = 0;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return fb_seterr(err, FB_EIO, "edge: waitpid: %s", strerror(errno));
		if (o->cancel && *o->cancel)
			kill(pid, (int)*o->cancel);
	}
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

/* Appends the files depfile names to list, one a line, absolute. */
static int
add_deps(const char *depfile, struct fb_buf *list)
{
	char *dep = NULL;
	size_t dn = 0;
	if (fb_read_file(depfile, &dep, &dn, NULL) != 0)
		return -1;
	char path[PATH_MAX], abs[PATH_MAX];
	for (const char *pos = fb_depfile_deps(dep); fb_depfile_next(&pos, path, sizeof(path));) {
		fb_buf_puts(list, path[0] != '/' && realpath(path, abs) ? abs : path);
		fb_buf_puts(list, "\n");
	}
	free(dep);
	return 0;
}

/* The list with the bases spelled @Bn: the manifest's form. */
static int
rebase_list(const struct fb_edge_opts *o, struct fb_buf *list)
{
	struct fb_buf b = {0};
	put_rebased(&b, list->s, o->bases, o->nbases);
	if (b.oom) {
		free(b.s);
		return -1;
	}
	free(list->s);
	*list = b;
	return 0;
}

/* After a successful compile: every file it read, one a line, into *list: its depfile's and
 * those of more_deps, which are then written into its depfile too (ninja rebuilds the object
 * when a header inside its PCH changes), less the quiet ones. -1 when a depfile cannot be read. */
static int
all_deps(const struct fb_edge_opts *o, struct fb_buf *list)
{
	if (add_deps(o->depfile, list) != 0)
		return -1;
	for (size_t i = 0; i < o->nmore_deps; i++)
		if (access(o->more_deps[i], F_OK) == 0 && add_deps(o->more_deps[i], list) != 0)
			return -1; /* a missing one: no PCH was made, and the compile's own depfile has all */
	if (list->oom || !list->s)
		return -1;
	if (!o->nmore_deps && !o->nquiet)
		return rebase_list(o, list);
	struct fb_strlist v = {0};
	for (char *save = NULL, *w = strtok_r(list->s, "\n", &save); w; w = strtok_r(NULL, "\n", &save))
		fb_strlist_add(&v, w);
	/* strtok_r cut list at each line: put it back together */
	struct fb_buf b = {0};
	for (size_t i = 0; i < v.n; i++) {
		fb_buf_puts(&b, v.v[i]);
		fb_buf_puts(&b, "\n");
	}
	free(list->s);
	*list = b;
	int rc = v.oom || b.oom ? -1 : fb_edge_write_depfile(o, v.v, v.n, NULL);
	fb_strlist_free(&v);
	return rc ? -1 : rebase_list(o, list);
}

/* After a successful compile: the manifest under K0, the object under K1. */
static void
remember(struct store *s, const char *k0, const struct fb_buf *list)
{
	const struct fb_edge_opts *o = s->o;
	char *objd = NULL;
	size_t on = 0;
	char k1[65];
	char why[600];
	/* What names a file outside the roots or more than an edge hashes, or is no object of this
	 * machine, is not kept: no lookup could take it. */
	int k = -1;
	if (fb_read_file(o->output, &objd, &on, NULL) != 0 || !on || !list->s ||
	    (k = key1(o, &s->roots, s->rd, k0, list->s, k1, why, sizeof(why))) != 0 ||
	    fb_elf_host_object(objd, on, NULL) != 0) {
		if (k == -3)
			note(s, "edge cache: not kept", why);
		free(objd);
		return;
	}
	struct fb_cache_entry obj = {.cubin = (unsigned char *)objd, .cubin_size = on, .log = ""};
	struct fb_cache_entry man = {.ptx = (unsigned char *)list->s, .ptx_size = list->len, .log = ""};
	struct fb_cache_hooks h = {NULL, on_cache_event, s};
	fb_cache_put(s->cache, k1, &obj, &h);
	fb_cache_put(s->cache, k0, &man, &h);
	free(objd);
}

int
fb_edge_run(const struct fb_edge_opts *o, struct fb_edge_result *r, struct fb_error *err)
{
	memset(r, 0, sizeof(*r));
	if (!o || !o->argv || !o->argv[0] || !o->output || !o->depfile)
		return fb_seterr(err, FB_EINVAL, "edge: a command, its output and its depfile are needed");
	struct fb_config local;
	struct store s = {.o = o, .cfg = fb_config_or_read(o->config, &local), .r = r};
	char k0[65];
	bool keyed = key0(o, s.cfg, k0) == 0;
	if (keyed) {
		store_open(&s);
		make_roots(o, s.cfg, &s.roots);
		s.rd = calloc(1, sizeof(*s.rd)); /* NULL: realpath() for each file */
	}
	int rc = 0;
	if (!keyed || !fb_cache_on(s.cache) || !lookup(&s, k0)) {
		fb_cache_idle(s.cache); /* no thread of a gRPC remote runs beside the command */
		if (s.capped[0]) /* compiled here: a remote executor would be sent the file */
			note(&s, "edge cache not used", s.capped);
		int ran = o->remote.exec && *o->remote.exec && !s.capped[0] ? fb_edge_remote_run(o, s.cfg, &s.known, r, err)
		                                                             : 0;
		rc = ran < 0 ? -ran : ran ? 0 : run(o, &r->status, err);
		struct fb_buf list = {0};
		bool deps = !rc && r->status == 0 && all_deps(o, &list) == 0;
		if (deps && keyed && fb_cache_on(s.cache))
			remember(&s, k0, &list);
		free(list.s);
	}
	fb_cache_close(s.cache);
	fb_strlist_free(&s.known);
	fb_strlist_free(&s.roots);
	realdirs_free(s.rd);
	return rc;
}
