// Design: no tensor cores: one thread per element of C, bf16 converted to float, FMA loop from global memory, 16x16 blocks.
#include <cuda_bf16.h>
extern "C" __global__ void tc_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; k++) sum += __bfloat162float(A[(size_t)row * K + k]) * __bfloat162float(B[(size_t)k * N + col]);
    C[(size_t)row * N + col] = sum;
}
