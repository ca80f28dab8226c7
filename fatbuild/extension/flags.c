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
