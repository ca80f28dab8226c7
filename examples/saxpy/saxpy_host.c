/* saxpy_host.c: the host side of the example extension. It exposes plain C functions that a
 * program (or Python's ctypes) calls after dlopen; fbrt (fatbuild_runtime.h) loads the
 * embedded fatbin on first use and launches the kernel. */
#include <stdint.h>
#include <stdio.h>

#include <fatbuild_runtime.h>

/* y = a*x + y on device memory. Returns 0, or an fbrt status with the message in msg. */
int
saxpy_device(float a, uint64_t x, uint64_t y, int n, char *msg, size_t msgsize)
{
	struct fbrt_error e = {0};
	void *args[] = {&a, &x, &y, &n};
	int rc = fbrt_launch_name("saxpy", fbrt_dim((unsigned)(n + 255) / 256), fbrt_dim(256), 0, NULL, args, &e);
	if (rc && msg && msgsize)
		snprintf(msg, msgsize, "%s", e.msg);
	return rc;
}

/* y = a*x + y on host arrays: allocates, copies, launches, copies back. */
int
saxpy_host(float a, const float *x, float *y, int n, char *msg, size_t msgsize)
{
	struct fbrt_error e = {0};
	uint64_t dx = 0, dy = 0;
	size_t bytes = (size_t)n * sizeof(float);
	int rc = fbrt_malloc(&dx, bytes, &e);
	if (!rc)
		rc = fbrt_malloc(&dy, bytes, &e);
	if (!rc)
		rc = fbrt_memcpy_htod(dx, x, bytes, &e);
	if (!rc)
		rc = fbrt_memcpy_htod(dy, y, bytes, &e);
	if (!rc) {
		void *args[] = {&a, &dx, &dy, &n};
		rc = fbrt_launch_name("saxpy", fbrt_dim((unsigned)(n + 255) / 256), fbrt_dim(256), 0, NULL, args, &e);
	}
	if (!rc)
		rc = fbrt_memcpy_dtoh(y, dy, bytes, &e);
	if (!rc)
		rc = fbrt_synchronize(&e);
	if (dx)
		fbrt_free(dx, NULL);
	if (dy)
		fbrt_free(dy, NULL);
	if (rc && msg && msgsize)
		snprintf(msg, msgsize, "%s", e.msg);
	return rc;
}

/* Which images this library carries ("sm_80 sm_86 compute_86"). */
int
saxpy_images(char *buf, size_t size)
{
	return fbrt_images(buf, size);
}

/* Looks a kernel up by name (to show the not-found error). */
int
saxpy_lookup(const char *name, char *msg, size_t msgsize)
{
	struct fbrt_error e = {0};
	if (fbrt_function(name, &e))
		return 0;
	if (msg && msgsize)
		snprintf(msg, msgsize, "%s", e.msg);
	return e.code;
}
