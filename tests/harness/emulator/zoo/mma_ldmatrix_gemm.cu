// Tensor-core GEMM by hand: ldmatrix + mma.sync.m16n8k16 (bf16 in, f32 accumulate) in inline
// PTX. C = A·B with A (M×K) and B (K×N) bf16 row-major, C float32. Four warps per 32×32 tile;
// each warp owns a 16×16 piece as two m16n8 accumulators.
#include <cuda_bf16.h>

#define TILE 32
#define PITCH 24  // 16 + 8 elements: rows stay 16-byte aligned for ldmatrix

__device__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void mma_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C,
                                    int M, int N, int K) {
    __shared__ __align__(16) __nv_bfloat16 As[TILE][PITCH];   // [m][k]
    __shared__ __align__(16) __nv_bfloat16 Bs[16][TILE + 8];  // [k][n]
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int wm = (warp / 2) * 16, wn = (warp % 2) * 16;
    int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[2][4] = {};

    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int i = threadIdx.x; i < TILE * 16; i += blockDim.x) {
            int r = i / 16, c = i % 16;
            As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : __float2bfloat16(0.0f);
            int br = i / TILE, bc = i % TILE;
            Bs[br][bc] = (k0 + br < K && col0 + bc < N) ? B[(size_t)(k0 + br) * N + col0 + bc]
                                                         : __float2bfloat16(0.0f);
        }
        __syncthreads();
        unsigned a[4], b[2][2];
        // A 16x16 as four 8x8 matrices: lanes 0-15 give rows 0-15 at k 0, lanes 16-31 at k 8
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                     : "r"(smem_addr(&As[wm + lane % 16][(lane / 16) * 8])));
        for (int j = 0; j < 2; j++)  // B 16x8 stored [k][n]: .trans gives the column fragment
            asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                         : "=r"(b[j][0]), "=r"(b[j][1])
                         : "r"(smem_addr(&Bs[lane % 16][wn + 8 * j])));
        for (int j = 0; j < 2; j++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[j][0]), "r"(b[j][1]));
        __syncthreads();
    }
    int g = lane / 4, t = lane % 4;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 4; i++) {
            int r = row0 + wm + g + 8 * (i / 2), c = col0 + wn + 8 * j + 2 * t + i % 2;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[j][i];
        }
}
