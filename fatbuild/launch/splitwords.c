/* splitwords.c: which nvcc commands the launcher splits (docs/launcher.md "What passes through").
 * A compile is split only when every word is one this table knows: one input, -c, and options
 * whose effect shows in nvcc's own --dryrun plan. Anything else (a query, a link, relocatable
 * device code, a response file, an option not listed) is run as it is, so the split never
 * turns a command nvcc takes into a failed one. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "plan.h"

/* V: takes a value (the next word, or after '='); A: also attached (-Ifoo, -O3). */
#define V 1
#define A 2

struct opt {
	const char *name;
	int how;
};

static const struct opt known[] = {
	{"-c", 0}, {"--compile", 0}, {"-o", V}, {"--output-file", V},
	{"-I", V | A}, {"--include-path", V}, {"-D", V | A}, {"--define-macro", V}, {"-U", V | A},
	{"--undefine-macro", V}, {"-isystem", V}, {"--system-include", V}, {"-include", V},
	{"--pre-include", V}, {"-x", V}, {"--x", V}, {"-MD", 0}, {"--generate-dependencies-with-compile", 0},
	{"-MMD", 0}, {"--generate-nonsystem-dependencies-with-compile", 0}, {"-MF", V},
	{"--dependency-output", V}, {"-MT", V}, {"--dependency-target-name", V},
	{"-ccbin", V}, {"--compiler-bindir", V}, {"-Xcompiler", V}, {"--compiler-options", V},
	{"-Xcudafe", V}, {"-Xptxas", V}, {"--ptxas-options", V}, {"-Xfatbin", V}, {"--fatbin-options", V},
	{"-gencode", V}, {"--generate-code", V}, {"-arch", V}, {"--gpu-architecture", V}, {"-code", V},
	{"--gpu-code", V}, {"--threads", V}, {"-t", V}, {"-std", V}, {"--std", V}, {"-O", V | A},
	{"--optimize", V}, {"--diag-suppress", V}, {"-diag-suppress", V}, {"--diag-error", V},
	{"--diag-warn", V}, {"-maxrregcount", V}, {"--maxrregcount", V}, {"--default-stream", V},
	{"-default-stream", V}, {"-ftz", V}, {"--ftz", V}, {"-prec-div", V}, {"--prec-div", V},
	{"-prec-sqrt", V}, {"--prec-sqrt", V}, {"-fmad", V}, {"--fmad", V}, {"-rdc", V},
	{"--relocatable-device-code", V}, {"-g", 0}, {"--debug", 0}, {"-G", 0}, {"--device-debug", 0},
	{"-lineinfo", 0}, {"--generate-line-info", 0}, {"-use_fast_math", 0}, {"--use_fast_math", 0},
	{"--expt-relaxed-constexpr", 0}, {"-expt-relaxed-constexpr", 0}, {"--expt-extended-lambda", 0},
	{"-expt-extended-lambda", 0}, {"--extended-lambda", 0}, {"-extended-lambda", 0},
	{"-forward-unknown-to-host-compiler", 0}, {"--forward-unknown-to-host-compiler", 0}, {"-w", 0},
	{"--disable-warnings", 0}, {"-m64", 0}, {"-allow-unsupported-compiler", 0},
	{"--allow-unsupported-compiler", 0}, {"-Wno-deprecated-gpu-targets", 0},
	{"-Wno-deprecated-declarations", 0}, {"-Werror", V}, {"--resource-usage", 0}, {"-res-usage", 0},
	{"-restrict", 0}, {"--restrict", 0}, {"-src-in-ptx", 0}, {"--source-in-ptx", 0},
};

/* The options that make a command something else than one compile, with what it is. */
static const struct {
	const char *name, *what;
} refused[] = {
	{"-E", "preprocess only"}, {"--preprocess", "preprocess only"}, {"-M", "dependencies only"},
	{"-MM", "dependencies only"}, {"--generate-dependencies", "dependencies only"},
	{"--version", "a version query"}, {"-V", "a version query"}, {"-lib", "a library"},
	{"-dlink", "a device link"}, {"--device-link", "a device link"}, {"-dc", "relocatable device code"},
	{"--device-c", "relocatable device code"}, {"-link", "a link"}, {"-run", "a run"},
	{"-ptx", "PTX only"}, {"-cubin", "a cubin only"}, {"-fatbin", "a fatbinary only"},
	{"--dryrun", "a dry run"}, {"-dryrun", "a dry run"}, {"-keep", "kept temporaries"},
	{"--keep", "kept temporaries"}, {"-v", "verbose"}, {"--verbose", "verbose"},
};

/* The option word w names, and where its value is: *inl the text after '=' or the attached
 * value, NULL when the value is the next word. NULL when the table lacks it. */
static const struct opt *
lookup(const char *w, const char **inl)
{
	*inl = NULL;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct opt *o = &known[i];
		size_t n = strlen(o->name);
		if (strcmp(w, o->name) == 0)
			return o;
		if ((o->how & V) && strncmp(w, o->name, n) == 0 && w[n] == '=') {
			*inl = w + n + 1;
			return o;
		}
		if ((o->how & A) && strncmp(w, o->name, n) == 0 && w[n]) {
			*inl = w + n;
			return o;
		}
	}
	return NULL;
}

static bool
is(const struct opt *o, const char *a, const char *b)
{
	return strcmp(o->name, a) == 0 || (b && strcmp(o->name, b) == 0);
}

/* The words of the compile less what the split does otherwise: for the plan (dep false), less
 * -MD, -MMD, -MF, -MT and --threads, which the dry run would turn into a step only nvcc itself
 * runs ("-- Filter Dependencies --"); for the `nvcc -M` (-MM for -MMD) that writes what -MD
 * asks for (dep true), less -MD, -c, -o and --threads, with -MT naming the object when none is
 * given (the target -MD writes). NULL on OOM. */
static char **
copy_words(char *const *w, bool dep, bool mm, const char *out, bool has_mt)
{
	struct fb_strlist l = {0};
	for (size_t i = 0; w[i]; i++) {
		const char *inl;
		const struct opt *o = lookup(w[i], &inl);
		bool skip = o && (is(o, "-MD", "--generate-dependencies-with-compile") ||
		                  is(o, "-MMD", "--generate-nonsystem-dependencies-with-compile") ||
		                  is(o, "--threads", "-t"));
		if (o && dep)
			skip |= is(o, "-c", "--compile") || is(o, "-o", "--output-file");
		else if (o)
			skip |= is(o, "-MF", "--dependency-output") || is(o, "-MT", "--dependency-target-name");
		if (!skip)
			fb_strlist_add(&l, w[i]);
		if (o && (o->how & V) && !inl && w[i + 1]) {
			if (!skip)
				fb_strlist_add(&l, w[i + 1]);
			i++;
		}
	}
	if (dep)
		fb_strlist_add(&l, mm ? "-MM" : "-M");
	if (dep && !has_mt && out) {
		fb_strlist_add(&l, "-MT");
		fb_strlist_add(&l, out);
	}
	if (l.oom) {
		fb_strlist_free(&l);
		return NULL;
	}
	return l.v;
}

struct seen {
	int inputs, compile, md, mm, mf, mt, cu;
	const char *out;
};

/* One option with its value v: 0, or -1 with why. */
static int
take_value(const struct opt *o, const char *v, struct seen *s, int *threads, char *why, size_t size)
{
	if (is(o, "-o", "--output-file"))
		s->out = v;
	else if (is(o, "-MF", "--dependency-output"))
		s->mf = 1;
	else if (is(o, "-MT", "--dependency-target-name"))
		s->mt = 1;
	else if (is(o, "-x", "--x")) {
		if (strcmp(v, "cu") != 0) {
			snprintf(why, size, "-x %.100s (not cu)", v);
			return -1;
		}
		s->cu = 1;
	} else if (is(o, "-rdc", "--relocatable-device-code")) {
		if (strcmp(v, "false") != 0) {
			snprintf(why, size, "relocatable device code (%s %.40s)", o->name, v);
			return -1;
		}
	} else if (is(o, "--threads", "-t")) {
		char *end = NULL;
		long n = strtol(v, &end, 10);
		if (end == v || *end || n < 0 || n > 4096) {
			snprintf(why, size, "%s %.40s (not a count)", o->name, v);
			return -1;
		}
		*threads = (int)n;
	}
	return 0;
}

/* One word that is not an option's value: 0, or -1 with why. *skip: its value is the next. */
static int
take_word(char *const *w, size_t i, struct seen *s, int *threads, int *skip, char *why, size_t size)
{
	const char *inl, *word = w[i];
	*skip = 0;
	if (word[0] == '@') {
		snprintf(why, size, "a response file (%.100s)", word);
		return -1;
	}
	if (word[0] != '-' || !word[1]) {
		size_t n = strlen(word);
		s->inputs++;
		if (!(n > 3 && strcmp(word + n - 3, ".cu") == 0))
			s->cu |= 2;
		return 0;
	}
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
		if (strcmp(word, refused[k].name) == 0 || (strncmp(word, refused[k].name, strlen(refused[k].name)) == 0 &&
		                                           word[strlen(refused[k].name)] == '=')) {
			snprintf(why, size, "%s (%s)", refused[k].name, refused[k].what);
			return -1;
		}
	const struct opt *o = lookup(word, &inl);
	if (!o) {
		snprintf(why, size, "an option the split does not know (%.100s)", word);
		return -1;
	}
	s->compile |= is(o, "-c", "--compile");
	s->md |= is(o, "-MD", "--generate-dependencies-with-compile");
	s->mm |= is(o, "-MMD", "--generate-nonsystem-dependencies-with-compile");
	if (!(o->how & V))
		return 0;
	if (!inl && !w[i + 1]) {
		snprintf(why, size, "%s without its value", word);
		return -1;
	}
	*skip = !inl;
	return take_value(o, inl ? inl : w[i + 1], s, threads, why, size);
}

int
fb_launch_words_ok(char *const *words, int *threads, char ***plan, char ***dep, char *why, size_t size)
{
	struct seen s = {0};
	*threads = -1;
	*plan = *dep = NULL;
	for (size_t i = 0; words[i]; i++) {
		int skip;
		if (take_word(words, i, &s, threads, &skip, why, size))
			return 0;
		i += (size_t)skip;
	}
	const char *bad = s.inputs != 1         ? (s.inputs ? "more than one input" : "no input")
	                  : !s.compile          ? "no -c (not a compile)"
	                  : (s.cu & 2) && !(s.cu & 1) ? "an input that is not a .cu"
	                  : (s.md || s.mm) && !s.mf  ? "-MD without -MF"
	                                             : NULL;
	if (bad) {
		snprintf(why, size, "%s", bad);
		return 0;
	}
	*plan = copy_words(words, false, false, NULL, false);
	if ((s.md || s.mm) && *plan)
		*dep = copy_words(words, true, s.mm && !s.md, s.out, s.mt);
	if (!*plan || ((s.md || s.mm) && !*dep)) {
		fb_words_free(*plan);
		*plan = NULL;
		snprintf(why, size, "out of memory");
		return 0;
	}
	return 1;
}
