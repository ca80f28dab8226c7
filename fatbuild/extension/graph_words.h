/* graph_words.h: the words the edges' commands share (graph_words.c), each appended to a
 * command line (cmdline.h) from the build's inputs alone: -I and -D, the launcher, the
 * optimisation, a C++ compile's flags, the prefix maps, the remote executor's words.
 * Private; symbols are hidden. */
#ifndef FB_BUILD_GRAPH_WORDS_H
#define FB_BUILD_GRAPH_WORDS_H

#include <stdbool.h>

#include "base/strbuf.h"
#include "cmdline.h"
#include "gen.h"

/* Appends -I (absolute when it exists) and -D words of the build to c. */
void fb_graph_includes(const struct gen *g, struct cmd *c);
/* Appends the launcher words (--launcher, else FATBUILD_LAUNCHER) to c. */
void fb_graph_launcher(const struct gen *g, struct cmd *c);
/* The optimisation words of a compile of lang ("" when its flags state one); static text. */
const char *fb_graph_host_opt(const struct gen *g, enum lang lang);
/* Appends a C++ compile's flags before its own to c; for_pch: without the extension's name. */
void fb_graph_cxx_flags(const struct gen *g, struct cmd *c, bool for_pch);
/* Appends the prefix map of the cache base (which 0) or torch's dir (1) to c; the mapped dir
 * into bases (may be NULL). */
void fb_graph_base_map(const struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases, int which);
/* Appends every prefix map of a host or nvcc compile to c; the base and torch's dir into
 * bases (may be NULL). */
void fb_graph_prefix_maps(const struct gen *g, struct cmd *c, bool via_nvcc, struct fb_strlist *bases);
/* Appends the remote executor's words (--remote-exec and its options; --remote-exec '' when
 * the build turned the environment's off) to c. */
void fb_graph_rexec_words(const struct gen *g, struct cmd *c);

#endif
