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
 * A cicc step also has a based key (docs/launcher.md "Checkouts"), "fatbuild launch step
 * based 1" and the same, with the project's root spelled "@P" in its words and in its inputs'
 * line markers, and the module id (nvcc's hash of the source's absolute path, and the source's
 * name) as "@M" without its content: two checkouts of one project have one based key. An
 * entry goes under it only when no file the step made spells the module id, its hash, or the
 * root other than in a line marker; else the entry goes under the exact key and the based key
 * holds the marker FB_STEP_EXACT, which sends a lookup there.
 *
 * The entry's object (its cubin field) is the blob of the files the step made:
 *   "fatbuild-launch-outputs 2\n"
 *   per file: "file WORD SIZE NREFS\n", NREFS lines "OFFSET WORD\n", SIZE bytes, "\n"
 * WORD is the index in argv of the word that names the file (a file) or whose text goes at
 * OFFSET of the bytes (a reference: cicc's stub names itself in a # line and the fatbinary's
 * C file in an #include); a reference to word 0 (the tool, never a temporary) is the root. The
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
	free(v->modid);
	v->temp = v->before = NULL;
	v->modid = NULL;
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

/* Whether a cicc step asks for debug information (nvcc's -G, -lineinfo): its line markers'
 * paths then reach the PTX. */
static bool
debug_step(const struct fb_step *s)
{
	for (int i = 1; i < s->argc; i++)
		if (strcmp(s->argv[i], "-g") == 0 || strcmp(s->argv[i], "--debug_mode") == 0 ||
		    strstr(s->argv[i], "line-info"))
			return true;
	return false;
}

/* Word w into the based key: the root as its first component spelled @P; false when the word
 * spells the root anywhere else. */
static bool
based_word(struct fb_sha256 *b, const char *w, const char *root)
{
	size_t n = strlen(root);
	if (strncmp(w, root, n) == 0 && w[n] == '/') {
		fb_sha256_str(b, "@P");
		fb_sha256_str(b, w + n);
		return !strstr(w + n, root);
	}
	fb_sha256_str(b, w);
	return !strstr(w, root);
}

/* Input i of s (a temporary that exists) into the exact key h and, while seen->based, the
 * based key b. -1 when it cannot be read. */
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
	if (seen->based && modid && !seen->modid) {
		fb_sha256_str(b, "@M");
		seen->modid = data;
		return 0;
	}
	if (seen->based && fb_root_in_markers_only(data, size, seen->root) &&
	    fb_root_spell(data, size, seen->root, &spelt, &spelt_size) == 0) {
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
            char key[65], struct fb_step_seen *seen)
{
	char tool[65];
	memset(seen, 0, sizeof(*seen));
	seen->temp = calloc((size_t)s->argc + 1, sizeof(bool));
	seen->before = calloc((size_t)s->argc + 1, sizeof(bool));
	if (!seen->temp || !seen->before || fb_key_file_digest(cfg, s->prog, NULL, tool) != 0)
		return -1;
	seen->root = root;
	seen->based = s->kind == FB_STEP_CICC && root && root[0] && !debug_step(s);
	struct fb_sha256 h, b;
	fb_sha256_init(&h);
	fb_sha256_init(&b);
	const char *libdevice = env_value(p->env, "NVVMIR_LIBRARY_DIR");
	fb_sha256_str(&h, "fatbuild launch step 1");
	fb_sha256_str(&b, "fatbuild launch step based 1");
	fb_sha256_str(&h, tool);
	fb_sha256_str(&h, libdevice);
	fb_sha256_str(&b, tool);
	fb_sha256_str(&b, libdevice);
	for (int i = 1; i < s->argc; i++) {
		const char *w = s->argv[i];
		if (!temp_word(p, w)) {
			if (strstr(w, "tmpxft_") || strstr(w, p->tmpdir))
				return -1;
			fb_sha256_str(&h, w);
			seen->based = seen->based && based_word(&b, w, root);
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

/* The word (index) of s whose text starts at b, the longest; 0 for the root (root not NULL)
 * followed by '/'; -1 when none. */
static int
ref_at(const struct fb_step *s, const struct fb_step_seen *seen, const char *root, const unsigned char *b,
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
	size_t k = root ? strlen(root) : 0;
	if (k > len && k < n && memcmp(b, root, k) == 0 && b[k] == '/')
		best = 0;
	return best;
}

/* Whether data spells the module id (modid, its text) or the hash in it (the run of hex
 * digits between its first two '_'): true, as for a module id this does not read, when
 * modid is not of that form. */
static bool
spells_modid(const char *data, size_t size, const char *modid)
{
	const char *hash = modid[0] == '_' ? modid + 1 : NULL, *end = hash ? strchr(hash, '_') : NULL;
	if (!end || end - hash < 6 || strspn(hash, "0123456789abcdefABCDEF") != (size_t)(end - hash))
		return true;
	return memmem(data, size, modid, strlen(modid)) || memmem(data, size, hash, (size_t)(end - hash));
}

/* One made file into b: its bytes less the words it spells, and where they were; with root,
 * less the root too. -1 when it names a temporary otherwise, or (with root) spells the root
 * outside line markers or the module id. */
static int
pack_file(const struct fb_plan *p, const struct fb_step *s, const struct fb_step_seen *seen, const char *root,
          int word, struct fb_buf *b)
{
	char *data;
	size_t size;
	if (fb_read_file(s->argv[word], &data, &size, NULL) != 0)
		return -1;
	if (root && (!fb_root_in_markers_only(data, size, root) || (seen->modid && spells_modid(data, size, seen->modid)))) {
		free(data);
		return -1;
	}
	struct fb_buf body = {0}, refs = {0};
	size_t nrefs = 0;
	for (size_t i = 0; i < size;) {
		int r = (data[i] == '/' || data[i] == 't') ? ref_at(s, seen, root, (unsigned char *)data + i, size - i) : -1;
		if (r < 0) {
			fb_buf_put(&body, data + i, 1);
			i++;
			continue;
		}
		fb_buf_printf(&refs, "%zu %d\n", body.len, r);
		nrefs++;
		i += strlen(r ? s->argv[r] : root);
	}
	free(data);
	bool leak = body.len && (memmem(body.s, body.len, p->tmpdir, strlen(p->tmpdir)) ||
	                         memmem(body.s, body.len, "tmpxft_", 7));
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
	const char *root = based ? seen->root : NULL;
	fb_buf_puts(&b, MAGIC);
	for (int i = 1; i < s->argc && !rc; i++) {
		if (!seen->temp[i] || seen->before[i] || s->argv[i][0] != '/' || access(s->argv[i], F_OK) != 0)
			continue;
		bool dup = false;
		for (int k = 1; k < i; k++)
			dup |= strcmp(s->argv[k], s->argv[i]) == 0;
		if (dup)
			continue;
		rc = pack_file(p, s, seen, root, i, &b);
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
		if (!numbers(pos, end, "%zu %zu%n", &off[k], &ref[k], NULL) || ref[k] >= (size_t)s->argc ||
		    (ref[k] ? !seen->temp[ref[k]] : !seen->based) || off[k] > size || (k && off[k] < off[k - 1]))
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
		fb_buf_puts(&b, ref[k] ? s->argv[ref[k]] : seen->root);
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
