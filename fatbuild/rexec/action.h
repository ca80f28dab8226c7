/* action.h: remote execution over REAPI v2 (docs/remote-cache.md §9), the client's protocol
 * layer (action.c) on the gRPC channel of the REAPI cache (cache/reapi.c, §8): an Action's messages
 * (Command, the input root's Directory tree, Action) from a plain description, their upload,
 * Execution.Execute followed to its end within a deadline, and the result's outputs fetched and
 * verified. Private to rexec/: other parts use exec.c's plain face, rexec.h.
 *
 * A caller (a compile job, a build edge) does, on an fb_reapi opened on the executor's URL:
 *
 *   struct fb_rexec_action *a;   fb_rexec_action_new(&spec, &a, &err);
 *   fb_rexec_upload(g, a, &sent, &err);                  the blobs the CAS lacks
 *   struct fb_rexec_result r = {0};
 *   fb_rexec_execute(g, a, 0, timeout_ms, &r, &err);     0: r.exit_code, r.files
 *   fb_rexec_fetch(g, &r, &err);                         r.files[i].data, r.out, r.err
 *   fb_rexec_result_clear(&r);  fb_rexec_action_free(a);
 *
 * and decides on the codes: FB_EIO from upload, execute or fetch is the farm's failure
 * (unreachable, refused, r.stage QUEUED at the deadline: no worker took it), to fall back on;
 * 0 from execute with r.status != 0 is the server's failure to run the action (also a farm
 * failure); 0 with r.status == 0 is the command's own result, r.exit_code and its stderr
 * being the compiler's answer, error or not. Nothing here prints or keeps global state. */
#ifndef FB_REXEC_ACTION_H
#define FB_REXEC_ACTION_H

#include <stddef.h>
#include <stdint.h>

#include "fatbuild.h"
#include "input.h"
#include "cache/remote.h"

/* An environment variable or a platform property. */
struct fb_rexec_pair {
	const char *name, *value;
};

/* What to run. argv[0] is looked up in the env's PATH (the command sees only env: §9); outputs
 * are relative paths whose parents the worker makes (output_paths). Order does not matter:
 * the messages are sorted as REAPI requires (env by name, props by name then value, outputs,
 * directory entries by name), so that equal specs give equal digests. */
struct fb_rexec_spec {
	const char *const *argv;
	int argc;
	const struct fb_rexec_pair *env;
	int nenv;
	const char *const *outputs;
	int noutputs;
	const struct fb_rexec_pair *props;
	int nprops;
	const struct fb_exec_input *inputs;
	int ninputs;
	int do_not_cache;
};

struct fb_rexec_action;

/* Encodes the spec's messages; *out is freed with fb_rexec_action_free (NULL is fine). 0,
 * FB_EINVAL (an empty argv, a path that is absolute or has an empty, "." or ".." part, a name
 * given twice, a file that is also a directory, a name with '=' or '/' where it may not have
 * one; err names it) or FB_ENOMEM. */
int fb_rexec_action_new(const struct fb_rexec_spec *s, struct fb_rexec_action **out, struct fb_error *err);
void fb_rexec_action_free(struct fb_rexec_action *a);
/* The Action's digest: what Execute and the ActionCache are asked about. */
void fb_rexec_action_digest(const struct fb_rexec_action *a, char hex[65], uint64_t *size);
/* The encoded messages, for tests: 0 the Command, 1 the Action, 2.. the Directories (the
 * input root first, then the others depth first); NULL past the last. */
const unsigned char *fb_rexec_action_blob(const struct fb_rexec_action *a, int i, size_t *n);

/* An output file, stdout or stderr of a result: path (NULL for stdout and stderr), digest and,
 * after fb_rexec_fetch or when the server sent it inline, data (malloc'd, size bytes). */
struct fb_rexec_file {
	char *path;
	char hex[65];
	uint64_t size;
	int executable;
	unsigned char *data;
};

/* What Execute said. stage: the last ExecutionStage seen (0 none, 1 CACHE_CHECK, 2 QUEUED,
 * 3 EXECUTING, 4 COMPLETED); name: the Operation's; status/message: the action's status (the
 * ExecuteResponse's or the Operation's error) or, when the call failed, its gRPC status;
 * cached: cached_result. Cleared with fb_rexec_result_clear (a zeroed one is empty). */
struct fb_rexec_result {
	int stage;
	int done;
	char name[256];
	int status;
	char message[512];
	int cached;
	int exit_code;
	struct fb_rexec_file *files;
	int nfiles;
	struct fb_rexec_file out, err;
};
void fb_rexec_result_clear(struct fb_rexec_result *r);

/* Uploads the Action's messages and inputs the CAS lacks (FindMissingBlobs, then batches or
 * ByteStream, as the cache's uploads, §8); *sent: the bytes sent. 0, FB_EIO, FB_ENOMEM. */
int fb_rexec_upload(struct fb_reapi *g, const struct fb_rexec_action *a, uint64_t *sent, struct fb_error *err);
/* Execute (skip_cache: skip_cache_lookup), following the Operation stream (and WaitExecution
 * when a stream ends before the Operation is done) for at most timeout_ms in all. 0 once the
 * Operation is done (r filled as above); FB_EIO when a call failed or the deadline passed
 * (r->status its gRPC code, r->stage where the job was: 2 is QUEUED, no worker took it; err
 * names the call, the status and the stage); FB_EFORMAT for a malformed answer; FB_ENOMEM. */
int fb_rexec_execute(struct fb_reapi *g, const struct fb_rexec_action *a, int skip_cache, long timeout_ms,
                     struct fb_rexec_result *r, struct fb_error *err);
/* Fetches the data of r's output files, stdout and stderr that did not come inline, and
 * verifies each one's length and SHA-256. 0, FB_EIO (a call failed or a blob is missing),
 * FB_EFORMAT (a blob that does not match its digest; err names it), FB_ENOMEM. */
int fb_rexec_fetch(struct fb_reapi *g, struct fb_rexec_result *r, struct fb_error *err);
/* The stream's decoder (fuzz_rexec): one google.longrunning.Operation into r (stage, name, done,
 * and when done its ExecuteResponse or error). 0, FB_EFORMAT (a malformed field, an output path
 * that is not relative or is named twice, a bad digest; err says where) or FB_ENOMEM. */
int fb_rexec_decode_operation(const unsigned char *p, size_t n, struct fb_rexec_result *r, struct fb_error *err);
/* A path as REAPI wants it in an input root or output_paths: relative, '/'-separated, no
 * empty, "." or ".." part; 1 or 0. */
int fb_rexec_path_ok(const char *p, size_t n);

#endif
