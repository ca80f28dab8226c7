/* build_test.c: the extension-build module: ninja escaping and writing, container merging,
 * host-object embedding (linked with gcc and clang, read back with libelf and with
 * `fatbuild inspect`), build.ninja generation, and a built extension loaded against the fake
 * driver on devices 8.0, 8.6, 8.9, 9.0, 12.0 and 7.5 (no image), asserting which image the
 * fake device received. Fixtures are made here with fb_fatbin_* and NVRTC (fatbuild compile). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fatbuild.h"
#include "extension/ninja.h"

static char tmpdir[512];
static const char *fatbuild_bin, *src_dir, *bin_dir;

static char *
slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (b) {
		b[n] = 0;
		if (size)
			*size = (size_t)n;
	}
	return b;
}

/* Runs a shell command, returns its exit status; output goes to out (may be NULL). */
static int
sh(char *out, size_t outsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
sh(char *out, size_t outsize, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = 0;
	char buf[4096];
	size_t r;
	while ((r = fread(buf, 1, sizeof(buf), p)) > 0) {
		if (out && n + 1 < outsize) {
			size_t k = r < outsize - n - 1 ? r : outsize - n - 1;
			memcpy(out + n, buf, k);
			n += k;
		}
	}
	if (out && outsize)
		out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- ninja ---- */

static void
test_ninja_escaping(void)
{
	char *s;
	struct fb_error err = {0};
	CHECK(fb_ninja_escape_path("/a b/c:d$e", &s, &err) == 0);
	CHECK_STR(s, "/a$ b/c$:d$$e");
	free(s);
	CHECK(fb_ninja_escape_value("echo $x a:b c", &s, &err) == 0);
	CHECK_STR(s, "echo $$x a:b c");
	free(s);
	CHECK(fb_ninja_escape_path("a\nb", &s, &err) == FB_EINVAL);
	CHECK(s == NULL);
	CHECK(strstr(err.msg, "newline") != NULL);
	CHECK(fb_ninja_escape_value("a\nb", &s, &err) == FB_EINVAL);
	CHECK(fb_shell_quote("plain/path-1.o", &s, &err) == 0);
	CHECK_STR(s, "plain/path-1.o");
	free(s);
	CHECK(fb_shell_quote("a b", &s, &err) == 0);
	CHECK_STR(s, "'a b'");
	free(s);
	CHECK(fb_shell_quote("it's $HOME", &s, &err) == 0);
	CHECK_STR(s, "'it'\\''s $HOME'");
	free(s);
	CHECK(fb_shell_quote("", &s, &err) == 0);
	CHECK_STR(s, "''");
	free(s);
	CHECK(fb_shell_quote("x\ny", &s, &err) == FB_EINVAL);
}

static void
test_ninja_writer(void)
{
	struct fb_error err = {0};
	struct fb_ninja *n = fb_ninja_new();
	CHECK(n != NULL);
	CHECK(fb_ninja_rule(n, "my rule!", "$cmd", "$desc", "$dep", "gcc", &err) == 0);
	const char *outs[] = {"/o u/t.o"};
	const char *ins[] = {"/s r:c/a.c"};
	const char *imp[] = {"/x/lib$.a"};
	const char *vars[] = {"cmd", "cc -c '/s r:c/a.c' -o $out", "desc", "CC a.c", "dep", "/o u/t.o.d"};
	struct fb_ninja_edge e = {"my rule!", outs, 1, ins, 1, imp, 1, NULL, 0, vars, 3};
	CHECK(fb_ninja_edge(n, &e, &err) == 0);
	const char *t = fb_ninja_text(n);
	CHECK(strstr(t, "rule my_rule_\n  command = $cmd\n") != NULL);
	CHECK(strstr(t, "build /o$ u/t.o: my_rule_ /s$ r$:c/a.c | /x/lib$$.a\n") != NULL);
	CHECK(strstr(t, "  cmd = cc -c '/s r:c/a.c' -o $$out\n") != NULL);
	CHECK(strstr(t, "  dep = /o u/t.o.d\n") != NULL);
	/* A newline anywhere is an error, and the half-written edge is dropped. */
	size_t before = strlen(t);
	const char *bad[] = {"cmd", "a\nb"};
	struct fb_ninja_edge e2 = {"r", outs, 1, NULL, 0, NULL, 0, NULL, 0, bad, 1};
	CHECK(fb_ninja_edge(n, &e2, &err) == FB_EINVAL);
	CHECK(strlen(fb_ninja_text(n)) == before);
	const char *badout[] = {"x\ny"};
	struct fb_ninja_edge e3 = {"r", badout, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0};
	CHECK(fb_ninja_edge(n, &e3, &err) == FB_EINVAL);

	/* Rewritten only when the content changes (mtime kept otherwise). */
	char path[600];
	snprintf(path, sizeof(path), "%s/build.ninja", tmpdir);
	bool changed = false;
	CHECK(fb_ninja_write(n, path, &changed, &err) == 0);
	CHECK(changed);
	struct stat st1, st2;
	stat(path, &st1);
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK(fb_ninja_write(n, path, &changed, &err) == 0);
	CHECK(!changed);
	stat(path, &st2);
	CHECK(st1.st_mtim.tv_sec == st2.st_mtim.tv_sec && st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec);
	CHECK(fb_ninja_var(n, "x", "1", &err) == 0);
	CHECK(fb_ninja_write(n, path, &changed, &err) == 0);
	CHECK(changed);
	char *back = slurp(path, NULL);
	CHECK(back && strcmp(back, fb_ninja_text(n)) == 0);
	free(back);
	fb_ninja_free(n);
	fb_ninja_free(NULL);
}

/* ---- fixtures: containers made with the fatbin writer ---- */

static const char ptx80[] = ".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k80() { ret; }\n";
static const char ptx86[] = ".version 9.0\n.target sm_86\n.address_size 64\n.visible .entry k86() { ret; }\n";

static int
make_container(const char *ptx, int sm, unsigned char **out, size_t *size)
{
	struct fb_error err = {0};
	struct fb_fatbin *fb = fb_fatbin_new();
	struct ap_target t = {sm, AP_PLAIN, AP_PTX, 0};
	int rc = fb ? fb_fatbin_add(fb, FB_KIND_PTX, &t, ptx, strlen(ptx), NULL, NULL, &err) : FB_ENOMEM;
	if (!rc)
		rc = fb_fatbin_write(fb, FB_COMPRESS_NONE, out, size, &err);
	if (rc)
		fprintf(stderr, "fixture: %s\n", err.msg);
	fb_fatbin_free(fb);
	return rc;
}

static void
test_merge(void)
{
	unsigned char *a = NULL, *b = NULL, *m = NULL;
	size_t asz = 0, bsz = 0, msz = 0;
	CHECK(make_container(ptx80, 80, &a, &asz) == 0);
	CHECK(make_container(ptx86, 86, &b, &bsz) == 0);
	if (!a || !b)
		return;
	const void *bufs[] = {a, b};
	size_t sizes[] = {asz, bsz};
	struct fb_error err = {0};
	CHECK(fb_container_merge(bufs, sizes, 2, &m, &msz, &err) == 0);
	CHECK(msz == asz + bsz - 16);
	struct fb_parsed p = {0};
	CHECK(fb_fatbin_parse(m, msz, 0, &p, &err) == 0);
	CHECK(p.ncontainers == 1);
	CHECK(p.nentries == 2);
	if (p.nentries == 2) {
		CHECK(p.entries[0].target.sm == 80);
		CHECK(p.entries[1].target.sm == 86);
	}
	fb_parsed_free(&p);
	free(m);
	/* Garbage is refused with a message naming the input. */
	unsigned char junk[64] = {1, 2, 3};
	const void *jb[] = {a, junk};
	size_t js[] = {asz, sizeof(junk)};
	CHECK(fb_container_merge(jb, js, 2, &m, &msz, &err) == FB_EFORMAT);
	CHECK(strstr(err.msg, "input 2") != NULL);
	free(a);
	free(b);
}

/* ---- embedding ---- */

static void
test_embed(void)
{
	unsigned char *a = NULL, *b = NULL;
	size_t asz = 0, bsz = 0;
	CHECK(make_container(ptx80, 80, &a, &asz) == 0);
	CHECK(make_container(ptx86, 86, &b, &bsz) == 0);
	if (!a || !b)
		return;
	char obj[600], cfile[600], exe[600], so[600], out[8192];
	snprintf(obj, sizeof(obj), "%s/emb dir", tmpdir);
	mkdir(obj, 0755);
	snprintf(obj, sizeof(obj), "%s/emb dir/k.o", tmpdir);
	const void *bufs[] = {a, b};
	size_t sizes[] = {asz, bsz};
	struct fb_embed_opts o = {"my_kernels", false, false};
	struct fb_error err = {0};
	CHECK(fb_embed(bufs, sizes, 2, obj, &o, &err) == 0);

	/* Read it back with libelf: sections, flags, alignment, symbols, relocations. */
	int fd = open(obj, O_RDONLY);
	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(e != NULL);
	GElf_Ehdr eh;
	CHECK(e && gelf_getehdr(e, &eh) && eh.e_type == ET_REL && eh.e_machine == EM_X86_64);
	size_t shstrndx = 0;
	elf_getshdrstrndx(e, &shstrndx);
	int seen_fat = 0, seen_seg = 0, seen_rela = 0, seen_stack = 0, seen_sym = 0, seen_size = 0;
	for (Elf_Scn *s = NULL; e && (s = elf_nextscn(e, s)) != NULL;) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (strcmp(nm, ".nv_fatbin") == 0) {
			seen_fat = sh.sh_type == SHT_PROGBITS && sh.sh_flags == SHF_ALLOC && sh.sh_addralign == 8 &&
			           sh.sh_size == asz + bsz;
			Elf_Data *d = elf_getdata(s, NULL);
			CHECK(d && memcmp(d->d_buf, a, asz) == 0 && memcmp((char *)d->d_buf + asz, b, bsz) == 0);
		} else if (strcmp(nm, ".nvFatBinSegment") == 0) {
			seen_seg = sh.sh_flags == (SHF_ALLOC | SHF_WRITE) && sh.sh_size == 48;
			Elf_Data *d = elf_getdata(s, NULL);
			CHECK(d && *(uint32_t *)d->d_buf == 0x466243B1u && ((uint32_t *)d->d_buf)[1] == 1);
		} else if (strcmp(nm, ".rela.nvFatBinSegment") == 0) {
			Elf_Data *d = elf_getdata(s, NULL);
			GElf_Rela r0, r1;
			seen_rela = d && gelf_getrela(d, 0, &r0) && gelf_getrela(d, 1, &r1) &&
			            GELF_R_TYPE(r0.r_info) == R_X86_64_64 && r0.r_offset == 8 && r0.r_addend == 0 &&
			            r1.r_offset == 32 && (size_t)r1.r_addend == asz;
		} else if (strcmp(nm, ".note.GNU-stack") == 0) {
			seen_stack = sh.sh_size == 0 && !(sh.sh_flags & SHF_EXECINSTR);
		} else if (sh.sh_type == SHT_SYMTAB) {
			Elf_Data *d = elf_getdata(s, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sizeof(Elf64_Sym); i++) {
				GElf_Sym sym;
				gelf_getsym(d, (int)i, &sym);
				const char *sn = elf_strptr(e, sh.sh_link, sym.st_name);
				if (sn && strcmp(sn, "my_kernels") == 0)
					seen_sym = GELF_ST_BIND(sym.st_info) == STB_GLOBAL && GELF_ST_TYPE(sym.st_info) == STT_OBJECT &&
					           sym.st_size == asz + bsz;
				if (sn && strcmp(sn, "my_kernels_size") == 0)
					seen_size = GELF_ST_BIND(sym.st_info) == STB_GLOBAL;
			}
		}
	}
	CHECK(seen_fat);
	CHECK(seen_seg);
	CHECK(seen_rela);
	CHECK(seen_stack);
	CHECK(seen_sym);
	CHECK(seen_size);
	if (e)
		elf_end(e);
	close(fd);

	/* Links with gcc and clang; the program sees the bytes at the symbol. */
	snprintf(cfile, sizeof(cfile), "%s/emb dir/m.c", tmpdir);
	FILE *f = fopen(cfile, "w");
	fprintf(f, "#include <stdio.h>\n#include <stdint.h>\n"
	           "extern const unsigned char my_kernels[]; extern const uint64_t my_kernels_size;\n"
	           "int main(void) { printf(\"%%llu %%08x\\n\", (unsigned long long)my_kernels_size,"
	           " *(const unsigned *)my_kernels); return 0; }\n");
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want), "%zu ba55ed50\n", asz + bsz);
	const char *ccs[] = {"gcc", "clang"};
	for (int i = 0; i < 2; i++) {
		snprintf(exe, sizeof(exe), "%s/emb dir/m_%s", tmpdir, ccs[i]);
		int rc = sh(out, sizeof(out), "%s '%s' '%s' -o '%s' 2>&1 && '%s'", ccs[i], cfile, obj, exe, exe);
		CHECK(rc == 0);
		CHECK_STR(out, want);
		/* GNU-stack honoured: no executable stack in the program. */
		CHECK(sh(out, sizeof(out), "readelf -lW '%s' | grep GNU_STACK", exe) == 0 && strstr(out, "RWE") == NULL);
	}
	/* A shared library: no text relocations, and `fatbuild inspect` lists the images. */
	snprintf(so, sizeof(so), "%s/emb dir/libk.so", tmpdir);
	CHECK(sh(out, sizeof(out), "cc -shared '%s' -o '%s' 2>&1 && readelf -d '%s'", obj, so, so) == 0);
	CHECK(strstr(out, "TEXTREL") == NULL);
	CHECK(sh(out, sizeof(out), "%s inspect '%s' 2>&1", fatbuild_bin, so) == 0);
	CHECK(strstr(out, "compute_80") != NULL && strstr(out, "compute_86") != NULL);

	/* Hidden: not exported from a shared object. */
	o.hidden = true;
	CHECK(fb_embed(bufs, sizes, 2, obj, &o, &err) == 0);
	CHECK(sh(out, sizeof(out), "cc -shared '%s' -o '%s' 2>&1 && nm -D '%s'", obj, so, so) == 0);
	CHECK(strstr(out, "my_kernels") == NULL);

	/* Errors: bad symbol, not a fatbin; the previous output stays. */
	struct stat st1, st2;
	stat(obj, &st1);
	o.symbol = "9bad name";
	CHECK(fb_embed(bufs, sizes, 2, obj, &o, &err) == FB_EINVAL);
	o.symbol = "ok";
	unsigned char junk[32] = {0x7f, 'E', 'L', 'F'};
	const void *jb[] = {junk};
	size_t js[] = {sizeof(junk)};
	CHECK(fb_embed(jb, js, 1, obj, &o, &err) == FB_EFORMAT);
	CHECK(strstr(err.msg, "not a fatbinary") != NULL);
	stat(obj, &st2);
	CHECK(st1.st_size == st2.st_size && st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec);
	snprintf(obj, sizeof(obj), "%s/no such dir/k.o", tmpdir);
	CHECK(fb_embed(bufs, sizes, 2, obj, &o, &err) == FB_EIO);
	free(a);
	free(b);
}

/* ---- build.ninja generation (no compiler runs) ---- */

static void
test_emit_ninja(void)
{
	char dir[600], src[600], host[600], out[600];
	snprintf(dir, sizeof(dir), "%s/sp ace/bd", tmpdir);
	snprintf(src, sizeof(src), "%s/examples/saxpy/saxpy.cu", src_dir);
	snprintf(host, sizeof(host), "%s/examples/saxpy/saxpy_host.c", src_dir);
	snprintf(out, sizeof(out), "%s/sp ace", tmpdir);
	mkdir(out, 0755);
	snprintf(out, sizeof(out), "%s/sp ace/libx.so", tmpdir);
	const char *srcs[] = {src, host};
	const char *defs[] = {"ANSWER=42"};
	char spaced_inc[600];
	snprintf(spaced_inc, sizeof(spaced_inc), "%s/sp ace", tmpdir);
	const char *incs[] = {spaced_inc};
	struct fb_build_opts o = {0};
	o.sources = srcs;
	o.nsources = 2;
	o.output = out;
	o.arch_list = "8.0 8.6+PTX";
	o.build_dir = dir;
	o.defines = defs;
	o.ndefines = 1;
	o.include_dirs = incs;
	o.ninclude_dirs = 1;
	o.fatbuild = fatbuild_bin;
	o.emit_ninja_only = true;
	struct fb_build_result r;
	struct fb_error err = {0};
	CHECK(fb_build(&o, &r, &err) == 0);
	if (err.msg[0])
		fprintf(stderr, "emit: %s\n", err.msg);
	CHECK(r.ninja_changed);
	CHECK_STR(r.targets, "sm_80 sm_86 compute_86");
	char *t = slurp(r.ninja_file, NULL);
	CHECK(t != NULL);
	if (t) {
		CHECK(strstr(t, "0_saxpy.cu.sm_80.fatbin: kernel ") != NULL);
		CHECK(strstr(t, "0_saxpy.cu.compute_86.fatbin: kernel ") != NULL);
		/* linked inside the private build dir, copied to OUT after ninja */
		CHECK(strstr(t, "/out/libx.so: link ") != NULL);
		CHECK(strstr(t, "sp$ ace/libx.so: link ") == NULL);
		CHECK(strstr(t, "-DANSWER=42") != NULL);
		/* A plain include dir is one bare word; one with a space is quoted as a whole. */
		char word[PATH_MAX + 8], real[PATH_MAX];
		snprintf(word, sizeof(word), " -I%s/include ", src_dir);
		CHECK(strpbrk(src_dir, " '\"$\\") != NULL || strstr(t, word) != NULL);
		CHECK(realpath(spaced_inc, real) != NULL);
		snprintf(word, sizeof(word), " '-I%s' ", real);
		CHECK(strstr(t, word) != NULL);
		CHECK(strstr(t, "deps = gcc") != NULL);
		CHECK(strstr(t, "--hidden --symbol fbrt_fatbin") != NULL);
		CHECK(strstr(t, "libfatbuild_runtime.a") != NULL);
	}
	free(t);
	/* Same inputs: not rewritten. A different arch list: rewritten. */
	CHECK(fb_build(&o, &r, &err) == 0 && !r.ninja_changed);
	o.arch_list = "8.0";
	CHECK(fb_build(&o, &r, &err) == 0 && r.ninja_changed);
	/* Errors. */
	o.arch_list = "8.0 banana";
	CHECK(fb_build(&o, &r, &err) == FB_EARCH);
	o.arch_list = "8.0";
	const char *bad[] = {"x.f90"};
	o.sources = bad;
	o.nsources = 1;
	CHECK(fb_build(&o, &r, &err) == FB_EINVAL && strstr(err.msg, "x.f90") != NULL);
	o.sources = srcs;
	o.nsources = 2;
	o.ninja = "/nonexistent/ninja";
	o.emit_ninja_only = false;
	CHECK(fb_build(&o, &r, &err) == FB_ENOTOOL && strstr(err.msg, "ninja") != NULL);
}

/* ---- a real extension against the fake driver ---- */

static char libpath[700], fakecuda[700];

static int
build_extension(void)
{
	char src[600], host[600], dir[700];
	snprintf(src, sizeof(src), "%s/examples/saxpy/saxpy.cu", src_dir);
	snprintf(host, sizeof(host), "%s/examples/saxpy/saxpy_host.c", src_dir);
	snprintf(libpath, sizeof(libpath), "%s/sp ace/libsaxpy.so", tmpdir);
	snprintf(dir, sizeof(dir), "%s/sp ace/build", tmpdir);
	const char *srcs[] = {src, host};
	struct fb_build_opts o = {0};
	o.sources = srcs;
	o.nsources = 2;
	o.output = libpath;
	o.arch_list = "8.0 8.6+PTX";
	o.build_dir = dir;
	o.fatbuild = fatbuild_bin;
	void *h = NULL;
	struct fb_error err = {0};
	int rc = fb_load(&o, &h, &err);
	if (rc)
		fprintf(stderr, "build: %s\n", err.msg);
	CHECK(rc == 0 && h != NULL);
	if (h) {
		CHECK(dlsym(h, "saxpy_device") != NULL);
		CHECK(dlsym(h, "fbrt_function") == NULL); /* the runtime stays private */
		CHECK(dlsym(h, "fbrt_fatbin") == NULL);
		dlclose(h);
	}
	return rc;
}

typedef int (*saxpy_fn)(float, uint64_t, uint64_t, int, char *, size_t);

static void *
launch_thread(void *fn)
{
	saxpy_fn f;
	*(void **)&f = fn;
	intptr_t rc = f(1.0f, 0x1000, 0x2000, 100, NULL, 0);
	return (void *)rc;
}

/* In a child (the fake reads its configuration once per process): device cc, call fn. */
static int
on_device(const char *cc, const char *what, const char *arg, char *out, size_t outsize, char *msg, size_t msgsize)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		setenv("FAKECUDA_DEVICES", cc, 1);
		if (strcmp(what, "nocontext") != 0)
			setenv("FAKECUDA_CONTEXT", "0", 1);
		if (strcmp(what, "library") == 0)
			setenv("FBRT_LOADER", "library", 1);
		if (strcmp(what, "lazy") == 0)
			setenv("FAKECUDA_LAZY", "1", 1);
		if (strcmp(what, "threads") == 0 || strcmp(what, "library") == 0)
			setenv("FAKECUDA_LOG", arg, 1);
		setenv("FBRT_LIBCUDA", fakecuda, 1);
		char res[2048] = "";
		void *h = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
		void *cuda = dlopen(fakecuda, RTLD_NOW | RTLD_LOCAL);
		int rc = -1;
		if (h) {
			int (*dev)(float, uint64_t, uint64_t, int, char *, size_t);
			int (*look)(const char *, char *, size_t);
			const char *(*image)(void);
			const char *(*launch)(void);
			*(void **)&dev = dlsym(h, "saxpy_device");
			*(void **)&look = dlsym(h, "saxpy_lookup");
			*(void **)&image = cuda ? dlsym(cuda, "fakecuda_module_image") : NULL;
			*(void **)&launch = cuda ? dlsym(cuda, "fakecuda_last_launch") : NULL;
			char m[1024] = "";
			if (strcmp(what, "lookup") == 0) {
				rc = look(arg, m, sizeof(m));
			} else if (strcmp(what, "threads") == 0) {
				/* Eight threads race to the first kernel call: one load, eight launches. */
				pthread_t t[8];
				int made = 0;
				rc = 0;
				for (int i = 0; i < 8; i++) {
					/* A loaded machine (the suite's remote tests fork farms beside this)
					 * can refuse a thread for a moment: retry, and say so if it never comes. */
					int e = EAGAIN;
					for (int tries = 0; tries < 200 && e == EAGAIN; tries++) {
						e = pthread_create(&t[made], NULL, launch_thread, *(void **)&dev);
						if (e == EAGAIN)
							usleep(10000);
					}
					if (e) {
						snprintf(m, sizeof(m), "pthread_create: %s", strerror(e));
						rc = 90;
						break;
					}
					made++;
				}
				for (int i = 0; i < made; i++) {
					void *r = (void *)(intptr_t)91;
					if (pthread_join(t[i], &r) != 0)
						r = (void *)(intptr_t)92;
					rc |= (int)(intptr_t)r;
				}
			} else
				rc = dev(2.0f, 0x1000, 0x2000, 1000, m, sizeof(m));
			snprintf(res, sizeof(res), "%d\t%s\t%s\t%s", rc, image ? image() : "", launch ? launch() : "", m);
		} else {
			snprintf(res, sizeof(res), "-1\t\t\tdlopen: %s", dlerror());
		}
		if (write(p[1], res, strlen(res)) < 0)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	char buf[4096];
	ssize_t n, total = 0;
	while ((n = read(p[0], buf + total, sizeof(buf) - 1 - (size_t)total)) > 0)
		total += n;
	buf[total] = 0;
	close(p[0]);
	waitpid(pid, NULL, 0);
	/* rc \t image \t launch \t msg */
	char *f1 = strchr(buf, '\t'), *f2 = f1 ? strchr(f1 + 1, '\t') : NULL, *f3 = f2 ? strchr(f2 + 1, '\t') : NULL;
	if (!f3)
		return -1;
	*f1 = *f2 = *f3 = 0;
	snprintf(out, outsize, "%s|%s", f1 + 1, f2 + 1);
	snprintf(msg, msgsize, "%s", f3 + 1);
	return atoi(buf);
}

static void
test_extension(void)
{
	if (build_extension() != 0)
		return;
	char out[1024], msg[1024], images[256];
	/* Selection among sm_80, sm_86, compute_86: */
	static const struct {
		const char *cc, *image;
	} cases[] = {
		{"8.0", "sm_80"},      /* exact SASS */
		{"8.6", "sm_86"},      /* exact SASS beats PTX of the same arch */
		{"8.9", "sm_86"},      /* same major, lower minor SASS; ties go to SASS */
		{"9.0", "compute_86"}, /* new major: JIT the PTX */
		{"12.0", "compute_86"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = on_device(cases[i].cc, "launch", NULL, out, sizeof(out), msg, sizeof(msg));
		char want[256];
		snprintf(want, sizeof(want), "%s|saxpy 4x1x1 256x1x1 shmem=0 image=%s", cases[i].image, cases[i].image);
		if (rc != 0 || strcmp(out, want) != 0)
			fprintf(stderr, "device %s: rc %d, got '%s' (%s)\n", cases[i].cc, rc, out, msg);
		CHECK(rc == 0);
		CHECK_STR(out, want);
	}
	/* cuLibraryLoadData instead of cuModuleLoadData (and cuKernelGetFunction before launching). */
	char lib_log[700];
	snprintf(lib_log, sizeof(lib_log), "%s/fake-lib.log", tmpdir);
	int rc0 = on_device("8.9", "library", lib_log, out, sizeof(out), msg, sizeof(msg));
	CHECK(rc0 == 0);
	CHECK_STR(out, "sm_86|saxpy 4x1x1 256x1x1 shmem=0 image=sm_86");
	char *llog = slurp(lib_log, NULL);
	CHECK(llog && strstr(llog, "cuLibraryLoadData: device 8.9: image sm_86") != NULL);
	CHECK(llog && strstr(llog, "cuKernelGetFunction(saxpy)") != NULL);
	CHECK(llog && strstr(llog, "cuModuleLoadData") == NULL);
	free(llog);
	/* Thread-safe, once: eight racing first calls load the fatbin once. */
	char logpath[700];
	snprintf(logpath, sizeof(logpath), "%s/fake.log", tmpdir);
	rc0 = on_device("8.6", "threads", logpath, out, sizeof(out), msg, sizeof(msg));
	if (rc0 != 0)
		fprintf(stderr, "threads: rc %d (%s)\n", rc0, msg);
	CHECK(rc0 == 0);
	char *log = slurp(logpath, NULL);
	int loads = 0, launches = 0;
	for (const char *p = log; p && (p = strstr(p, "cuModuleLoadData: ")) != NULL; p++)
		loads++;
	for (const char *p = log; p && (p = strstr(p, "cuLaunchKernel: ")) != NULL; p++)
		launches++;
	if (loads != 1 || launches != 8)
		fprintf(stderr, "threads: %d loads, %d launches; the fake's log:\n%s", loads, launches, log ? log : "(none)");
	CHECK(loads == 1);
	CHECK(launches == 8);
	free(log);
	/* No image fits 7.5: the message names the device's CC and the images carried. */
	int rc = on_device("7.5", "launch", NULL, out, sizeof(out), msg, sizeof(msg));
	CHECK(rc == 3); /* FBRT_ENOIMAGE */
	snprintf(images, sizeof(images), "compute capability 7.5): this library carries sm_80 sm_86 compute_86");
	if (!strstr(msg, images))
		fprintf(stderr, "no-image message: %s\n", msg);
	CHECK(strstr(msg, images) != NULL);
	CHECK(strstr(msg, "CUDA_ERROR_NO_BINARY_FOR_GPU") != NULL);
	CHECK(strstr(msg, "none fits by the selection model") != NULL);
	/* The same when lazy loading reports it at the first lookup instead of at the load. */
	rc = on_device("7.5", "lazy", NULL, out, sizeof(out), msg, sizeof(msg));
	CHECK(rc == 3);
	CHECK(strstr(msg, images) != NULL);
	/* A missing kernel name. */
	rc = on_device("8.6", "lookup", "saxpy_v2", out, sizeof(out), msg, sizeof(msg));
	CHECK(rc == 4); /* FBRT_ENOTFOUND */
	CHECK(strstr(msg, "no kernel named 'saxpy_v2'") != NULL && strstr(msg, "(it has: saxpy)") != NULL);
	if (rc != 4)
		fprintf(stderr, "lookup: %d %s\n", rc, msg);
	rc = on_device("8.6", "lookup", "saxpy", out, sizeof(out), msg, sizeof(msg));
	CHECK(rc == 0);
	/* No context on the thread (and the fake refuses primary contexts). */
	rc = on_device("8.6", "nocontext", NULL, out, sizeof(out), msg, sizeof(msg));
	CHECK(rc == 2); /* FBRT_ENOCONTEXT */
	CHECK(strstr(msg, "no CUDA context is current") != NULL);
	/* No driver at all. */
	char saved[sizeof(fakecuda)];
	memcpy(saved, fakecuda, sizeof(saved));
	snprintf(fakecuda, sizeof(fakecuda), "%s/none/libcuda.so.1", tmpdir);
	rc = on_device("8.6", "launch", NULL, out, sizeof(out), msg, sizeof(msg));
	memcpy(fakecuda, saved, sizeof(saved));
	CHECK(rc == 1); /* FBRT_ENODRIVER */
	CHECK(strstr(msg, "no CUDA driver") != NULL);
}

/* Two kernel files: two containers, two modules; a lookup searches both. */
static void
test_two_kernel_files(void)
{
	char k2[700], src[600], host[600], dir[700], out[1024], msg[1024];
	snprintf(k2, sizeof(k2), "%s/sp ace/scale2.cu", tmpdir);
	FILE *f = fopen(k2, "w");
	fprintf(f, "extern \"C\" __global__ void scale2(float *x) { x[threadIdx.x] *= 2.0f; }\n");
	fclose(f);
	snprintf(src, sizeof(src), "%s/examples/saxpy/saxpy.cu", src_dir);
	snprintf(host, sizeof(host), "%s/examples/saxpy/saxpy_host.c", src_dir);
	snprintf(libpath, sizeof(libpath), "%s/sp ace/libtwo.so", tmpdir);
	snprintf(dir, sizeof(dir), "%s/sp ace/build-two", tmpdir);
	const char *srcs[] = {src, k2, host};
	struct fb_build_opts o = {0};
	o.sources = srcs;
	o.nsources = 3;
	o.output = libpath;
	o.arch_list = "8.6";
	o.build_dir = dir;
	o.fatbuild = fatbuild_bin;
	struct fb_build_result r;
	struct fb_error err = {0};
	int rc = fb_build(&o, &r, &err);
	if (rc)
		fprintf(stderr, "two: %s\n", err.msg);
	CHECK(rc == 0);
	CHECK(!r.up_to_date && r.ninja_changed);
	CHECK(sh(out, sizeof(out), "%s inspect '%s' | grep -c '^  container'", fatbuild_bin, libpath) == 0);
	CHECK_STR(out, "2\n");
	CHECK(on_device("8.9", "lookup", "scale2", out, sizeof(out), msg, sizeof(msg)) == 0);
	CHECK(on_device("8.9", "lookup", "saxpy", out, sizeof(out), msg, sizeof(msg)) == 0);
	CHECK(on_device("8.9", "lookup", "nope", out, sizeof(out), msg, sizeof(msg)) == 4);
	CHECK(strstr(msg, "(it has: saxpy, scale2)") != NULL);
	/* Build again: up to date. */
	CHECK(fb_build(&o, &r, &err) == 0 && r.up_to_date && !r.ninja_changed);
}

/* A library caller's build sends ninja's output to a log and gets the first error back. */
static void
test_failed_build_log(void)
{
	char bad[700], dir[700], log[700], lib[700];
	snprintf(bad, sizeof(bad), "%s/sp ace/bad.cu", tmpdir);
	FILE *f = fopen(bad, "w");
	fprintf(f, "extern \"C\" __global__ void bad(float *x) { x[0] = undeclared_thing; }\n");
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/sp ace/build-bad", tmpdir);
	snprintf(log, sizeof(log), "%s/sp ace/bad.log", tmpdir);
	snprintf(lib, sizeof(lib), "%s/sp ace/libbad.so", tmpdir);
	const char *srcs[] = {bad};
	struct fb_build_opts o = {0};
	o.sources = srcs;
	o.nsources = 1;
	o.output = lib;
	o.arch_list = "8.6";
	o.build_dir = dir;
	o.fatbuild = fatbuild_bin;
	o.log = log;
	struct fb_error err = {0};
	CHECK(fb_build(&o, NULL, &err) == FB_ECOMPILE);
	CHECK(strstr(err.msg, "build failed (log ") != NULL);
	CHECK(strstr(err.msg, "undeclared_thing") != NULL);
	if (!strstr(err.msg, "undeclared_thing"))
		fprintf(stderr, "failed build: %s\n", err.msg);
	char *text = slurp(log, NULL);
	CHECK(text && strstr(text, "FAILED: ") != NULL);
	free(text);
	CHECK(access(lib, F_OK) != 0);
}

int
main(void)
{
	fatbuild_bin = getenv("FATBUILD_BIN");
	src_dir = getenv("FB_SOURCE_DIR");
	bin_dir = getenv("FB_BINARY_DIR");
	if (!fatbuild_bin || !src_dir || !bin_dir) {
		fprintf(stderr, "FATBUILD_BIN, FB_SOURCE_DIR and FB_BINARY_DIR must be set (run through ctest)\n");
		return 2;
	}
	snprintf(fakecuda, sizeof(fakecuda), "%s/fakecuda/libcuda.so.1", bin_dir);
	snprintf(tmpdir, sizeof(tmpdir), "%s/build_test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	/* Keep NVRTC results out of the user's cache. */
	char cache[600];
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	setenv("FATBUILD_CACHE_DIR", cache, 1);
	test_ninja_escaping();
	test_ninja_writer();
	test_merge();
	test_embed();
	test_emit_ninja();
	test_extension();
	test_two_kernel_files();
	test_failed_build_log();
	int rc = check_done();
	if (rc == 0) {
		char cmd[700];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	} else {
		fprintf(stderr, "kept %s\n", tmpdir);
	}
	return rc;
}
