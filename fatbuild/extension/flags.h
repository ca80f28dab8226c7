/* flags.h: which compiler sees which user flag (host C/C++ flags on an nvcc command line). */
#ifndef FB_BUILD_FLAGS_H
#define FB_BUILD_FLAGS_H

/* The blank-separated host-compiler words of `host`, rewritten for an nvcc command line: the
 * words nvcc itself understands with the same meaning for host and device (-I -D -U -O -std=
 * -isystem -g) stay as they are, every other word becomes `-Xcompiler WORD` (commas escaped,
 * as -Xcompiler splits on them). Returns a malloc'd blank-separated string (empty for NULL),
 * NULL when out of memory. */
char *fb_nvcc_host_words(const char *host);

#endif
