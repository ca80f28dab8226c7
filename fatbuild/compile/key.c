/* key.c: how paths enter the compile key (compile.c computes the key; docs/remote-cache.md §3
 * lists what it covers). A path below the base directory is spelled relative to it, so two
 * checkouts of the same tree in different places give the same key. That is sound only while
 * the path cannot reach the output: NVRTC writes the program name into the image only through
 * __FILE__ (and its builtin) or debug information (-G, -lineinfo), so compile.c keeps exact
 * paths whenever a source or a header below the base spells __FILE__ or assert, and whenever
 * debug information is asked for. */
#include <string.h>

#include "compile.h"

int
fb_key_path(const char *base, const char *path, char *out, size_t size)
{
	size_t b = base ? strlen(base) : 0;
	while (b > 1 && base[b - 1] == '/')
		b--;
	const char *rest = NULL;
	if (b && strncmp(path, base, b) == 0 && (path[b] == '/' || path[b] == 0))
		rest = path + b;
	size_t need = rest ? 1 + strlen(rest) : strlen(path);
	if (need + 1 > size)
		return -1;
	if (rest) {
		out[0] = '@';
		memcpy(out + 1, rest, strlen(rest) + 1);
	} else {
		memcpy(out, path, need + 1);
	}
	return 0;
}

static int
ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int
fb_key_names_file(const char *text, size_t size)
{
	static const char *const words[] = {"__FILE__", "__builtin_FILE", "assert"};
	for (size_t i = 0; i < size; i++) {
		if (i > 0 && ident_char(text[i - 1]))
			continue;
		for (size_t w = 0; w < sizeof(words) / sizeof(*words); w++) {
			size_t n = strlen(words[w]);
			if (size - i >= n && memcmp(text + i, words[w], n) == 0 && (i + n == size || !ident_char(text[i + n])))
				return 1;
		}
	}
	return 0;
}
