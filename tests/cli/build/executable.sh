# --executable links a program (with the runtime and the embedded fatbin); fbrt_images reads
# the embedded containers without any driver.
export FATBUILD_CACHE_DIR=$PWD/cache
cat >k.cu <<'K'
extern "C" __global__ void k(int *p) { *p = 1; }
K
cat >main.c <<'M'
#include <stdio.h>
#include <fatbuild_runtime.h>
int main(void)
{
	char buf[256];
	struct fbrt_error e = {0};
	fbrt_images(buf, sizeof(buf));
	printf("images: %s\n", buf);
	/* No driver here: the error says so (the library is libcuda.so.1 or $FBRT_LIBCUDA). */
	if (!fbrt_function("k", &e))
		printf("code %d: %.31s\n", e.code, e.msg);
	return 0;
}
M
$FATBUILD build --executable --arch-list "8.0+PTX" --build-dir bd -o prog k.cu main.c >log 2>&1 || cat log
FBRT_LIBCUDA=/nonexistent/libcuda.so.1 ./prog
file -b prog | cut -d, -f1
