/* check.h: the whole test framework. CHECK counts failures; main returns check_done(). */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond) \
	do { \
		check_count++; \
		if (!(cond)) { \
			check_failures++; \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

#define CHECK_STR(a, b) \
	do { \
		const char *check_a_ = (a), *check_b_ = (b); \
		check_count++; \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) { \
			check_failures++; \
			fprintf(stderr, "%s:%d: CHECK_STR failed: %s\n  got:  \"%s\"\n  want: \"%s\"\n", \
			        __FILE__, __LINE__, #a, check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)"); \
		} \
	} while (0)

/* Whether the NULL-terminated list v (NULL: empty) holds the word w. */
static inline int
check_has(char **v, const char *w)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], w) == 0)
			return 1;
	return 0;
}

static inline int
check_done(void)
{
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}
#endif
