/* rdc_host.c: host side of the rdc example for the nvrtc backend: launches apply_scale (whose
 * device function lives in scale.cu) and cdp_parent (which launches cdp_child on the device)
 * through fatbuild's runtime. */
#include <stdint.h>
#include <stdio.h>

#include <fatbuild_runtime.h>

static int
report(int rc, const struct fbrt_error *e, char *msg, size_t size)
{
	if (rc && msg)
		snprintf(msg, size, "%s", e->msg);
	return rc;
}

/* x[i] = scale_value(x[i]) = 2 x[i] + 1 on the device. */
int
rdc_apply(float *x, int n, char *msg, size_t size)
{
	struct fbrt_error e = {0};
	uint64_t d = 0;
	int rc = fbrt_malloc(&d, (size_t)n * sizeof(float), &e);
	if (!rc)
		rc = fbrt_memcpy_htod(d, x, (size_t)n * sizeof(float), &e);
	void *args[] = {&d, &n};
	if (!rc)
		rc = fbrt_launch_name("apply_scale", fbrt_dim(((unsigned)n + 255) / 256), fbrt_dim(256), 0, NULL, args, &e);
	if (!rc)
		rc = fbrt_synchronize(&e);
	if (!rc)
		rc = fbrt_memcpy_dtoh(x, d, (size_t)n * sizeof(float), &e);
	if (d)
		fbrt_free(d, NULL);
	return report(rc, &e, msg, size);
}

/* out[i] = mul * i for i < blocks * per_block, written by child grids the parents launch. */
int
rdc_cdp(int *out, int blocks, int per_block, int mul, char *msg, size_t size)
{
	struct fbrt_error e = {0};
	uint64_t d = 0;
	size_t bytes = (size_t)blocks * (size_t)per_block * sizeof(int);
	int rc = fbrt_malloc(&d, bytes, &e);
	if (!rc)
		rc = fbrt_memcpy_htod(d, out, bytes, &e);
	void *args[] = {&d, &per_block, &mul};
	if (!rc)
		rc = fbrt_launch_name("cdp_parent", fbrt_dim((unsigned)blocks), fbrt_dim(32), 0, NULL, args, &e);
	if (!rc)
		rc = fbrt_synchronize(&e);
	if (!rc)
		rc = fbrt_memcpy_dtoh(out, d, bytes, &e);
	if (d)
		fbrt_free(d, NULL);
	return report(rc, &e, msg, size);
}
