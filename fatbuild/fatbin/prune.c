/* prune.c: keeping only the images the loader would use for a list of GPUs, in every
 * container of a .fatbin, a relocatable object, an ar archive, a shared library or an
 * executable (docs/prune.md).
 *
 * Per container, fb_select decides: for each SASS target sm_X of the list the image a real
 * X GPU would load (SASS, or the PTX it would JIT when no SASS fits); for each PTX target
 * compute_X the PTX image a compute_X JIT would start from (the highest PTX arch <= X).
 * Everything else is removed; kept entries are copied byte for byte (header, identifier,
 * options, payload), and only the container's fatSize changes. Obfuscated entries and
 * unknown kinds are kept, LTO-IR is kept unless opts->prune_lto (then only the listed archs'
 * lto_X stay).
 *
 * Files:
 * - a .fatbin: the containers are compacted (the file shrinks);
 * - a relocatable ELF (.o, and .o members of archives): .nv_fatbin and __nv_relfatbin are
 *   rewritten to their new size with libelf, which lays the file out again; symbols defined
 *   in those sections and relocation addends against them follow their container;
 * - an ar archive: every member as above, member sizes and the symbol table's member
 *   offsets updated;
 * - a linked ELF (ET_EXEC, ET_DYN): each container is rewritten where it starts, inside its
 *   section, and the bytes it no longer uses are zeroed. Every address stays valid (the
 *   .nvFatBinSegment wrappers point at container starts), the file keeps its size and the
 *   zeros compress to nothing. Containers of __nv_relfatbin, and containers holding
 *   relocatable (ET_REL) cubins, are kept unless opts->prune_relocatable.
 *
 * This file tells the file kinds apart and rewrites linked files in place; prune_blob.c
 * decides and rewrites the containers of one blob, prune_elf.c rewrites relocatable objects
 * and archives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pruning.h"
#include "base/safefs.h"

/* ---- files ---- */

/* A linked ELF (executable or shared library): its containers pruned in place in a copy. */
static int
prune_linked(struct pctx *c, const unsigned char *p, size_t size, const char *name, struct grow *g,
             struct fb_error *err)
{
	struct fb_scan sc;
	int rc = fb_scan_buffer(p, size, name, &sc, err);
	if (rc)
		return rc;
	g->d = malloc(size ? size : 1);
	if (!g->d)
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	else {
		memcpy(g->d, p, size);
		g->n = size;
	}
	for (size_t b = 0; !rc && b < sc.nblobs; b++) {
		const struct fb_blob *bl = &sc.blobs[b];
		unsigned char *nb;
		size_t nsz;
		bool ch;
		bool rel = strstr(bl->where, "__nv_relfatbin") != NULL;
		char where[300];
		snprintf(where, sizeof(where), "%s %s", name, bl->where);
		rc = fb_prune_blob(c, p + bl->offset, bl->size, where, true, rel, &nb, &nsz, NULL, &ch);
		if (!rc)
			memcpy(g->d + bl->offset, nb, nsz);
		free(nb);
	}
	fb_scan_free(&sc);
	return rc;
}

/* Ends the notes with "... and N more" when some were left out. */
static void
notes_close(struct pctx *c)
{
	if (c->nnotes <= NOTE_LINES)
		return;
	char more[64];
	snprintf(more, sizeof(more), "... and %zu more\n", c->nnotes - NOTE_LINES);
	size_t l = strlen(more);
	char *n = realloc(c->notes, c->nlen + l + 1);
	if (n) {
		memcpy(n + c->nlen, more, l + 1);
		c->notes = n;
	}
}

int
fb_prune_buffer(const void *data, size_t size, const char *name, const struct fb_prune_opts *opts,
                unsigned char **out, size_t *outsize, struct fb_prune_report *rep, struct fb_error *err)
{
	const unsigned char *p = data;
	struct fb_prune_report dummy;
	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	if (!out || !outsize || !opts || (!data && size))
		return fb_seterr(err, FB_EINVAL, "fb_prune_buffer: NULL argument");
	*out = NULL;
	*outsize = 0;
	if (!name)
		name = "input";
	if (opts->ntargets == 0 || !opts->targets)
		return fb_seterr(err, FB_EINVAL, "prune: the arch list is empty");
	struct pctx c = {opts, rep, err, NULL, 0, 0, 0, false};
	struct grow g = {0};
	int rc;
	rep->in_size = size;
	if (size >= 4 && fb_rd32(p) == FB_CONTAINER_MAGIC) {
		snprintf(rep->type, sizeof(rep->type), "fatbin");
		bool ch;
		unsigned char *nb;
		size_t nsz;
		rc = fb_prune_blob(&c, p, size, "", false, false, &nb, &nsz, NULL, &ch);
		if (!rc) {
			g.d = nb;
			g.n = nsz;
		}
	} else if (size >= 64 && memcmp(p, "\x7f" "ELF", 4) == 0 && fb_rd16(p + 0x12) != 190) {
		if (p[4] != 2 || p[5] != 1) {
			rc = fb_seterr(err, FB_EUNSUPPORTED, "%s: only 64-bit little-endian ELF files are supported", name);
		} else if (fb_rd16(p + 16) == 1) {
			snprintf(rep->type, sizeof(rep->type), "relocatable");
			bool ch;
			rc = fb_prune_relocatable(&c, p, size, name, &g, &ch);
		} else {
			snprintf(rep->type, sizeof(rep->type), "linked");
			rep->in_place = true;
			c.linked = true;
			rc = prune_linked(&c, p, size, name, &g, err);
		}
	} else if (size >= 8 && memcmp(p, "!<arch>\n", 8) == 0) {
		snprintf(rep->type, sizeof(rep->type), "archive");
		rc = fb_prune_archive(&c, p, size, name, &g);
	} else if (size >= 8 && memcmp(p, "!<thin>\n", 8) == 0) {
		rc = fb_seterr(err, FB_EUNSUPPORTED, "%s: thin archives are not supported (their members live in other files)",
		               name);
	} else if (size >= 64 && memcmp(p, "\x7f" "ELF", 4) == 0) {
		rc = fb_seterr(err, FB_EUNSUPPORTED, "%s: a lone cubin holds one image: there is nothing to prune", name);
	} else {
		rc = fb_seterr(err, FB_EFORMAT, "%s: not a fatbin, ELF object/library or ar archive", name);
	}
	notes_close(&c);
	rep->notes = c.notes;
	if (!rc && rep->missing && !opts->allow_missing)
		rc = fb_seterr(err, FB_ENOIMAGE,
		               "%s: %zu container%s would keep no image for a listed arch (their kernels will not run there); "
		               "--allow-missing prunes anyway",
		               name, rep->missing, rep->missing == 1 ? "" : "s");
	if (rc) {
		free(g.d);
		return rc;
	}
	if (!g.d)
		g.d = malloc(1);
	rep->out_size = g.n;
	*out = g.d;
	*outsize = g.n;
	return FB_OK;
}

int
fb_prune(const char *in, const char *outpath, const struct fb_prune_opts *opts, struct fb_prune_report *rep,
         struct fb_error *err)
{
	struct fb_prune_report dummy;
	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	if (!in || !outpath)
		return fb_seterr(err, FB_EINVAL, "fb_prune: NULL path");
	struct fb_mapped m;
	int rc = fb_map_file(in, &m, err);
	if (rc)
		return rc;
	unsigned char *o;
	size_t osz;
	rc = fb_prune_buffer(m.data, m.size, in, opts, &o, &osz, rep, err);
	fb_unmap_file(&m);
	if (rc) {
		if (rep == &dummy)
			fb_prune_report_free(rep);
		return rc;
	}
	struct stat st;
	int mode = stat(in, &st) == 0 ? (int)(st.st_mode & 07777) : 0644;
	rc = fb_write_file_atomic(outpath, o, osz, opts->mode ? opts->mode : mode, err);
	free(o);
	if (rep == &dummy)
		fb_prune_report_free(rep);
	return rc;
}

void
fb_prune_report_free(struct fb_prune_report *r)
{
	if (!r)
		return;
	free(r->notes);
	r->notes = NULL;
}
