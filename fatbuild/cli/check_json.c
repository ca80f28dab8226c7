/* check_json.c: fatbuild check's report as one JSON document (docs/check-environment.md §4), for
 * CI: the devices, the inputs, every group with its files and a verdict per device, the summary
 * per device and the exit code. */
#include <stdio.h>
#include <string.h>

#include "check_report.h"
#include "cli.h"

static void
str(const char *s)
{
	json_str(s, strlen(s));
}

/* A ", "-separated list as a JSON array of strings. */
static void
list(const char *s)
{
	putchar('[');
	for (size_t i = 0; *s; i++) {
		size_t n = strcspn(s, ",");
		printf("%s", i ? ", " : "");
		json_str(s, n);
		s += n;
		while (*s == ',' || *s == ' ')
			s++;
	}
	putchar(']');
}

static void
arch(const struct check_view *v, const struct fb_check_file *f, size_t d)
{
	const struct fb_check_arch *a = &f->arch[d];
	char dn[32], tn[32], text[1400];
	check_dev_name(&v->devs[d], dn, sizeof(dn));
	check_verdict_text(f, a, dn, false, text, sizeof(text));
	printf("{\"device\": ");
	str(dn);
	printf(", \"verdict\": \"%s\", \"sass\": %zu, \"jit\": %zu, \"none\": %zu, \"link\": %zu, \"empty\": %zu, "
	       "\"chosen\": ",
	       check_verdict_name(a->verdict), a->sass, a->jit, a->none, a->link, a->empty);
	if (a->entry >= 0) {
		str(ap_target_name(&a->chosen, tn, sizeof(tn)));
		printf(", \"entry\": %ld", a->entry);
	} else {
		printf("null, \"entry\": null");
	}
	printf(", \"why_images\": ");
	list(a->why_images);
	printf(", \"why\": ");
	if (a->why[0])
		str(a->why);
	else
		printf("null");
	printf(", \"other_fits\": \"%s\", \"text\": ",
	       a->other == FB_HOW_SASS ? "sass" : a->other == FB_HOW_PTX_JIT ? "jit" : "none");
	str(text);
	putchar('}');
}

static void
file(const struct check_view *v, const struct fb_check_file *f)
{
	printf("      {\"path\": ");
	str(f->path);
	printf(", \"input\": %zu, ", f->input);
	if (f->error[0]) {
		printf("\"error\": ");
		str(f->error);
		printf("}");
		return;
	}
	printf("\"type\": \"%s\", \"size\": %llu, \"containers\": %zu, \"entries\": %zu, \"images\": ", f->type,
	       (unsigned long long)f->size, f->modules, f->entries);
	list(f->images);
	printf(",\n       \"other\": {\"containers\": %zu, \"cubins\": %zu, \"ptx\": %zu, \"lto\": %zu, \"sections\": ",
	       f->other_containers, f->other_cubins, f->other_ptx, f->other_lto);
	list(f->other_sections);
	printf(", \"images\": ");
	list(f->other_images);
	printf(", \"nvrtc_min\": %d, \"nvrtc_max\": %d},\n       \"devices\": [", f->nvrtc_min, f->nvrtc_max);
	for (size_t d = 0; d < v->ndev; d++) {
		printf("%s\n         ", d ? "," : "");
		arch(v, f, d);
	}
	printf("]}");
}

static void
summary(const struct check_view *v)
{
	const struct fb_check_report *r = v->r;
	char dn[32];
	printf("  \"summary\": [");
	for (size_t d = 0; d < v->ndev; d++) {
		size_t n[8] = {0}, libs = 0;
		for (size_t i = 0; i < r->nfiles; i++)
			if (!r->files[i].error[0]) {
				libs++;
				n[r->files[i].arch[d].verdict < 8 ? r->files[i].arch[d].verdict : 0]++;
			}
		check_dev_name(&v->devs[d], dn, sizeof(dn));
		printf("%s\n    {\"device\": ", d ? "," : "");
		str(dn);
		printf(", \"libraries\": %zu, \"sass\": %zu, \"jit\": %zu, \"none\": %zu, \"other\": %zu, \"link\": %zu, "
		       "\"nokernel\": %zu}",
		       libs, n[FB_CHECK_SASS], n[FB_CHECK_JIT], n[FB_CHECK_NONE], n[FB_CHECK_OTHER], n[FB_CHECK_LINK],
		       n[FB_CHECK_NOKERNEL]);
	}
	printf("],\n");
}

void
check_print_json(const struct check_view *v, int exit_code)
{
	const struct fb_check_report *r = v->r;
	char dn[32];
	printf("{\"devices\": [");
	for (size_t d = 0; d < v->ndev; d++) {
		check_dev_name(&v->devs[d], dn, sizeof(dn));
		printf("%s", d ? ", " : "");
		str(dn);
	}
	printf("],\n  \"inputs\": [");
	for (size_t i = 0; i < r->ninputs; i++) {
		printf("%s", i ? ", " : "");
		str(r->inputs[i]);
	}
	printf("],\n  \"groups\": [");
	size_t i = 0;
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct fb_check_group *gr = &r->groups[g];
		printf("%s\n    {\"name\": ", g ? "," : "");
		str(gr->name);
		printf(", \"version\": ");
		str(gr->version);
		printf(", \"where\": ");
		str(gr->where);
		printf(", \"distribution\": %s, \"input\": %zu, \"files\": %zu, \"with_device_code\": %zu, \"libraries\": [",
		       gr->dist ? "true" : "false", gr->input, gr->files, gr->with_code);
		for (size_t k = 0; i < r->nfiles && r->files[i].group == g; i++, k++) {
			printf("%s\n", k ? "," : "");
			file(v, &r->files[i]);
		}
		printf("]}");
	}
	printf("],\n");
	summary(v);
	printf("  \"read\": %zu, \"without_device_code\": %zu, \"elf_without_device_code\": %zu, \"bytes\": %llu,\n",
	       r->read, r->without_code, r->elf_without_code, (unsigned long long)r->bytes);
	printf("  \"links_not_followed\": %zu, \"hard_links\": %zu, \"special_not_opened\": %zu, "
	       "\"archives_in_archives\": %zu,\n  \"exit\": %d}\n",
	       r->links, r->hardlinks, r->special, r->nested, exit_code);
}
