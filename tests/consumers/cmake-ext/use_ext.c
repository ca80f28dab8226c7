/* use_ext.c: calls into the extension. Prints the runtime's answer; exit 0 when the kernel is
 * ready (a GPU with a fitting image), 3 when there is no usable driver, 1 otherwise. */
#include <stddef.h>
#include <stdio.h>

int saxpy_ready(char *msg, size_t size);

int
main(void)
{
	char msg[1024];
	int rc = saxpy_ready(msg, sizeof(msg));
	printf("saxpy_ready: %d: %s\n", rc, msg);
	return rc == 0 ? 0 : rc == 1 /* FBRT_ENODRIVER */ ? 3 : 1;
}
