// Design: first tensor-core version: one warp per 16x16 tile of C, each 16x16 step of A and B staged (zero-padded) in shared memory, wmma bf16 -> f32.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
extern "C" __global__ void tc_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K)
{
    __shared__ __nv_bfloat16 a_s[16 * 16], b_s[16 * 16];
    __shared__ float c_s[16 * 16];
    int tm = blockIdx.y * 16, tn = blockIdx.x * 16, lane = threadIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int e = lane; e < 256; e += 32) {
            int r = e / 16, q = e % 16;
            a_s[e] = (tm + r < M && k0 + q < K) ? A[(size_t)(tm + r) * K + k0 + q] : __float2bfloat16(0.0f);
            b_s[e] = (k0 + r < K && tn + q < N) ? B[(size_t)(k0 + r) * N + tn + q] : __float2bfloat16(0.0f);
        }
        __syncwarp();
        wmma::load_matrix_sync(a, a_s, 16);
        wmma::load_matrix_sync(b, b_s, 16);
        wmma::mma_sync(c, a, b, c);
        __syncwarp();
    }
    wmma::store_matrix_sync(c_s, c, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
        int r = e / 16, q = e % 16;
        if (tm + r < M && tn + q < N) C[(size_t)(tm + r) * N + tn + q] = c_s[e];
    }
}
