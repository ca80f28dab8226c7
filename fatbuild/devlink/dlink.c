/* dlink.c: fb_dlink, the device link of relocatable device code without nvcc.
 *
 * The inputs are whatever `fatbuild compile --rdc|--lto` wrote (fatbins, or bare cubins): from
 * each, the images for the link's target are taken (relocatable cubins of the same SM and
 * variant, or LTO-IR of the same SM with lto), decompressed, and handed to nvJitLink
 * (jitlink.c) with -arch=<target> (and -lto). For a SASS target the device runtime
 * libcudadevrt.a of the same toolkit is added when asked (dynamic parallelism: a kernel that
 * launches kernels calls into it), and the result is one executable cubin that the driver
 * loads as it loads any other. For a PTX target (LTO-IR only) nvJitLink -lto -ptx gives one
 * linked PTX. One target per call: callers link targets in parallel processes (the build runs
 * one ninja edge per target). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitlink.h"
#include "base/dlload.h"
#include "base/error.h"
#include "base/strbuf.h"

/* What marks the line of a link log that becomes the one-line message. */
static const char *const link_errors[] = {"error", "ERROR", NULL};

struct picked {
	unsigned char *data;
	size_t size;
	char name[320];
};

static void
picked_free(struct picked *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].data);
	free(p);
}

/* Takes from one input every image the link's target uses. */
static int
pick(const void *data, size_t size, const char *name, const struct fb_dlink_opts *o, struct picked **v, size_t *n,
     size_t *cap, struct fb_error *err)
{
	struct fb_scan s = {0};
	struct fb_parsed p = {0};
	int rc = fb_scan_buffer(data, size, name, &s, err);
	if (!rc)
		rc = fb_scan_entries(data, &s, &p, err);
	size_t found = 0, other = 0, exec = 0;
	char tn[32];
	ap_target_name(o->target, tn, sizeof(tn));
	for (size_t i = 0; !rc && i < p.nentries; i++) {
		const struct fb_entry *e = &p.entries[i];
		bool lto = e->disk_kind == FB_DISK_KIND_LTO;
		if (e->target.sm != o->target->sm || (!lto && e->target.variant != o->target->variant)) {
			other++;
			continue;
		}
		if (o->lto || o->target->kind == AP_PTX ? !lto : e->disk_kind != FB_DISK_KIND_ELF) {
			other++;
			continue;
		}
		unsigned char *img = NULL;
		size_t isz = 0;
		rc = fb_entry_image(e, 0, &img, &isz, err);
		if (rc)
			break;
		if (!lto) {
			struct fb_cubin c = {0};
			rc = fb_cubin_read(img, isz, &c, err);
			bool rel = c.relocatable;
			fb_cubin_free(&c);
			if (rc || !rel) {
				free(img);
				if (!rc)
					exec++;
				continue;
			}
		}
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 8;
			struct picked *nv = realloc(*v, nc * sizeof(*nv));
			if (!nv) {
				free(img);
				rc = fb_seterr(err, FB_ENOMEM, "out of memory");
				break;
			}
			*v = nv;
			*cap = nc;
		}
		struct picked *pk = &(*v)[(*n)++];
		pk->data = img;
		pk->size = isz;
		snprintf(pk->name, sizeof(pk->name), "%.280s#%zu", name, i);
		found++;
	}
	if (!rc && !found) {
		if (exec)
			rc = fb_seterr(err, FB_EINVAL,
			               "%s: its %s cubin is not relocatable (whole-program code cannot be device-linked): "
			               "compile with 'fatbuild compile --rdc'",
			               name, tn);
		else
			rc = fb_seterr(err, FB_ENOIMAGE, "%s: no %s image for %s (%zu other image%s): compile it with %s for %s",
			               name, o->lto || o->target->kind == AP_PTX ? "LTO-IR" : "relocatable SASS", tn, other,
			               other == 1 ? "" : "s", o->lto || o->target->kind == AP_PTX ? "--lto" : "--rdc", tn);
	}
	fb_parsed_free(&p);
	fb_scan_free(&s);
	return rc;
}


/* A linked PTX that still declares an .extern .func (other than the JIT's built-ins) cannot be
 * loaded. Dynamic parallelism (__cudaCDP2*) comes from libcudadevrt, which links only into SASS:
 * a warning in the log, once. Any other name is a call no input defines (nvJitLink -ptx does
 * not report it): its name into undef. */
static void
check_extern(const unsigned char *ptx, size_t size, const char *tn, char **log, char *undef, size_t undef_size)
{
	undef[0] = 0;
	static const char *const builtin[] = {"vprintf", "malloc", "free", "__assertfail"};
	static const char key[] = ".extern .func";
	for (size_t i = 0; i + sizeof(key) < size; i++) {
		if (memcmp(ptx + i, key, sizeof(key) - 1) != 0)
			continue;
		size_t end = i;
		while (end < size && ptx[end] != '\n')
			end++;
		size_t k = i + sizeof(key) - 1, close = 0;
		for (size_t j = k; j < end; j++)
			if (ptx[j] == ')')
				close = j + 1;
		if (close)
			k = close;
		while (k < end && (ptx[k] == ' ' || ptx[k] == '\t'))
			k++;
		size_t n = 0;
		while (k + n < end && ptx[k + n] != ' ' && ptx[k + n] != '(' && ptx[k + n] != ';' && ptx[k + n] != '\t')
			n++;
		bool known = false;
		for (size_t b = 0; b < sizeof(builtin) / sizeof(builtin[0]); b++)
			known |= strlen(builtin[b]) == n && memcmp(ptx + k, builtin[b], n) == 0;
		if (known || !n)
			continue;
		if (!(n >= 9 && memcmp(ptx + k, "__cudaCDP", 9) == 0)) {
			snprintf(undef, undef_size, "%.*s", (int)(n > 200 ? 200 : n), (const char *)ptx + k);
			return;
		}
		char line[512];
		snprintf(line, sizeof(line),
		         "warning: %s: the linked PTX calls %.*s (a device-side kernel launch), which no PTX provides (the "
		         "device runtime of dynamic parallelism links only into SASS targets); a device that would JIT this "
		         "PTX cannot load the module\n",
		         tn, (int)(n > 120 ? 120 : n), (const char *)ptx + k);
		size_t a = *log ? strlen(*log) : 0;
		char *p = realloc(*log, a + strlen(line) + 1);
		if (p) {
			memcpy(p + a, line, strlen(line) + 1);
			*log = p;
		}
		return;
	}
}

void
fb_dlink_result_clear(struct fb_dlink_result *r)
{
	if (!r)
		return;
	free(r->image);
	free(r->log);
	memset(r, 0, sizeof(*r));
}

/* The toolkit to link with into home (o->cuda_home, else archprobe's, else ""), and with
 * o->devrt the libcudadevrt.a of it into devrt (else ""). */
static int
locate(const struct fb_dlink_opts *o, char *home, size_t hsize, char *devrt, size_t dsize, struct fb_error *err)
{
	devrt[0] = 0;
	fb_dl_home(o->cuda_home, ap_cuda_home, home, hsize);
	if (!o->devrt)
		return 0;
	if (!home[0])
		return fb_seterr(err, FB_ENOTOOL, "dlink: no CUDA toolkit found for libcudadevrt.a (set CUDA_HOME)");
	snprintf(devrt, dsize, "%s/lib64/libcudadevrt.a", home);
	if (access(devrt, R_OK) != 0)
		return fb_seterr(err, FB_ENOTOOL, "dlink: the device runtime %s is missing (set CUDA_HOME)", devrt);
	return 0;
}

/* Links the picked images (and devrt unless "") for o->target into *jo. */
static int
link_picked(const struct fb_jitlink *jl, const struct fb_dlink_opts *o, const struct picked *pk, size_t npk,
            const char *devrt, struct fb_jl_out *jo, struct fb_error *err)
{
	bool ptx = o->target->kind == AP_PTX;
	/* Options: -arch, -lto, -ptx, -g/-lineinfo, then the caller's. nvJitLink takes -arch=sm_XX
	 * for PTX output as well. */
	const char **opts = calloc(6 + o->nextra, sizeof(*opts));
	struct fb_jl_input *in = calloc(npk + 1, sizeof(*in));
	char arch[48];
	snprintf(arch, sizeof(arch), "-arch=sm_%d%s", o->target->sm,
	         o->target->variant == AP_ARCH ? "a" : o->target->variant == AP_FAMILY ? "f" : "");
	size_t no = 0, nin = 0;
	int rc;
	if (!opts || !in) {
		rc = fb_seterr(err, FB_ENOMEM, "out of memory");
		goto done;
	}
	opts[no++] = arch;
	if (o->lto || ptx)
		opts[no++] = "-lto";
	if (ptx)
		opts[no++] = "-ptx";
	if (o->device_debug)
		opts[no++] = "-g";
	else if (o->lineinfo)
		opts[no++] = "-lineinfo";
	for (size_t i = 0; i < o->nextra; i++)
		opts[no++] = o->extra[i];
	for (size_t i = 0; i < npk; i++)
		in[nin++] = (struct fb_jl_input){o->lto || ptx ? FB_JL_LTOIR : FB_JL_CUBIN, pk[i].data, pk[i].size, pk[i].name};
	if (devrt[0])
		in[nin++] = (struct fb_jl_input){FB_JL_LIBRARY, NULL, 0, devrt};
	rc = fb_jitlink_link(jl, opts, no, in, nin, ptx, jo, err);
done:
	free(opts);
	free(in);
	return rc;
}

/* Turns a finished link *jo of npk inputs into out (its log even when the link failed). */
static int
take_link(const struct fb_jitlink *jl, struct fb_jl_out *jo, const char *tn, bool ptx, size_t npk,
          struct fb_dlink_result *out, struct fb_error *err)
{
	out->jitlink_version = fb_jitlink_version(jl);
	snprintf(out->jitlink_path, sizeof(out->jitlink_path), "%s", fb_jitlink_path(jl));
	out->log = jo->log;
	jo->log = NULL;
	if (jo->result != 0) {
		char first[512];
		fb_log_first_line(out->log, link_errors, "", first, sizeof(first));
		int rc = fb_seterr(err, jo->result == 1 || jo->result == 11 ? FB_EINVAL : FB_ECOMPILE, "dlink %s: %s%s%s", tn,
		                   fb_jitlink_result_name(jo->result), first[0] ? ": " : "", first);
		fb_jl_out_clear(jo);
		return rc;
	}
	char undef[256] = "";
	if (ptx)
		check_extern(jo->image, jo->size, tn, &out->log, undef, sizeof(undef));
	if (undef[0]) {
		int rc = fb_seterr(err, FB_ECOMPILE, "dlink %s: undefined reference to '%s' (no input defines it)", tn, undef);
		fb_jl_out_clear(jo);
		return rc;
	}
	out->image = jo->image;
	out->size = jo->size;
	out->kind = ptx ? FB_KIND_PTX : FB_KIND_ELF;
	out->ninputs = npk;
	jo->image = NULL;
	fb_jl_out_clear(jo);
	return 0;
}

int
fb_dlink(const void *const *inputs, const size_t *sizes, const char *const *names, size_t n,
         const struct fb_dlink_opts *o, struct fb_dlink_result *out, struct fb_error *err)
{
	if (!out)
		return fb_seterr(err, FB_EINVAL, "dlink: no result");
	memset(out, 0, sizeof(*out));
	if (!o || !o->target)
		return fb_seterr(err, FB_EINVAL, "dlink: no target to link for");
	if (n == 0 || !inputs || !sizes)
		return fb_seterr(err, FB_EINVAL, "dlink: no inputs to link");
	char tn[32];
	ap_target_name(o->target, tn, sizeof(tn));
	bool ptx = o->target->kind == AP_PTX;
	if (ptx && o->devrt)
		return fb_seterr(err, FB_EINVAL,
		                 "dlink: %s: the device runtime (dynamic parallelism) links only into SASS targets, not PTX",
		                 tn);
	char home[PATH_MAX], devrt[PATH_MAX + 32];
	int rc = locate(o, home, sizeof(home), devrt, sizeof(devrt), err);
	if (rc)
		return rc;
	struct picked *pk = NULL;
	size_t npk = 0, cap = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "input %zu", i + 1);
		rc = pick(inputs[i], sizes[i], names && names[i] ? names[i] : nm, o, &pk, &npk, &cap, err);
	}
	struct fb_jitlink *jl = NULL;
	if (!rc)
		rc = fb_jitlink_open(home, &jl, err);
	if (!rc) {
		struct fb_jl_out jo = {0};
		rc = link_picked(jl, o, pk, npk, devrt, &jo, err);
		if (!rc)
			rc = take_link(jl, &jo, tn, ptx, npk, out, err);
	}
	picked_free(pk, npk);
	fb_jitlink_close(jl);
	return rc;
}

int
fb_dlink_pack(const struct fb_dlink_result *r, const struct ap_target *target, enum fb_compress compress,
              unsigned char **out, size_t *size, struct fb_error *err)
{
	*out = NULL;
	*size = 0;
	if (!r || !r->image)
		return fb_seterr(err, FB_EINVAL, "dlink: nothing linked to pack");
	struct fb_fatbin *fb = fb_fatbin_new();
	if (!fb)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	fb_fatbin_set_options(fb, FB_WRITE_COMPRESS_TEXT);
	struct ap_target t = *target;
	t.kind = r->kind == FB_KIND_PTX ? AP_PTX : AP_SASS;
	int rc = fb_fatbin_add(fb, r->kind, &t, r->image, r->size, NULL, NULL, err);
	if (!rc)
		rc = fb_fatbin_write(fb, compress, out, size, err);
	fb_fatbin_free(fb);
	return rc;
}

int
fb_jitlink_info(const char *cuda_home, struct fb_jitlink_info *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	struct fb_jitlink *j = NULL;
	int rc = fb_jitlink_open(cuda_home, &j, err);
	if (rc)
		return rc;
	out->version = fb_jitlink_version(j);
	snprintf(out->path, sizeof(out->path), "%s", fb_jitlink_path(j));
	fb_jitlink_close(j);
	return 0;
}
