/* shared.h: what the fatbin modules (fatbin.c, fatbin_read.c, cubin.c, hostelf.c,
 * select.c) share. Private to the fatbin subsystem; symbols are hidden. */
#ifndef FB_FATBIN_SHARED_H
#define FB_FATBIN_SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/error.h"
#include "fatbuild.h"
#include "elfid.h"
#include "format.h"

#endif
