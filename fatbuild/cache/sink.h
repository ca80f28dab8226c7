/* sink.h: the staging of downloads (sink.c), for both remotes: remote.c's HTTP GET and
 * reapi.c's ByteStream reads. Private to libfatbuild. */
#ifndef FB_CACHE_SINK_H
#define FB_CACHE_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "hash.h"

/* A blob being downloaded: its bytes go to a nameless private file under tmpdir, never into
 * memory, hashed as they come; at most max of them (one more sets over and stops the
 * transfer). */
struct fb_remote_sink {
	int fd;                  /* -1: none */
	struct fb_sha256 h;
	uint64_t n, max;
	int over, failed;        /* past max; a write failed */
};
/* 0, or the error of fb_tmp_open (s->fd is then -1). */
int fb_remote_sink_open(struct fb_remote_sink *s, const char *tmpdir, uint64_t max, struct fb_error *err);
/* 0, or -1 once past max or a write failed: stop the transfer. */
int fb_remote_sink_write(struct fb_remote_sink *s, const void *p, size_t n);
void fb_remote_sink_close(struct fb_remote_sink *s);

#endif
