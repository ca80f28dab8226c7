// gemm.cu: shared-memory tiled SGEMM, C = alpha*A*B + beta*C (row-major), each thread
// computing a TM x TN micro-tile; and a half-precision variant accumulating in float.
#include <cuda_fp16.h>

template <int BM, int BN, int BK, int TM, int TN, typename T>
__device__ void gemm_tile(int M, int N, int K, float alpha, const T *__restrict__ A, const T *__restrict__ B,
                          float beta, T *__restrict__ C)
{
	__shared__ float As[BK][BM + 1];
	__shared__ float Bs[BK][BN + 1];
	const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
	const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
	const int nthreads = (BM / TM) * (BN / TN);
	float acc[TM][TN] = {};
	for (int k0 = 0; k0 < K; k0 += BK) {
		for (int i = threadIdx.x; i < BM * BK; i += nthreads) {
			int r = i / BK, c = i % BK;
			int gr = row0 + r, gc = k0 + c;
			As[c][r] = (gr < M && gc < K) ? (float)A[(size_t)gr * K + gc] : 0.f;
		}
		for (int i = threadIdx.x; i < BK * BN; i += nthreads) {
			int r = i / BN, c = i % BN;
			int gr = k0 + r, gc = col0 + c;
			Bs[r][c] = (gr < K && gc < N) ? (float)B[(size_t)gr * N + gc] : 0.f;
		}
		__syncthreads();
#pragma unroll
		for (int k = 0; k < BK; k++) {
			float a[TM], b[TN];
#pragma unroll
			for (int i = 0; i < TM; i++)
				a[i] = As[k][ty * TM + i];
#pragma unroll
			for (int j = 0; j < TN; j++)
				b[j] = Bs[k][tx * TN + j];
#pragma unroll
			for (int i = 0; i < TM; i++)
#pragma unroll
				for (int j = 0; j < TN; j++)
					acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
		}
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < TM; i++)
#pragma unroll
		for (int j = 0; j < TN; j++) {
			int r = row0 + ty * TM + i, c = col0 + tx * TN + j;
			if (r < M && c < N) {
				float old = beta != 0.f ? (float)C[(size_t)r * N + c] : 0.f;
				C[(size_t)r * N + c] = (T)(alpha * acc[i][j] + beta * old);
			}
		}
}

// 64x64 tiles, 256 threads, 4x4 per thread.
extern "C" __global__ void __launch_bounds__(256) sgemm_64x64(int M, int N, int K, float alpha, const float *A,
                                                              const float *B, float beta, float *C)
{
	gemm_tile<64, 64, 8, 4, 4, float>(M, N, K, alpha, A, B, beta, C);
}

// 128x64 tiles, 256 threads, 8x4 per thread.
extern "C" __global__ void __launch_bounds__(256) sgemm_128x64(int M, int N, int K, float alpha, const float *A,
                                                               const float *B, float beta, float *C)
{
	gemm_tile<128, 64, 8, 8, 4, float>(M, N, K, alpha, A, B, beta, C);
}

extern "C" __global__ void __launch_bounds__(256) hgemm_64x64(int M, int N, int K, float alpha, const __half *A,
                                                              const __half *B, float beta, __half *C)
{
	gemm_tile<64, 64, 8, 4, 4, __half>(M, N, K, alpha, A, B, beta, C);
}
