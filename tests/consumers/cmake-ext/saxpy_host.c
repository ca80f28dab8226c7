/* saxpy_host.c: the host side of the extension: loads its embedded kernels through the runtime. */
#include <stdio.h>

#include <fatbuild_runtime.h>

/* 0 when the driver took the embedded fatbin and has a saxpy kernel for this GPU; else the
 * runtime's code, with its one-line message in msg. */
int
saxpy_ready(char *msg, size_t size)
{
	struct fbrt_error e = {0};
	if (fbrt_function("saxpy", &e) == NULL) {
		snprintf(msg, size, "%s", e.msg);
		return e.code ? e.code : -1;
	}
	snprintf(msg, size, "ok");
	return 0;
}
