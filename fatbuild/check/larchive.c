/* larchive.c: libarchive, dlopen'ed through one symbol table (HACKING.md: optional libraries).
 *
 * Why libarchive, and why not linked: wheels are zip files (stored or deflated members), sdists
 * gzip'ed tars, and other archives come as zip, tar, tar.bz2, tar.xz or tar.zst; one library
 * reads every one of them as a stream of members, inflating as it goes, and is fuzzed upstream,
 * where parsers of our own for zip's central directory, tar's ustar/pax/GNU headers and four
 * compressions would be new attack surface to maintain. Its reading API is plain C with opaque
 * handles and scalar arguments, stable since libarchive 3.0 (soname libarchive.so.13, 2011), so
 * declaring the dozen entry points by hand is safe, and a machine without it still checks
 * files and directories; only archives then fail, naming the package (docs/check-environment.md
 * §5). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "base/dlload.h"
#include "base/error.h"

int
fb_la_load(struct fb_la *la, const char *path, struct fb_error *err)
{
	memset(la, 0, sizeof(*la));
	const char *name = path && *path ? path : "libarchive.so.13";
	la->dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!la->dl) {
		const char *e = dlerror();
		return fb_seterr(err, FB_ENOTOOL,
		                 "cannot load %s (%s): archives are read with libarchive; install it (Debian/Ubuntu: "
		                 "libarchive13, Fedora: libarchive)",
		                 name, e ? e : "not found");
	}
	const struct fb_dl_sym syms[] = {
		{"archive_read_new", (void **)&la->read_new},
		{"archive_read_support_filter_all", (void **)&la->support_filter_all},
		{"archive_read_support_format_zip", (void **)&la->support_format_zip},
		{"archive_read_support_format_tar", (void **)&la->support_format_tar},
		{"archive_read_open_fd", (void **)&la->open_fd},
		{"archive_read_next_header", (void **)&la->next_header},
		{"archive_read_data", (void **)&la->read_data},
		{"archive_read_data_skip", (void **)&la->data_skip},
		{"archive_read_free", (void **)&la->read_free},
		{"archive_error_string", (void **)&la->error_string},
		{"archive_entry_pathname", (void **)&la->entry_pathname},
		{"archive_entry_filetype", (void **)&la->entry_filetype},
		{"archive_entry_size", (void **)&la->entry_size},
		{"archive_entry_hardlink", (void **)&la->entry_hardlink},
		{"archive_filter_bytes", (void **)&la->filter_bytes},
	};
	char why[320];
	if (!fb_dl_bind(la->dl, name, syms, sizeof(syms) / sizeof(syms[0]), why, sizeof(why))) {
		fb_la_unload(la);
		return fb_seterr(err, FB_ENOTOOL, "%s: not a usable libarchive 3", why);
	}
	return FB_OK;
}

void
fb_la_unload(struct fb_la *la)
{
	if (la && la->dl)
		dlclose(la->dl);
	if (la)
		memset(la, 0, sizeof(*la));
}
