/* flags.h: which compiler sees which user flag (host C/C++ flags on an nvcc command line). */
#ifndef FB_BUILD_FLAGS_H
#define FB_BUILD_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

/* The blank-separated host-compiler words of `host`, rewritten for an nvcc command line: the
 * words nvcc itself understands with the same meaning for host and device (-I -D -U -O -std=
 * -isystem -g) stay as they are, every other word becomes `-Xcompiler WORD` (commas escaped,
 * as -Xcompiler splits on them). Returns a malloc'd blank-separated string (empty for NULL),
 * NULL when out of memory. */
char *fb_nvcc_host_words(const char *host);

/* Whether the blank-separated words of s name the GPU arches, as torch.utils.cpp_extension
 * tells them (_get_cuda_arch_flags): a word that holds "arch" (-gencode=arch=...,
 * -arch=sm_90, "-gencode arch=compute_80,code=sm_80"; also -march=..., as with torch), the words
 * of -I, -isystem, -D, -U and -include left out. Such flags replace the arch list on nvcc's
 * command line. */
bool fb_flags_name_archs(const char *s);
/* Whether s holds an optimisation word (-O, -O3, -Ofast, --optimize ...). */
bool fb_flags_have_opt(const char *s);
/* Whether s holds -fPIC (alone, after -Xcompiler, or as -Xcompiler=...,-fPIC). */
bool fb_flags_have_pic(const char *s);
/* The targets s's -gencode / --generate-code words name (one per word; 1 when none). */
size_t fb_flags_ntargets(const char *s);

#endif
