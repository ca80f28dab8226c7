/* flags.c: host-compiler flags on an nvcc command line. nvcc rejects host options it does not
 * know (`nvcc fatal : Unknown option '-fdiagnostics-color=always'`); they reach the host
 * compiler through -Xcompiler. The few nvcc shares with the host compiler (include dirs,
 * macros, the language standard, -g) are kept as they are, so the device side sees them too.
 * -O goes through -Xcompiler as well: nvcc's -O is the host's anyway, and a second one on
 * nvcc's own command line draws "incompatible redefinition for option 'optimize'". */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"

/* Words nvcc takes itself with the host compiler's meaning; *takes_next: the value is the
 * next word ("-isystem DIR", "-I DIR"). */
static bool
shared_word(const char *w, bool *takes_next)
{
	static const char *const joined[] = {"-I", "-D", "-U", "-std=", "-isystem"};
	static const char *const split[] = {"-I", "-D", "-U", "-isystem", "-include"};
	*takes_next = false;
	for (size_t i = 0; i < sizeof(split) / sizeof(split[0]); i++)
		if (strcmp(w, split[i]) == 0) {
			*takes_next = true;
			return true;
		}
	if (strcmp(w, "-g") == 0)
		return true;
	for (size_t i = 0; i < sizeof(joined) / sizeof(joined[0]); i++)
		if (strncmp(w, joined[i], strlen(joined[i])) == 0 && w[strlen(joined[i])])
			return true;
	return false;
}

char *
fb_nvcc_host_words(const char *host)
{
	if (!host)
		host = "";
	/* Worst case every byte a comma (escaped to two) plus "-Xcompiler " per word. */
	size_t n = strlen(host), cap = 3 * n + 16 * (n / 2 + 1) + 1;
	char *out = malloc(cap), *copy = strdup(host);
	if (!out || !copy) {
		free(out);
		free(copy);
		return NULL;
	}
	size_t len = 0;
	out[0] = 0;
	bool next_raw = false;
	for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		bool takes_next = false;
		if (len)
			out[len++] = ' ';
		if (next_raw || shared_word(w, &takes_next)) {
			next_raw = takes_next;
			size_t wl = strlen(w);
			memcpy(out + len, w, wl);
			len += wl;
		} else {
			memcpy(out + len, "-Xcompiler ", 11);
			len += 11;
			for (const char *c = w; *c; c++) {
				if (*c == ',')
					out[len++] = '\\';
				out[len++] = *c;
			}
		}
		out[len] = 0;
	}
	free(copy);
	return out;
}

/* Calls f on each blank-separated word of s (n bytes at w) until it returns true. */
static bool
any_word(const char *s, bool (*f)(const char *w, size_t n))
{
	for (const char *p = s ? s : ""; *(p += strspn(p, " \t\n"));) {
		size_t n = strcspn(p, " \t\n");
		if (f(p, n))
			return true;
		p += n;
	}
	return false;
}

static bool
holds(const char *w, size_t n, const char *what)
{
	size_t k = strlen(what);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(w + i, what, k) == 0)
			return true;
	return false;
}

bool
fb_flags_name_archs(const char *s)
{
	/* -I, -isystem, -D, -U, -include and their values name paths and macros: "arch" in
	 * /home/research/include is no arch (torch's rule looks at the project's nvcc flags alone,
	 * which fatbuild cannot tell from the include words torch puts before them) */
	static const char *const split[] = {"-I", "-isystem", "-D", "-U", "-include"};
	bool value = false;
	for (const char *p = s ? s : ""; *(p += strspn(p, " \t\n"));) {
		size_t n = strcspn(p, " \t\n");
		bool skip = value;
		value = false;
		for (size_t i = 0; !skip && i < sizeof(split) / sizeof(split[0]); i++) {
			size_t k = strlen(split[i]);
			if (n >= k && memcmp(p, split[i], k) == 0) {
				skip = true;
				value = n == k;
			}
		}
		if (!skip && holds(p, n, "arch"))
			return true;
		p += n;
	}
	return false;
}

static bool
opt_word(const char *w, size_t n)
{
	return (n >= 2 && w[0] == '-' && w[1] == 'O') || (n >= 10 && memcmp(w, "--optimize", 10) == 0);
}

bool
fb_flags_have_opt(const char *s)
{
	return any_word(s, opt_word);
}

static bool
pic_word(const char *w, size_t n)
{
	/* -fPIC alone (also after -Xcompiler or --compiler-options), quoted as torch writes it
	 * ('-fPIC'), or at the end of -Xcompiler=...,-fPIC */
	return (n == 5 && memcmp(w, "-fPIC", 5) == 0) || (n == 7 && memcmp(w, "'-fPIC'", 7) == 0) ||
	       (n > 6 && memcmp(w + n - 6, "=-fPIC", 6) == 0) || (n > 6 && memcmp(w + n - 6, ",-fPIC", 6) == 0);
}

bool
fb_flags_have_pic(const char *s)
{
	return any_word(s, pic_word);
}

size_t
fb_flags_ntargets(const char *s)
{
	size_t n = 0;
	for (const char *p = s ? s : ""; *(p += strspn(p, " \t\n"));) {
		size_t len = strcspn(p, " \t\n");
		if ((len >= 8 && memcmp(p, "-gencode", 8) == 0) || (len >= 15 && memcmp(p, "--generate-code", 15) == 0))
			n++;
		p += len;
	}
	return n ? n : 1;
}
