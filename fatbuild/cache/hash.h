/* hash.h: SHA-256 (FIPS 180-4) for the compile keys, the cache's checksums and the remote
 * cache's digests (hash.c). Private to libfatbuild. */
#ifndef FB_CACHE_HASH_H
#define FB_CACHE_HASH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

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
/* The two above in one: the digest of a whole buffer (data may be NULL when size is 0) as hex. */
void fb_sha256_buf_hex(const void *data, size_t size, char out[65]);

#endif
