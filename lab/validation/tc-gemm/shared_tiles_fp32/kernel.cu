// Design: no tensor cores: 32x32 shared-memory tiles of A and B (converted to float on the way in), one output per thread.
#include <cuda_bf16.h>
#define T 32
extern "C" __global__ void tc_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K)
{
    __shared__ float As[T][T], Bs[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? __bfloat162float(A[(size_t)row * K + k0 + threadIdx.x]) : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (col < N && k0 + threadIdx.y < K) ? __bfloat162float(B[(size_t)(k0 + threadIdx.y) * N + col]) : 0.0f;
        __syncthreads();
        for (int k = 0; k < T; k++) sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = sum;
}
