/* server.h: private to compile.c, server.c and client.c: the build's compile server
 * (docs/compile-server.md) and its wire format.
 *
 * `fatbuild build` starts one server per build (server.c); the `fatbuild compile` edges ninja
 * runs send it their cache-missed jobs (client.c) over a Unix socket in the build dir, so the
 * jobs of one NVRTC option set reach one long-lived worker with a warm PCH. All integers are
 * u64 little-endian, strings a u64 length (counting a final NUL) and their bytes with the NUL.
 *
 *   request  := "FBCSRV01" njobs job*
 *   job      := u64 size, then size bytes: flags home nvrtc cwd name text nopts opt*
 *               flags: bit 0 want PTX, bits 1-2 want_cubin (0, 1 cubin, 2 LTO-IR), bit 3 PCH
 *   response := (u64 job index, answer)*, one per job in the order they finish; an answer is
 *               child.c's (48 bytes: status, nvrtcResult, sizes of log, PCH note, PTX, cubin;
 *               then those bytes)
 */
#ifndef FB_COMPILE_SERVER_H
#define FB_COMPILE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"

#define FB_SERVER_MAGIC "FBCSRV01"
#define FB_SERVER_MAX_JOB ((uint64_t)1 << 30) /* one job's bytes: more is garbage */
#define FB_SERVER_SOCKET "compile.sock"   /* in BUILD_DIR/tmp */
#define FB_SERVER_IDLE_SETS 8            /* idle workers kept beyond the compiles at once */
#define FB_SERVER_ENV "FATBUILD_COMPILE_SOCKET"
#define FB_SERVER_OFF_ENV "FATBUILD_COMPILE_SERVER"

/* One job as parsed from the wire; the pointers point into the job's bytes. */
struct fb_server_job {
	uint64_t flags;
	const char *home, *nvrtc, *cwd, *name, *text;
	const char **opts;          /* nopts, and room for two more (the PCH options) */
	size_t nopts;
};
/* Parses job bytes p[0..n); on success opts is malloc'd (free it). 0, or -1 for garbage (nothing held). */
int fb_server_job_parse(const unsigned char *p, size_t n, struct fb_server_job *j);

/* client.c: runs r's pending jobs at the server whose socket is sock, when sock passes the
 * checks (a socket of ours, mode 0600 or stricter, in a directory of ours with no access for
 * group or others). A job answered well is done as a local one would be; any other stays
 * pending for the local workers. note: why the server was not used or failed ("" when it
 * was used without trouble). */
void fb_server_run(struct run *r, const char *home, const char *sock, char *note, size_t size);

#endif
