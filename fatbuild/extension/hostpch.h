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
	char key[65];                 /* the SHA-256 of its identity (KEY) */
	char id[17];                  /* the SHA-256 of the block, its first 16 hex digits (ID) */
	char link[FB_HOSTPCH_PATH];   /* BUILD_DIR/pch/ID, set by fb_hostpch_link */
	int hold;                     /* DIR open with a shared flock (-1: none): trim leaves it */
};

/* The flavor of compiler (a program name or path, found on cfg's PATH) by its name and its real
 * path's name, as ccache tells compilers apart: clang, clang++, clang-14 ...; gcc, g++, c++,
 * x86_64-linux-gnu-g++-12 ...; else none. */
enum fb_hostpch_flavor fb_hostpch_flavor(const struct fb_config *cfg, const char *compiler);

/* Whether host PCHs are used: not with FATBUILD_HOST_PCH=0 (fatbuild.load's way to say
 * --no-host-pch), nor in a shared team cache (FATBUILD_CACHE_SHARED: the PCH dir is private).
 * *eager: FATBUILD_HOST_PCH=1, make a PCH at its first use rather than its second. */
bool fb_hostpch_enabled(const struct fb_config *cfg, bool *eager);

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
 * written by the first, is there) unless eager. DIR is held (p->hold: a shared flock that
 * 'fatbuild cache trim' respects; fb_hostpch_release ends it) and its id's mtime set to now,
 * the PCH's last use. FB_EUNSAFE when a directory fails fb_dir_check. */
int fb_hostpch_prepare(const struct fb_config *cfg, const char *block, const char *compiler, const char *flags,
                       const char *torch_version, const char *torch_dir, bool eager, struct fb_hostpch *p,
                       struct fb_error *err);

/* Ends p's hold on its dir (nothing when it has none). */
void fb_hostpch_release(struct fb_hostpch *p);

/* BUILD_DIR/pch/ID (ID: from the block alone) into p->link: there h.h, h.h.gch (or .pch) and
 * h.h.d link to the PCH dir's files, and pch.sh holds script (rewritten only when it differs),
 * so a build's commands name the PCH by a path in the build dir that depends on neither the
 * cache dir nor where torch is: with another cache dir no command changes and ninja recompiles
 * nothing, and the edge cache's keys are the same for a torch in another venv (the headers the
 * compile read are in them, by content). FB_EIO, FB_EUNSAFE (the build dir's pch dir fails
 * fb_dir_check). */
int fb_hostpch_link(struct fb_hostpch *p, const char *build_dir, const char *script, struct fb_error *err);

/* The text of p's pch.sh into *out (malloc'd): run with no argument before a compile that
 * reads the PCH, it makes a missing PCH, under a lock, unless the background maker holds it or
 * this is the first compile that wants it and eager is false (it leaves `seen`); run with "bg",
 * it makes it when no one else is (the build's background maker, docs/pytorch.md). make: the
 * compiler and flags, shell words. The PCH is made in its dir from h.h by its relative name, so
 * its header list names only the headers h.h includes; a PCH that fails to build leaves the
 * compile to go on without. Once the build has failed (the file failed exists, output.c), it
 * stops making the PCH and exits 1, so that the compile is not run: the build needs no object
 * any more, and ninja would wait for it. */
int fb_hostpch_script(const struct fb_hostpch *p, const char *make, const char *failed, bool eager, char **out,
                      struct fb_error *err);

#endif
