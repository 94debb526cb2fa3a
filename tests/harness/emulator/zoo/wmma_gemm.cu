// wmma GEMM: C = A·B with A (M×K) and B (K×N) bf16 row-major, C float32. A block of four warps
// computes a 32×32 tile; tiles are staged through shared memory with zeros past the edges, so
// any M, N, K work.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;

#define TILE 32
#define APAD 24  // row pitches: multiples of 8 elements (16 bytes), as wmma's ldm requires
#define BPAD 40
#define CPAD 20

extern "C" __global__ void wmma_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C,
                                     int M, int N, int K) {
    __shared__ __align__(32) __nv_bfloat16 As[TILE][APAD];
    __shared__ __align__(32) __nv_bfloat16 Bs[16][BPAD];
    __shared__ __align__(32) float Cs[4][16][CPAD];
    int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2;
    int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int i = threadIdx.x; i < TILE * 16; i += blockDim.x) {
            int r = i / 16, c = i % 16;
            As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : __float2bfloat16(0.0f);
            int br = i / TILE, bc = i % TILE;
            Bs[br][bc] = (k0 + br < K && col0 + bc < N) ? B[(size_t)(k0 + br) * N + col0 + bc]
                                                         : __float2bfloat16(0.0f);
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, &As[wr * 16][0], APAD);
        wmma::load_matrix_sync(fb, &Bs[0][wc * 16], BPAD);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncthreads();
    }
    wmma::store_matrix_sync(&Cs[warp][0][0], acc, CPAD, wmma::mem_row_major);
    __syncwarp();
    for (int i = threadIdx.x % 32; i < 256; i += 32) {
        int r = row0 + wr * 16 + i / 16, c = col0 + wc * 16 + i % 16;
        if (r < M && c < N) C[(size_t)r * N + c] = Cs[warp][i / 16][i % 16];
    }
}
