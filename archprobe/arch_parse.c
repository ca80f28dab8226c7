/* arch_parse.c: the arch-list item parser (docs/archlist.md): nvcc target names and the items
 * of every syntax people write (items separated by runs of space, tab, newline, ';' or ',';
 * empty items ignored):
 *   8.6 9.0a 10.0f [+PTX any case]  PyTorch: SASS (+ PTX)
 *   86 90a 100f [-real|-virtual]    CMake: SASS and PTX / SASS only / PTX only
 *   sm_86 compute_86 sm_90a         nvcc names: SASS / PTX
 *   Ampere, hopper+ptx …            PyTorch's named table, any case; +PTX → PTX of its newest arch
 *   native auto all all-major       devices / devices-or-fallback / toolkit-wide (any case) */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arch.h"
#include "arch_parse.h"

const char ap_suffix_char[3] = {'\0', 'a', 'f'};

/* ---- target names -------------------------------------------------------------------------- */

char *
ap_target_name(const struct ap_target *t, char *buf, size_t size)
{
	if (!buf || size == 0)
		return buf;
	int v = (t->variant >= AP_PLAIN && t->variant <= AP_FAMILY) ? (int)t->variant : 0;
	if (v)
		snprintf(buf, size, "%s_%d%c", t->kind == AP_PTX ? "compute" : "sm", t->sm, ap_suffix_char[v]);
	else
		snprintf(buf, size, "%s_%d", t->kind == AP_PTX ? "compute" : "sm", t->sm);
	return buf;
}

/* Digits (min..max of them) at s[*i] into *val. */
bool
ap_digits(const char *s, size_t len, size_t *i, int min, int max, int *val)
{
	int n = 0, v = 0;
	while (*i < len && s[*i] >= '0' && s[*i] <= '9' && n < max) {
		v = v * 10 + (s[*i] - '0');
		(*i)++;
		n++;
	}
	if (n < min || (*i < len && s[*i] >= '0' && s[*i] <= '9'))
		return false;
	*val = v;
	return true;
}

static enum ap_variant
variant_at(const char *s, size_t len, size_t *i)
{
	if (*i < len && s[*i] == 'a') {
		(*i)++;
		return AP_ARCH;
	}
	if (*i < len && s[*i] == 'f') {
		(*i)++;
		return AP_FAMILY;
	}
	return AP_PLAIN;
}

/* "sm_90a" / "compute_86" of length len. */
static bool
parse_nvcc_name(const char *s, size_t len, struct ap_target *t)
{
	size_t i;
	if (len > 3 && strncmp(s, "sm_", 3) == 0) {
		t->kind = AP_SASS;
		i = 3;
	} else if (len > 8 && strncmp(s, "compute_", 8) == 0) {
		t->kind = AP_PTX;
		i = 8;
	} else
		return false;
	if (i < len && s[i] == '0') /* "sm_04" would be sm 4, printed "sm_4", which does not parse */
		return false;
	if (!ap_digits(s, len, &i, 2, 3, &t->sm))
		return false;
	t->variant = variant_at(s, len, &i);
	t->origin = 0;
	return i == len;
}

int
ap_target_parse(const char *name, struct ap_target *t)
{
	struct ap_target tmp;
	if (!name || !t || !parse_nvcc_name(name, strlen(name), &tmp))
		return AP_EPARSE;
	*t = tmp;
	return AP_OK;
}

/* ---- items ------------------------------------------------------------------------------------ */

struct named {
	const char *name;
	int n;
	int sm[4];
	int ptx; /* the PyTorch table's +PTX arch, 0 if none */
	enum ap_variant var;
	bool some; /* meson: the members the toolkit has (Thor is 10.1 before CUDA 13, 11.0 from it) */
};

/* PyTorch's named table as of PyTorch 2.15 (torch/utils/cpp_extension.py), then the names
 * only meson's cuda module has (mesonbuild/modules/cuda.py, _FAMILY_TO_MICROISAS), with
 * meson's meaning: SASS for each member, PTX only with +PTX (on the newest member). Where both
 * have a name (Kepler … Blackwell), PyTorch's meaning is the one used (docs/archnames.md). */
static const struct named names[] = {
	{"kepler+tesla", 1, {37}, 0, AP_PLAIN, false},
	{"kepler", 1, {35}, 35, AP_PLAIN, false},
	{"maxwell+tegra", 1, {53}, 0, AP_PLAIN, false},
	{"maxwell", 2, {50, 52}, 52, AP_PLAIN, false},
	{"pascal", 2, {60, 61}, 61, AP_PLAIN, false},
	{"volta+tegra", 1, {72}, 0, AP_PLAIN, false},
	{"volta", 1, {70}, 70, AP_PLAIN, false},
	{"turing", 1, {75}, 75, AP_PLAIN, false},
	{"ampere+tegra", 1, {87}, 0, AP_PLAIN, false},
	{"ampere", 2, {80, 86}, 86, AP_PLAIN, false},
	{"ada", 1, {89}, 89, AP_PLAIN, false},
	{"hopper", 1, {90}, 90, AP_PLAIN, false},
	{"blackwell+tegra", 1, {110}, 0, AP_PLAIN, false},
	{"blackwell", 4, {100, 103, 120, 121}, 121, AP_PLAIN, false},
	{"rubin", 1, {107}, 107, AP_PLAIN, false},
	/* meson only */
	{"fermi", 2, {20, 21}, 0, AP_PLAIN, false},
	{"kepler+tegra", 1, {32}, 0, AP_PLAIN, false},
	{"pascal+tegra", 1, {62}, 0, AP_PLAIN, false},
	{"xavier", 1, {72}, 0, AP_PLAIN, false},
	{"orin", 1, {87}, 0, AP_PLAIN, false},
	{"lovelace", 1, {89}, 0, AP_PLAIN, false},
	{"hopper(a)", 1, {90}, 0, AP_ARCH, false},
	{"thor", 2, {101, 110}, 0, AP_PLAIN, true},
	{"thor(a)", 2, {101, 110}, 0, AP_ARCH, true},
	{"blackwell(a)", 4, {100, 103, 120, 121}, 0, AP_ARCH, false},
};

bool
ap_ieq(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

static void
add_spec(struct parsed *p, int sm, enum ap_variant var, bool sass, bool ptx)
{
	if (p->n < MAX_SPECS)
		p->s[p->n++] = (struct spec){sm, var, sass, ptx, false};
}

/* Parses one item. Returns false when it is not an arch-list item. */
bool
ap_item_parse(const char *s, size_t len, struct parsed *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = IT_TARGETS;
	if (ap_ieq(s, len, "native")) {
		p->kind = IT_NATIVE;
		return true;
	}
	if (ap_ieq(s, len, "auto")) {
		p->kind = IT_AUTO;
		return true;
	}
	if (ap_ieq(s, len, "all")) {
		p->kind = IT_ALL;
		return true;
	}
	if (ap_ieq(s, len, "all-major")) {
		p->kind = IT_ALLMAJOR;
		return true;
	}
	struct ap_target t;
	if (parse_nvcc_name(s, len, &t)) {
		add_spec(p, t.sm, t.variant, t.kind == AP_SASS, t.kind == AP_PTX);
		return true;
	}
	/* "+PTX" in any case on PyTorch numbers and names. */
	bool plus_ptx = false;
	size_t base = len;
	if (len > 4 && strncasecmp(s + len - 4, "+ptx", 4) == 0) {
		plus_ptx = true;
		base = len - 4;
	}
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const struct named *nm = &names[k];
		if (!ap_ieq(s, base, nm->name))
			continue;
		int newest = nm->sm[nm->n - 1];
		for (int j = 0; j < nm->n; j++) {
			add_spec(p, nm->sm[j], nm->var, true, nm->sm[j] == nm->ptx || (plus_ptx && nm->sm[j] == newest));
			p->s[p->n - 1].some = nm->some;
		}
		return true;
	}
	size_t i = 0;
	int major, minor;
	if (ap_digits(s, base, &i, 1, 2, &major) && i < base && s[i] == '.') {
		/* PyTorch: major.minor[a|f][+PTX] */
		i++;
		if (!ap_digits(s, base, &i, 1, 1, &minor))
			return false;
		enum ap_variant var = variant_at(s, base, &i);
		if (i != base || major == 0)
			return false;
		add_spec(p, major * 10 + minor, var, true, plus_ptx);
		return true;
	}
	if (plus_ptx)
		return false;
	/* CMake: NN[a|f][-real|-virtual] */
	i = 0;
	int sm;
	if (!ap_digits(s, len, &i, 2, 3, &sm) || s[0] == '0')
		return false;
	enum ap_variant var = variant_at(s, len, &i);
	if (i == len) {
		add_spec(p, sm, var, true, true);
		return true;
	}
	if (len - i == 5 && strncmp(s + i, "-real", 5) == 0) {
		add_spec(p, sm, var, true, false);
		return true;
	}
	if (len - i == 8 && strncmp(s + i, "-virtual", 8) == 0) {
		add_spec(p, sm, var, false, true);
		return true;
	}
	return false;
}

static bool
is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == ';' || c == ',';
}

/* Finds the next item at or after *pos; returns false at the end. */
bool
ap_item_next(const char *text, size_t *pos, const char **item, size_t *len)
{
	size_t i = *pos;
	while (text[i] && is_sep(text[i]))
		i++;
	if (!text[i])
		return false;
	size_t start = i;
	while (text[i] && !is_sep(text[i]))
		i++;
	*item = text + start;
	*len = i - start;
	*pos = i;
	return true;
}
