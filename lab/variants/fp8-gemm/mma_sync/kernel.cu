// C = (A·As) (B·Bs)^T with DeepSeek-V3's block scales: A (M×K) and B (N×K) e4m3, As one float per
//   1×128 group of A (a row's 128 k), Bs one float per 128×128 block of B; C bf16, M×N.
// Tile: 64×64 of C per 128-thread block (4 warps in 2×2, each 32×32 = 2 m16 × 4 n8 tiles of
//   mma.sync.m16n8k32.e4m3.e4m3.f32), K in steps of 128, one scale group each.
// Why per group: the scales differ between 128-wide k groups, so each group's products are summed
//   unscaled on the tensor cores into a fresh float partial, then promoted: acc += partial *
//   As[m][g] * Bs[n/128][g] in float32 on the CUDA cores (DeepSeek-V3's "promotion" to full
//   precision, which also keeps the tensor cores' limited-precision fp8 accumulation short).
// Fragments: with A stored [m][k] and B stored [n][k] (both K-major), an 8-bit mma.sync fragment
//   register is 4 consecutive k of one row: one 32-bit shared load, no ldmatrix needed.
// Shared rows are 128 + 16 bytes, so the 8 rows one fragment load touches start in different banks.
#include <cuda_bf16.h>

#define BM 64
#define BN 64
#define BK 128
#define THREADS 128
#define ROW (BK + 16)  // bytes per shared row (padded)

__device__ __forceinline__ void mma_e4m3(float* d, const unsigned* a, const unsigned* b) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(THREADS) fp8_gemm(
    const unsigned char* __restrict__ A, const float* __restrict__ As, const unsigned char* __restrict__ B,
    const float* __restrict__ Bs, __nv_bfloat16* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) unsigned char sA[BM * ROW];
    __shared__ __align__(16) unsigned char sB[BN * ROW];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;  // this warp's 32×32 piece of the tile
    const int groups = K / BK;
    float acc[2][4][4] = {};

    for (int kg = 0; kg < groups; kg++) {
        // Tile fill: 64 rows × 128 bytes of A and of B, 16 bytes a thread per step; rows past the
        // edge are zeros (they only reach outputs that are not stored).
        for (int c = tid; c < BM * (BK / 16); c += THREADS) {
            int r = c / (BK / 16), col = (c % (BK / 16)) * 16;
            uint4 va = make_uint4(0, 0, 0, 0), vb = make_uint4(0, 0, 0, 0);
            if (m0 + r < M) va = *reinterpret_cast<const uint4*>(A + (size_t)(m0 + r) * K + kg * BK + col);
            if (n0 + r < N) vb = *reinterpret_cast<const uint4*>(B + (size_t)(n0 + r) * K + kg * BK + col);
            *reinterpret_cast<uint4*>(sA + r * ROW + col) = va;
            *reinterpret_cast<uint4*>(sB + r * ROW + col) = vb;
        }
        __syncthreads();  // the tile is in shared memory for every warp
        float part[2][4][4] = {};
#pragma unroll
        for (int ks = 0; ks < BK; ks += 32) {
            unsigned a[2][4], b[4][2];
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const unsigned char* p = sA + (wm + 16 * i + g) * ROW + ks + 4 * t4;
                a[i][0] = *reinterpret_cast<const unsigned*>(p);
                a[i][1] = *reinterpret_cast<const unsigned*>(p + 8 * ROW);
                a[i][2] = *reinterpret_cast<const unsigned*>(p + 16);
                a[i][3] = *reinterpret_cast<const unsigned*>(p + 8 * ROW + 16);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const unsigned char* p = sB + (wn + 8 * j + g) * ROW + ks + 4 * t4;
                b[j][0] = *reinterpret_cast<const unsigned*>(p);
                b[j][1] = *reinterpret_cast<const unsigned*>(p + 16);
            }
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) mma_e4m3(part[i][j], a[i], b[j]);
        }
        // Promotion: this group's partial sums, scaled by the A group of each row and the B block.
        const float sb = Bs[(size_t)(n0 / 128) * groups + kg];
#pragma unroll
        for (int i = 0; i < 2; i++) {
            int r = m0 + wm + 16 * i + g;
            float s0 = r < M ? As[(size_t)r * groups + kg] * sb : 0.0f;
            float s1 = r + 8 < M ? As[(size_t)(r + 8) * groups + kg] * sb : 0.0f;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                acc[i][j][0] += part[i][j][0] * s0;
                acc[i][j][1] += part[i][j][1] * s0;
                acc[i][j][2] += part[i][j][2] * s1;
                acc[i][j][3] += part[i][j][3] * s1;
            }
        }
        __syncthreads();  // every warp is done with the tile before the next fill overwrites it
    }
    // Epilogue: c0, c1 are row g, columns 2*t4 and +1 of each n8 tile; c2, c3 the same at row g + 8.
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int r = m0 + wm + 16 * i + g + 8 * h, c = n0 + wn + 8 * j + 2 * t4;
                if (r >= M) continue;
                if (c < N) C[(size_t)r * N + c] = __float2bfloat16_rn(acc[i][j][2 * h]);
                if (c + 1 < N) C[(size_t)r * N + c + 1] = __float2bfloat16_rn(acc[i][j][2 * h + 1]);
            }
}
