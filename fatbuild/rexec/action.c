/* action.c: remote execution over REAPI v2 (docs/remote-cache.md §9), the client's protocol
 * layer on the channel of cache/reapi.c. Messages of build.bazel.remote.execution.v2
 * (bazelbuild/remote-apis, remote_execution.proto), written and read by hand as the cache's are
 * (pb.c), with the field numbers below:
 *
 *   Command        {arguments 1; environment_variables 2 {name 1; value 2}; platform 5;
 *                   output_paths 7}
 *   Platform       {properties 1 {name 1; value 2}}
 *   Directory      {files 1 {name 1; digest 2; is_executable 4}; directories 2 {name 1; digest 2}}
 *   Action         {command_digest 1; input_root_digest 2; do_not_cache 7; platform 10}
 *   ExecuteRequest {instance_name 1; skip_cache_lookup 3; action_digest 6}
 *   WaitExecutionRequest {name 1}
 *   google.longrunning.Operation {name 1; metadata 2; done 3; error 4; response 5}, Any {type_url 1;
 *                   value 2}: metadata an ExecuteOperationMetadata {stage 1}, response an
 *                   ExecuteResponse {result 1; cached_result 2; status 3; message 5}
 *   ActionResult   {output_files 2 {path 1; digest 2; is_executable 4; contents 5}; exit_code 4;
 *                   stdout_raw 5; stdout_digest 6; stderr_raw 7; stderr_digest 8}
 *
 * Equal specs must give equal Action digests (that is what the ActionCache is keyed by), so
 * everything REAPI wants sorted is sorted, and fields are written in field-number order with
 * proto3's defaults left out, as the protobuf runtime serializes them (tests/rexec_check.py
 * compares the bytes). The platform goes in both the Command and the Action: servers before
 * REAPI v2.2 read the Command's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action.h"
#include "base/error.h"
#include "cache/pb.h"

enum {
	DEPTH_MAX = 256,     /* directory levels of an input root */
	FILES_MAX = 65536,   /* output files of a result */
	PATH_MAX_ = 4096     /* an output path's bytes */
};

/* One encoded message and its digest. */
struct msg {
	unsigned char *p;
	size_t n;
	char hex[65];
};

struct fb_rexec_action {
	struct msg *m;         /* 0 Command, 1 Action, 2.. Directories, the root first */
	int nm, cap;
	struct fb_exec_input *in; /* the inputs, hex filled, sorted by path (paths borrowed) */
	int nin;
};

int
fb_rexec_path_ok(const char *p, size_t n)
{
	if (n == 0 || p[0] == '/' || p[n - 1] == '/' || memchr(p, 0, n))
		return 0;
	for (size_t i = 0; i < n;) {
		const char *s = memchr(p + i, '/', n - i);
		size_t k = s ? (size_t)(s - (p + i)) : n - i;
		if (k == 0 || (k == 1 && p[i] == '.') || (k == 2 && p[i] == '.' && p[i + 1] == '.'))
			return 0;
		i += k + 1;
	}
	return 1;
}

static void
put_str(struct fb_pb_out *o, uint32_t f, const char *s)
{
	if (s && *s) /* proto3 leaves an empty string out */
		fb_pb_out_bytes(o, f, s, strlen(s));
}

/* Takes o's bytes as the next message (its digest computed); 0 or FB_ENOMEM. */
static int
add_msg(struct fb_rexec_action *a, struct fb_pb_out *o, struct fb_error *err)
{
	if (o->oom || (a->nm == a->cap && a->cap > 1 << 20)) {
		free(o->p);
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	}
	if (a->nm == a->cap) {
		int cap = a->cap ? a->cap * 2 : 8;
		struct msg *nm = realloc(a->m, (size_t)cap * sizeof(*nm));
		if (!nm) {
			free(o->p);
			return fb_seterr(err, FB_ENOMEM, "out of memory");
		}
		a->m = nm;
		a->cap = cap;
	}
	struct msg *m = &a->m[a->nm++];
	m->p = o->p ? o->p : calloc(1, 1);
	m->n = o->n;
	fb_sha256_buf_hex(o->p, o->n, m->hex);
	o->p = NULL;
	return m->p ? 0 : fb_seterr(err, FB_ENOMEM, "out of memory");
}

static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int
cmp_pair(const void *x, const void *y)
{
	const struct fb_rexec_pair *a = *(const struct fb_rexec_pair *const *)x, *b = *(const struct fb_rexec_pair *const *)y;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->value, b->value);
}

static int
cmp_input(const void *x, const void *y)
{
	return strcmp(((const struct fb_exec_input *)x)->path, ((const struct fb_exec_input *)y)->path);
}

/* Sorted copies of the spec's lists (pointers into it), checked: env names once each and
 * without '=', properties named and once each, outputs relative and once each. */
struct sorted {
	const struct fb_rexec_pair **env, **props;
	const char **out;
};

static int
sort_spec(const struct fb_rexec_spec *s, struct sorted *o, struct fb_error *err)
{
	o->env = calloc((size_t)s->nenv + 1, sizeof(*o->env));
	o->props = calloc((size_t)s->nprops + 1, sizeof(*o->props));
	o->out = calloc((size_t)s->noutputs + 1, sizeof(*o->out));
	if (!o->env || !o->props || !o->out)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	for (int i = 0; i < s->nenv; i++)
		o->env[i] = &s->env[i];
	for (int i = 0; i < s->nprops; i++)
		o->props[i] = &s->props[i];
	for (int i = 0; i < s->noutputs; i++)
		o->out[i] = s->outputs[i];
	qsort(o->env, (size_t)s->nenv, sizeof(*o->env), cmp_pair);
	qsort(o->props, (size_t)s->nprops, sizeof(*o->props), cmp_pair);
	qsort(o->out, (size_t)s->noutputs, sizeof(*o->out), cmp_str);
	for (int i = 0; i < s->nenv; i++)
		if (!o->env[i]->name[0] || strchr(o->env[i]->name, '=') || (i && !strcmp(o->env[i]->name, o->env[i - 1]->name)))
			return fb_seterr(err, FB_EINVAL, "remote execution: environment variable '%.100s': empty, with '=' or given twice",
			                 o->env[i]->name);
	for (int i = 0; i < s->nprops; i++)
		if (!o->props[i]->name[0] || (i && !cmp_pair(&o->props[i], &o->props[i - 1])))
			return fb_seterr(err, FB_EINVAL, "remote execution: platform property '%.100s=%.100s': unnamed or given twice",
			                 o->props[i]->name, o->props[i]->value);
	for (int i = 0; i < s->noutputs; i++)
		if (!fb_rexec_path_ok(o->out[i], strlen(o->out[i])) || (i && !strcmp(o->out[i], o->out[i - 1])))
			return fb_seterr(err, FB_EINVAL, "remote execution: output '%.200s': not a relative path, or given twice",
			                 o->out[i]);
	return 0;
}

static void
put_pairs(struct fb_pb_out *o, uint32_t f, const struct fb_rexec_pair *const *p, int n)
{
	for (int i = 0; i < n; i++) {
		struct fb_pb_out one = {0};
		put_str(&one, 1, p[i]->name);
		put_str(&one, 2, p[i]->value);
		fb_pb_out_bytes(o, f, one.p, one.n);
		o->oom |= one.oom;
		free(one.p);
	}
}

/* The Platform message into o as field f, when there are properties. */
static void
put_platform(struct fb_pb_out *o, uint32_t f, const struct sorted *so, int n)
{
	if (!n)
		return;
	struct fb_pb_out plat = {0};
	put_pairs(&plat, 1, so->props, n);
	fb_pb_out_bytes(o, f, plat.p, plat.n);
	o->oom |= plat.oom;
	free(plat.p);
}

static int
encode_command(struct fb_rexec_action *a, const struct fb_rexec_spec *s, const struct sorted *so, struct fb_error *err)
{
	struct fb_pb_out o = {0};
	for (int i = 0; i < s->argc; i++)
		fb_pb_out_bytes(&o, 1, s->argv[i], strlen(s->argv[i]));
	put_pairs(&o, 2, so->env, s->nenv);
	put_platform(&o, 5, so, s->nprops);
	for (int i = 0; i < s->noutputs; i++)
		fb_pb_out_bytes(&o, 7, so->out[i], strlen(so->out[i]));
	return add_msg(a, &o, err);
}

/* A FileNode or DirectoryNode of the Directory being written. */
struct node {
	const char *name;
	size_t len;
	char hex[65];
	uint64_t size;
	int exec;
};

static int
cmp_node(const void *x, const void *y)
{
	const struct node *a = x, *b = y;
	size_t k = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, k);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

static void
put_nodes(struct fb_pb_out *o, uint32_t f, const struct node *n, int k)
{
	for (int i = 0; i < k; i++) {
		struct fb_pb_out one = {0};
		fb_pb_out_bytes(&one, 1, n[i].name, n[i].len);
		fb_pb_out_digest(&one, 2, n[i].hex, n[i].size);
		if (n[i].exec)
			fb_pb_out_varint(&one, 4, 1);
		fb_pb_out_bytes(o, f, one.p, one.n);
		o->oom |= one.oom;
		free(one.p);
	}
}

/* A name both a file and a directory of one Directory; files and dirs sorted by name. */
static const struct node *
clash(const struct node *f, int nf, const struct node *d, int nd)
{
	for (int i = 0, j = 0; i < nf && j < nd;) {
		int c = cmp_node(&f[i], &d[j]);
		if (!c)
			return &f[i];
		c < 0 ? i++ : j++;
	}
	return NULL;
}

/* The Directory of the inputs a->in[from..to) (sorted, sharing their first plen bytes): its
 * files, then each subdirectory (built first, as its digest is needed); self gets its digest. */
static int
build_dir(struct fb_rexec_action *a, int from, int to, size_t plen, int depth, struct node *self,
          struct fb_error *err)
{
	if (depth > DEPTH_MAX)
		return fb_seterr(err, FB_EINVAL, "remote execution: input '%.200s': over %d directories deep",
		                 a->in[from].path, DEPTH_MAX);
	struct node *f = calloc((size_t)(to - from) + 1, sizeof(*f)), *d = calloc((size_t)(to - from) + 1, sizeof(*d));
	int nf = 0, nd = 0, rc = f && d ? 0 : fb_seterr(err, FB_ENOMEM, "out of memory");
	for (int i = from; i < to && !rc;) {
		const char *rest = a->in[i].path + plen, *sl = strchr(rest, '/');
		if (!sl) {
			f[nf++] = (struct node){rest, strlen(rest), "", a->in[i].size, a->in[i].executable};
			memcpy(f[nf - 1].hex, a->in[i].hex, 65);
			i++;
			continue;
		}
		size_t cl = (size_t)(sl - rest);
		int j = i + 1;
		while (j < to && strncmp(a->in[j].path + plen, rest, cl + 1) == 0)
			j++;
		d[nd] = (struct node){rest, cl, "", 0, 0};
		rc = build_dir(a, i, j, plen + cl + 1, depth + 1, &d[nd++], err);
		i = j;
	}
	qsort(d, (size_t)nd, sizeof(*d), cmp_node); /* "a.b/x" sorts before "a/x", but "a" < "a.b" */
	const struct node *c = rc ? NULL : clash(f, nf, d, nd);
	if (c)
		rc = fb_seterr(err, FB_EINVAL, "remote execution: input '%.*s%.*s': both a file and a directory",
		               (int)plen, a->in[from].path, (int)c->len, c->name);
	if (!rc) {
		struct fb_pb_out o = {0};
		put_nodes(&o, 1, f, nf);
		put_nodes(&o, 2, d, nd);
		rc = add_msg(a, &o, err);
		if (!rc) {
			memcpy(self->hex, a->m[a->nm - 1].hex, 65);
			self->size = a->m[a->nm - 1].n;
		}
	}
	free(f);
	free(d);
	return rc;
}

/* The inputs copied, digests computed where not given, sorted, checked. */
static int
take_inputs(struct fb_rexec_action *a, const struct fb_rexec_spec *s, struct fb_error *err)
{
	if (!(a->in = calloc((size_t)s->ninputs + 1, sizeof(*a->in))))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	a->nin = s->ninputs;
	for (int i = 0; i < s->ninputs; i++) {
		a->in[i] = s->inputs[i];
		if (!fb_rexec_path_ok(a->in[i].path, strlen(a->in[i].path)))
			return fb_seterr(err, FB_EINVAL, "remote execution: input '%.200s': not a relative path without '.' or '..'",
			                 a->in[i].path);
		if (!a->in[i].hex[0])
			fb_sha256_buf_hex(a->in[i].data, a->in[i].size, a->in[i].hex);
		else if (!fb_pb_hex64(a->in[i].hex, strlen(a->in[i].hex)))
			return fb_seterr(err, FB_EINVAL, "remote execution: input '%.200s': its digest is not 64 lowercase hex digits",
			                 a->in[i].path);
	}
	qsort(a->in, (size_t)a->nin, sizeof(*a->in), cmp_input);
	for (int i = 1; i < a->nin; i++)
		if (!strcmp(a->in[i].path, a->in[i - 1].path))
			return fb_seterr(err, FB_EINVAL, "remote execution: input '%.200s' given twice", a->in[i].path);
	return 0;
}

static int
encode_action(struct fb_rexec_action *a, const struct fb_rexec_spec *s, const struct sorted *so, const struct node *root,
              struct fb_error *err)
{
	struct fb_pb_out o = {0};
	fb_pb_out_digest(&o, 1, a->m[0].hex, a->m[0].n);
	fb_pb_out_digest(&o, 2, root->hex, root->size);
	if (s->do_not_cache)
		fb_pb_out_varint(&o, 7, 1);
	put_platform(&o, 10, so, s->nprops);
	return add_msg(a, &o, err);
}

int
fb_rexec_action_new(const struct fb_rexec_spec *s, struct fb_rexec_action **out, struct fb_error *err)
{
	*out = NULL;
	if (s->argc < 1 || !s->argv || !s->argv[0][0])
		return fb_seterr(err, FB_EINVAL, "remote execution: no command");
	struct fb_rexec_action *a = calloc(1, sizeof(*a));
	struct sorted so = {0};
	struct node root = {"", 0, "", 0, 0};
	int rc = a ? sort_spec(s, &so, err) : fb_seterr(err, FB_ENOMEM, "out of memory");
	if (!rc)
		rc = take_inputs(a, s, err);
	if (!rc)
		rc = encode_command(a, s, &so, err);
	if (!rc)
		rc = build_dir(a, 0, a->nin, 0, 0, &root, err);
	if (!rc)
		rc = encode_action(a, s, &so, &root, err);
	free(so.env);
	free(so.props);
	free(so.out);
	if (rc) {
		fb_rexec_action_free(a);
		return rc;
	}
	/* Directories were written children first: the root is the one before the Action. Keep
	 * the order promised by fb_rexec_action_blob: Command, Action, root, the rest. */
	struct msg act = a->m[a->nm - 1], rootm = a->m[a->nm - 2];
	memmove(&a->m[3], &a->m[1], (size_t)(a->nm - 3) * sizeof(*a->m));
	a->m[1] = act;
	a->m[2] = rootm;
	*out = a;
	return 0;
}

void
fb_rexec_action_free(struct fb_rexec_action *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->nm; i++)
		free(a->m[i].p);
	free(a->m);
	free(a->in);
	free(a);
}

void
fb_rexec_action_digest(const struct fb_rexec_action *a, char hex[65], uint64_t *size)
{
	memcpy(hex, a->m[1].hex, 65);
	*size = a->m[1].n;
}

const unsigned char *
fb_rexec_action_blob(const struct fb_rexec_action *a, int i, size_t *n)
{
	if (i < 0 || i >= a->nm)
		return NULL;
	*n = a->m[i].n;
	return a->m[i].p;
}

/* ---- the answers ---- */

void
fb_rexec_result_clear(struct fb_rexec_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		free(r->files[i].data);
	}
	free(r->files);
	free(r->out.data);
	free(r->err.data);
	memset(r, 0, sizeof(*r));
}

/* google.rpc.Status {code 1; message 2} into *code and msg (truncated). */
static int
status_of(struct fb_pb b, int *code, char *msg, size_t msize, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_VARINT, "code"}, {2, FB_PB_LEN, "message"}};
	struct fb_pb s;
	uint64_t v;
	int i;
	*code = 0;
	while ((i = fb_pb_next(&b, "Status", want, 2, &s, &v, err)) != 2) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0)
			*code = (int)(int32_t)v;
		else
			snprintf(msg, msize, "%.*s", (int)(s.end - s.p < (long)msize ? s.end - s.p : (long)msize - 1),
			         (const char *)s.p);
	}
	return 0;
}

/* google.protobuf.Any {type_url 1; value 2}: 1 when its type is name (the URL's last part). */
static int
any_of(struct fb_pb b, const char *name, struct fb_pb *value, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, "type_url"}, {2, FB_PB_LEN, "value"}};
	struct fb_pb s, url = {NULL, NULL};
	uint64_t v;
	int i;
	value->p = value->end = b.p;
	while ((i = fb_pb_next(&b, "Any", want, 2, &s, &v, err)) != 2) {
		if (i < 0)
			return -1;
		*(i == 0 ? &url : value) = s;
	}
	size_t k = strlen(name), n = url.p ? (size_t)(url.end - url.p) : 0;
	return n > k && url.p[n - k - 1] == '/' && !memcmp(url.end - k, name, k);
}

/* A Digest field, its hash required. */
static int
digest_in(struct fb_pb s, const char *where, char hex[65], uint64_t *size, struct fb_error *err)
{
	int has = 0;
	*size = 0;
	if (fb_pb_digest(s, hex, size, &has, err))
		return FB_EFORMAT;
	return has ? 0 : fb_seterr(err, FB_EFORMAT, "%s: a digest without a hash", where);
}

static int
bytes_into(struct fb_rexec_file *f, struct fb_pb s, struct fb_error *err)
{
	size_t n = (size_t)(s.end - s.p);
	free(f->data);
	if (!(f->data = malloc(n ? n : 1)))
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	if (n)
		memcpy(f->data, s.p, n);
	f->size = n;
	f->hex[0] = 0; /* inline: nothing to fetch, and no digest to hold it to */
	return 0;
}

/* ActionResult.OutputFile {path 1; digest 2; is_executable 4; contents 5}, appended to r. */
static int
output_file(struct fb_pb b, struct fb_rexec_result *r, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {
		{1, FB_PB_LEN, "path"}, {2, FB_PB_LEN, "digest"}, {4, FB_PB_VARINT, "is_executable"}, {5, FB_PB_LEN, "contents"}};
	const char *msg = "ActionResult.OutputFile";
	struct fb_pb s, path = {NULL, NULL}, contents = {NULL, NULL};
	struct fb_rexec_file f = {0};
	uint64_t v;
	int i, rc;
	while ((i = fb_pb_next(&b, msg, want, 4, &s, &v, err)) != 4) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0)
			path = s;
		if (i == 1 && (rc = digest_in(s, msg, f.hex, &f.size, err)) != 0)
			return rc;
		if (i == 2)
			f.executable = v != 0;
		if (i == 3)
			contents = s;
	}
	size_t pn = path.p ? (size_t)(path.end - path.p) : 0;
	if (!f.hex[0] || pn > PATH_MAX_ || !fb_rexec_path_ok((const char *)path.p, pn))
		return fb_seterr(err, FB_EFORMAT, "%s: no digest, or a path that is not relative", msg);
	for (int k = 0; k < r->nfiles; k++)
		if (strlen(r->files[k].path) == pn && !memcmp(r->files[k].path, path.p, pn))
			return fb_seterr(err, FB_EFORMAT, "%s: '%.*s' twice", msg, (int)pn, (const char *)path.p);
	if (r->nfiles >= FILES_MAX)
		return fb_seterr(err, FB_EFORMAT, "ActionResult: over %d output files", FILES_MAX);
	struct fb_rexec_file *nf = realloc(r->files, (size_t)(r->nfiles + 1) * sizeof(*nf));
	if (!nf || !(f.path = malloc(pn + 1)))
		return (r->files = nf ? nf : r->files), fb_seterr(err, FB_ENOMEM, "out of memory");
	memcpy(f.path, path.p, pn);
	f.path[pn] = 0;
	r->files = nf;
	r->files[r->nfiles++] = f;
	if (contents.p && contents.end > contents.p) { /* kept with its digest: fetch verifies it */
		char hex[65];
		memcpy(hex, f.hex, 65);
		uint64_t size = f.size;
		if ((rc = bytes_into(&r->files[r->nfiles - 1], contents, err)) != 0)
			return rc;
		memcpy(r->files[r->nfiles - 1].hex, hex, 65);
		r->files[r->nfiles - 1].size = size;
	}
	return 0;
}

/* ActionResult: output_files, exit_code, stdout and stderr (raw or by digest). */
static int
action_result(struct fb_pb b, struct fb_rexec_result *r, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{2, FB_PB_LEN, "output_files"}, {4, FB_PB_VARINT, "exit_code"},
	                                         {5, FB_PB_LEN, "stdout_raw"},    {6, FB_PB_LEN, "stdout_digest"},
	                                         {7, FB_PB_LEN, "stderr_raw"},    {8, FB_PB_LEN, "stderr_digest"}};
	struct fb_pb s, raw[2] = {{NULL, NULL}, {NULL, NULL}};
	uint64_t v;
	int i, rc = 0;
	while (!rc && (i = fb_pb_next(&b, "ActionResult", want, 6, &s, &v, err)) != 6) {
		if (i < 0)
			return FB_EFORMAT;
		struct fb_rexec_file *std = i == 2 || i == 3 ? &r->out : &r->err;
		if (i == 0)
			rc = output_file(s, r, err);
		else if (i == 1)
			r->exit_code = (int)(int32_t)v;
		else if (i == 2 || i == 4)
			raw[i == 4] = s;
		else
			rc = digest_in(s, "ActionResult", std->hex, &std->size, err);
	}
	/* A raw stream wins over its digest (servers send one or the other). */
	for (int k = 0; k < 2 && !rc; k++)
		if (raw[k].p && raw[k].end > raw[k].p)
			rc = bytes_into(k ? &r->err : &r->out, raw[k], err);
	return rc;
}

/* ExecuteResponse {result 1; cached_result 2; status 3; message 5}. */
static int
execute_response(struct fb_pb b, struct fb_rexec_result *r, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {
		{1, FB_PB_LEN, "result"}, {2, FB_PB_VARINT, "cached_result"}, {3, FB_PB_LEN, "status"}, {5, FB_PB_LEN, "message"}};
	struct fb_pb s;
	uint64_t v;
	int i, rc = 0, results = 0;
	char text[sizeof(r->message)] = "";
	while (!rc && (i = fb_pb_next(&b, "ExecuteResponse", want, 4, &s, &v, err)) != 4) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0 && results++)
			return fb_seterr(err, FB_EFORMAT, "ExecuteResponse: two results");
		if (i == 0)
			rc = action_result(s, r, err);
		if (i == 1)
			r->cached = v != 0;
		if (i == 2)
			rc = status_of(s, &r->status, r->message, sizeof(r->message), err);
		if (i == 3)
			snprintf(text, sizeof(text), "%.*s", (int)(s.end - s.p < (long)sizeof(text) ? s.end - s.p : (long)sizeof(text) - 1),
			         (const char *)s.p);
	}
	if (!rc && !r->message[0] && text[0])
		memcpy(r->message, text, sizeof(text));
	return rc;
}

int
fb_rexec_decode_operation(const unsigned char *p, size_t n, struct fb_rexec_result *r, struct fb_error *err)
{
	static const struct fb_pb_want want[] = {{1, FB_PB_LEN, "name"}, {2, FB_PB_LEN, "metadata"}, {3, FB_PB_VARINT, "done"},
	                                         {4, FB_PB_LEN, "error"}, {5, FB_PB_LEN, "response"}};
	static const struct fb_pb_want mwant[] = {{1, FB_PB_VARINT, "stage"}};
	static const unsigned char none[1];
	struct fb_pb b = {p ? p : none, p ? p + n : none}, s, val;
	uint64_t v;
	int i, rc = 0, answers = 0;
	while (!rc && (i = fb_pb_next(&b, "Operation", want, 5, &s, &v, err)) != 5) {
		if (i < 0)
			return FB_EFORMAT;
		if (i == 0)
			snprintf(r->name, sizeof(r->name), "%.*s", (int)(s.end - s.p < 255 ? s.end - s.p : 255), (const char *)s.p);
		if (i == 1) {
			int k = any_of(s, "build.bazel.remote.execution.v2.ExecuteOperationMetadata", &val, err);
			if (k < 0)
				return FB_EFORMAT;
			int j;
			while (k && (j = fb_pb_next(&val, "ExecuteOperationMetadata", mwant, 1, &s, &v, err)) != 1) {
				if (j < 0)
					return FB_EFORMAT;
				r->stage = (int)(int32_t)v;
			}
		}
		if (i == 2)
			r->done = v != 0;
		if ((i == 3 || i == 4) && answers++)
			return fb_seterr(err, FB_EFORMAT, "Operation: two answers");
		if (i == 3 && !(rc = status_of(s, &r->status, r->message, sizeof(r->message), err)) && !r->status)
			r->status = 2; /* an error that says OK is still not a result: UNKNOWN */
		if (i == 4) {
			int k = any_of(s, "build.bazel.remote.execution.v2.ExecuteResponse", &val, err);
			if (k <= 0)
				return k < 0 ? FB_EFORMAT : fb_seterr(err, FB_EFORMAT, "Operation.response: not an ExecuteResponse");
			rc = execute_response(val, r, err);
		}
	}
	if (!rc && r->done && !answers)
		return fb_seterr(err, FB_EFORMAT, "Operation: done without a response or an error");
	return rc;
}

/* ---- the calls ---- */

/* The blob b[0..*n) has this digest already: a batch names each digest once. */
static int
seen(const struct fb_reapi_blob *b, int n, const char *hex, uint64_t size)
{
	for (int i = 0; i < n; i++)
		if (b[i].size == size && !memcmp(b[i].hex, hex, 64))
			return 1;
	return 0;
}

int
fb_rexec_upload(struct fb_reapi *g, const struct fb_rexec_action *a, uint64_t *sent, struct fb_error *err)
{
	*sent = 0;
	struct fb_reapi_blob *b = calloc((size_t)(a->nm + a->nin) + 1, sizeof(*b));
	if (!b)
		return fb_seterr(err, FB_ENOMEM, "out of memory");
	int n = 0;
	for (int i = 0; i < a->nm + a->nin; i++) {
		const char *hex = i < a->nm ? a->m[i].hex : a->in[i - a->nm].hex;
		uint64_t size = i < a->nm ? a->m[i].n : a->in[i - a->nm].size;
		if (seen(b, n, hex, size))
			continue;
		memcpy(b[n].hex, hex, 65);
		b[n].size = size;
		b[n++].put = i < a->nm ? a->m[i].p : a->in[i - a->nm].data;
	}
	int rc = fb_reapi_write_blobs(g, b, n, sent, err);
	free(b);
	return rc;
}

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
on_operation(void *ctx, const unsigned char *p, size_t n, struct fb_error *err)
{
	struct fb_rexec_result *r = ctx;
	return r->done ? 0 : fb_rexec_decode_operation(p, n, r, err); /* nothing after the end counts */
}

static const char *
stage_name(int s)
{
	static const char *const names[] = {"before any stage", "CACHE_CHECK", "QUEUED", "EXECUTING", "COMPLETED"};
	return s >= 0 && s <= 4 ? names[s] : "in an unknown stage";
}

/* The longest one Execute or WaitExecution stream is followed before it is asked again: a
 * silent stream costs at most this, not the job's whole deadline (docs/remote-cache.md §9):
 * an eighth of the job's timeout, at least 1 s and at most 60 s. */
#define EXEC_WINDOW_MS 60000

/* ms left to end, at most one window of w ms. */
static long
window(double end, long w)
{
	double left = end - now_ms();
	return left > w ? w : left > 0 ? (long)left : 1;
}

/* One Execute or WaitExecution call of at most ms, r updated by each Operation it streams. */
static int
follow(struct fb_reapi *g, const char *method, const struct fb_pb_out *req, long ms, struct fb_rexec_result *r,
       char *why, size_t wsize, struct fb_error *err)
{
	if (req->oom)
		return fb_seterr(err, FB_ENOMEM, "out of memory"), -1;
	return fb_reapi_call(g, method, req->p, req->n, ms, on_operation, r, why, wsize, err);
}

int
fb_rexec_execute(struct fb_reapi *g, const struct fb_rexec_action *a, int skip_cache, long timeout_ms,
                 struct fb_rexec_result *r, struct fb_error *err)
{
	struct fb_pb_out req = {0};
	char why[320] = "", hex[65];
	uint64_t size;
	double end = now_ms() + (double)timeout_ms;
	fb_rexec_action_digest(a, hex, &size);
	put_str(&req, 1, fb_reapi_instance(g));
	if (skip_cache)
		fb_pb_out_varint(&req, 3, 1);
	fb_pb_out_digest(&req, 6, hex, size);
	long w = timeout_ms / 8 < 1000 ? 1000 : timeout_ms / 8 > EXEC_WINDOW_MS ? EXEC_WINDOW_MS : timeout_ms / 8;
	int st = follow(g, "/build.bazel.remote.execution.v2.Execution/Execute", &req, window(end, w), r, why, sizeof(why), err);
	/* A stream may end, or fall silent, before the Operation does (a server's keepalive, a
	 * proxy; one fell silent with the action done, its ActionCache already holding the
	 * result): ask by name (WaitExecution), which joins the job. Execute again only with no
	 * name, or when the server knows the name no more: buildbox-casd runs an action sent
	 * again while it runs a second time, so a long job asked again each window would run
	 * once per window. A stream that gave no message at all is sent again with twice the
	 * window each time: a loaded BuildGrid took more than 1 s for its first. */
	bool waited = false;
	int sent = 1; /* Executes: a server that forgets each job at once is not asked forever */
	while ((st == 0 && r->name[0]) || st == 4 || (waited && (st == FB_RPC_NOT_FOUND || st == FB_RPC_UNIMPLEMENTED))) {
		if (r->done || now_ms() >= end - 1)
			break;
		bool again = !r->name[0] || st == FB_RPC_NOT_FOUND || st == FB_RPC_UNIMPLEMENTED;
		if (again && ++sent > 4)
			break;
		if (!r->name[0]) /* not one message yet: a server slow to answer (a loaded one) gets longer */
			w *= 2;
		struct fb_pb_out q = {0};
		put_str(&q, 1, r->name);
		st = follow(g, again ? "/build.bazel.remote.execution.v2.Execution/Execute"
		                     : "/build.bazel.remote.execution.v2.Execution/WaitExecution",
		            again ? &req : &q, window(end, w), r, why, sizeof(why), err);
		free(q.p);
		waited = !again;
	}
	free(req.p);
	if (st < 0)
		return err ? err->code : FB_EFORMAT;
	if (st == 0 && r->done)
		return 0;
	/* A stream that ended without the answer: at the deadline (4), or with no name to wait on (2). */
	r->status = st ? st : r->name[0] ? 4 : 2;
	snprintf(r->message, sizeof(r->message), "%s", why);
	return fb_seterr(err, FB_EIO, "Execute: %s%s%.300s (the job was %s%s)", fb_reapi_code_name(r->status),
	                 why[0] ? ": " : "", why, stage_name(r->stage),
	                 r->stage == 2 ? ": no worker took it; do the platform properties name one the farm has?" : "");
}

/* Each file of r without data into b (once per digest); *n their count. */
static int
want_blobs(struct fb_rexec_result *r, struct fb_reapi_blob *b, int *n)
{
	*n = 0;
	for (int i = -2; i < r->nfiles; i++) {
		struct fb_rexec_file *f = i == -2 ? &r->out : i == -1 ? &r->err : &r->files[i];
		if (f->data || !f->hex[0])
			continue;
		if (!f->size && !(f->data = calloc(1, 1)))
			return FB_ENOMEM;
		if (f->size && !seen(b, *n, f->hex, f->size)) {
			memcpy(b[*n].hex, f->hex, 65);
			b[(*n)++].size = f->size;
		}
	}
	return 0;
}

/* Hands each fetched blob to the files that name it, after checking it. */
static int
take_blobs(struct fb_rexec_result *r, struct fb_reapi_blob *b, int n, struct fb_error *err)
{
	for (int i = -2; i < r->nfiles; i++) {
		struct fb_rexec_file *f = i == -2 ? &r->out : i == -1 ? &r->err : &r->files[i];
		const char *what = i == -2 ? "stdout" : i == -1 ? "stderr" : f->path;
		char hex[65];
		if (!f->hex[0])
			continue;
		if (!f->data) {
			int k = 0;
			while (k < n && (b[k].size != f->size || memcmp(b[k].hex, f->hex, 64)))
				k++;
			if (k == n || !b[k].got)
				return fb_seterr(err, FB_EIO, "output %.200s: blob %s is not in the CAS", what, f->hex);
			if (!(f->data = malloc(b[k].got_size ? b[k].got_size : 1)))
				return fb_seterr(err, FB_ENOMEM, "out of memory");
			memcpy(f->data, b[k].got, b[k].got_size);
			if (b[k].got_size != f->size)
				return fb_seterr(err, FB_EFORMAT, "output %.200s: blob %s has %zu bytes, not %llu", what, f->hex,
				                 b[k].got_size, (unsigned long long)f->size);
		}
		fb_sha256_buf_hex(f->data, (size_t)f->size, hex);
		if (strcmp(hex, f->hex))
			return fb_seterr(err, FB_EFORMAT, "output %.200s: blob %s: content hashes to %s", what, f->hex, hex);
	}
	return 0;
}

int
fb_rexec_fetch(struct fb_reapi *g, struct fb_rexec_result *r, struct fb_error *err)
{
	struct fb_reapi_blob *b = calloc((size_t)r->nfiles + 3, sizeof(*b));
	int n = 0, rc = b ? want_blobs(r, b, &n) : FB_ENOMEM;
	if (rc)
		return free(b), fb_seterr(err, FB_ENOMEM, "out of memory");
	rc = n ? fb_reapi_read_blobs(g, b, n, err) : 0;
	if (!rc)
		rc = take_blobs(r, b, n, err);
	for (int i = 0; i < n; i++)
		free(b[i].got);
	free(b);
	return rc;
}
