/* cmd_check.c: fatbuild check: which image would run on a given compute capability. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: fatbuild check --arch 8.9[,9.0,...]|native [--quiet] FILE...\n"
	        "\n"
	        "For each arch, says which image of each file the CUDA loader would use and how:\n"
	        "SASS run as is, or PTX JIT-compiled from compute_X, or that no kernel image is\n"
	        "available (exit %d). Every container of a library is a separate module and must\n"
	        "have its own image; a file with several containers is summarised, and fails only\n"
	        "when no container has an image (libraries often ship per-arch modules).\n"
	        "\n"
	        "  --arch LIST   compute capabilities: 8.9, 89, 9.0, 10.0 or sm_90 / sm_90a names.\n"
	        "                X.Y is a real GPU (it runs its own 'a' code). sm_90 models\n"
	        "                nvJitLink -arch=sm_90 (refuses sm_90a images). native asks the\n"
	        "                driver for the visible GPUs.\n"
	        "  --quiet       print nothing on success\n"
	        "\n"
	        "The rules are the model of docs/fatbin.md §7 as observed with nvJitLink 13.0: SASS\n"
	        "of the same major and a lower or equal minor (sm_87/88 only exact; sm >= 100 needs\n"
	        "the compat blob for a lower minor); 'a' only on the same SM; 'f' within the family;\n"
	        "PTX compute_X on any sm >= X; the highest arch wins, SASS on a tie.\n"
	        "Relocatable cubins (-rdc) and LTO-IR are not loadable until device-linked ('fatbuild\n"
	        "dlink', or 'fatbuild build --rdc/--lto'); containers holding only them are the inputs\n"
	        "of a device link (nvcc -rdc objects) and are reported apart.\n"
	        "\n"
	        "Example: fatbuild check --arch 8.9,9.0 build/kernels.fatbin\n"
	        "Exit codes: %d every arch has an image, %d some arch has none (or a file is\n"
	        "malformed, or native found no device), %d usage, %d-%d driver trouble for native.\n",
	        AP_EXIT_FAIL, AP_EXIT_OK, AP_EXIT_FAIL, AP_EXIT_USAGE, AP_EXIT_NODRIVER, AP_EXIT_TIMEOUT);
}

#define MAXDEV 64

static int
parse_arch(const char *s, struct ap_target *t)
{
	memset(t, 0, sizeof(*t));
	if (strncmp(s, "sm_", 3) == 0 || strncmp(s, "compute_", 8) == 0) {
		if (fb_target_parse(s, t) != 0)
			return -1;
		t->kind = AP_SASS;
		return 0;
	}
	int ma = 0, mi = 0, nd = 0;
	const char *p = s;
	while (isdigit((unsigned char)*p) && nd < 4)
		ma = ma * 10 + (*p++ - '0'), nd++;
	if (!nd)
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		mi = *p++ - '0';
		t->sm = ma * 10 + mi;
	} else {
		t->sm = ma;
	}
	if (*p == 'a')
		p++;
	if (*p || t->sm < 10)
		return -1;
	t->variant = AP_ARCH; /* a real device runs its own arch-specific code */
	return 0;
}

static void
dev_name(const struct ap_target *d, char *buf, size_t n)
{
	if (d->variant == AP_ARCH)
		snprintf(buf, n, "%d.%d", d->sm / 10, d->sm % 10);
	else
		ap_target_name(d, buf, n);
}

/* Appends the distinct arch names of a container's images to buf. */
static void
list_archs(const struct fb_parsed *p, const struct fb_container *ct, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = 0;
	char tn[32];
	for (size_t i = 0; i < ct->count; i++) {
		const struct fb_entry *e = &p->entries[ct->first + i];
		if (e->disk_kind != FB_DISK_KIND_ELF && e->disk_kind != FB_DISK_KIND_PTX)
			continue;
		ap_target_name(&e->target, tn, sizeof(tn));
		bool dup = false;
		for (size_t j = 0; j < i; j++) {
			char tj[32];
			const struct fb_entry *f = &p->entries[ct->first + j];
			if ((f->disk_kind == FB_DISK_KIND_ELF || f->disk_kind == FB_DISK_KIND_PTX) &&
			    strcmp(ap_target_name(&f->target, tj, sizeof(tj)), tn) == 0)
				dup = true;
		}
		if (!dup && l < n)
			l += (size_t)snprintf(buf + l, n - l, "%s%s", l ? ", " : "", tn);
	}
	if (!l)
		snprintf(buf, n, "no SASS or PTX");
}

/* A relocatable cubin (ET_REL: compiled -rdc, or --rdc): the driver cannot load it before a
 * device link resolves its calls (fatbuild dlink, nvcc -dlink). */
static bool
relocatable(const struct fb_entry *e)
{
	if (e->disk_kind != FB_DISK_KIND_ELF)
		return false;
	unsigned char *img = NULL;
	size_t n = 0;
	struct fb_cubin c = {0};
	bool rel = fb_entry_image(e, 0, &img, &n, NULL) == 0 && fb_cubin_read(img, n, &c, NULL) == 0 && c.relocatable;
	fb_cubin_free(&c);
	free(img);
	return rel;
}

/* Why a container's images are not loadable: its relocatable cubins and LTO-IR. */
struct unlinked {
	size_t nreloc, nlto;
};

static void
explain_unlinked(const struct unlinked *u, char *buf, size_t n)
{
	buf[0] = 0;
	if (u->nreloc || u->nlto)
		snprintf(buf, n, "; %s%s%s not loadable until device-linked ('fatbuild dlink', or build with --rdc/--lto)",
		         u->nreloc ? "relocatable cubins (-rdc)" : "", u->nreloc && u->nlto ? " and " : "",
		         u->nlto ? "LTO-IR" : "");
}

/* Selection within one container. */
static long
select_in(const struct fb_parsed *p, const struct fb_container *ct, const struct ap_target *dev, enum fb_how *how,
          struct unlinked *u)
{
	struct fb_image *im = xcalloc(ct->count ? ct->count : 1, sizeof(*im));
	size_t *idx = xcalloc(ct->count ? ct->count : 1, sizeof(*idx));
	size_t n = 0;
	if (u)
		*u = (struct unlinked){0};
	for (size_t i = 0; i < ct->count; i++) {
		const struct fb_entry *e = &p->entries[ct->first + i];
		if (u && e->disk_kind == FB_DISK_KIND_LTO)
			u->nlto++;
		if (e->disk_kind != FB_DISK_KIND_ELF && e->disk_kind != FB_DISK_KIND_PTX)
			continue;
		if (relocatable(e)) {
			if (u)
				u->nreloc++;
			continue;
		}
		im[n].target = e->target;
		im[n].compat = (e->flags & FB_FLAG_COMPAT) != 0;
		idx[n++] = ct->first + i;
	}
	long r = fb_select(im, n, dev, how);
	long out = r < 0 ? -1 : (long)idx[r];
	free(im);
	free(idx);
	return out;
}

/* A file with one container: which image the device runs, or that none fits. 0 or AP_EXIT_FAIL. */
static int
check_single(const struct fb_parsed *p, const struct ap_target *dev, const char *dn, const char *path, bool quiet)
{
	char tn[32], archs[1024], why[256];
	struct unlinked u;
	enum fb_how how;
	long r = select_in(p, &p->containers[0], dev, &how, &u);
	list_archs(p, &p->containers[0], archs, sizeof(archs));
	explain_unlinked(&u, why, sizeof(why));
	if (r < 0) {
		warn("no kernel image is available for %s: %s has %s%s", dn, path, archs, why);
		return AP_EXIT_FAIL;
	}
	if (!quiet) {
		ap_target_name(&p->entries[r].target, tn, sizeof(tn));
		if (how == FB_HOW_SASS)
			printf("%s: %s: SASS %s (entry %zu)\n", dn, path, tn, p->entries[r].index);
		else
			printf("%s: %s: PTX JIT from %s (entry %zu)\n", dn, path, tn, p->entries[r].index);
	}
	return 0;
}

/* A file with several containers (each a module of its own): summarised; fails only when no
 * container has an image for the device. 0 or AP_EXIT_FAIL. */
static int
check_containers(const struct fb_parsed *p, const struct fb_scan *sc, const struct ap_target *dev, const char *dn,
                 const char *path, bool quiet)
{
	char archs[1024];
	struct unlinked u;
	size_t nsass = 0, nptx = 0, nnone = 0, nunlinked = 0;
	long first_bad = -1;
	for (size_t c = 0; c < p->ncontainers; c++) {
		enum fb_how how;
		select_in(p, &p->containers[c], dev, &how, &u);
		const struct fb_container *ct = &p->containers[c];
		bool rel_section = ct->blob < sc->nblobs && strstr(sc->blobs[ct->blob].where, "__nv_relfatbin");
		if (rel_section || (how == FB_HOW_NONE && (u.nreloc || u.nlto) && u.nreloc + u.nlto == ct->count))
			nunlinked++; /* the inputs of a device link (nvcc -rdc's __nv_relfatbin) */
		else if (how == FB_HOW_SASS)
			nsass++;
		else if (how == FB_HOW_PTX_JIT)
			nptx++;
		else {
			nnone++;
			if (first_bad < 0)
				first_bad = (long)c;
		}
	}
	if (nnone == 0 && nunlinked == p->ncontainers) {
		warn("no kernel image is available for %s: the %zu containers of %s hold only relocatable cubins or "
		     "LTO-IR, not loadable until device-linked ('fatbuild dlink', or build with --rdc/--lto)",
		     dn, p->ncontainers, path);
		return AP_EXIT_FAIL;
	}
	if (nnone + nunlinked == p->ncontainers) {
		list_archs(p, &p->containers[0], archs, sizeof(archs));
		warn("no kernel image is available for %s: none of the %zu containers of %s has one (container 0 has %s)", dn,
		     p->ncontainers, path, archs);
		return AP_EXIT_FAIL;
	}
	if (!quiet) {
		printf("%s: %s: %zu containers: %zu SASS, %zu PTX JIT", dn, path, p->ncontainers, nsass, nptx);
		if (nunlinked)
			printf(", %zu of relocatable code (device-link inputs: __nv_relfatbin, -rdc; not loaded)", nunlinked);
		if (nnone) {
			list_archs(p, &p->containers[first_bad], archs, sizeof(archs));
			printf(", %zu without an image (their kernels cannot run on %s; container %ld has %s)", nnone, dn,
			       first_bad, archs);
		}
		putchar('\n');
	}
	return 0;
}

static int
check_file(const char *path, const struct ap_target *devs, size_t ndev, bool quiet)
{
	struct fb_error err = {0};
	struct fb_mapped m;
	if (fb_map_file(path, &m, &err) != 0)
		return fail_fb(&err);
	struct fb_scan sc;
	if (fb_scan_buffer(m.data, m.size, path, &sc, &err) != 0) {
		fb_unmap_file(&m);
		return fail_fb(&err);
	}
	struct fb_parsed p;
	if (fb_scan_entries(m.data, &sc, &p, &err) != 0) {
		fb_scan_free(&sc);
		fb_unmap_file(&m);
		warn("%s: %s", path, err.msg);
		return fb_exit_code(err.code);
	}
	int ret = 0;
	char dn[32];
	for (size_t d = 0; d < ndev; d++) {
		dev_name(&devs[d], dn, sizeof(dn));
		int r;
		if (p.ncontainers == 0) {
			warn("no kernel image is available for %s: %s has no device code", dn, path);
			r = AP_EXIT_FAIL;
		} else if (p.ncontainers == 1) {
			r = check_single(&p, &devs[d], dn, path, quiet);
		} else {
			r = check_containers(&p, &sc, &devs[d], dn, path, quiet);
		}
		if (r)
			ret = r;
	}
	fb_parsed_free(&p);
	fb_scan_free(&sc);
	fb_unmap_file(&m);
	return ret;
}

static int
probe_native(struct ap_target *devs, size_t *ndev)
{
	struct ap_probe_result *r = xcalloc(1, sizeof(*r));
	struct ap_error aerr = {0};
	if (ap_probe(NULL, r, &aerr) != 0) {
		free(r);
		return fail_ap(&aerr);
	}
	int code = AP_EXIT_OK;
	switch (r->status) {
	case AP_PROBE_OK: break;
	case AP_PROBE_NO_DEVICE: code = AP_EXIT_FAIL; break;
	case AP_PROBE_NO_DRIVER: code = AP_EXIT_NODRIVER; break;
	case AP_PROBE_STUB: code = AP_EXIT_STUB; break;
	case AP_PROBE_DRIVER_ERROR: code = AP_EXIT_DRIVER; break;
	default: code = AP_EXIT_TIMEOUT; break;
	}
	if (code == AP_EXIT_OK && r->ndevices == 0)
		code = AP_EXIT_FAIL;
	if (code != AP_EXIT_OK) {
		warn("check: --arch native: %s", r->reason[0] ? r->reason : ap_probe_status_name(r->status));
		free(r);
		return code;
	}
	if (r->reason[0]) /* a device whose query failed or whose CC is impossible: left out */
		warn("warning: check --arch native: %s", r->reason);
	for (int i = 0; i < r->ndevices && *ndev < MAXDEV; i++) {
		if (r->devices[i].error)
			continue;
		int sm = r->devices[i].major * 10 + r->devices[i].minor;
		bool dup = false;
		for (size_t j = 0; j < *ndev; j++)
			dup |= devs[j].sm == sm;
		if (!dup)
			devs[(*ndev)++] = (struct ap_target){sm, AP_ARCH, AP_SASS, 0};
	}
	free(r);
	return AP_EXIT_OK;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch", required_argument, NULL, 'a'}, {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *arch = NULL;
	bool quiet = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': arch = optarg; break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return AP_EXIT_OK;
		default: usage(stderr); return AP_EXIT_USAGE;
		}
	}
	if (!arch || optind >= argc) {
		warn("check: %s", !arch ? "--arch is required" : "no input file");
		usage(stderr);
		return AP_EXIT_USAGE;
	}
	struct ap_target devs[MAXDEV];
	size_t ndev = 0;
	char *list = xstrdup(arch), *save = NULL;
	for (char *tok = strtok_r(list, ",; ", &save); tok; tok = strtok_r(NULL, ",; ", &save)) {
		if (strcmp(tok, "native") == 0) {
			int r = probe_native(devs, &ndev);
			if (r) {
				free(list);
				return r;
			}
			continue;
		}
		if (ndev == MAXDEV || parse_arch(tok, &devs[ndev]) != 0) {
			warn("check: '%s' is not a compute capability like 8.9 or sm_90a", tok);
			free(list);
			return AP_EXIT_USAGE;
		}
		ndev++;
	}
	free(list);
	if (!ndev) {
		warn("check: --arch is empty");
		return AP_EXIT_USAGE;
	}
	int ret = 0;
	for (int i = optind; i < argc; i++) {
		int r = check_file(argv[i], devs, ndev, quiet);
		if (r && (!ret || r > ret))
			ret = r;
	}
	return ret;
}
