/* cmdline.h: the command line an edge runs, built by appends (inline: each file of the graph
 * builds its own). Its includers define _GNU_SOURCE (strtok_r). Private; symbols are hidden. */
#ifndef FB_BUILD_CMDLINE_H
#define FB_BUILD_CMDLINE_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fatbuild.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "ninja.h"
#include "torch.h"

/* A command line being built. Appends stop at the first failure, which sticks in rc (and err);
 * cmd_end reports it, or an out-of-memory of any append: one check per command. */
struct cmd {
	struct fb_buf b;
	int rc;
	struct fb_error *err;
};

static inline void
cmd_oom(struct cmd *c)
{
	if (!c->rc)
		c->rc = fb_seterr(c->err, FB_ENOMEM, "out of memory");
}

/* Appends text as it is (shell syntax of our own). */
static inline void
raw(struct cmd *c, const char *s)
{
	if (!c->rc)
		fb_buf_puts(&c->b, s);
}

/* Appends one shell word (quoted when needed), preceded by a space unless first. */
static inline void
arg(struct cmd *c, const char *a)
{
	char *q;
	if (c->rc || (c->rc = fb_shell_quote(a, &q, c->err)))
		return;
	if (c->b.len)
		fb_buf_puts(&c->b, " ");
	fb_buf_puts(&c->b, q);
	free(q);
}

/* Appends the blank-separated words of s as separate arguments, each after prefix if any. */
static inline void
words(struct cmd *c, const char *s, const char *prefix)
{
	if (!s || c->rc)
		return;
	char *copy = strdup(s);
	if (!copy) {
		cmd_oom(c);
		return;
	}
	for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w && !c->rc; w = strtok_r(NULL, " \t\n", &save)) {
		if (prefix)
			arg(c, prefix);
		arg(c, w);
	}
	free(copy);
}

static inline void
swords(struct cmd *c, const char *s)
{
	words(c, s, NULL);
}

/* Appends each word of a NULL-terminated vector (NULL: out of memory) and frees it. */
static inline void
svec(struct cmd *c, char **v)
{
	if (!v)
		cmd_oom(c);
	for (size_t i = 0; v && v[i]; i++)
		arg(c, v[i]);
	fb_torch_words_free(v);
}

/* The first failure of the appends, else 0; c->b.s is the command. */
static inline int
cmd_end(struct cmd *c)
{
	if (c->b.oom)
		cmd_oom(c);
	return c->rc;
}

#endif
