/* dlink_test.c: relocatable device code without nvcc: fb_compile with rdc/lto (relocatable
 * cubins, LTO-IR, PTX targets as LTO-IR), fb_dlink with nvJitLink (one executable cubin per SASS
 * target, one PTX per PTX target, every refusal), the nvJitLink loader's lookup, and the
 * device-link commands build.c writes (extension/dlink_edges.c). NVRTC and nvJitLink come from the toolkit
 * in use; the parts that need them are skipped (77 when nothing else ran) without them. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extension/dlink_edges.h"
#include "check.h"
#include "compile/compile.h"
#include "devlink/jitlink.h"
#include "fatbuild.h"

static char tmp[1024];

static bool
has(const unsigned char *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t i = 0; p && i + k <= n; i++)
		if (memcmp(p + i, s, k) == 0)
			return true;
	return false;
}

static void
put(const char *name, const char *text, char *path)
{
	snprintf(path, PATH_MAX, "%.1024s/%.64s", tmp, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void
test_commands(void)
{
	const char *in[] = {"/b d/obj/0_a.cu.sm_86.fatbin", "/b d/obj/1_b.cu.sm_86.fatbin"};
	struct fb_dlink_edge e = {in, 2, "/b d/obj/dlink.sm_86.fatbin", false, true};
	char *cmd = NULL;
	CHECK(fb_dlink_nvrtc_cmd("/opt/fb/bin/fatbuild", "sm_86", &e, &cmd, NULL) == 0);
	CHECK_STR(cmd, "exec /opt/fb/bin/fatbuild dlink --target sm_86 --devrt -o '/b d/obj/dlink.sm_86.fatbin' "
	               "'/b d/obj/0_a.cu.sm_86.fatbin' '/b d/obj/1_b.cu.sm_86.fatbin'");
	free(cmd);
	e.lto = true;
	e.devrt = false;
	CHECK(fb_dlink_nvrtc_cmd("fatbuild", "compute_90", &e, &cmd, NULL) == 0);
	CHECK(cmd && strstr(cmd, "dlink --target compute_90 --lto -o ") && !strstr(cmd, "--devrt"));
	free(cmd);
	e.devrt = true;
	CHECK(fb_dlink_nvcc_cmd("/usr/local/cuda", "-gencode=arch=compute_86,code=sm_86", "c++", &e, &cmd, NULL) == 0);
	CHECK_STR(cmd, "/usr/local/cuda/bin/nvcc -dlink -gencode=arch=compute_86,code=sm_86 -dlto -Xcompiler -fPIC "
	               "-ccbin c++ '/b d/obj/0_a.cu.sm_86.fatbin' '/b d/obj/1_b.cu.sm_86.fatbin' -L/usr/local/cuda/lib64 "
	               "-lcudadevrt -o '/b d/obj/dlink.sm_86.fatbin'");
	free(cmd);
	char *g = NULL;
	CHECK(fb_dlink_nvcc_lto_gencode("-gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_90a,code=sm_90a "
	                                "-gencode=arch=compute_90a,code=compute_90a",
	                                &g, NULL) == 0);
	CHECK_STR(g, "-gencode=arch=compute_86,code=lto_86 -gencode=arch=compute_90a,code=lto_90a "
	             "-gencode=arch=compute_90a,code=compute_90a");
	free(g);
	struct fb_error err = {0};
	CHECK(fb_dlink_nvcc_lto_check(tmp, &err) == FB_ENOTOOL);
	CHECK(strstr(err.msg, "nvvm/lib64/libnvvm.so") && strstr(err.msg, "--backend nvrtc"));
}

static void
test_loader(void)
{
	struct fb_jitlink *j = NULL;
	struct fb_error err = {0};
	CHECK(fb_jitlink_open(tmp, &j, &err) == FB_ENOTOOL && !j);
	char want[1200];
	snprintf(want, sizeof(want), "%s/lib64/libnvJitLink.so.13", tmp);
	CHECK(strstr(err.msg, want) != NULL);
	struct fb_jitlink_info ji;
	CHECK(fb_jitlink_info(tmp, &ji, &err) == FB_ENOTOOL && ji.path[0] == 0);
	if (fb_jitlink_info(NULL, &ji, NULL) == 0)
		CHECK(strstr(ji.path, "libnvJitLink.so.1") != NULL && ji.version >= 12000);
	CHECK_STR(fb_jitlink_result_name(0), "NVJITLINK_SUCCESS");
	CHECK_STR(fb_jitlink_result_name(3), "NVJITLINK_ERROR_INVALID_INPUT");
	CHECK_STR(fb_jitlink_result_name(999), "NVJITLINK_ERROR_UNKNOWN");
}

static void
test_args(void)
{
	struct fb_dlink_result r;
	struct fb_error err = {0};
	struct ap_target t = {86, AP_PLAIN, AP_SASS, 0};
	struct fb_dlink_opts o = {.target = &t};
	const void *in[1] = {"x"};
	size_t sz[1] = {1};
	CHECK(fb_dlink(in, sz, NULL, 1, NULL, &r, &err) == FB_EINVAL);
	CHECK(fb_dlink(in, sz, NULL, 0, &o, &r, &err) == FB_EINVAL);
	CHECK(fb_dlink(in, sz, NULL, 1, &o, NULL, &err) == FB_EINVAL);
	struct ap_target p = {86, AP_PLAIN, AP_PTX, 0};
	struct fb_dlink_opts op = {.target = &p, .devrt = true};
	CHECK(fb_dlink(in, sz, NULL, 1, &op, &r, &err) == FB_EINVAL);
	CHECK(strstr(err.msg, "only into SASS") != NULL);
	CHECK(fb_dlink(in, sz, NULL, 1, &o, &r, &err) != 0); /* not a fatbin, cubin or PTX */
	CHECK(r.image == NULL);
}

/* One source compiled for the targets, packed as fatbuild compile writes it. */
static int
compile_one(const char *src, const struct ap_target *t, size_t nt, bool rdc, bool lto, unsigned char **fat,
            size_t *size, enum fb_entry_kind *kinds)
{
	struct fb_compile_opts o = {.targets = t, .ntargets = nt, .rdc = rdc, .lto = lto, .no_cache = true, .jobs = 2};
	struct fb_compile_result *res = NULL;
	struct fb_error err = {0};
	const char *s[1] = {src};
	int rc = fb_compile(s, 1, &o, &res, &err);
	if (rc) {
		fprintf(stderr, "fb_compile %s: %s\n", src, err.msg);
		fb_compile_result_free(res);
		return rc;
	}
	for (size_t i = 0; kinds && i < res->nimages; i++)
		kinds[i] = res->images[i].kind;
	rc = fb_compile_pack(res, &o, FB_COMPRESS_ZSTD, false, fat, size, &err);
	fb_compile_result_free(res);
	return rc;
}

static bool
is_relocatable(const unsigned char *fat, size_t size, size_t entry)
{
	struct fb_parsed p = {0};
	bool rel = false;
	if (fb_fatbin_parse(fat, size, 0, &p, NULL) == 0 && entry < p.nentries) {
		unsigned char *img = NULL;
		size_t n = 0;
		struct fb_cubin c = {0};
		rel = fb_entry_image(&p.entries[entry], 0, &img, &n, NULL) == 0 && fb_cubin_read(img, n, &c, NULL) == 0 &&
		      c.relocatable;
		fb_cubin_free(&c);
		free(img);
	}
	fb_parsed_free(&p);
	return rel;
}

static int
test_link(void)
{
	struct fb_nvrtc_info ni;
	struct fb_jitlink *jl = NULL;
	if (fb_nvrtc_info(NULL, &ni, NULL) != 0 || fb_jitlink_open(NULL, &jl, NULL) != 0) {
		fprintf(stderr, "no NVRTC or nvJitLink: the link tests are skipped\n");
		return 77;
	}
	fb_jitlink_close(jl);
	char a[PATH_MAX], b[PATH_MAX], w[PATH_MAX];
	put("apply.cu",
	    "extern __device__ float twice(float);\n"
	    "extern \"C\" __global__ void apply(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n", a);
	put("twice.cu", "__device__ float twice(float v) { return 2.0f * v; }\n", b);
	put("launch.cu",
	    "extern \"C\" __global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
	    "extern \"C\" __global__ void parent(int *p) { child<<<1, 4>>>(p); }\n", w);
	struct ap_target t[2] = {{86, AP_PLAIN, AP_SASS, 0}, {86, AP_PLAIN, AP_PTX, 0}};
	unsigned char *fa = NULL, *fb = NULL, *fw = NULL, *la = NULL, *lb = NULL, *whole = NULL;
	size_t sa = 0, sb = 0, sw = 0, sla = 0, slb = 0, swhole = 0;
	enum fb_entry_kind kinds[2] = {0};
	CHECK(compile_one(a, t, 2, true, false, &fa, &sa, kinds) == 0);
	/* rdc: the SASS target is a relocatable cubin, the PTX target LTO-IR (no riding on SASS) */
	CHECK(kinds[0] == FB_KIND_ELF && kinds[1] == FB_KIND_LTO);
	CHECK(is_relocatable(fa, sa, 0));
	CHECK(compile_one(b, t, 2, true, false, &fb, &sb, NULL) == 0);
	CHECK(compile_one(w, t, 1, true, false, &fw, &sw, NULL) == 0);
	CHECK(compile_one(a, t, 1, false, true, &la, &sla, kinds) == 0);
	CHECK(kinds[0] == FB_KIND_LTO);
	CHECK(compile_one(b, t, 1, false, true, &lb, &slb, NULL) == 0);
	CHECK(compile_one(b, t, 1, false, false, &whole, &swhole, NULL) == 0);
	if (!fa || !fb || !fw || !la || !lb || !whole)
		return 1;

	struct fb_dlink_result r = {0};
	struct fb_error err = {0};
	const void *in[2] = {fa, fb};
	size_t sz[2] = {sa, sb};
	const char *names[2] = {"apply.fatbin", "twice.fatbin"};
	struct fb_dlink_opts o = {.target = &t[0]};
	/* SASS: one executable cubin with the kernel */
	CHECK(fb_dlink(in, sz, names, 2, &o, &r, &err) == 0);
	CHECK(r.kind == FB_KIND_ELF && r.ninputs == 2 && r.jitlink_version >= 12000);
	struct fb_cubin c = {0};
	CHECK(r.image && fb_cubin_read(r.image, r.size, &c, NULL) == 0 && !c.relocatable && c.sm == 86);
	CHECK(c.nkernels == 1 && c.nkernels && strcmp(c.kernels[0].name, "apply") == 0);
	fb_cubin_free(&c);
	unsigned char *packed = NULL;
	size_t psize = 0;
	CHECK(fb_dlink_pack(&r, &t[0], FB_COMPRESS_ZSTD, &packed, &psize, NULL) == 0);
	struct fb_parsed p = {0};
	CHECK(fb_fatbin_parse(packed, psize, 0, &p, NULL) == 0 && p.nentries == 1 &&
	      p.entries[0].disk_kind == FB_DISK_KIND_ELF && p.entries[0].target.sm == 86);
	fb_parsed_free(&p);
	free(packed);
	fb_dlink_result_clear(&r);
	/* PTX: one linked PTX from the LTO-IR entries */
	struct fb_dlink_opts op = {.target = &t[1]};
	CHECK(fb_dlink(in, sz, names, 2, &op, &r, &err) == 0);
	CHECK(r.kind == FB_KIND_PTX && r.image && has(r.image, r.size, ".entry apply") &&
	      !has(r.image, r.size, ".extern .func"));
	fb_dlink_result_clear(&r);
	/* one file alone: the undefined device function is a link error, for SASS and for PTX */
	CHECK(fb_dlink(in, sz, names, 1, &o, &r, &err) == FB_ECOMPILE);
	CHECK(strstr(err.msg, "dlink sm_86") && strstr(err.msg, "_Z5twicef"));
	CHECK(r.log && strstr(r.log, "Undefined reference"));
	CHECK(r.image == NULL);
	fb_dlink_result_clear(&r);
	CHECK(fb_dlink(in, sz, names, 1, &op, &r, &err) == FB_ECOMPILE);
	CHECK(strstr(err.msg, "undefined reference to '_Z5twicef'") != NULL);
	fb_dlink_result_clear(&r);
	/* CDP: needs the device runtime */
	const void *win[1] = {fw};
	size_t wsz[1] = {sw};
	CHECK(fb_dlink(win, wsz, NULL, 1, &o, &r, &err) == FB_ECOMPILE);
	CHECK(strstr(err.msg, "__cudaCDP2") != NULL);
	fb_dlink_result_clear(&r);
	o.devrt = true;
	CHECK(fb_dlink(win, wsz, NULL, 1, &o, &r, &err) == 0);
	CHECK(r.image && fb_cubin_read(r.image, r.size, &c, NULL) == 0 && !c.relocatable);
	int found = 0;
	for (size_t i = 0; i < c.nkernels; i++)
		found += strcmp(c.kernels[i].name, "parent") == 0 || strcmp(c.kernels[i].name, "child") == 0;
	CHECK(found == 2);
	fb_cubin_free(&c);
	fb_dlink_result_clear(&r);
	o.devrt = false;
	/* LTO */
	const void *lin[2] = {la, lb};
	size_t lsz[2] = {sla, slb};
	CHECK(fb_dlink(lin, lsz, NULL, 2, &o, &r, &err) == FB_ENOIMAGE); /* LTO-IR without lto */
	CHECK(strstr(err.msg, "no relocatable SASS image for sm_86") && strstr(err.msg, "--rdc"));
	fb_dlink_result_clear(&r);
	o.lto = true;
	CHECK(fb_dlink(lin, lsz, NULL, 2, &o, &r, &err) == 0);
	CHECK(r.image && fb_cubin_read(r.image, r.size, &c, NULL) == 0 && !c.relocatable && c.nkernels == 1);
	fb_cubin_free(&c);
	fb_dlink_result_clear(&r);
	const char *wn[1] = {"launch.fatbin"};
	CHECK(fb_dlink(win, wsz, wn, 1, &o, &r, &err) == FB_ENOIMAGE); /* relocatable cubins only, with lto */
	CHECK(strstr(err.msg, "launch.fatbin: no LTO-IR image for sm_86") && strstr(err.msg, "--lto"));
	fb_dlink_result_clear(&r);
	/* an LTO-IR of the PTX target's arch serves the SASS target of that SM too */
	CHECK(fb_dlink(in, sz, names, 2, &o, &r, &err) == 0 && r.ninputs == 2);
	fb_dlink_result_clear(&r);
	o.lto = false;
	/* a whole-program cubin, and a target the inputs lack */
	const void *hin[2] = {fa, whole};
	size_t hsz[2] = {sa, swhole};
	const char *hn[2] = {"apply.fatbin", "whole.fatbin"};
	CHECK(fb_dlink(hin, hsz, hn, 2, &o, &r, &err) == FB_EINVAL);
	CHECK(strstr(err.msg, "whole.fatbin") && strstr(err.msg, "not relocatable"));
	struct ap_target t90 = {90, AP_PLAIN, AP_SASS, 0};
	o.target = &t90;
	CHECK(fb_dlink(in, sz, names, 2, &o, &r, &err) == FB_ENOIMAGE);
	CHECK(strstr(err.msg, "apply.fatbin: no relocatable SASS image for sm_90") != NULL);
	free(fa);
	free(fb);
	free(fw);
	free(la);
	free(lb);
	free(whole);
	return 0;
}

int
main(void)
{
	snprintf(tmp, sizeof(tmp), "%s/fbdlink.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	test_commands();
	test_loader();
	test_args();
	int rc = test_link();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	int done = check_done();
	return done ? done : rc == 77 ? 0 : rc;
}
