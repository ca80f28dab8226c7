// saxpy.cuh: a header the kernel includes (touching it rebuilds the kernel's targets).
#pragma once
#define SAXPY_OP(a, x, y) ((a) * (x) + (y))
