/* arch_parse.h: private to libarchprobe: the arch-list item parser (arch_parse.c) used by the
 * resolver (arch.c). */
#ifndef AP_ARCH_PARSE_H
#define AP_ARCH_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "archprobe.h"

enum item_kind { IT_TARGETS, IT_NATIVE, IT_AUTO, IT_ALL, IT_ALLMAJOR };

struct spec {
	int sm;
	enum ap_variant var;
	bool sass, ptx;
	bool some; /* one of a meson name's members: kept when the toolkit has it (see struct named) */
};

#define MAX_SPECS 8

struct parsed {
	enum item_kind kind;
	int n;
	struct spec s[MAX_SPECS];
};

/* The nvcc name suffix of each variant: '\0', 'a', 'f'. */
extern const char ap_suffix_char[3];

/* Digits (min..max of them) at s[*i] into *val. */
bool ap_digits(const char *s, size_t len, size_t *i, int min, int max, int *val);
/* Whether s (len bytes) is word, ignoring case. */
bool ap_ieq(const char *s, size_t len, const char *word);
/* Parses one item. Returns false when it is not an arch-list item. */
bool ap_item_parse(const char *s, size_t len, struct parsed *p);
/* Finds the next item at or after *pos; returns false at the end. */
bool ap_item_next(const char *text, size_t *pos, const char **item, size_t *len);

#endif
