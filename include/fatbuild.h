/* fatbuild.h: gencode flags, NVRTC compilation, fatbinaries, ELF embedding and extension
 * builds. The public API of libfatbuild, one header per part (include/fatbuild/): this one
 * includes them all; it builds on archprobe.h.
 *
 * Conventions as in archprobe.h: 0 or an FB_E* code, detail in an optional caller-owned
 * struct fb_error, opaque objects in _new/_free pairs (free accepts NULL), no globals,
 * no printing, no exit. What is stable: HACKING.md "Public API". */
#ifndef FATBUILD_H
#define FATBUILD_H

#include "fatbuild/common.h"
#include "fatbuild/fatbin.h"
#include "fatbuild/compile.h"
#include "fatbuild/cache.h"
#include "fatbuild/build.h"
#include "fatbuild/prune.h"
#include "fatbuild/check.h"

#endif
