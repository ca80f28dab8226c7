/* pruning.h: what the pruning modules share: prune_blob.c (deciding what each container
 * keeps and rewriting a blob of containers), prune_elf.c (relocatable objects via libelf and
 * ar archives) and prune.c (the file kinds, in-place rewriting of linked files, the API).
 * Private to the fatbin subsystem; symbols are hidden. */
#ifndef FB_FATBIN_PRUNING_H
#define FB_FATBIN_PRUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared.h"

#define NOTE_LINES 20

struct pctx {
	const struct fb_prune_opts *o;
	struct fb_prune_report *r;
	struct fb_error *err;
	char *notes;
	size_t nlen, ncap, nnotes;
	bool linked;
};

/* Appends one line to c->notes (only the first NOTE_LINES; c->nnotes counts them all). */
void fb_prune_note(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An old offset in a compacted blob to its new one. */
struct omap {
	size_t *old_start, *new_start, *old_size, *new_size;
	size_t n;
	size_t old_total, new_total;
};
void fb_prune_omap_free(struct omap *m);
uint64_t fb_prune_omap_map(const struct omap *m, uint64_t off);

/* Prunes one blob of containers. In place (linked files): out has the blob's size, each
 * container stays where it starts, freed bytes are zero. Compacted: out is as long as
 * needed (*outsize), gaps between containers kept. *changed says whether any entry went. */
int fb_prune_blob(struct pctx *c, const unsigned char *blob, size_t size, const char *where, bool in_place,
                  bool relsection, unsigned char **out, size_t *outsize, struct omap *map, bool *changed);

/* A growing output buffer. */
struct grow {
	unsigned char *d;
	size_t n, cap;
};
int fb_prune_grow_put(struct grow *g, const void *p, size_t n);

/* A relocatable host ELF in memory: rewritten with libelf, appended to out. */
int fb_prune_relocatable(struct pctx *c, const unsigned char *data, size_t size, const char *name,
                         struct grow *out, bool *changed);
/* An ar archive: every member pruned, member sizes and symbol-table offsets updated. */
int fb_prune_archive(struct pctx *c, const unsigned char *data, size_t size, const char *name, struct grow *out);

#endif
