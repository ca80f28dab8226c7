/* words.c: a command held in one variable (CC="ccache gcc -m64") split into its words, as the
 * shell splits an unquoted $CC with the default IFS: at runs of blanks (space, tab, newline)
 * and nowhere else. No quotes, no backslashes, no globbing, no other expansion: what make,
 * meson and PyTorch's cpp_extension (whose build.ninja uses $CXX unquoted) do with it. And the
 * one PATH search, which finds a command's first word. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "words.h"

static const char blanks[] = " \t\n";

int
fb_words_split(const char *s, char ***words, size_t *n, struct fb_error *err)
{
	*words = NULL;
	if (n)
		*n = 0;
	size_t count = 0;
	for (const char *p = s ? s : ""; *(p += strspn(p, blanks));) {
		count++;
		p += strcspn(p, blanks);
	}
	char **v = calloc(count + 1, sizeof(*v));
	if (!v)
		return fb_seterr(err, FB_BASE_ENOMEM, "out of memory");
	size_t k = 0;
	for (const char *p = s ? s : ""; *(p += strspn(p, blanks));) {
		size_t len = strcspn(p, blanks);
		if (!(v[k] = strndup(p, len))) {
			fb_words_free(v);
			return fb_seterr(err, FB_BASE_ENOMEM, "out of memory");
		}
		k++;
		p += len;
	}
	*words = v;
	if (n)
		*n = count;
	return 0;
}

void
fb_words_free(char **words)
{
	for (size_t i = 0; words && words[i]; i++)
		free(words[i]);
	free(words);
}

bool
fb_path_next(const char **pos, const char *prog, char *cand, size_t size)
{
	if (!*pos)
		*pos = "/usr/bin:/bin";
	while (**pos) {
		const char *dir = *pos;
		size_t n = strcspn(dir, ":");
		*pos = dir + n + (dir[n] == ':');
		int w = snprintf(cand, size, "%.*s/%s", (int)n, dir, prog);
		if (n && w >= 0 && (size_t)w < size && access(cand, X_OK) == 0)
			return true;
	}
	return false;
}
