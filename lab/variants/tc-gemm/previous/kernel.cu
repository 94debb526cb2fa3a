// The tc-gemm solution before the 128×256 tile (measured 0.565 ms at 4096³ on the H200, 0.31x cuBLAS): kept to time against.
// C = A·B on tensor cores: A (M×K) and B (K×N) bf16 row-major, C float32, any M, N, K.
//   A 128×128 block tile, BK = 32, 256 threads = 8 warps in a 2×4 grid, each warp a 64×32 piece
//   of C as 4×4 mma.sync.m16n8k16 accumulators (64 floats a thread). Tiles reach shared memory by
//   cp.async (16 bytes a copy) in a 3-stage ring, so two tiles are in flight while one is
//   multiplied; fragments come out of shared memory with ldmatrix (.trans for B, stored [k][n]).
// Why: a tensor-core mma does 4096 FLOPs per warp instruction, so the kernel is fed, not computed:
//   each 128×128×32 step moves 16 KB into shared memory for 1 MFLOP, and each warp reads its A and
//   B fragments once per k16 for 16 mmas (ldmatrix.x4 = four 8×8 matrices in one instruction).
// Ragged edges: a 16-byte copy needs 16-byte aligned rows, i.e. K and N multiples of 8. Chunks
//   past the edge copy 0 bytes (src-size 0: zero fill). Other K, N take a plain-load path for the
//   tile fill (element by element, zeros past the edge); the multiply is the same.
#include <cuda_bf16.h>

#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define THREADS 256
#define WARPS_N 4  // warps side by side along n (8 warps: 2 x 4)
#define WTM 4      // m16 tiles a warp owns (64 rows)
#define WTN 4      // n8 tiles a warp owns (32 columns)
#define A_LD (BK + 8)   // 80-byte rows: the 8 rows an ldmatrix reads fall in 8 different bank groups
#define B_LD (BN + 8)   // 272-byte rows: likewise for the [k][n] tile

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp16(void* dst, const void* src, bool inside) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(smem(dst)), "l"(src), "r"(inside ? 16 : 0));
}

extern "C" __global__ void __launch_bounds__(THREADS)
tc_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B, float* __restrict__ C,
        int M, int N, int K)
{
    extern __shared__ __align__(16) unsigned char pool[];
    __nv_bfloat16 (*As)[BM][A_LD] = reinterpret_cast<__nv_bfloat16 (*)[BM][A_LD]>(pool);
    __nv_bfloat16 (*Bs)[BK][B_LD] = reinterpret_cast<__nv_bfloat16 (*)[BK][B_LD]>(pool + STAGES * BM * A_LD * 2);

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = (warp / WARPS_N) * 16 * WTM, wn = (warp % WARPS_N) * 8 * WTN;  // this warp's piece
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const bool vec = (K % 8 == 0) && (N % 8 == 0);
    const int tiles = (K + BK - 1) / BK;

    // Tile fill: A is 128 rows × 4 chunks of 8, B 32 rows × 16 chunks; 512 chunks each, 2 a thread.
    // The plain-load path walks elements instead, consecutive threads on consecutive columns, so a
    // warp still reads 64 contiguous bytes of a row.
    auto fill = [&](int t, int s) {
        const int k0 = t * BK;
        if (vec) {
            for (int c = tid; c < BM * BK / 8; c += THREADS) {
                int r = c / (BK / 8), k = (c % (BK / 8)) * 8;
                bool in = m0 + r < M && k0 + k < K;
                cp16(&As[s][r][k], in ? A + (size_t)(m0 + r) * K + k0 + k : A, in);
            }
            for (int c = tid; c < BK * BN / 8; c += THREADS) {
                int r = c / (BN / 8), n = (c % (BN / 8)) * 8;
                bool in = k0 + r < K && n0 + n < N;
                cp16(&Bs[s][r][n], in ? B + (size_t)(k0 + r) * N + n0 + n : B, in);
            }
        } else {
            const __nv_bfloat16 zero = __float2bfloat16(0.0f);
#pragma unroll 1  // unrolled, its loads in flight would cost ~70 registers next to the accumulators
            for (int e = tid; e < BM * BK; e += THREADS) {
                int r = e / BK, k = e % BK;
                As[s][r][k] = (m0 + r < M && k0 + k < K) ? A[(size_t)(m0 + r) * K + k0 + k] : zero;
            }
#pragma unroll 1
            for (int e = tid; e < BK * BN; e += THREADS) {
                int r = e / BN, n = e % BN;
                Bs[s][r][n] = (k0 + r < K && n0 + n < N) ? B[(size_t)(k0 + r) * N + n0 + n] : zero;
            }
        }
        asm volatile("cp.async.commit_group;");
    };

    float acc[WTM][WTN][4];
    for (int i = 0; i < WTM; i++)
        for (int j = 0; j < WTN; j++)
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles) fill(s, s);
        else asm volatile("cp.async.commit_group;");  // empty groups keep the wait count uniform
    }
    for (int t = 0; t < tiles; t++) {
        asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 2));  // tile t has landed
        __syncthreads();  // ...for every thread's copies, and stage (t-1) % STAGES is free again
        if (t + STAGES - 1 < tiles) fill(t + STAGES - 1, (t + STAGES - 1) % STAGES);
        else asm volatile("cp.async.commit_group;");
        const int s = t % STAGES;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[WTM][4], b[WTN][2];
#pragma unroll
            for (int i = 0; i < WTM; i++)  // lanes 0-15: rows 0-15 at k; lanes 16-31: the same rows at k + 8
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                             : "r"(smem(&As[s][wm + 16 * i + lane % 16][kk + 8 * (lane / 16)])));
#pragma unroll
            for (int j = 0; j < WTN; j += 2)  // two n8 tiles at once: (k0-7, k8-15) × (n, n + 8)
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j + 1][0]), "=r"(b[j + 1][1])
                             : "r"(smem(&Bs[s][kk + lane % 8 + 8 * ((lane / 8) % 2)][wn + 8 * j + 8 * (lane / 16)])));
#pragma unroll
            for (int i = 0; i < WTM; i++)
#pragma unroll
                for (int j = 0; j < WTN; j++)
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                                 : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                                 : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
        }
    }
    asm volatile("cp.async.wait_all;");

    // Accumulator c0..c3 of lane (g, t): rows g and g + 8, columns 2t and 2t + 1 of its 16×8 tile.
    const int g = lane / 4, q = lane % 4;
#pragma unroll
    for (int i = 0; i < WTM; i++)
#pragma unroll
        for (int j = 0; j < WTN; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = m0 + wm + 16 * i + g + 8 * h, c = n0 + wn + 8 * j + 2 * q;
                if (r >= M) continue;
                float* out = C + (size_t)r * N + c;
                if (c + 1 < N && (N % 2 == 0)) {
                    *reinterpret_cast<float2*>(out) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (c < N) out[0] = acc[i][j][2 * h];
                    if (c + 1 < N) out[1] = acc[i][j][2 * h + 1];
                }
            }
}
