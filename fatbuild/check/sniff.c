/* sniff.c: what a file is, from its first bytes, so that only files that can hold device code are
 * mapped and parsed, whatever their names (docs/check-environment.md §1). ELF: "\x7fELF", class
 * 64 (byte 4 = 2), little-endian (byte 5 = 1); fatbin: its container magic (docs/fatbin.md §1);
 * ar: "!<arch>\n"; PTX: text whose first directive, after blank space and // comment lines, is
 * .version; zip: "PK\3\4" (a member), "PK\5\6" (empty) or "PK\7\x8" (spanned); tar: "ustar" at
 * 257; gzip, bzip2, xz and zstd streams may hold a tar (libarchive then decides). */
#include <string.h>

#include "check.h"
#include "base/bytes.h"

static bool
is_ptx(const unsigned char *p, size_t n)
{
	if (memchr(p, 0, n))
		return false;
	size_t i = 0;
	while (i < n) {
		unsigned char ch = p[i];
		if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
			i++;
		} else if (ch == '/' && i + 1 < n && p[i + 1] == '/') {
			while (i < n && p[i] != '\n')
				i++;
		} else {
			return n - i > 9 && memcmp(p + i, ".version", 8) == 0 && (p[i + 8] == ' ' || p[i + 8] == '\t');
		}
	}
	return false;
}

static bool
is_archive(const unsigned char *p, size_t n)
{
	static const struct {
		const char *magic;
		size_t len;
	} streams[] = {
		{"PK\x03\x04", 4}, {"PK\x05\x06", 4}, {"PK\x07\x08", 4}, {"\x1f\x8b", 2},
		{"BZh", 3},        {"\xfd" "7zXZ\0", 6}, {"\x28\xb5\x2f\xfd", 4},
	};
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
		if (n >= streams[i].len && memcmp(p, streams[i].magic, streams[i].len) == 0)
			return true;
	return n >= 262 && memcmp(p + 257, "ustar", 5) == 0;
}

enum fb_sniff
fb_sniff(const unsigned char *p, size_t n)
{
	if (n >= 4 && memcmp(p, "\x7f" "ELF", 4) == 0)
		return n >= 6 && p[4] == 2 && p[5] == 1 ? FB_SNIFF_ELF : FB_SNIFF_ELF_OTHER;
	if (n >= 4 && fb_rd32(p) == 0xBA55ED50u)
		return FB_SNIFF_FATBIN;
	if (n >= 8 && memcmp(p, "!<arch>\n", 8) == 0)
		return FB_SNIFF_AR;
	if (is_archive(p, n))
		return FB_SNIFF_ARCHIVE;
	if (is_ptx(p, n))
		return FB_SNIFF_PTX;
	return FB_SNIFF_PLAIN;
}
