/* sink.c: the staging of downloads (docs/remote-cache.md §5): a blob of the shared cache goes
 * to a nameless private file under the download directory, never into memory, hashed as it
 * comes and cut at the size its record declares; the remote reads it into memory only once
 * its size and SHA-256 match. Both remotes write into it: remote.c's HTTP GET and reapi.c's
 * ByteStream reads. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sink.h"
#include "base/error.h"
#include "base/safefs.h"

int
fb_remote_sink_open(struct fb_remote_sink *s, const char *tmpdir, uint64_t max, struct fb_error *err)
{
	char target[4200], tmp[4300];
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->max = max;
	fb_sha256_init(&s->h);
	if (snprintf(target, sizeof(target), "%s/fatbuild-download", tmpdir) >= (int)sizeof(target))
		return fb_seterr(err, FB_EINVAL, "download directory path too long");
	int rc = fb_tmp_open(target, 0600, tmp, sizeof(tmp), &s->fd, err);
	if (rc)
		return rc;
	unlink(tmp); /* nameless from here on: nothing is left behind, nobody can open it */
	return 0;
}

int
fb_remote_sink_write(struct fb_remote_sink *s, const void *p, size_t n)
{
	if (s->over || s->failed)
		return -1;
	if (n > s->max - s->n) {
		s->over = 1;
		return -1;
	}
	for (size_t k = 0; k < n;) {
		ssize_t w = write(s->fd, (const char *)p + k, n - k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->failed = 1;
			return -1;
		}
		k += (size_t)w;
	}
	fb_sha256_update(&s->h, p, n);
	s->n += n;
	return 0;
}

void
fb_remote_sink_close(struct fb_remote_sink *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
