/* hash.c: SHA-256 (FIPS 180-4), for cache keys and cache-entry verification.
 *
 * Two implementations give the same digests. The streaming one (fb_sha256_init/update/final)
 * is the portable code below: a plain struct the caller may copy or drop half-way (prepare.c
 * returns mid-stream on a read error), which an EVP context, allocated and to be freed, would
 * not allow. Its inputs are short: strings, 32-byte digests, one source text. Whole buffers and
 * files (headers, cache entries, remote blobs, 100 MB of NVRTC) go through fb_sha256_buf and
 * fb_sha256_fd, which use OpenSSL's libcrypto when the build found it (SHA-NI or AVX2: three
 * to four times the portable speed) and the portable code when it did not or when libcrypto
 * refuses (a broken provider configuration). libcrypto is linked, not dlopen'ed as the CUDA
 * libraries and libcurl are: a digest has no context object to carry a handle, the house
 * rules allow no global one, and dlopen'ing it per digest would cost more than it saves;
 * whether it is there is a build-time fact like libelf and zstd (HACKING.md "Optional
 * libraries"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef FB_HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif

#include "hash.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t
ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void
block(struct fb_sha256 *s, const unsigned char *p)
{
	uint32_t w[64];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       (uint32_t)p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
	s->h[5] += f;
	s->h[6] += g;
	s->h[7] += h;
}

void
fb_sha256_init(struct fb_sha256 *s)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->n = 0;
}

void
fb_sha256_update(struct fb_sha256 *s, const void *data, size_t size)
{
	const unsigned char *p = data;
	s->len += size;
	if (s->n) {
		size_t take = 64 - s->n < size ? 64 - s->n : size;
		memcpy(s->buf + s->n, p, take);
		s->n += take;
		p += take;
		size -= take;
		if (s->n < 64)
			return;
		block(s, s->buf);
		s->n = 0;
	}
	for (; size >= 64; p += 64, size -= 64)
		block(s, p);
	memcpy(s->buf, p, size);
	s->n = size;
}

void
fb_sha256_final(struct fb_sha256 *s, unsigned char out[32])
{
	uint64_t bits = s->len * 8;
	unsigned char pad[72] = {0x80};
	size_t padlen = (s->n < 56 ? 56 : 120) - s->n;
	for (int i = 0; i < 8; i++)
		pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
	fb_sha256_update(s, pad, padlen + 8);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}

void
fb_sha256_str(struct fb_sha256 *s, const char *str)
{
	fb_sha256_update(s, str, strlen(str) + 1);
}

int
fb_sha256_buf(const void *data, size_t size, unsigned char out[32])
{
#ifdef FB_HAVE_LIBCRYPTO
	unsigned int len = 0;
	if (EVP_Digest(size ? data : "", size, out, &len, EVP_sha256(), NULL) == 1 && len == 32)
		return 1;
#endif
	struct fb_sha256 s;
	fb_sha256_init(&s);
	if (size)
		fb_sha256_update(&s, data, size);
	fb_sha256_final(&s, out);
	return 0;
}

enum { CHUNK = 1 << 20 };

/* Reads fd to its end in CHUNK pieces, each given to feed; -1 on a read error, on cancel
 * (checked before every chunk) or when feed fails. */
static int
read_all(int fd, const volatile sig_atomic_t *cancel, int (*feed)(void *, const void *, size_t), void *ctx)
{
	unsigned char *buf = malloc(CHUNK);
	ssize_t k = -1;
	if (!buf)
		return -1;
	for (;;) {
		if (cancel && *cancel) {
			k = -1;
			break;
		}
		k = read(fd, buf, CHUNK);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || feed(ctx, buf, (size_t)k) != 0)
			break;
	}
	free(buf);
	return k == 0 ? 0 : -1;
}

static int
feed_portable(void *ctx, const void *p, size_t n)
{
	fb_sha256_update(ctx, p, n);
	return 0;
}

#ifdef FB_HAVE_LIBCRYPTO
static int
feed_evp(void *ctx, const void *p, size_t n)
{
	return EVP_DigestUpdate(ctx, p, n) == 1 ? 0 : -1;
}

/* 1 when libcrypto hashed fd (0 or -1 in *rc), 0 when it could not start (nothing was read). */
static int
fd_evp(int fd, const volatile sig_atomic_t *cancel, unsigned char out[32], int *rc)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		return 0;
	}
	unsigned int len = 0;
	*rc = read_all(fd, cancel, feed_evp, c);
	if (!*rc && (EVP_DigestFinal_ex(c, out, &len) != 1 || len != 32))
		*rc = -1;
	EVP_MD_CTX_free(c);
	return 1;
}
#endif

int
fb_sha256_fd(int fd, const volatile sig_atomic_t *cancel, unsigned char out[32])
{
#ifdef FB_HAVE_LIBCRYPTO
	int rc;
	if (fd_evp(fd, cancel, out, &rc))
		return rc;
#endif
	struct fb_sha256 s;
	fb_sha256_init(&s);
	if (read_all(fd, cancel, feed_portable, &s) != 0)
		return -1;
	fb_sha256_final(&s, out);
	return 0;
}

void
fb_sha256_hex(const unsigned char digest[32], char out[65])
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[64] = 0;
}

void
fb_sha256_buf_hex(const void *data, size_t size, char out[65])
{
	unsigned char d[32];
	fb_sha256_buf(data, size, d);
	fb_sha256_hex(d, out);
}
