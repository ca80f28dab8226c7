/* exec.c: one command run on a REAPI executor (docs/remote-cache.md §9), for the NVRTC jobs of
 * fb_compile (compile/offload.c) and the host and nvcc edges of a build (extension/edge_remote.c):
 * the plain description of rexec.h turned into action.c's spec,
 * uploaded, executed within the timeout and its outputs fetched and verified; every way the
 * executor can fail the command (unreachable, refused, QUEUED past the timeout, a server error
 * running it, an output missing) is FB_EIO with one line saying what happened, for the caller to
 * fall back on, and only the command's own exit code and stderr count as its answer. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "rexec.h"
#include "base/error.h"
#include "cache/pb.h"
#include "cache/remote.h"
#include "plumbing.h"

enum {
	EXEC_TIMEOUT_MS = 600000,  /* an Execute's default: a cold CUB compile queued behind others */
	TRANSFER_TIMEOUT_MS = 60000 /* each upload or fetch call: the NVRTC library is 110 MB */
};

struct fb_exec {
	struct fb_reapi *g;
	long timeout_ms;
	struct fb_rexec_pair *props;
	int nprops;
	char *propbuf;
};

static const struct fb_rexec_pair base_props[] = {{"ISA", "x86-64"}, {"OSFamily", "linux"}};
#define NBASE ((int)(sizeof(base_props) / sizeof(base_props[0])))

/* The platform: the base properties and o's "K=V" (a K of the base replaces its value). */
static int
set_props(struct fb_exec *x, const struct fb_exec_opts *o, struct fb_error *err)
{
	size_t len = 0;
	for (size_t i = 0; i < o->nprops; i++)
		len += strlen(o->props[i]) + 1;
	x->props = calloc((size_t)NBASE + o->nprops, sizeof(*x->props));
	x->propbuf = malloc(len + 1);
	if (!x->props || !x->propbuf)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memcpy(x->props, base_props, sizeof(base_props));
	x->nprops = NBASE;
	char *w = x->propbuf;
	for (size_t i = 0; i < o->nprops; i++) {
		const char *eq = strchr(o->props[i], '=');
		if (!eq || eq == o->props[i])
			return fb_seterr(err, FB_EINVAL, "remote-exec property '%s' is not KEY=VALUE", o->props[i]);
		memcpy(w, o->props[i], strlen(o->props[i]) + 1);
		w[eq - o->props[i]] = 0;
		int k = 0;
		while (k < x->nprops && strcmp(x->props[k].name, w) != 0)
			k++;
		x->props[k] = (struct fb_rexec_pair){w, w + (eq - o->props[i]) + 1};
		x->nprops += k == x->nprops;
		w += strlen(o->props[i]) + 1;
	}
	return 0;
}

int
fb_exec_open(const struct fb_exec_opts *o, struct fb_exec **out, struct fb_error *err)
{
	*out = NULL;
	if (!o->url || !fb_reapi_url(o->url))
		return fb_seterr(err, FB_EINVAL, "remote-exec %.300s: not a grpc:// or grpcs:// URL", o->url ? o->url : "");
	struct fb_exec *x = calloc(1, sizeof(*x));
	if (!x)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	x->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : EXEC_TIMEOUT_MS;
	struct fb_remote_open_opts ro = {.url = o->url, .header = o->header, .writable = 1, .timeout_ms = TRANSFER_TIMEOUT_MS,
	                            .stop = o->stop, .shared = o->shared};
	int rc = set_props(x, o, err);
	if (!rc)
		rc = fb_reapi_open(&ro, &x->g, err);
	if (rc) {
		fb_exec_close(x);
		return rc;
	}
	*out = x;
	return 0;
}

void
fb_exec_close(struct fb_exec *x)
{
	if (!x)
		return;
	fb_reapi_close(x->g);
	free(x->props);
	free(x->propbuf);
	free(x);
}

void
fb_exec_close_nowait(struct fb_exec *x)
{
	if (!x)
		return;
	fb_reapi_close_nowait(x->g);
	x->g = NULL;
	fb_exec_close(x);
}

void
fb_exec_idle(struct fb_exec *x)
{
	if (x)
		fb_reapi_idle(x->g);
}

/* STATE-exec, or STATE-exec-tally (tally), into buf; 0, or -1 without a state file or when the
 * name does not fit. */
static int
state_path(const char *state, char *buf, size_t size, bool tally)
{
	return state && *state && snprintf(buf, size, "%s-exec%s", state, tally ? "-tally" : "") < (int)size ? 0 : -1;
}

int
fb_exec_state_seen(const char *state, char *why, size_t size)
{
	char p[4200];
	return state_path(state, p, sizeof(p), false) == 0 && fb_remote_state_read(p, why, size);
}

int
fb_exec_state_claim(const char *state, const char *why)
{
	char p[4200];
	return fb_remote_state_claim(state_path(state, p, sizeof(p), false) == 0 ? p : NULL, why);
}

void
fb_exec_tally_add(const char *state, int kind, size_t ran, size_t cached, size_t total)
{
	char p[4200], line[96];
	if (state_path(state, p, sizeof(p), true))
		return;
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* one write of a short line: O_APPEND keeps the processes' lines whole */
	int n = snprintf(line, sizeof(line), "%d %zu %zu %zu\n", kind ? 1 : 0, ran, cached, total);
	if (write(fd, line, (size_t)n) != n) {
		/* a tally that cannot be written only leaves the build's summary short */
	}
	close(fd);
}

int
fb_exec_tally_take(const char *state, struct fb_exec_tally t[2])
{
	char p[4200];
	memset(t, 0, 2 * sizeof(*t));
	if (state_path(state, p, sizeof(p), true))
		return 0;
	FILE *f = fopen(p, "re");
	if (!f)
		return 0;
	int kind;
	size_t ran, cached, total;
	while (fscanf(f, "%d %zu %zu %zu", &kind, &ran, &cached, &total) == 4 && (kind == 0 || kind == 1)) {
		t[kind].ran += ran;
		t[kind].cached += cached;
		t[kind].total += total;
	}
	fclose(f);
	unlink(p);
	return 1;
}

/* Blobs per FindMissingBlobs: its answer names each missing one (about 80 bytes) and reapi.c
 * takes answers of at most 64 KiB. */
#define UPLOAD_CHUNK 400

int
fb_exec_upload(struct fb_exec *x, const struct fb_exec_input *in, int n, struct fb_error *err)
{
	if (n > UPLOAD_CHUNK) {
		int rc = 0;
		for (int i = 0; !rc && i < n; i += UPLOAD_CHUNK)
			rc = fb_exec_upload(x, in + i, n - i < UPLOAD_CHUNK ? n - i : UPLOAD_CHUNK, err);
		return rc;
	}
	struct fb_reapi_blob *b = calloc((size_t)n + 1, sizeof(*b));
	if (!b)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		if (in[i].hex[0])
			memcpy(b[i].hex, in[i].hex, 65);
		else
			fb_sha256_buf_hex(in[i].data, in[i].size, b[i].hex);
		b[i].size = in[i].size;
		b[i].put = in[i].data;
	}
	uint64_t sent = 0;
	int rc = fb_reapi_write_blobs(x->g, b, n, &sent, err);
	free(b);
	return rc;
}

void
fb_exec_out_clear(struct fb_exec_out *o)
{
	for (int i = 0; i < FB_EXEC_MAX_OUTPUTS; i++)
		free(o->data[i]);
	free(o->err);
	memset(o, 0, sizeof(*o));
}

/* The result's files into out, in c's order (taken: moved, not copied). */
static int
take_outputs(const struct fb_exec_cmd *c, struct fb_rexec_result *r, struct fb_exec_out *out, struct fb_error *err)
{
	for (int i = 0; i < r->nfiles; i++)
		for (int k = 0; k < c->noutputs; k++)
			if (strcmp(r->files[i].path, c->outputs[k]) == 0 && !out->data[k]) {
				out->data[k] = r->files[i].data ? r->files[i].data : malloc(1);
				out->size[k] = r->files[i].size;
				r->files[i].data = NULL;
				if (!out->data[k])
					return fb_seterr(err, FB_ENOMEM, "out of memory");
			}
	out->err = malloc(r->err.size + 1);
	if (!out->err)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	if (r->err.size)
		memcpy(out->err, r->err.data, r->err.size);
	out->err[r->err.size] = 0;
	out->exit_code = r->exit_code;
	out->cached = r->cached;
	return 0;
}

/* The spec of c with the executor's platform. */
static int
make_action(struct fb_exec *x, const struct fb_exec_cmd *c, struct fb_rexec_action **a, struct fb_error *err)
{
	struct fb_rexec_pair *env = calloc((size_t)c->nenv + 1, sizeof(*env));
	char *ebuf = NULL;
	size_t elen = 0;
	for (int i = 0; i < c->nenv; i++)
		elen += strlen(c->env[i]) + 1;
	int rc = env && (ebuf = malloc(elen + 1)) ? 0 : fb_seterr(err, FB_ENOMEM, "out of memory");
	char *w = ebuf;
	for (int i = 0; !rc && i < c->nenv; i++) {
		const char *eq = strchr(c->env[i], '=');
		if (!eq)
			rc = fb_seterr(err, FB_EINVAL, "remote-exec: environment entry '%s' has no '='", c->env[i]);
		else {
			memcpy(w, c->env[i], strlen(c->env[i]) + 1);
			w[eq - c->env[i]] = 0;
			env[i] = (struct fb_rexec_pair){w, w + (eq - c->env[i]) + 1};
			w += strlen(c->env[i]) + 1;
		}
	}
	struct fb_rexec_spec s = {c->argv, c->argc, env, c->nenv, c->outputs, c->noutputs, x->props, x->nprops,
	                          c->inputs, c->ninputs, 0};
	if (!rc)
		rc = fb_rexec_action_new(&s, a, err);
	free(env);
	free(ebuf);
	return rc;
}

int
fb_exec_run(struct fb_exec *x, const struct fb_exec_cmd *c, struct fb_exec_out *out, struct fb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (c->noutputs > FB_EXEC_MAX_OUTPUTS)
		return fb_seterr(err, FB_EINVAL, "remote-exec: more than %d outputs", FB_EXEC_MAX_OUTPUTS);
	struct fb_rexec_action *a = NULL;
	struct fb_rexec_result r = {0};
	uint64_t sent = 0;
	int rc = make_action(x, c, &a, err);
	if (!rc)
		rc = fb_rexec_upload(x->g, a, &sent, err);
	if (!rc)
		rc = fb_rexec_execute(x->g, a, 0, x->timeout_ms, &r, err);
	if (!rc && r.status)
		rc = fb_seterr(err, FB_EIO, "Execute: %s: %.300s", fb_reapi_code_name(r.status), r.message);
	if (!rc)
		rc = fb_rexec_fetch(x->g, &r, err);
	if (rc == FB_EFORMAT)
		rc = FB_EIO; /* a damaged answer is the executor's failure too */
	if (!rc)
		rc = take_outputs(c, &r, out, err);
	if (rc)
		fb_exec_out_clear(out);
	fb_rexec_result_clear(&r);
	fb_rexec_action_free(a);
	return rc;
}

/* ServerCapabilities.execution_capabilities (2): exec_enabled (2) and the node properties a
 * worker may be asked for (supported_node_properties, 4). */
static int
describe_exec(struct fb_pb b, char *buf, size_t size, struct fb_error *err)
{
	static const struct fb_pb_want top[] = {{2, FB_PB_LEN, "execution_capabilities"}};
	static const struct fb_pb_want ex[] = {{2, FB_PB_VARINT, "exec_enabled"}, {4, FB_PB_LEN, "supported_node_properties"}};
	struct fb_pb sub, s2;
	uint64_t v = 0;
	int k = fb_pb_next(&b, "ServerCapabilities", top, 1, &sub, &v, err);
	if (k < 0)
		return FB_EFORMAT;
	if (k == 1) {
		snprintf(buf, size, "no execution capabilities (a cache only)");
		return 0;
	}
	int on = 0;
	size_t n = (size_t)snprintf(buf, size, "execution");
	while ((k = fb_pb_next(&sub, "ExecutionCapabilities", ex, 2, &s2, &v, err)) >= 0 && k < 2) {
		if (k == 0)
			on = v != 0;
		else if (n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%.*s", strstr(buf, "properties") ? "," : ", properties ",
			                      (int)(s2.end - s2.p), (const char *)s2.p);
	}
	if (k < 0)
		return FB_EFORMAT;
	if (!on)
		snprintf(buf, size, "execution off (exec_enabled false)");
	return 0;
}

struct acc {
	unsigned char *p;
	size_t n;
};

static int
on_caps(void *ctx, const unsigned char *p, size_t n, struct fb_error *err)
{
	struct acc *a = ctx;
	free(a->p);
	if (!(a->p = malloc(n + 1)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	memcpy(a->p, p, n);
	a->n = n;
	return 0;
}

int
fb_exec_capabilities(struct fb_exec *x, char *buf, size_t size, struct fb_error *err)
{
	struct fb_pb_out req = {0};
	const char *inst = fb_reapi_instance(x->g);
	if (*inst)
		fb_pb_out_bytes(&req, 1, inst, strlen(inst));
	if (req.oom)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	struct acc a = {0};
	char why[300] = "";
	int st = fb_reapi_call(x->g, "/build.bazel.remote.execution.v2.Capabilities/GetCapabilities", req.p, req.n,
	                       x->timeout_ms, on_caps, &a, why, sizeof(why), err);
	free(req.p);
	int rc = 0;
	if (st < 0)
		rc = FB_EIO;
	else if (st != FB_RPC_OK)
		rc = fb_seterr(err, FB_EIO, "GetCapabilities: %s: %.200s", fb_reapi_code_name(st), why);
	else {
		struct fb_pb b = {a.p, a.p + a.n};
		rc = describe_exec(b, buf, size, err);
	}
	free(a.p);
	return rc;
}

int
fb_exec_probe(const char *url, const char *header, long timeout_ms, char *buf, size_t size, struct fb_error *err)
{
	struct fb_exec_opts o = {url, header, timeout_ms, NULL, 0, NULL, 0};
	struct fb_exec *x = NULL;
	int rc = fb_exec_open(&o, &x, err);
	if (!rc)
		rc = fb_exec_capabilities(x, buf, size, err);
	fb_exec_close(x);
	return rc;
}
