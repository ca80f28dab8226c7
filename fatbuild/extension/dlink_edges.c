/* dlink_edges.c: the device-link commands of relocatable-device-code builds (build.c writes them as
 * ninja edges).
 *   nvrtc backend: per target, obj/K.sm_86.fatbin of every kernel file (relocatable cubins or
 *     LTO-IR) --fatbuild dlink --target sm_86 [--lto] --devrt--> obj/dlink.sm_86.fatbin
 *     (one executable cubin); the targets link in parallel, as separate edges.
 *   nvcc backend: every nvcc -rdc=true object --nvcc -dlink GENCODE--> obj/dlink.o, the
 *     registration object of the linked images, linked with -lcudadevrt -lcudart_static. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlink_edges.h"
#include "base/error.h"
#include "ninja.h"

struct cmd {
	char *s;
	size_t len, cap;
	int rc;
};

static void
put(struct cmd *c, const char *s, bool quote, struct fb_error *err)
{
	if (c->rc)
		return;
	char *q = NULL;
	if (quote && (c->rc = fb_shell_quote(s, &q, err)))
		return;
	const char *w = quote ? q : s;
	size_t n = strlen(w);
	if (c->len + n + 2 > c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 512;
		while (cap < c->len + n + 2)
			cap *= 2;
		char *p = realloc(c->s, cap);
		if (!p) {
			free(q);
			c->rc = fb_seterr(err, FB_ENOMEM, "out of memory");
			return;
		}
		c->s = p;
		c->cap = cap;
	}
	if (c->len)
		c->s[c->len++] = ' ';
	memcpy(c->s + c->len, w, n + 1);
	c->len += n;
	free(q);
}

static int
finish(struct cmd *c, char **out)
{
	if (c->rc) {
		free(c->s);
		*out = NULL;
		return c->rc;
	}
	*out = c->s;
	return 0;
}

int
fb_dlink_nvrtc_cmd(const char *fatbuild, const char *target, const struct fb_dlink_edge *e, char **cmd,
                   struct fb_error *err)
{
	struct cmd c = {0};
	/* exec: ninja waits for fatbuild dlink itself when it stops the build, not for a shell */
	put(&c, "exec", false, err);
	put(&c, fatbuild, true, err);
	put(&c, "dlink --target", false, err);
	put(&c, target, true, err);
	if (e->lto)
		put(&c, "--lto", false, err);
	if (e->devrt)
		put(&c, "--devrt", false, err);
	put(&c, "-o", false, err);
	put(&c, e->output, true, err);
	for (size_t i = 0; i < e->ninputs; i++)
		put(&c, e->inputs[i], true, err);
	return finish(&c, cmd);
}

int
fb_dlink_nvcc_cmd(const char *cuda_home, const char *gencode, const char *cxx, const struct fb_dlink_edge *e,
                  char **cmd, struct fb_error *err)
{
	struct cmd c = {0};
	size_t n = strlen(cuda_home) + 32;
	char *nvcc = malloc(n), *lib = malloc(n);
	if (!nvcc || !lib) {
		free(nvcc);
		free(lib);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	strcpy(nvcc, cuda_home);
	strcat(nvcc, "/bin/nvcc");
	strcpy(lib, "-L");
	strcat(lib, cuda_home);
	strcat(lib, "/lib64");
	put(&c, nvcc, true, err);
	put(&c, "-dlink", false, err);
	/* The gencode words are plain (-gencode=arch=compute_86,code=sm_86). */
	char *g = strdup(gencode ? gencode : "");
	if (!g && !c.rc)
		c.rc = fb_seterr(err, FB_ENOMEM, "out of memory");
	for (char *save = NULL, *w = g ? strtok_r(g, " \t\n", &save) : NULL; w; w = strtok_r(NULL, " \t\n", &save))
		put(&c, w, true, err);
	free(g);
	if (e->lto)
		put(&c, "-dlto", false, err);
	put(&c, "-Xcompiler -fPIC -ccbin", false, err);
	put(&c, cxx, true, err);
	for (size_t i = 0; i < e->ninputs; i++)
		put(&c, e->inputs[i], true, err);
	put(&c, lib, true, err);
	if (e->devrt)
		put(&c, "-lcudadevrt", false, err);
	put(&c, "-o", false, err);
	put(&c, e->output, true, err);
	free(nvcc);
	free(lib);
	return finish(&c, cmd);
}

int
fb_dlink_nvcc_lto_gencode(const char *gencode, char **out, struct fb_error *err)
{
	static const char from[] = ",code=sm_", to[] = ",code=lto_";
	size_t n = strlen(gencode), k = 0;
	for (const char *p = gencode; (p = strstr(p, from)); p += sizeof(from) - 1)
		k++;
	char *o = malloc(n + k + 1);
	if (!o)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	char *w = o;
	for (const char *p = gencode; *p;) {
		if (strncmp(p, from, sizeof(from) - 1) == 0) {
			memcpy(w, to, sizeof(to) - 1);
			w += sizeof(to) - 1;
			p += sizeof(from) - 1;
		} else {
			*w++ = *p++;
		}
	}
	*w = 0;
	*out = o;
	return 0;
}

int
fb_dlink_nvcc_lto_check(const char *cuda_home, struct fb_error *err)
{
	char p[4200];
	snprintf(p, sizeof(p), "%.4000s/nvvm/lib64/libnvvm.so", cuda_home);
	if (access(p, R_OK) == 0)
		return 0;
	return fb_seterr(err, FB_ENOTOOL,
	                 "--backend nvcc --lto: nvcc's LTO device link (nvlink -dlto) loads %s, which this toolkit "
	                 "lacks; install the toolkit's nvvm component, or build with --backend nvrtc --lto (nvJitLink)",
	                 p);
}
