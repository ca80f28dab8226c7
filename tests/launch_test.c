/* launch_test.c: the launcher's pieces without nvcc: which words are split (splitwords.c), a
 * line of the plan's shell read into words (fb_words_shell, base/words.c, which reads an edge's
 * remote command too), and a step's files through the cache's blob (stepcache.c): written back
 * under another run's temporaries, and damaged or foreign blobs refused. */
#define _GNU_SOURCE /* mkdtemp */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "base/safefs.h"
#include "base/config.h"
#include "base/strbuf.h"
#include "base/words.h"
#include "launch/plan.h"
#include "launch/projroot.h"
#include "launch/stepcache.h"

/* fb_launch_words_ok on a NULL-terminated list; *why gets the reason when refused. */
static int
ok(const char *const *w, char *why, int *threads, char ***plan, char ***dep)
{
	return fb_launch_words_ok((char *const *)w, threads, plan, dep, why, 256);
}

static void
test_words(void)
{
	char why[256], **plan, **dep;
	int t;
	const char *torch[] = {"-I/x/include", "-isystem", "/py/include", "-D__CUDA_NO_HALF_OPERATORS__",
	                       "--expt-relaxed-constexpr", "--compiler-options", "'-fPIC'", "-O3", "-std=c++17",
	                       "-gencode=arch=compute_80,code=sm_80", "-MD", "-MF", "k.o.d", "-c", "k.cu", "-o",
	                       "k.o", "--threads", "4", NULL};
	CHECK(ok(torch, why, &t, &plan, &dep) == 1);
	CHECK(t == 4);
	CHECK(!check_has(plan, "-MD") && !check_has(plan, "-MF") && !check_has(plan, "k.o.d") && !check_has(plan, "--threads") && check_has(plan, "-c"));
	CHECK(check_has(dep, "-M") && check_has(dep, "-MF") && check_has(dep, "-MT") && !check_has(dep, "-c") && !check_has(dep, "-o") && !check_has(dep, "4"));
	fb_words_free(plan);
	fb_words_free(dep);
	const char *cmake[] = {"-forward-unknown-to-host-compiler", "--generate-code=arch=compute_80,code=[compute_80,sm_80]",
	                       "-MD", "-MT", "a.o", "-MF", "a.o.d", "-x", "cu", "-c", "/s/k.cu", "-o", "a.o", NULL};
	CHECK(ok(cmake, why, &t, &plan, &dep) == 1);
	CHECK(t == -1 && check_has(dep, "a.o"));
	fb_words_free(plan);
	fb_words_free(dep);
	static const struct {
		const char *w[6];
		const char *why;
	} refused[] = {
		{{"-E", "k.cu", NULL}, "-E (preprocess only)"},
		{{"-M", "k.cu", NULL}, "-M (dependencies only)"},
		{{"--version", NULL}, "--version (a version query)"},
		{{"-c", "@opts", "k.cu", NULL}, "a response file (@opts)"},
		{{"-c", "--frobnicate", "k.cu", NULL}, "an option the split does not know (--frobnicate)"},
		{{"-c", "a.cu", "b.cu", NULL}, "more than one input"},
		{{"k.cu", "-o", "k.o", NULL}, "no -c (not a compile)"},
		{{"-c", "-rdc=true", "k.cu", NULL}, "relocatable device code (-rdc true)"},
		{{"-dc", "k.cu", NULL}, "-dc (relocatable device code)"},
		{{"-c", "-x", "c++", "k.cu", NULL}, "-x c++ (not cu)"},
		{{"-c", "k.cpp", NULL}, "an input that is not a .cu"},
		{{"-c", "-MD", "k.cu", NULL}, "-MD without -MF"},
		{{"-c", "k.cu", "-o", NULL}, "-o without its value"},
		{{"-c", "--threads", "many", "k.cu", NULL}, "--threads many (not a count)"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		why[0] = 0;
		CHECK(ok(refused[i].w, why, &t, &plan, &dep) == 0);
		CHECK_STR(why, refused[i].why);
		CHECK(!plan && !dep);
	}
}

/* A cicc-like step in dir: -o DIR/tmpxft_a-2_k.ptx --stub_file_name DIR/tmpxft_a-3_k.stub.c
 * --include_file_name tmpxft_a-4_k.fatbin.c, with run's stem. */
static void
make_step(struct fb_step *s, bool *temp, const char *dir, const char *stem)
{
	static char w[4][512];
	snprintf(w[0], sizeof(w[0]), "%s/%s-2_k.ptx", dir, stem);
	snprintf(w[1], sizeof(w[1]), "%s/%s-3_k.stub.c", dir, stem);
	snprintf(w[2], sizeof(w[2]), "%s-4_k.fatbin.c", stem);
	static char *argv[8];
	char *v[] = {"cicc", "-o", w[0], "--stub_file_name", w[1], "--include_file_name", w[2], NULL};
	memcpy(argv, v, sizeof(v));
	memset(s, 0, sizeof(*s));
	s->argv = argv;
	s->argc = 7;
	s->kind = FB_STEP_CICC;
	for (int i = 0; i < 7; i++)
		temp[i] = i == 2 || i == 4 || i == 6;
}

static void
test_blob(void)
{
	char d1[] = "/tmp/launch_test.XXXXXX", d2[] = "/tmp/launch_test.XXXXXX";
	CHECK(mkdtemp(d1) && mkdtemp(d2));
	struct fb_plan p = {0};
	snprintf(p.tmpdir, sizeof(p.tmpdir), "%s", d1);
	struct fb_step s;
	bool temp[8], before[8] = {0};
	struct fb_step_seen seen = {.temp = temp, .before = before};
	make_step(&s, temp, d1, "tmpxft_0000aaaa_00000000");
	char stub[1024];
	snprintf(stub, sizeof(stub), "#include \"%s\"\n# 1 \"%s\"\nint x;\n", s.argv[6], s.argv[4]);
	CHECK(fb_write_file_atomic(s.argv[4], stub, strlen(stub), 0600, NULL) == 0);
	CHECK(fb_write_file_atomic(s.argv[2], ".version 9.0\n", 13, 0600, NULL) == 0);
	unsigned char *blob = NULL;
	size_t n = 0;
	CHECK(fb_step_pack(&p, &s, &seen, false, &blob, &n) == 0);
	CHECK(blob && !memmem(blob, n, d1, strlen(d1)) && !memmem(blob, n, "tmpxft_", 7));

	/* another run: other dir, other stem; the files come back with its names */
	struct fb_step s2;
	make_step(&s2, temp, d2, "tmpxft_0000bbbb_00000000");
	CHECK(fb_step_unpack(&s2, &seen, blob, n, false, NULL) == 0);
	CHECK(fb_step_unpack(&s2, &seen, blob, n, true, NULL) == 0);
	char *got = NULL, want[1024];
	size_t gn;
	snprintf(want, sizeof(want), "#include \"%s\"\n# 1 \"%s\"\nint x;\n", s2.argv[6], s2.argv[4]);
	CHECK(fb_read_file(s2.argv[4], &got, &gn, NULL) == 0);
	CHECK_STR(got, want);
	free(got);
	CHECK(fb_read_file(s2.argv[2], &got, &gn, NULL) == 0);
	CHECK_STR(got, ".version 9.0\n");
	free(got);

	/* damaged or foreign: cut short, a reference to a word that is no temporary, an input */
	struct fb_error e = {0};
	CHECK(fb_step_unpack(&s2, &seen, blob, n - 2, false, &e) == FB_EFORMAT);
	CHECK(fb_step_unpack(&s2, &seen, (const unsigned char *)"junk", 4, false, &e) == FB_EFORMAT);
	unsigned char *bad = malloc(n);
	memcpy(bad, blob, n);
	char *ref = memmem(bad, n, " 6\n", 3); /* the #include's reference to word 6 */
	CHECK(ref != NULL);
	if (ref) {
		ref[1] = '5'; /* word 5 is --include_file_name, not a temporary */
		CHECK(fb_step_unpack(&s2, &seen, bad, n, false, &e) == FB_EFORMAT);
	}
	free(bad);
	before[2] = true; /* the PTX an input of the step: not one of its files */
	CHECK(fb_step_unpack(&s2, &seen, blob, n, false, &e) == FB_EFORMAT);
	before[2] = false;
	free(blob);

	/* a file that names the temp dir other than as a word is not kept */
	char leak[1024];
	make_step(&s, temp, d1, "tmpxft_0000aaaa_00000000");
	snprintf(leak, sizeof(leak), "see %s/elsewhere\n", d1);
	CHECK(fb_write_file_atomic(s.argv[4], leak, strlen(leak), 0600, NULL) == 0);
	blob = NULL;
	CHECK(fb_step_pack(&p, &s, &seen, false, &blob, &n) == -1 && !blob);
	fb_dir_remove(d1, 1);
	fb_dir_remove(d2, 1);
}

/* The project's root: FATBUILD_CACHE_BASEDIR, .git, setup.py, the top of CMakeLists.txt's. */
static void
test_root(void)
{
	char d[] = "/tmp/launch_test.XXXXXX", path[1024], root[1024];
	CHECK(mkdtemp(d) != NULL);
	const char *dirs[] = {"g/.git", "g/third/inc", "g/sub/csrc", "py/pkg/csrc", "cm/src/cuda", "none/x"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", d, dirs[i]);
		for (char *c = path + strlen(d) + 1; (c = strchr(c, '/')); *c++ = '/') {
			*c = 0;
			mkdir(path, 0700);
		}
		CHECK(mkdir(path, 0700) == 0);
	}
	const char *files[] = {"g/sub/setup.py", "py/setup.py", "py/pkg/csrc/CMakeLists.txt", "cm/CMakeLists.txt", "cm/src/CMakeLists.txt",
	                       "cm/src/cuda/CMakeLists.txt"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", d, files[i]);
		CHECK(fb_write_file_atomic(path, "", 0, 0600, NULL) == 0);
	}
	struct {
		const char *src, *root;
	} want[] = {
		{"g/third/inc/k.cu", "g"},     /* the git top above a header-only dependency */
		{"g/sub/csrc/k.cu", "g/sub"},  /* a project inside another's tree is its own */
		{"py/pkg/csrc/k.cu", "py"},    /* setup.py's dir, over a CMakeLists.txt below it */
		{"cm/src/cuda/k.cu", "cm"},    /* the top of the CMakeLists.txt chain */
		{"none/x/k.cu", "none/x"},     /* the source's own dir */
	};
	struct fb_config cfg = {0};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char w[1024];
		snprintf(path, sizeof(path), "%s/%s", d, want[i].src);
		snprintf(w, sizeof(w), "%s/%s", d, want[i].root);
		CHECK(fb_project_root(&cfg, path, root, sizeof(root)) == 0);
		CHECK_STR(root, w);
	}
	snprintf(root, sizeof(root), "%s/g/third/", d); /* the variable wins, its trailing '/' gone */
	cfg.cache_basedir = root;
	snprintf(path, sizeof(path), "%s/g/third/inc/k.cu", d);
	char got[1024], w[1024];
	CHECK(fb_project_root(&cfg, path, got, sizeof(got)) == 0);
	snprintf(w, sizeof(w), "%s/g/third", d);
	CHECK_STR(got, w);
	snprintf(path, sizeof(path), "%s/py/pkg/csrc/k.cu", d); /* not below it: the variable is no root */
	CHECK(fb_project_root(&cfg, path, got, sizeof(got)) == 0);
	snprintf(w, sizeof(w), "%s/py", d);
	CHECK_STR(got, w);
	CHECK(fb_project_root(&cfg, "k.cu", got, sizeof(got)) == -1);
	CHECK(fb_project_root(&cfg, "/k.cu", got, sizeof(got)) == -1);
	fb_dir_remove(d, 1);

	const char *ok = "# 1 \"/r/p/k.cu\"\n#line 7 \"/r/p/inc/h.cuh\"\n# 2 \"/r/project/x.h\"\nint x;\n";
	CHECK(fb_root_in_markers_only(ok, strlen(ok), "/r/p"));
	const char *lit = "# 1 \"/r/p/k.cu\"\nconst char *f = \"/r/p/k.cu\";\n";
	CHECK(!fb_root_in_markers_only(lit, strlen(lit), "/r/p"));
	const char *mid = "# 1 \"/mnt/r/p/k.cu\"\n";
	CHECK(!fb_root_in_markers_only(mid, strlen(mid), "/r/p"));
	const char *ptx = ".file 1 \"/r/p/k.cu\"\n";
	CHECK(!fb_root_in_markers_only(ptx, strlen(ptx), "/r/p"));
	char *sp = NULL;
	size_t spn = 0;
	CHECK(fb_root_spell(ok, strlen(ok), "/r/p", &sp, &spn) == 0);
	CHECK_STR(sp, "# 1 \"@P/k.cu\"\n#line 7 \"@P/inc/h.cuh\"\n# 2 \"/r/project/x.h\"\nint x;\n");
	CHECK(spn == strlen(sp));
	free(sp);
}

/* A based entry: the root in the stub's line marker comes back as another checkout's root;
 * a root outside a marker, or the module id's hash, keeps a step off the based key. */
static void
test_based(void)
{
	char d1[] = "/tmp/launch_test.XXXXXX", d2[] = "/tmp/launch_test.XXXXXX";
	CHECK(mkdtemp(d1) && mkdtemp(d2));
	struct fb_plan p = {0};
	snprintf(p.tmpdir, sizeof(p.tmpdir), "%s", d1);
	struct fb_step s, s2;
	bool temp[8], before[8] = {0};
	struct fb_step_seen seen = {.temp = temp, .before = before, .based = true, .root = "/home/a/proj"};
	make_step(&s, temp, d1, "tmpxft_0000aaaa_00000000");
	const char *stub = "# 1 \"/home/a/proj/k.cu\"\nint x;\n";
	CHECK(fb_write_file_atomic(s.argv[4], stub, strlen(stub), 0600, NULL) == 0);
	CHECK(fb_write_file_atomic(s.argv[2], ".entry _Z1kPi\n", 14, 0600, NULL) == 0);
	unsigned char *blob = NULL;
	size_t n = 0;
	CHECK(fb_step_pack(&p, &s, &seen, true, &blob, &n) == 0);
	CHECK(blob && !memmem(blob, n, "/home/a", 7));
	make_step(&s2, temp, d2, "tmpxft_0000bbbb_00000000");
	struct fb_step_seen other = {.temp = temp, .before = before, .based = true, .root = "/srv/b/checkout"};
	CHECK(fb_step_unpack(&s2, &other, blob, n, true, NULL) == 0);
	char *got = NULL;
	size_t gn;
	CHECK(fb_read_file(s2.argv[4], &got, &gn, NULL) == 0);
	CHECK_STR(got, "# 1 \"/srv/b/checkout/k.cu\"\nint x;\n");
	free(got);
	struct fb_error e = {0};
	other.based = false; /* a reference to the root needs a based lookup */
	CHECK(fb_step_unpack(&s2, &other, blob, n, false, &e) == FB_EFORMAT);
	free(blob);

	/* the module id in the PTX (an anonymous namespace's names): a reference, written back as
	 * the other checkout's; its path hash outside it: exact only */
	seen.modid = "_b496dc99_4_k_cu__Z1kPi";
	const char *ptx = ".global .u32 _ZN45_GLOBAL__N__b496dc99_4_k_cu__Z1kPi3hidE;\n";
	CHECK(fb_write_file_atomic(s.argv[2], ptx, strlen(ptx), 0600, NULL) == 0);
	blob = NULL;
	CHECK(fb_step_pack(&p, &s, &seen, true, &blob, &n) == 0 && blob && !memmem(blob, n, "b496dc99", 8));
	other.based = true;
	other.modid = "_0123abcd_4_k_cu__Z1kPi";
	CHECK(fb_step_unpack(&s2, &other, blob, n, true, NULL) == 0);
	CHECK(fb_read_file(s2.argv[2], &got, &gn, NULL) == 0);
	CHECK_STR(got, ".global .u32 _ZN45_GLOBAL__N__0123abcd_4_k_cu__Z1kPi3hidE;\n");
	free(got);
	other.modid = NULL; /* a reference to the module id needs one */
	CHECK(fb_step_unpack(&s2, &other, blob, n, false, &e) == FB_EFORMAT);
	free(blob);
	const char *bare = ".global .u32 h_b496dc99;\n";
	CHECK(fb_write_file_atomic(s.argv[2], bare, strlen(bare), 0600, NULL) == 0);
	blob = NULL;
	CHECK(fb_step_pack(&p, &s, &seen, true, &blob, &n) == -1 && !blob);
	CHECK(fb_step_pack(&p, &s, &seen, false, &blob, &n) == 0 && blob);
	free(blob);
	seen.modid = NULL;
	/* the root in a string (__FILE__): exact only */
	const char *file = "# 1 \"/home/a/proj/k.cu\"\nstatic const char f[] = \"/home/a/proj/k.cu\";\n";
	CHECK(fb_write_file_atomic(s.argv[4], file, strlen(file), 0600, NULL) == 0);
	blob = NULL;
	CHECK(fb_step_pack(&p, &s, &seen, true, &blob, &n) == -1 && !blob);

	/* the marker: passes the check, writes nothing */
	const unsigned char *m = (const unsigned char *)FB_STEP_EXACT;
	CHECK(fb_step_is_exact(m, strlen(FB_STEP_EXACT)));
	CHECK(fb_step_unpack(&s2, &other, m, strlen(FB_STEP_EXACT), false, &e) == 0);
	CHECK(fb_step_unpack(&s2, &other, m, strlen(FB_STEP_EXACT), true, &e) == FB_EFORMAT);
	fb_dir_remove(d1, 1);
	fb_dir_remove(d2, 1);
}

/* fb_words_shell's words of s joined by '|' (NULL: refused, the status in *rc). */
static const char *
shell(const char *s, const struct fb_strlist *vars, bool strict, int *rc)
{
	static char buf[512];
	struct fb_strlist l = {0};
	*rc = fb_words_shell(s, vars, strict, &l, NULL);
	buf[0] = 0;
	for (size_t i = 0; i < l.n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? "|" : "", l.v[i]);
	fb_strlist_free(&l);
	return *rc ? NULL : buf;
}

static void
test_shell(void)
{
	struct fb_strlist vars = {0};
	fb_strlist_add(&vars, "A=x y");
	fb_strlist_add(&vars, "B=1");
	fb_strlist_add(&vars, "B=z"); /* the last one counts */
	int rc;
	CHECK(fb_words_name("AB_9=x") == 4 && fb_words_name("=x") == 0);
	CHECK_STR(fb_words_var(&vars, "B", 1), "z");
	CHECK(fb_words_var(&vars, "C", 1) == NULL && fb_words_var(&vars, "A", 0) == NULL);

	/* a line of nvcc's plan: "..." and $ from vars, any byte but the shell's syntax plain */
	CHECK_STR(shell("cc  -DX=\"a b\" '$A' $A ${B}c \"q\\\"$B\"\t~#!", &vars, false, &rc),
	          "cc|-DX=a b|$A|x y|zc|q\"z|~#!");
	CHECK_STR(shell("a\\ b a\"b\"'c' '' \"\"", &vars, false, &rc), "a b|abc||");
	CHECK_STR(shell("  ", &vars, false, &rc), "");
	const char *refused[] = {"x | y", "x>y", "a;b", "*.cu", "$C", "${B", "${B x}", "\"open", "'open",
	                         "\"a`b\"", "a\\", "(x)"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		CHECK(shell(refused[i], &vars, false, &rc) == NULL && rc == 1);
		if (rc != 1)
			fprintf(stderr, "  plan line taken: %s\n", refused[i]);
	}

	/* an edge's command as fb_shell_quote writes it: plain words, '...' and \x, nothing else */
	CHECK_STR(shell("cc -c 'a b' x\\;y -I/p/q,r:s@t%u+v=w ''", NULL, true, &rc), "cc|-c|a b|x;y|-I/p/q,r:s@t%u+v=w|");
	const char *strict[] = {"$A", "\"x\"", "~", "a#b", "a;b", "'open", "a\\", "a!b"};
	for (size_t i = 0; i < sizeof(strict) / sizeof(strict[0]); i++) {
		CHECK(shell(strict[i], NULL, true, &rc) == NULL && rc == 1);
		if (rc != 1)
			fprintf(stderr, "  edge command taken: %s\n", strict[i]);
	}
	/* without vars, loose: " and $ are refused, other bytes plain */
	CHECK(shell("$A", NULL, false, &rc) == NULL && rc == 1);
	CHECK(shell("\"x\"", NULL, false, &rc) == NULL && rc == 1);
	CHECK_STR(shell("~ a#b", NULL, false, &rc), "~|a#b");
	fb_strlist_free(&vars);
}

int
main(void)
{
	test_words();
	test_shell();
	test_blob();
	test_root();
	test_based();
	return check_done();
}
