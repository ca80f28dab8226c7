#if !defined(G)
#define G
#include <x.cuh>
#include "x.cuh"
#endif
namespace n { __device__ int f() { return 1; } }
int main(){}
