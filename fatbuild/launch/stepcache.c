/* stepcache.c: a cicc or ptxas step as an entry of the compile cache (cache/cache.h).
 *
 * The key is SHA-256 of "fatbuild launch step 1", the tool's own digest (fb_key_file_digest:
 * the binary's content, remembered by path, size and times), the plan's NVVMIR_LIBRARY_DIR
 * (libdevice, which cicc links), then each word: a temporary as "@T" followed by the SHA-256 of
 * its content when it exists before the step (an input: the preprocessed source, the module
 * id, the PTX) or "out" when not, any other word as it is. The temporaries' names (nvcc's
 * counters, the run's temp dir) are not in the key: the same device code for one arch, asked
 * for in a command with other arches beside it, gives the same key.
 *
 * A cicc or ptxas step also has a based key (docs/launcher.md "Checkouts"): "fatbuild launch
 * step based 2" and the same, with the project's root spelled "@P" in its words and where its
 * inputs' line markers name a file below it, and the module id (cudafe++'s name for the
 * translation unit, with a hash of the source's absolute path in it) spelled "@M" wherever an
 * input holds it, its shape less that hash in the key: two checkouts of one project have one
 * based key. A step gets none when it asks for debug information, or an input or word spells
 * the root elsewhere or the path hash outside the module id. An entry goes under it when its
 * files spell the root only in line markers and the path hash only inside the module id, both
 * kept as references; else the entry goes under the exact key and the based key holds the
 * marker FB_STEP_EXACT, which sends a lookup there.
 *
 * The entry's object (its cubin field) is the blob of the files the step made:
 *   "fatbuild-launch-outputs 2\n"
 *   per file: "file WORD SIZE NREFS\n", NREFS lines "OFFSET WORD\n", SIZE bytes, "\n"
 * WORD is the index in argv of the word that names the file (a file) or whose text goes at
 * OFFSET of the bytes (a reference: cicc's stub names itself in a # line and the fatbinary's
 * C file in an #include); a reference to word 0 (the tool, never a temporary) is the root, one
 * to word argc the module id. The
 * log field is the step's stderr, replayed on a hit. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/safefs.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "projroot.h"
#include "stepcache.h"

#define MAGIC "fatbuild-launch-outputs 2\n"
#define MAX_FILES 16
#define MAX_REFS 256

void
fb_step_seen_free(struct fb_step_seen *v)
{
	free(v->temp);
	free(v->before);
	v->temp = v->before = NULL;
}

/* Whether w names a temporary as a whole: below the plan's dir, or nvcc's bare tmpxft_ name. */
static bool
temp_word(const struct fb_plan *p, const char *w)
{
	size_t n = strlen(p->tmpdir);
	return (strncmp(w, p->tmpdir, n) == 0 && w[n] == '/') || strncmp(w, "tmpxft_", 7) == 0;
}

static const char *
env_value(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return "";
}

/* Whether a step asks for debug information (nvcc's -G, -lineinfo): paths then reach the PTX. */
static bool
debug_step(const struct fb_step *s)
{
	for (int i = 1; i < s->argc; i++)
		if (strcmp(s->argv[i], "-g") == 0 || strcmp(s->argv[i], "--debug_mode") == 0 ||
		    strstr(s->argv[i], "line-info") || strcmp(s->argv[i], "-lineinfo") == 0)
			return true;
	return false;
}

/* The path hash of a module id ("_08f801ad_16_k_cu_06f0aa97": the hex digits between its
 * first two '_'): its offset and length, 0 when modid is not of that form. */
static size_t
modid_hash(const char *modid, size_t *at)
{
	const char *end = modid[0] == '_' ? strchr(modid + 1, '_') : NULL;
	size_t n = end ? (size_t)(end - modid - 1) : 0;
	*at = 1;
	return n >= 6 && strspn(modid + 1, "0123456789abcdefABCDEF") == n ? n : 0;
}

/* Whether data spells the module id's path hash. */
static bool
spells_hash(const char *data, size_t size, const char *modid)
{
	size_t at, n = modid_hash(modid, &at);
	return memmem(data, size, modid + at, n) != NULL;
}

/* Word w into the based key: the root as its first component spelled @P; false when the word
 * spells the root or the module id's hash anywhere else. */
static bool
based_word(struct fb_sha256 *b, const char *w, const struct fb_step_seen *seen)
{
	size_t n = seen->root ? strlen(seen->root) : 0;
	if (seen->modid && spells_hash(w, strlen(w), seen->modid))
		return false;
	if (n && strncmp(w, seen->root, n) == 0 && w[n] == '/') {
		fb_sha256_str(b, "@P");
		fb_sha256_str(b, w + n);
		return !strstr(w + n, seen->root);
	}
	fb_sha256_str(b, w);
	return !n || !strstr(w, seen->root);
}

/* data with the root spelled @P (where a line marker names a file below it) and the module id
 * @M, into *out (malloc'd); -1 when data spells the root elsewhere, or the module id's hash
 * other than in the module id, or on OOM. */
static int
spell(const char *data, size_t size, const struct fb_step_seen *seen, char **out, size_t *out_size)
{
	char *r = NULL;
	size_t rn = 0;
	*out = NULL;
	if (seen->root && !fb_root_in_markers_only(data, size, seen->root))
		return -1;
	if (fb_root_spell(data, size, seen->root ? seen->root : "", &r, &rn) != 0)
		return -1;
	struct fb_buf b = {0};
	size_t m = seen->modid ? strlen(seen->modid) : 0, i = 0;
	for (const char *at; m && (at = memmem(r + i, rn - i, seen->modid, m)); i = (size_t)(at - r) + m) {
		fb_buf_put(&b, r + i, (size_t)(at - r) - i);
		fb_buf_puts(&b, "@M");
	}
	fb_buf_put(&b, r + i, rn - i);
	free(r);
	if (b.oom || (seen->modid && spells_hash(b.s ? b.s : "", b.len, seen->modid))) {
		free(b.s);
		return -1;
	}
	*out = b.s ? b.s : strdup("");
	*out_size = b.len;
	return *out ? 0 : -1;
}

/* Input i of s (a temporary that exists) into the exact key h and, while seen->based, the
 * based key b (the module id's file as "@M": its shape is in the key already). -1 when it
 * cannot be read. */
static int
hash_input(const struct fb_step *s, int i, struct fb_sha256 *h, struct fb_sha256 *b, struct fb_step_seen *seen)
{
	char *data, *spelt = NULL;
	size_t size, spelt_size = 0;
	unsigned char d[32];
	if (fb_read_file(s->argv[i], &data, &size, NULL) != 0)
		return -1;
	fb_sha256_buf(data, size, d);
	fb_sha256_update(h, d, 32);
	bool modid = i > 1 && strcmp(s->argv[i - 1], "--module_id_file_name") == 0;
	if (!seen->based) {
	} else if (modid && seen->modid && size == strlen(seen->modid) && memcmp(data, seen->modid, size) == 0) {
		fb_sha256_str(b, "@M");
	} else if (!modid && spell(data, size, seen, &spelt, &spelt_size) == 0) {
		fb_sha256_buf(spelt, spelt_size, d);
		fb_sha256_update(b, d, 32);
	} else {
		seen->based = false;
	}
	free(spelt);
	free(data);
	return 0;
}

int
fb_step_key(const struct fb_plan *p, const struct fb_step *s, const struct fb_config *cfg, const char *root,
            const char *modid, char key[65], struct fb_step_seen *seen)
{
	char tool[65];
	size_t at;
	memset(seen, 0, sizeof(*seen));
	seen->temp = calloc((size_t)s->argc + 1, sizeof(bool));
	seen->before = calloc((size_t)s->argc + 1, sizeof(bool));
	if (!seen->temp || !seen->before || fb_key_file_digest(cfg, s->prog, NULL, tool) != 0)
		return -1;
	seen->root = root && root[0] ? root : NULL;
	seen->modid = modid && modid_hash(modid, &at) ? modid : NULL;
	seen->based = (s->kind == FB_STEP_CICC || s->kind == FB_STEP_PTXAS) && (seen->root || seen->modid) &&
	              !(modid && !seen->modid) && !debug_step(s);
	struct fb_sha256 h, b;
	fb_sha256_init(&h);
	fb_sha256_init(&b);
	const char *libdevice = env_value(p->env, "NVVMIR_LIBRARY_DIR");
	fb_sha256_str(&h, "fatbuild launch step 1");
	fb_sha256_str(&b, "fatbuild launch step based 2");
	fb_sha256_str(&h, tool);
	fb_sha256_str(&h, libdevice);
	fb_sha256_str(&b, tool);
	fb_sha256_str(&b, libdevice);
	if (seen->modid) { /* the module id less its path hash */
		size_t n = modid_hash(seen->modid, &at);
		fb_sha256_update(&b, seen->modid, at);
		fb_sha256_str(&b, seen->modid + at + n);
	}
	for (int i = 1; i < s->argc; i++) {
		const char *w = s->argv[i];
		if (!temp_word(p, w)) {
			if (strstr(w, "tmpxft_") || strstr(w, p->tmpdir))
				return -1;
			fb_sha256_str(&h, w);
			seen->based = seen->based && based_word(&b, w, seen);
			continue;
		}
		seen->temp[i] = true;
		seen->before[i] = w[0] == '/' && access(w, F_OK) == 0;
		fb_sha256_str(&h, "@T");
		fb_sha256_str(&b, "@T");
		if (!seen->before[i]) {
			fb_sha256_str(&h, "out");
			fb_sha256_str(&b, "out");
		} else if (hash_input(s, i, &h, &b, seen) != 0) {
			return -1;
		}
	}
	unsigned char d[32];
	fb_sha256_final(&h, d);
	fb_sha256_hex(d, key);
	fb_sha256_final(&b, d);
	fb_sha256_hex(d, seen->based_key);
	return 0;
}

/* What a based entry's files spell by reference besides the step's temporaries: the root
 * (word 0) and the module id (word argc). */
struct based {
	const char *root, *modid;
};

/* The word (index) of s whose text starts at b, the longest; with bs, 0 for the root followed
 * by '/' and s->argc for the module id; -1 when none. */
static int
ref_at(const struct fb_step *s, const struct fb_step_seen *seen, const struct based *bs, const unsigned char *b,
       size_t n)
{
	int best = -1;
	size_t len = 0;
	for (int i = 1; i < s->argc; i++) {
		size_t k = seen->temp[i] ? strlen(s->argv[i]) : 0;
		if (k > len && k <= n && memcmp(b, s->argv[i], k) == 0) {
			best = i;
			len = k;
		}
	}
	size_t k = bs && bs->root ? strlen(bs->root) : 0;
	if (k > len && k < n && memcmp(b, bs->root, k) == 0 && b[k] == '/')
		best = 0;
	k = bs && bs->modid ? strlen(bs->modid) : 0;
	if (k > len && k <= n && memcmp(b, bs->modid, k) == 0)
		best = s->argc;
	return best;
}

/* The text reference r stands for. */
static const char *
ref_text(const struct fb_step *s, const struct fb_step_seen *seen, size_t r)
{
	return r == 0 ? seen->root : r == (size_t)s->argc ? seen->modid : s->argv[r];
}

/* One made file into b: its bytes less the words it spells, and where they were; with bs, less
 * the root and the module id too. -1 when it names a temporary otherwise, or (with bs) spells
 * the root outside a line marker or the module id's hash outside the module id. */
static int
pack_file(const struct fb_plan *p, const struct fb_step *s, const struct fb_step_seen *seen, const struct based *bs,
          int word, struct fb_buf *b)
{
	char *data;
	size_t size;
	if (fb_read_file(s->argv[word], &data, &size, NULL) != 0)
		return -1;
	if (bs && bs->root && !fb_root_in_markers_only(data, size, bs->root)) {
		free(data);
		return -1;
	}
	struct fb_buf body = {0}, refs = {0};
	size_t nrefs = 0;
	for (size_t i = 0; i < size;) {
		int r = (data[i] == '/' || data[i] == 't' || data[i] == '_') ? ref_at(s, seen, bs, (unsigned char *)data + i, size - i) : -1;
		if (r < 0) {
			fb_buf_put(&body, data + i, 1);
			i++;
			continue;
		}
		fb_buf_printf(&refs, "%zu %d\n", body.len, r);
		nrefs++;
		i += strlen(ref_text(s, seen, (size_t)r));
	}
	free(data);
	bool leak = body.len && (memmem(body.s, body.len, p->tmpdir, strlen(p->tmpdir)) ||
	                         memmem(body.s, body.len, "tmpxft_", 7) ||
	                         (bs && bs->modid && spells_hash(body.s, body.len, bs->modid)));
	int rc = leak || nrefs > MAX_REFS || body.oom || refs.oom ? -1 : 0;
	if (!rc) {
		fb_buf_printf(b, "file %d %zu %zu\n", word, body.len, nrefs);
		fb_buf_put(b, refs.s ? refs.s : "", refs.len);
		fb_buf_put(b, body.s ? body.s : "", body.len);
		fb_buf_puts(b, "\n");
	}
	free(body.s);
	free(refs.s);
	return rc;
}

int
fb_step_pack(const struct fb_plan *p, const struct fb_step *s, const struct fb_step_seen *seen, bool based,
             unsigned char **blob, size_t *size)
{
	struct fb_buf b = {0};
	int files = 0, rc = based && !seen->based ? -1 : 0;
	struct based bs = {seen->root, seen->modid};
	fb_buf_puts(&b, MAGIC);
	for (int i = 1; i < s->argc && !rc; i++) {
		if (!seen->temp[i] || seen->before[i] || s->argv[i][0] != '/' || access(s->argv[i], F_OK) != 0)
			continue;
		bool dup = false;
		for (int k = 1; k < i; k++)
			dup |= strcmp(s->argv[k], s->argv[i]) == 0;
		if (dup)
			continue;
		rc = pack_file(p, s, seen, based ? &bs : NULL, i, &b);
		files++;
	}
	if (rc || !files || files > MAX_FILES || b.oom) {
		free(b.s);
		return -1;
	}
	*blob = (unsigned char *)b.s;
	*size = b.len;
	return 0;
}

bool
fb_step_is_exact(const unsigned char *blob, size_t size)
{
	return size == strlen(FB_STEP_EXACT) && memcmp(blob, FB_STEP_EXACT, size) == 0;
}

/* Reads "a b c\n" (three unsigned numbers, or two when c is NULL) at *pos of [*pos, end). */
static bool
numbers(const char **pos, const char *end, const char *tag, size_t *a, size_t *b, size_t *c)
{
	const char *nl = memchr(*pos, '\n', (size_t)(end - *pos));
	char line[128];
	if (!nl || nl - *pos >= (long)sizeof(line))
		return false;
	memcpy(line, *pos, (size_t)(nl - *pos));
	line[nl - *pos] = 0;
	int used = 0;
	bool ok = c ? sscanf(line, tag, a, b, c, &used) == 3 : sscanf(line, tag, a, b, &used) == 2;
	if (!ok || line[used])
		return false;
	*pos = nl + 1;
	return true;
}

/* One file of the blob at *pos: checked, and written when write. */
static int
unpack_file(const struct fb_step *s, const struct fb_step_seen *seen, const char **pos, const char *end, bool write,
            struct fb_error *err)
{
	size_t word, size, nrefs, off[MAX_REFS], ref[MAX_REFS];
	if (!numbers(pos, end, "file %zu %zu %zu%n", &word, &size, &nrefs) || word >= (size_t)s->argc ||
	    !seen->temp[word] || seen->before[word] || s->argv[word][0] != '/' || nrefs > MAX_REFS)
		return fb_seterr(err, FB_EFORMAT, "launch step: a file line that does not fit the step");
	for (size_t k = 0; k < nrefs; k++)
		if (!numbers(pos, end, "%zu %zu%n", &off[k], &ref[k], NULL) || ref[k] > (size_t)s->argc ||
		    !(ref[k] == 0 ? seen->based && seen->root : ref[k] == (size_t)s->argc ? seen->based && seen->modid
		                                                                          : seen->temp[ref[k]]) ||
		    off[k] > size || (k && off[k] < off[k - 1]))
			return fb_seterr(err, FB_EFORMAT, "launch step: a reference that does not fit the step");
	if ((size_t)(end - *pos) < size + 1 || (*pos)[size] != '\n')
		return fb_seterr(err, FB_EFORMAT, "launch step: a file cut short");
	const char *data = *pos;
	*pos += size + 1;
	if (!write)
		return 0;
	struct fb_buf b = {0};
	size_t at = 0;
	for (size_t k = 0; k < nrefs; k++) {
		fb_buf_put(&b, data + at, off[k] - at);
		fb_buf_puts(&b, ref_text(s, seen, ref[k]));
		at = off[k];
	}
	fb_buf_put(&b, data + at, size - at);
	int rc = b.oom ? fb_seterr(err, FB_ENOMEM, "out of memory")
	                 : fb_write_file_atomic(s->argv[word], b.s ? b.s : "", b.len, 0600, err);
	free(b.s);
	return rc;
}

int
fb_step_unpack(const struct fb_step *s, const struct fb_step_seen *seen, const unsigned char *blob, size_t size,
               bool write, struct fb_error *err)
{
	const char *pos = (const char *)blob, *end = pos + size;
	if (fb_step_is_exact(blob, size))
		return write ? fb_seterr(err, FB_EFORMAT, "launch step: the marker of an exact entry has no files") : 0;
	if (size < strlen(MAGIC) || memcmp(blob, MAGIC, strlen(MAGIC)) != 0)
		return fb_seterr(err, FB_EFORMAT, "launch step: not a launcher entry");
	pos += strlen(MAGIC);
	int files = 0, rc = 0;
	while (pos < end && !rc && files++ < MAX_FILES)
		rc = unpack_file(s, seen, &pos, end, write, err);
	if (!rc && pos < end)
		rc = fb_seterr(err, FB_EFORMAT, "launch step: more than %d files", MAX_FILES);
	if (!rc && files == 0)
		rc = fb_seterr(err, FB_EFORMAT, "launch step: an entry with no file");
	return rc;
}
