/* rexec_test.c: remote execution's protocol layer (fatbuild/rexec/action.c, docs/remote-cache.md
 * §9). Without arguments: the unit checks (paths, refusals, digests independent of the spec's
 * order, the Operation decoder on messages written here). Two modes serve
 * tests/remote_exec_client.sh:
 *   rexec_test encode DIR            writes a fixed spec's messages (DIR/command, DIR/action,
 *                                    DIR/dir.N) and DIR/spec.json for tests/remote/check_rexec.py
 *   rexec_test run URL ROOT OUT MS [--prop K=V] [--env K=V] [--output P] [--skip-cache] -- ARGV
 *                                    every file under ROOT as the input root; Execute within MS ms;
 *                                    the outputs under OUT; prints "exit N", "cached N", "stage N",
 *                                    "status N", "stdout: ...", "stderr: ..."; exit 0, or 3 with
 *                                    the error on stderr when the farm failed */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "check.h"
#include "cache/pb.h"
#include "rexec/action.h"
#include "fatbuild.h"

static const char *const argv1[] = {"nvcc", "-cubin", "-arch=sm_90", "-o", "out/k.cubin", "k/axpy.cu"};
static const struct fb_rexec_pair env1[] = {{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}, {"EMPTY", ""}, {"A", "1"}};
static const struct fb_rexec_pair props1[] = {{"OSFamily", "linux"}, {"ISA", "x86-64"}, {"fbtest", "b"}, {"fbtest", "a"}};
static const char *const outs1[] = {"out/k.cubin", "out/k.log"};
static const unsigned char src[] = "extern \"C\" __global__ void k() {}\n";

/* A spec with a tree that needs its directories sorted by name, not by path ("a.b" and "a"),
 * an executable, an empty file and an empty directory name's neighbour. */
static void
spec1(struct fb_rexec_spec *s, struct fb_exec_input in[6])
{
	static const char *const paths[6] = {"k/axpy.cu", "a/x.h", "a.b/y.h", "a/deep/z.h", "tool", "k/empty.h"};
	memset(in, 0, 6 * sizeof(*in));
	for (int i = 0; i < 6; i++) {
		in[i].path = paths[i];
		in[i].data = i == 5 ? NULL : src;
		in[i].size = i == 5 ? 0 : sizeof(src) - 1 - (size_t)i;
		in[i].executable = i == 4;
	}
	*s = (struct fb_rexec_spec){argv1, 6, env1, 3, outs1, 2, props1, 4, in, 6, 0};
}

static void
test_paths(void)
{
	CHECK(fb_rexec_path_ok("k/a.cu", 6));
	CHECK(fb_rexec_path_ok("a", 1));
	CHECK(fb_rexec_path_ok(".x/..y", 6));
	CHECK(!fb_rexec_path_ok("", 0));
	CHECK(!fb_rexec_path_ok("/abs", 4));
	CHECK(!fb_rexec_path_ok("a//b", 4));
	CHECK(!fb_rexec_path_ok("a/./b", 5));
	CHECK(!fb_rexec_path_ok("a/../b", 6));
	CHECK(!fb_rexec_path_ok("..", 2));
	CHECK(!fb_rexec_path_ok("a/", 2));
	CHECK(!fb_rexec_path_ok("a\0b", 3));
}

/* The same spec in another order has the same Action digest; another value changes it. */
static void
test_digest(void)
{
	struct fb_rexec_spec s;
	struct fb_exec_input in[6], rev[6];
	struct fb_rexec_action *a = NULL, *b = NULL;
	struct fb_error e = {0};
	char h1[65], h2[65];
	uint64_t n1, n2;
	spec1(&s, in);
	CHECK(fb_rexec_action_new(&s, &a, &e) == 0);
	for (int i = 0; i < 6; i++)
		rev[i] = in[5 - i];
	const struct fb_rexec_pair env[] = {env1[2], env1[0], env1[1]}, props[] = {props1[3], props1[1], props1[2], props1[0]};
	const char *const outs[] = {outs1[1], outs1[0]};
	struct fb_rexec_spec t = {argv1, 6, env, 3, outs, 2, props, 4, rev, 6, 0};
	CHECK(fb_rexec_action_new(&t, &b, &e) == 0);
	if (a && b) {
		fb_rexec_action_digest(a, h1, &n1);
		fb_rexec_action_digest(b, h2, &n2);
		CHECK_STR(h1, h2);
		CHECK(n1 == n2);
	}
	fb_rexec_action_free(b);
	b = NULL;
	t.do_not_cache = 1;
	CHECK(fb_rexec_action_new(&t, &b, &e) == 0);
	if (a && b) {
		fb_rexec_action_digest(b, h2, &n2);
		CHECK(strcmp(h1, h2) != 0);
	}
	size_t n;
	CHECK(a && fb_rexec_action_blob(a, 0, &n) && fb_rexec_action_blob(a, 1, &n) && fb_rexec_action_blob(a, 2, &n));
	fb_rexec_action_free(a);
	fb_rexec_action_free(b);
}

/* Each bad spec is FB_EINVAL with a message. */
static void
test_refusals(void)
{
	struct fb_rexec_spec s;
	struct fb_exec_input in[6];
	struct fb_rexec_action *a = NULL;
	const struct fb_rexec_pair dup[] = {{"PATH", "x"}, {"PATH", "y"}}, eq[] = {{"A=B", "x"}};
	const char *const outs[] = {"/abs"}, *const twice[] = {"o", "o"};
	for (int k = 0; k < 8; k++) {
		struct fb_error e = {0};
		spec1(&s, in);
		switch (k) {
		case 0: s.argc = 0; break;
		case 1: in[1].path = "/etc/passwd"; break;
		case 2: in[1].path = "a/../x"; break;
		case 3: in[1].path = "k/axpy.cu"; break;       /* twice */
		case 4: in[1].path = "k/axpy.cu/x"; break;     /* a file and a directory */
		case 5: s.env = dup, s.nenv = 2; break;
		case 6: s.env = eq, s.nenv = 1; break;
		case 7: s.outputs = outs, s.noutputs = 1; break;
		}
		int rc = fb_rexec_action_new(&s, &a, &e);
		if (rc != FB_EINVAL || a || !e.msg[0])
			fprintf(stderr, "refusal %d: rc %d, %s\n", k, rc, e.msg);
		CHECK(rc == FB_EINVAL && !a && e.msg[0]);
		fb_rexec_action_free(a);
		a = NULL;
	}
	struct fb_error e = {0};
	spec1(&s, in);
	s.outputs = twice, s.noutputs = 2;
	CHECK(fb_rexec_action_new(&s, &a, &e) == FB_EINVAL);
}

/* An Any of type name holding m. */
static void
put_any(struct fb_pb_out *o, uint32_t f, const char *name, const struct fb_pb_out *m)
{
	struct fb_pb_out any = {0};
	char url[200];
	snprintf(url, sizeof(url), "type.googleapis.com/%s", name);
	fb_pb_out_bytes(&any, 1, url, strlen(url));
	fb_pb_out_bytes(&any, 2, m->p, m->n);
	fb_pb_out_bytes(o, f, any.p, any.n);
	free(any.p);
}

static const char hexA[] = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb";

/* An Operation: stage; when done, an ExecuteResponse whose ActionResult names outputs path1
 * (and path2 when not NULL), exit code ec, stderr "oops" raw. */
static struct fb_pb_out
operation(int stage, int done, const char *path1, const char *path2, int ec)
{
	struct fb_pb_out op = {0}, md = {0}, ar = {0}, resp = {0};
	fb_pb_out_bytes(&op, 1, "main/op-1", 9);
	fb_pb_out_varint(&md, 1, (uint64_t)stage);
	put_any(&op, 2, "build.bazel.remote.execution.v2.ExecuteOperationMetadata", &md);
	if (done) {
		fb_pb_out_varint(&op, 3, 1);
		for (int i = 0; i < 2; i++) {
			const char *p = i ? path2 : path1;
			if (!p)
				continue;
			struct fb_pb_out f = {0};
			fb_pb_out_bytes(&f, 1, p, strlen(p));
			fb_pb_out_digest(&f, 2, hexA, 1);
			fb_pb_out_bytes(&ar, 2, f.p, f.n);
			free(f.p);
		}
		fb_pb_out_varint(&ar, 4, (uint64_t)(int64_t)ec);
		fb_pb_out_bytes(&ar, 7, "oops", 4);
		fb_pb_out_bytes(&resp, 1, ar.p, ar.n);
		fb_pb_out_varint(&resp, 2, 1);
		put_any(&op, 5, "build.bazel.remote.execution.v2.ExecuteResponse", &resp);
	}
	free(md.p);
	free(ar.p);
	free(resp.p);
	return op;
}

static void
test_decode(void)
{
	struct fb_rexec_result r = {0};
	struct fb_error e = {0};
	struct fb_pb_out q = operation(2, 0, NULL, NULL, 0);
	CHECK(fb_rexec_decode_operation(q.p, q.n, &r, &e) == 0);
	CHECK(r.stage == 2 && !r.done);
	CHECK_STR(r.name, "main/op-1");
	free(q.p);
	q = operation(4, 1, "out/k.cubin", "out/k.log", -1);
	CHECK(fb_rexec_decode_operation(q.p, q.n, &r, &e) == 0);
	CHECK(r.done && r.cached && r.exit_code == -1 && r.status == 0 && r.nfiles == 2);
	CHECK(r.nfiles == 2 && !strcmp(r.files[1].path, "out/k.log") && r.files[1].size == 1 && !strcmp(r.files[1].hex, hexA));
	CHECK(r.err.data && r.err.size == 4 && !memcmp(r.err.data, "oops", 4));
	free(q.p);
	fb_rexec_result_clear(&r);
	/* refused: an absolute output path, one named twice, a truncated message, done and empty */
	const char *bad[3][2] = {{"/etc/x", NULL}, {"o", "o"}, {"a/../b", NULL}};
	for (int i = 0; i < 3; i++) {
		q = operation(4, 1, bad[i][0], bad[i][1], 0);
		e.msg[0] = 0;
		CHECK(fb_rexec_decode_operation(q.p, q.n, &r, &e) == FB_EFORMAT && e.msg[0]);
		if (i == 0)
			CHECK(fb_rexec_decode_operation(q.p, q.n - 3, &r, &e) == FB_EFORMAT);
		free(q.p);
		fb_rexec_result_clear(&r);
	}
	static const unsigned char done_only[] = {3 << 3, 1};
	CHECK(fb_rexec_decode_operation(done_only, sizeof(done_only), &r, &e) == FB_EFORMAT);
	fb_rexec_result_clear(&r);
}

/* ---- encode: the fixed spec for check_rexec.py ---- */

static int
write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;
	return (f && fclose(f) == 0 && ok) ? 0 : 1;
}

static int
encode(const char *dir)
{
	struct fb_rexec_spec s;
	struct fb_exec_input in[6];
	struct fb_rexec_action *a;
	struct fb_error e = {0};
	spec1(&s, in);
	if (fb_rexec_action_new(&s, &a, &e)) {
		fprintf(stderr, "rexec_test: %s\n", e.msg);
		return 1;
	}
	FILE *j = fopen(strcat(strcpy((char[4096]){0}, dir), "/spec.json"), "w");
	if (!j)
		return 1;
	fprintf(j, "{\"argv\": [");
	for (int i = 0; i < s.argc; i++)
		fprintf(j, "%s\"%s\"", i ? ", " : "", s.argv[i]);
	fprintf(j, "], \"env\": [");
	for (int i = 0; i < s.nenv; i++)
		fprintf(j, "%s[\"%s\", \"%s\"]", i ? ", " : "", s.env[i].name, s.env[i].value);
	fprintf(j, "], \"props\": [");
	for (int i = 0; i < s.nprops; i++)
		fprintf(j, "%s[\"%s\", \"%s\"]", i ? ", " : "", s.props[i].name, s.props[i].value);
	fprintf(j, "], \"outputs\": [\"%s\", \"%s\"], \"inputs\": [", s.outputs[0], s.outputs[1]);
	for (int i = 0; i < s.ninputs; i++)
		fprintf(j, "%s[\"%s\", %zu, %d]", i ? ", " : "", in[i].path, in[i].size, in[i].executable);
	fprintf(j, "], \"source\": \"%s\"}\n", "extern \\\"C\\\" __global__ void k() {}\\n");
	int rc = fclose(j) != 0;
	size_t n;
	const unsigned char *p;
	for (int i = 0; (p = fb_rexec_action_blob(a, i, &n)); i++) {
		char name[32];
		snprintf(name, sizeof(name), i == 0 ? "command" : i == 1 ? "action" : "dir.%d", i - 2);
		rc |= write_file(dir, name, p, n);
	}
	fb_rexec_action_free(a);
	return rc;
}

/* ---- run: one Execute against a real executor ---- */

struct tree {
	struct fb_exec_input *in;
	int n;
};

/* Every regular file under root/rel into t (paths relative to root, data malloc'd). */
static int
walk(const char *root, const char *rel, struct tree *t)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s%s%s", root, rel[0] ? "/" : "", rel);
	DIR *d = opendir(dir);
	if (!d)
		return 1;
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char r[4096], full[8192];
		struct stat st;
		snprintf(r, sizeof(r), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
		snprintf(full, sizeof(full), "%s/%s", root, r);
		if (lstat(full, &st))
			return closedir(d), 1;
		if (S_ISDIR(st.st_mode)) {
			rc = walk(root, r, t);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		struct fb_exec_input *ni = realloc(t->in, (size_t)(t->n + 1) * sizeof(*ni));
		unsigned char *data = malloc((size_t)st.st_size + 1);
		FILE *f = fopen(full, "rb");
		if (!ni || !data || !f || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
			rc = 1;
		if (f)
			fclose(f);
		if (ni)
			t->in = ni;
		if (rc) {
			free(data);
			break;
		}
		t->in[t->n] = (struct fb_exec_input){strdup(r), data, (size_t)st.st_size, (st.st_mode & 0100) != 0, ""};
		t->n++;
	}
	closedir(d);
	return rc;
}

static int
save(const char *out, const struct fb_rexec_file *f)
{
	char path[8192];
	mkdir(out, 0777);
	snprintf(path, sizeof(path), "%s/%s", out, f->path);
	for (char *s = strchr(path + strlen(out) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(path, 0777);
		*s = '/';
	}
	FILE *w = fopen(path, "wb");
	int ok = w && fwrite(f->data, 1, (size_t)f->size, w) == f->size;
	return (w && fclose(w) == 0 && ok) ? 0 : 1;
}

/* The command line of "run" into s (pointers into argv); the index of ARGV, or -1. */
static int
run_args(int argc, char **argv, struct fb_rexec_spec *s, struct fb_rexec_pair *pairs, const char **outs, int *skip)
{
	int np = 0, ne = 0, no = 0, i = 6;
	struct fb_rexec_pair *env = pairs + argc;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		char *eq = i + 1 < argc ? strchr(argv[i + 1], '=') : NULL;
		if (!strcmp(argv[i], "--skip-cache")) {
			*skip = 1;
		} else if (!strcmp(argv[i], "--output") && i + 1 < argc) {
			outs[no++] = argv[++i];
		} else if ((!strcmp(argv[i], "--prop") || !strcmp(argv[i], "--env")) && eq) {
			struct fb_rexec_pair *p = argv[i][2] == 'p' ? &pairs[np++] : &env[ne++];
			*eq = 0;
			*p = (struct fb_rexec_pair){argv[i + 1], eq + 1};
			i++;
		} else {
			return -1;
		}
	}
	if (i + 1 >= argc)
		return -1;
	*s = (struct fb_rexec_spec){(const char *const *)argv + i + 1, argc - i - 1, env, ne, outs, no, pairs, np, NULL, 0, 0};
	return i + 1;
}

static void
show(const char *what, const struct fb_rexec_file *f)
{
	printf("%s: %.*s\n", what, f->data ? (int)f->size : 0, f->data ? (const char *)f->data : "");
}

static int
run(int argc, char **argv)
{
	struct fb_rexec_spec s;
	struct fb_rexec_pair *pairs = calloc((size_t)argc * 2, sizeof(*pairs));
	const char **outs = calloc((size_t)argc, sizeof(*outs));
	int skip = 0;
	struct tree t = {NULL, 0};
	if (!pairs || !outs || run_args(argc, argv, &s, pairs, outs, &skip) < 0 || walk(argv[3], "", &t)) {
		fprintf(stderr, "usage: rexec_test run URL ROOT OUT MS [--prop K=V] [--env K=V] [--output P] -- ARGV\n");
		return 2;
	}
	s.inputs = t.in;
	s.ninputs = t.n;
	struct fb_remote_open_opts o = {.url = argv[2], .writable = 1, .timeout_ms = 10000};
	struct fb_reapi *g = NULL;
	struct fb_rexec_action *a = NULL;
	struct fb_rexec_result r = {0};
	struct fb_error e = {0};
	uint64_t sent = 0;
	int rc = fb_reapi_open(&o, &g, &e);
	if (!rc)
		rc = fb_rexec_action_new(&s, &a, &e);
	if (!rc)
		rc = fb_rexec_upload(g, a, &sent, &e);
	if (!rc)
		rc = fb_rexec_execute(g, a, skip, atol(argv[5]), &r, &e);
	printf("stage %d\nstatus %d\n", r.stage, r.status);
	if (!rc && !r.status)
		rc = fb_rexec_fetch(g, &r, &e);
	if (!rc) {
		printf("exit %d\ncached %d\nsent %llu\n", r.exit_code, r.cached, (unsigned long long)sent);
		show("stdout", &r.out);
		show("stderr", &r.err);
		for (int i = 0; i < r.nfiles && !rc; i++)
			rc = save(argv[4], &r.files[i]);
	} else {
		fprintf(stderr, "rexec_test: %s\n", e.msg);
	}
	fb_rexec_result_clear(&r);
	fb_rexec_action_free(a);
	fb_reapi_close(g);
	for (int i = 0; i < t.n; i++) {
		free((char *)t.in[i].path);
		free((unsigned char *)t.in[i].data);
	}
	free(t.in);
	free(pairs);
	free(outs);
	return rc ? 3 : 0;
}

/* ---- threads: calls on several threads of one process, as a remote round makes them
 * (compile/offload.c): each its own fb_reapi (shared), one held open (not shared) ---- */

struct call_arg {
	const char *url;
	long ms;
	const atomic_int *stop;
	double secs;
	int rc;
	char msg[300];
};

static double
mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *
one_call(void *p)
{
	struct call_arg *a = p;
	static const char *const argv[] = {"true"};
	static const unsigned char data[] = "x\n";
	struct fb_exec_input in = {"in/x", data, 2, 0, ""};
	struct fb_rexec_spec s = {argv, 1, NULL, 0, NULL, 0, NULL, 0, &in, 1, 0};
	struct fb_remote_open_opts o = {.url = a->url, .writable = 1, .timeout_ms = a->ms, .stop = a->stop, .shared = 1};
	struct fb_reapi *g = NULL;
	struct fb_rexec_action *act = NULL;
	struct fb_error e = {0};
	uint64_t sent = 0;
	double t0 = mono();
	a->rc = fb_reapi_open(&o, &g, &e);
	if (!a->rc)
		a->rc = fb_rexec_action_new(&s, &act, &e);
	if (!a->rc)
		a->rc = fb_rexec_upload(g, act, &sent, &e);
	a->secs = mono() - t0;
	snprintf(a->msg, sizeof(a->msg), "%.299s", e.msg);
	fb_rexec_action_free(act);
	fb_reapi_close(g);
	return NULL;
}

/* rexec_test threads URL N MS [STOP_MS]: N threads each upload one blob to URL (a server that
 * never answers) with a call deadline of MS; with STOP_MS the stop flag is set after that long.
 * Prints one line per thread: "thread I rc RC secs S: MESSAGE". */
static int
threads(int argc, char **argv)
{
	int n = atoi(argv[3]);
	long ms = atol(argv[4]), stop_ms = argc > 5 ? atol(argv[5]) : 0;
	if (n < 1 || n > 64 || ms < 1)
		return 2;
	atomic_int stop = 0;
	/* the holder starts gRPC with a call of its own (0.5 s: the server never answers), as the
	 * toolchain's upload does before a round, and is closed last */
	struct fb_remote_open_opts ho = {.url = argv[2], .writable = 1, .timeout_ms = 500};
	struct fb_reapi *hold = NULL;
	static const unsigned char one[] = "h";
	struct fb_reapi_blob b = {.size = 1, .put = one};
	struct fb_error e = {0};
	uint64_t sent = 0;
	fb_sha256_buf_hex(one, 1, b.hex);
	if (fb_reapi_open(&ho, &hold, &e) == 0)
		fb_reapi_write_blobs(hold, &b, 1, &sent, &e);
	struct call_arg a[64];
	pthread_t t[64];
	for (int i = 0; i < n; i++) {
		a[i] = (struct call_arg){argv[2], ms, &stop, 0, 0, ""};
		pthread_create(&t[i], NULL, one_call, &a[i]);
	}
	if (stop_ms > 0) {
		struct timespec nap = {stop_ms / 1000, (stop_ms % 1000) * 1000000L};
		nanosleep(&nap, NULL);
		atomic_store(&stop, 1);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		printf("thread %d rc %d secs %.3f: %s\n", i, a[i].rc, a[i].secs, a[i].msg);
	}
	fb_reapi_close(hold);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "encode"))
		return encode(argv[2]);
	if (argc > 6 && !strcmp(argv[1], "run"))
		return run(argc, argv);
	if (argc > 4 && !strcmp(argv[1], "threads"))
		return threads(argc, argv);
	test_paths();
	test_digest();
	test_refusals();
	test_decode();
	return check_done();
}
