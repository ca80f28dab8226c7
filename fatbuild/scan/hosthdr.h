/* hosthdr.h: headers NVRTC does not have. */
#ifndef FB_SCAN_HOSTHDR_H
#define FB_SCAN_HOSTHDR_H

#include <stdbool.h>

/* Whether an #include name is a host header NVRTC has none of: the C and C++ standard
 * libraries, POSIX, the CUDA driver API, PyTorch, pybind11, Python. */
bool fb_host_header(const char *name);

/* Whether it is one of the toolkit's host-only library APIs (cuFFT, cuSOLVER, cuda.h, ...),
 * a host header even where the toolkit ships it. */
bool fb_host_api_header(const char *name);

#endif
