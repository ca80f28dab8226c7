/* check_files.c: fatbuild check's report on files given one by one (docs/check-environment.md
 * §2): a line per file and device, "9.0: k.fatbin: SASS sm_90a (entry 1)", and on stderr "no
 * kernel image is available for 7.5: ..."; a summary per device when there were several.
 * A directory, archive or interpreter gets the report by distribution (check_env.c). */
#include <stdio.h>

#include "check_report.h"
#include "cli.h"

static void
file_lines(const struct check_view *v, const struct fb_check_file *f)
{
	char dn[32], line[1400];
	for (size_t d = 0; d < v->ndev; d++) {
		const struct fb_check_arch *a = &f->arch[d];
		check_dev_name(&v->devs[d], dn, sizeof(dn));
		if (a->verdict == FB_CHECK_NONE && f->modules > 1 && a->none)
			warn("no kernel image is available for %s: none of the %zu containers of %s has one (%s only: %s)", dn,
			     f->modules, f->path, a->why_images, a->why);
		else if (a->verdict == FB_CHECK_NONE)
			warn("no kernel image is available for %s: %s has %s: %s", dn, f->path,
			     a->why_images[0] ? a->why_images : "no SASS or PTX", a->why);
		else if (!v->quiet) {
			check_verdict_text(f, a, dn, false, line, sizeof(line));
			printf("%s: %s: %s\n", dn, f->path, line);
		}
	}
}

void
check_print_files(const struct check_view *v)
{
	const struct fb_check_report *r = v->r;
	for (size_t i = 0; i < r->ninputs; i++) {
		bool any = false;
		for (size_t k = 0; k < r->nfiles; k++) {
			const struct fb_check_file *f = &r->files[k];
			if (f->input != i)
				continue;
			any = true;
			if (f->error[0])
				warn("%s", f->error);
			else
				file_lines(v, f);
		}
		if (!any && !v->quiet)
			printf("%s: no device code\n", r->inputs[i]);
	}
	if (r->ninputs > 1)
		check_print_summary(v);
}
