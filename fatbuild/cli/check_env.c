/* check_env.c: fatbuild check's report by distribution (docs/check-environment.md §4): for each
 * distribution, archive or folder with device code, its libraries and a line per device under
 * each; the distributions without device code in one line; then a summary per device. */
#include <stdio.h>
#include <string.h>

#include "check_report.h"
#include "cli.h"

/* How many of one verdict a device has, and the files that could not be read. */
struct tally {
	size_t libs, v[8];
};

static struct tally
tally(const struct fb_check_report *r, size_t d)
{
	struct tally t = {0};
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct fb_check_file *f = &r->files[i];
		if (f->error[0])
			continue;
		t.libs++;
		t.v[f->arch[d].verdict < 8 ? f->arch[d].verdict : 0]++;
	}
	return t;
}

static size_t
errors(const struct fb_check_report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		n += r->files[i].error[0] != 0;
	return n;
}

/* "; N things" when N is not 0. */
static void
count(size_t n, const char *one, const char *many)
{
	if (n)
		printf("; %zu %s", n, n == 1 ? one : many);
}

void
check_print_summary(const struct check_view *v)
{
	const struct fb_check_report *r = v->r;
	char dn[32];
	for (size_t d = 0; d < v->ndev; d++) {
		struct tally t = tally(r, d);
		check_dev_name(&v->devs[d], dn, sizeof(dn));
		printf("%s: %zu %s with device code, %zu run on %s, %zu need JIT, %zu cannot run", dn, t.libs,
		       t.libs == 1 ? "library" : "libraries", t.v[FB_CHECK_SASS], dn, t.v[FB_CHECK_JIT], t.v[FB_CHECK_NONE]);
		if (t.v[FB_CHECK_OTHER])
			printf(", %zu loaded by other means", t.v[FB_CHECK_OTHER]);
		if (t.v[FB_CHECK_NOKERNEL])
			printf(", %zu without kernels", t.v[FB_CHECK_NOKERNEL]);
		if (t.v[FB_CHECK_LINK])
			printf(", %zu device-link %s", t.v[FB_CHECK_LINK], t.v[FB_CHECK_LINK] == 1 ? "input" : "inputs");
		putchar('\n');
	}
	printf("%zu %s read, %zu without device code", r->read, r->read == 1 ? "file" : "files", r->without_code);
	if (r->elf_without_code)
		printf(" (%zu of them ELF)", r->elf_without_code);
	count(r->links, "symbolic link not followed", "symbolic links not followed");
	count(r->hardlinks, "hard link read once", "hard links read once");
	count(r->special, "FIFO, socket or device not opened", "FIFOs, sockets or devices not opened");
	count(r->nested, "archive inside an archive not opened", "archives inside archives not opened");
	count(errors(r), "file could not be read", "files could not be read");
	putchar('\n');
}

static bool
fails(const struct fb_check_file *f, size_t ndev)
{
	if (f->error[0])
		return true;
	for (size_t d = 0; d < ndev; d++)
		if (f->arch[d].verdict == FB_CHECK_NONE)
			return true;
	return false;
}

/* "  PATH: 476 containers (sm_80, ...); outside .nv_fatbin: 58 containers in .lrodata (sm_90)" */
static void
library(const struct check_view *v, const struct fb_check_file *f)
{
	char other[320], dn[32], line[1400];
	if (f->error[0]) {
		printf("  could not be read: %s\n", f->error);
		return;
	}
	check_other_text(f, other, sizeof(other));
	printf("  %s:", f->path);
	if (f->modules)
		printf(" %zu %s (%s)", f->modules, f->modules == 1 ? "container" : "containers", f->images);
	if (other[0])
		printf("%s%s%s%s%s", f->modules ? "; outside .nv_fatbin: " : " ", other, f->other_images[0] ? " (" : "",
		       f->other_images, f->other_images[0] ? ")" : "");
	putchar('\n');
	for (size_t d = 0; d < v->ndev; d++) {
		check_dev_name(&v->devs[d], dn, sizeof(dn));
		check_verdict_text(f, &f->arch[d], dn, true, line, sizeof(line));
		printf("    %s: %s\n", dn, line);
	}
}

void
check_print_env(const struct check_view *v)
{
	const struct fb_check_report *r = v->r;
	size_t i = 0, nplain = 0, plain_files = 0;
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct fb_check_group *gr = &r->groups[g];
		size_t start = i;
		while (i < r->nfiles && r->files[i].group == g)
			i++;
		bool show = false;
		for (size_t k = start; k < i; k++)
			show |= !v->quiet || fails(&r->files[k], v->ndev);
		if (start == i) {
			nplain++;
			plain_files += gr->files;
			continue;
		}
		if (!show)
			continue;
		printf("%s%s%s", gr->name, gr->version[0] ? " " : "", gr->version);
		if ((gr->dist || gr->archive) && strcmp(gr->where, gr->name) != 0)
			printf(" (%s)", gr->where);
		printf(": %zu of %zu %s with device code\n", gr->with_code, gr->files, gr->files == 1 ? "file" : "files");
		for (size_t k = start; k < i; k++)
			if (!v->quiet || fails(&r->files[k], v->ndev))
				library(v, &r->files[k]);
	}
	if (nplain && !v->quiet) {
		printf("no device code in %zu %s (%zu files):", nplain, nplain == 1 ? "other group" : "other groups",
		       plain_files);
		size_t shown = 0;
		for (size_t g = 0; g < r->ngroups; g++) {
			bool has = false;
			for (size_t k = 0; k < r->nfiles && !has; k++)
				has = r->files[k].group == g;
			if (has)
				continue;
			if (shown++ == 40) {
				printf(" ...");
				break;
			}
			printf("%s %s%s%s", shown == 1 ? "" : ",", r->groups[g].name, r->groups[g].version[0] ? " " : "",
			       r->groups[g].version);
		}
		putchar('\n');
	}
	check_print_summary(v);
}

int
check_exit_code(const struct check_view *v)
{
	for (size_t i = 0; i < v->r->nfiles; i++)
		if (fails(&v->r->files[i], v->ndev))
			return AP_EXIT_FAIL;
	return AP_EXIT_OK;
}
