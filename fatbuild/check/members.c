/* members.c: an archive's members, read in place as one stream (docs/check-environment.md §5).
 * libarchive (larchive.c) walks zip and tar, gzip'ed or not, and inflates each member as it is
 * read. A member's first bytes say what it is (sniff.c); one that can hold device code is
 * written to an unlinked temporary file and mapped, so that the readers of regular files apply
 * and memory stays bounded whatever the member's size; the rest is skipped. Only regular members
 * are read: links are counted, and archives inside the archive are counted and not opened. The
 * archive's METADATA (NAME.dist-info/METADATA, a wheel) or PKG-INFO (NAME-VERSION/PKG-INFO, an
 * sdist) names its distribution. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "base/error.h"
#include "base/safefs.h"

#define META_MAX (1u << 20)
#define DEFAULT_MAX_MEMBER ((uint64_t)4 << 30)
/* What one member may inflate to besides that cap. A zip or gzip bomb (a run of zeros deflates
 * about 1000 to 1) would fill the temporary file's disk: past BOMB_FLOOR bytes a member may have
 * at most BOMB_RATIO times the bytes read from the archive's file meanwhile (libraries and
 * device code inflate 2 to 10 times). MEMBER_S bounds the time whatever the format (a slow
 * decompressor, a slow disk). */
#define BOMB_FLOOR ((uint64_t)32 << 20)
#define BOMB_RATIO 100
#define MEMBER_S 120

/* libarchive, loaded once per run at the first archive. 0, or the load error in err. */
static int
la_get(struct fb_chk *c, struct fb_error *err)
{
	pthread_mutex_lock(&c->lock);
	if (c->la_state == 0)
		c->la_state = fb_la_load(&c->la, c->o->libarchive, &c->la_err) == 0 ? 1 : -1;
	int st = c->la_state;
	pthread_mutex_unlock(&c->lock);
	if (st < 0 && err)
		*err = c->la_err;
	return st > 0 ? 0 : FB_ENOTOOL;
}

/* Reads up to n bytes of the current member into buf: the count, or -1 (libarchive's error). */
static ssize_t
read_some(const struct fb_la *la, void *a, unsigned char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = la->read_data(a, buf + got, n - got);
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Where a distribution's metadata lives: TOP.dist-info/METADATA (a wheel), TOP/PKG-INFO or
 * PKG-INFO (an sdist). 2 for METADATA, 1 for PKG-INFO, else 0. */
static int
metadata_member(const char *path)
{
	const char *slash = strchr(path, '/');
	if (!slash)
		return strcmp(path, "PKG-INFO") == 0;
	if (strchr(slash + 1, '/'))
		return 0;
	size_t tl = (size_t)(slash - path);
	if (strcmp(slash + 1, "METADATA") == 0 && tl > 10 && memcmp(slash - 10, ".dist-info", 10) == 0)
		return 2;
	return strcmp(slash + 1, "PKG-INFO") == 0;
}

static void
take_metadata(const struct fb_la *la, void *a, const unsigned char *head, size_t hn, int kind, struct fb_chk_result *r)
{
	if (r->dist_from_metadata && kind < 2)
		return;
	unsigned char *buf = malloc(META_MAX);
	if (!buf)
		return;
	memcpy(buf, head, hn);
	ssize_t k = read_some(la, a, buf + hn, META_MAX - hn);
	char *name, *version;
	if (k >= 0 && fb_dist_metadata((const char *)buf, hn + (size_t)k, &name, &version) == 0) {
		free(r->dist_name);
		free(r->dist_version);
		r->dist_name = name;
		r->dist_version = version;
		r->dist_from_metadata = true;
	}
	free(buf);
}

/* Whether the member may grow to size bytes (see BOMB_FLOOR), raw0 and t0 the archive's bytes
 * read and the time when its copy began; else FB_ETOOBIG with why. */
static int
within_caps(const struct fb_la *la, void *a, uint64_t size, uint64_t cap, int64_t raw0, long long t0,
            const char *path, struct fb_error *err)
{
	int64_t raw = la->filter_bytes(a, -1) - raw0;
	if (size > cap)
		return fb_seterr(err, FB_ETOOBIG, "%s: larger than the %llu bytes a member may have", path,
		                 (unsigned long long)cap);
	if (size > BOMB_FLOOR && size / BOMB_RATIO > (uint64_t)(raw > 0 ? raw : 0))
		return fb_seterr(err, FB_ETOOBIG,
		                 "%s: not inflated past %llu bytes: more than %d times its compressed size (a "
		                 "decompression bomb?)",
		                 path, (unsigned long long)size, BOMB_RATIO);
	if (fb_chk_now_ms() - t0 > MEMBER_S * 1000LL)
		return fb_seterr(err, FB_ETOOBIG, "%s: not inflated past %llu bytes: still inflating after %d s", path,
		                 (unsigned long long)size, MEMBER_S);
	return 0;
}

/* The rest of the member into tfd after head, within the caps (within_caps): its size, or -1
 * with why in err. */
static int64_t
spill(const struct fb_la *la, void *a, int tfd, const unsigned char *head, size_t hn, uint64_t cap, const char *path,
      struct fb_error *err)
{
	static const size_t chunk = 1u << 16;
	int64_t raw0 = la->filter_bytes(a, -1);
	long long t0 = fb_chk_now_ms();
	unsigned char *buf = malloc(chunk);
	if (!buf || ftruncate(tfd, 0) != 0 || pwrite(tfd, head, hn, 0) != (ssize_t)hn) {
		free(buf);
		fb_seterr(err, FB_EIO, "%s: cannot write a temporary copy: %s", path, strerror(errno));
		return -1;
	}
	uint64_t off = hn;
	for (;;) {
		ssize_t k = la->read_data(a, buf, chunk);
		if (k < 0) {
			fb_seterr(err, FB_EFORMAT, "%s: %s", path, la->error_string(a) ? la->error_string(a) : "read error");
			break;
		}
		if (k == 0) {
			free(buf);
			return (int64_t)off;
		}
		if (within_caps(la, a, off + (uint64_t)k, cap, raw0, t0, path, err))
			break;
		if (pwrite(tfd, buf, (size_t)k, (off_t)off) != k) {
			fb_seterr(err, FB_EIO, "%s: cannot write a temporary copy: %s", path, strerror(errno));
			break;
		}
		off += (uint64_t)k;
	}
	free(buf);
	return -1;
}

/* An unlinked temporary file in the run's tmpdir, for members to be mapped; -1 with err. */
static int
tmp_file(const struct fb_chk *c, struct fb_error *err)
{
	char target[4096], tmp[4200];
	snprintf(target, sizeof(target), "%s/fatbuild-check", c->o->tmpdir && *c->o->tmpdir ? c->o->tmpdir : "/tmp");
	int fd;
	if (fb_tmp_open(target, 0600, tmp, sizeof(tmp), &fd, err) != 0)
		return -1;
	unlink(tmp);
	return fd;
}

/* One member that may hold device code: copied to *tfd (made at the first), mapped, analysed. */
static void
read_member(struct fb_chk *c, void *a, const char *path, const unsigned char *head, size_t hn, bool text, int *tfd,
            struct fb_chk_result *r)
{
	struct fb_error err = {0};
	if (*tfd < 0 && (*tfd = tmp_file(c, &err)) < 0) {
		struct fb_check_file *f = fb_chk_add_file(r, path);
		if (f)
			snprintf(f->error, sizeof(f->error), "%s", err.msg);
		return;
	}
	uint64_t cap = c->o->max_member ? c->o->max_member : DEFAULT_MAX_MEMBER;
	int64_t size = spill(&c->la, a, *tfd, head, hn, cap, path, &err);
	void *m = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, *tfd, 0) : MAP_FAILED;
	if (size > 0 && m == MAP_FAILED)
		fb_seterr(&err, FB_EIO, "%s: cannot map its temporary copy: %s", path, strerror(errno));
	if (m == MAP_FAILED) {
		struct fb_check_file *f = fb_chk_add_file(r, path);
		if (f)
			snprintf(f->error, sizeof(f->error), "%s", err.msg);
		return;
	}
	fb_chk_analyse(c, m, (size_t)size, path, text, true, r);
	munmap(m, (size_t)size);
}

/* The member path, one printable line. */
static void
member_path(const char *pn, char *buf, size_t size)
{
	size_t i = 0;
	for (; pn && pn[i] && i + 1 < size; i++)
		buf[i] = (unsigned char)pn[i] < 0x20 || pn[i] == 0x7f ? '?' : pn[i];
	buf[i] = 0;
	if (!i)
		snprintf(buf, size, "?");
}

/* One entry of the archive; false when the archive cannot be read further. */
static bool
member(struct fb_chk *c, void *a, void *e, int *tfd, struct fb_chk_result *r)
{
	const struct fb_la *la = &c->la;
	char path[4096];
	member_path(la->entry_pathname(e), path, sizeof(path));
	mode_t t = la->entry_filetype(e) & FB_LA_IFMT;
	if (la->entry_hardlink(e) || t == FB_LA_IFLNK) {
		r->links++;
		return true;
	}
	if (t == FB_LA_IFDIR)
		return true;
	if (t != FB_LA_IFREG) {
		r->special++;
		return true;
	}
	r->read++;
	unsigned char head[FB_SNIFF_BYTES];
	ssize_t hn = read_some(la, a, head, sizeof(head));
	if (hn < 0) {
		struct fb_check_file *f = fb_chk_add_file(r, path);
		if (f)
			snprintf(f->error, sizeof(f->error), "%s: %s", path, la->error_string(a) ? la->error_string(a) : "read error");
		return false;
	}
	int meta = metadata_member(path);
	enum fb_sniff k = fb_sniff(head, (size_t)hn);
	if (meta)
		take_metadata(la, a, head, (size_t)hn, meta, r);
	if (meta || k == FB_SNIFF_PLAIN || k == FB_SNIFF_ELF_OTHER) {
		r->without_code++;
		r->elf_without_code += k == FB_SNIFF_ELF_OTHER;
	} else if (k == FB_SNIFF_ARCHIVE) {
		r->nested++;
	} else {
		read_member(c, a, path, head, (size_t)hn, k == FB_SNIFF_PTX, tfd, r);
	}
	return true;
}

void
fb_chk_archive(struct fb_chk *c, int fd, const char *name, bool walked, struct fb_chk_result *r)
{
	struct fb_error err = {0};
	r->archive = true;
	if (la_get(c, &err) != 0) {
		struct fb_check_file *f = fb_chk_add_file(r, "");
		if (f)
			snprintf(f->error, sizeof(f->error), "%.300s: %.700s", name, err.msg);
		return;
	}
	const struct fb_la *la = &c->la;
	void *a = la->read_new();
	if (!a) {
		struct fb_check_file *f = fb_chk_add_file(r, "");
		if (f)
			snprintf(f->error, sizeof(f->error), "%s: out of memory", name);
		return;
	}
	la->support_filter_all(a);
	la->support_format_zip(a);
	la->support_format_tar(a);
	int tfd = -1;
	size_t nmembers = 0;
	int rc = la->open_fd(a, fd, 1u << 16);
	while (rc == FB_LA_OK) {
		void *e;
		rc = la->next_header(a, &e);
		if (rc == FB_LA_EOF || rc < FB_LA_WARN)
			break;
		nmembers++;
		rc = member(c, a, e, &tfd, r) ? FB_LA_OK : FB_LA_WARN - 1;
	}
	if (rc != FB_LA_EOF && nmembers == 0 && walked) {
		r->archive = false; /* a compressed file that holds no tar, or not an archive at all */
		r->without_code++;
	} else if (rc != FB_LA_EOF && rc != FB_LA_WARN - 1) {
		struct fb_check_file *f = fb_chk_add_file(r, "");
		const char *es = la->error_string(a);
		if (f)
			snprintf(f->error, sizeof(f->error), "%s: %s", name, es ? es : "not a zip or tar archive");
	}
	la->read_free(a);
	if (tfd >= 0)
		close(tfd);
}
