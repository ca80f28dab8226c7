/* hostpch.h: the precompiled header of a --torch C++ source's leading #include <...> block,
 * kept content-addressed in the user's cache (docs/pytorch.md "Precompiled torch headers"). */
#ifndef FB_BUILD_HOSTPCH_H
#define FB_BUILD_HOSTPCH_H

#include <stdbool.h>
#include <stddef.h>

#include "fatbuild.h"

#define FB_HOSTPCH_PATH 4096

/* How a compiler makes and finds a PCH: gcc's DIR/h.h.gch, clang's DIR/h.h.pch (its driver
 * turns -include DIR/h.h into -include-pch DIR/h.h.pch when that file is there); any other
 * compiler gets none. */
enum fb_hostpch_flavor { FB_HOSTPCH_NONE, FB_HOSTPCH_GCC, FB_HOSTPCH_CLANG };

struct fb_hostpch {
	enum fb_hostpch_flavor flavor; /* NONE: the compiler makes none, nothing else is set */
	char dir[FB_HOSTPCH_PATH - 32]; /* CACHE/hostpch/KEY, made 0700 and checked */
	char header[FB_HOSTPCH_PATH]; /* DIR/h.h: what -include names */
	char gch[FB_HOSTPCH_PATH];    /* DIR/h.h.gch (gcc) or DIR/h.h.pch (clang): read in its place */
	char dep[FB_HOSTPCH_PATH];    /* DIR/h.h.d: the headers the PCH was made from */
	char stamp[FB_HOSTPCH_PATH];  /* DIR/stamp: "SIZE INODE SECONDS.NANOSECONDS" of the PCH made here */
	bool use;                     /* compile with it (false: the first build that wants it) */
	bool stale;                   /* missing, foreign or older than a header it read: make it */
	char why[256];                /* when stale: why ("none yet", "a header changed: PATH") */
};

/* Whether host PCHs are used: not with FATBUILD_HOST_PCH=0 (fatbuild.load's way to say
 * --no-host-pch), nor in a shared team cache (FATBUILD_CACHE_SHARED: the PCH dir is private).
 * *eager: FATBUILD_HOST_PCH=1, make a PCH at its first use rather than its second. */
bool fb_hostpch_enabled(bool *eager);

/* The source's leading block of #include <...> lines (comments and blank lines between them
 * allowed; it ends at anything else, a quoted include included) into *block (malloc'd), when
 * one of them names a torch, ATen, c10 or pybind11 header; else *block = NULL. 0 or FB_EIO /
 * FB_ENOMEM. */
int fb_hostpch_block(const char *src, char **block, struct fb_error *err);

/* The PCH of block made by compiler (a program name or path, found on PATH) with the shell
 * words in flags (the compiler's words and options, without -c, -o, depfile and source), torch
 * identified by torch_version and torch_dir (whose version.py is read): its paths in the
 * user's cache (fb_cache_dir, then hostpch/KEY), h.h and the identity file written when missing
 * or foreign, whether to use it and whether it must be made; for a compiler of no flavor
 * nothing but p->flavor = FB_HOSTPCH_NONE. Making one costs about three
 * compiles of a torch source, so it is made when a second build wants it (its identity file,
 * written by the first, is there) unless eager. FB_EUNSAFE when a directory fails
 * fb_dir_check. */
int fb_hostpch_prepare(const char *block, const char *compiler, const char *flags, const char *torch_version,
                       const char *torch_dir, bool eager, struct fb_hostpch *p, struct fb_error *err);

#endif
