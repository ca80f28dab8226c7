/* projroot.h: the project's root, which a cicc step's based key spells @P so that two
 * checkouts of one project share entries (projroot.c; docs/launcher.md "Checkouts"). Private to
 * libfatbuild. */
#ifndef FB_LAUNCH_PROJROOT_H
#define FB_LAUNCH_PROJROOT_H

#include <stdbool.h>
#include <stddef.h>

struct fb_config;

/* The root of the project the absolute source path src lies in, as text src begins with (no
 * link resolved, since nvcc's words and the preprocessor's line markers spell paths as given):
 * FATBUILD_CACHE_BASEDIR when src lies below it; else the nearest directory above src that
 * holds .git, setup.py or pyproject.toml (a project checked out inside another's tree is its
 * own); else the topmost of the directories holding CMakeLists.txt one above the other from
 * src's; else src's directory.
 * 0 with root filled; -1 when src is not absolute, or the root would be "/". */
int fb_project_root(const struct fb_config *cfg, const char *src, char *root, size_t size);

/* Whether every place data spells root followed by '/' is where the path of a line marker
 * starts (`# N "ROOT/...` or `#line N "ROOT/...`). A path below the root elsewhere (a string
 * from __FILE__, PTX's .file) may reach the output as other bytes. */
bool fb_root_in_markers_only(const char *data, size_t size, const char *root);

/* data with each place it spells root followed by '/' as "@P": malloc'd (*out, *out_size);
 * -1 on OOM. */
int fb_root_spell(const char *data, size_t size, const char *root, char **out, size_t *out_size);

#endif
