// C = A·B on tensor cores: A (M×K) and B (K×N) bf16 row-major, C float32, any M, N, K.
//   A 256×128 block tile, BK = 32, 256 threads = 8 warps in a 4×2 grid, each warp a 64×64 piece
//   of C as 4×8 mma.sync.m16n8k16 accumulators (128 floats a thread). Tiles reach shared memory by
//   16-byte cp.async in a 4-stage ring; fragments come out by ldmatrix (.trans for B, stored
//   [k][n]) one k16 step ahead of the mmas that use them (two register sets), so an ldmatrix's
//   latency hides behind 32 mmas instead of stalling them.
// Why: an mma.sync does 4096 FLOPs, so the kernel is fed, not computed. Per k16 step a warp reads
//   4 ldmatrix.x4 of A and 4 of B (4 KB) for 32 mmas, 128 B an mma (a 64×32 warp tile: 192 B); per
//   BK = 32 step a block copies (256×32 + 32×128) × 2 = 24 KB in for 512 mmas (85 FLOP a byte; a
//   128×128 tile: 64). In all 176 B of shared traffic an mma, 1.4 clocks at 128 B a clock, under
//   the ~1.5 clocks an m16n8k16 takes on an SM's tensor cores on Hopper: shared memory is not the
//   limit. L2 to shared at 4096³: (256 + 128) × 2 B per k per block, 1.6 GB.
// Registers: 128 accumulators + 2 × (16 A + 16 B) fragment registers + addresses = 234 of the 255
//   __launch_bounds__(256, 1) allows: one block of 8 warps an SM, 96 KB of shared memory.
// Shared layout: rows unpadded, 16-byte chunks XOR-swizzled (swz below), so the 8 rows one
//   ldmatrix phase reads, and the 32 chunks one warp's cp.async writes, fall in 8 distinct bank
//   groups (padding would do the same with more bytes).
// Block order: grouped (GROUP_M tile rows walked column by column) so blocks running together
//   share B panels in L2 as well as A panels.
// Ragged edges: a 16-byte copy needs K and N multiples of 8; chunks past the edge copy 0 bytes
//   (zero fill). Other K, N take a plain-load path for the tile fill; the multiply is the same.
// Measured 2026-12-01, NVIDIA H200, M = N = K = 4096 (lab/quick_time.py, median): 383.6 µs =
//   358 TFLOP/s = 0.47x cuBLAS (~0.181 ms), the fastest of the variants timed together
//   (lab/variants/tc-gemm/): the same code with 128×256 tiles (swz128x256) 394.2 µs, and with
//   BK = 64 in 3 stages (swz128x256_bk64, the previous solution) 396.4 µs; 128×128 tiles of 64×32
//   warps (swz128x128) 459.0 µs; 128×256, padded rows, no fragment double buffer (tile128x256)
//   617.7 µs; the first solution (128×128, padded, 3 stages; previous) 568.9 µs.
#include <cuda_bf16.h>

#define BM 256
#define BN 128
#define BK 32
#define STAGES 4
#define THREADS 256
#define WARPS_N 2  // warps side by side along n (8 warps: 4 x 2)
#define WTM 4      // m16 tiles a warp owns (64 rows)
#define WTN 8      // n8 tiles a warp owns (64 columns)
#define GROUP_M 8  // tile rows per rasterisation group
#define MIN_BLOCKS 1  // blocks an SM must fit: caps registers at 65536 / (THREADS * MIN_BLOCKS)
#define A_CPR (BK / 8)  // 16-byte chunks per row of the A tile
#define B_CPR (BN / 8)  // ... of the B tile
#define KSTEPS (BK / 16)
#define A_RSTEP (THREADS / A_CPR)  // rows between one thread's A chunks
#define B_RSTEP (THREADS / B_CPR)
#define AU (BM * A_CPR / THREADS)  // A chunks a thread copies per tile
#define BU (BK * B_CPR / THREADS)

static_assert(A_CPR >= 4 && B_CPR >= 8 && KSTEPS % 2 == 0, "swizzle and fragment ring assume these");
static_assert(A_RSTEP % 8 == 0 && B_RSTEP % 8 == 0 && AU * THREADS == BM * A_CPR && BU * THREADS == BK * B_CPR,
              "each thread's chunks keep one swizzle");

// Element offset of chunk c of row r in a tile of cpr chunks a row. cpr >= 8 (rows of 128 B or
// more): chunk c ^ (r % 8), so 8 consecutive rows at one logical chunk hit 8 bank groups. cpr == 4
// (64-byte rows, two to a 128-byte line): chunk c ^ ((r / 2) % 4), same effect over the 4 lines.
__device__ __forceinline__ int swz(int r, int c, int cpr) {
    return (r * cpr + (c ^ (cpr >= 8 ? (r & 7) : ((r >> 1) & 3)))) * 8;
}

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp16(unsigned dst, const void* src, bool inside) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(inside ? 16 : 0));
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
tc_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B, float* __restrict__ C,
        int M, int N, int K)
{
    extern __shared__ __align__(128) unsigned char pool[];
    __nv_bfloat16* As = reinterpret_cast<__nv_bfloat16*>(pool);  // STAGES tiles of BM × BK
    __nv_bfloat16* Bs = As + STAGES * BM * BK;                    // STAGES tiles of BK × BN
    const unsigned sA = smem(As), sB = smem(Bs);

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = (warp / WARPS_N) * 16 * WTM, wn = (warp % WARPS_N) * 8 * WTN;  // this warp's piece
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int per_group = GROUP_M * tiles_n, first = (blockIdx.x / per_group) * GROUP_M;
    const int rows = min(tiles_m - first, GROUP_M), in_group = blockIdx.x % per_group;
    const int m0 = (first + in_group % rows) * BM, n0 = (in_group / rows) * BN;
    const bool vec = (K % 8 == 0) && (N % 8 == 0);
    const int tiles = (K + BK - 1) / BK;

    // Tile fill: A is BM rows × A_CPR chunks, B BK rows × B_CPR chunks, AU and BU chunks a thread at
    // fixed (row, chunk) offsets: a thread's rows step by a multiple of 8, so the swizzle of its chunk
    // is the same in each, and only the k offset changes from tile to tile. The plain-load path
    // walks elements, consecutive threads on consecutive columns.
    const int ra = tid / A_CPR, ca = tid % A_CPR, rb = tid / B_CPR, cb = tid % B_CPR;
    const unsigned dA = 2 * swz(ra, ca, A_CPR), dB = 2 * swz(rb, cb, B_CPR);
    const __nv_bfloat16* srcA = A + (size_t)(m0 + ra) * K + 8 * ca;
    const __nv_bfloat16* srcB = B + (size_t)rb * N + n0 + 8 * cb;
    auto fill = [&](int t, int s) {
        const int k0 = t * BK;
        if (vec) {
#pragma unroll
            for (int u = 0; u < AU; u++) {
                bool in = m0 + ra + u * A_RSTEP < M && k0 + 8 * ca < K;
                cp16(sA + s * (2 * BM * BK) + dA + u * (2 * A_RSTEP * BK),
                     in ? srcA + (size_t)u * A_RSTEP * K + k0 : A, in);
            }
#pragma unroll
            for (int u = 0; u < BU; u++) {
                bool in = k0 + rb + u * B_RSTEP < K && n0 + 8 * cb < N;
                cp16(sB + s * (2 * BK * BN) + dB + u * (2 * B_RSTEP * BN),
                     in ? srcB + (size_t)(k0 + u * B_RSTEP) * N : B, in);
            }
        } else {
            const __nv_bfloat16 zero = __float2bfloat16(0.0f);
            __nv_bfloat16* as = As + s * BM * BK;
            __nv_bfloat16* bs = Bs + s * BK * BN;
#pragma unroll 1  // unrolled, its loads in flight would cost registers next to the accumulators
            for (int e = tid; e < BM * BK; e += THREADS) {
                int r = e / BK, k = e % BK;
                as[swz(r, k / 8, A_CPR) + k % 8] = (m0 + r < M && k0 + k < K) ? A[(size_t)(m0 + r) * K + k0 + k] : zero;
            }
#pragma unroll 1
            for (int e = tid; e < BK * BN; e += THREADS) {
                int r = e / BN, n = e % BN;
                bs[swz(r, n / 8, B_CPR) + n % 8] = (k0 + r < K && n0 + n < N) ? B[(size_t)(k0 + r) * N + n0 + n] : zero;
            }
        }
        asm volatile("cp.async.commit_group;");
    };

    float acc[WTM][WTN][4];
#pragma unroll
    for (int i = 0; i < WTM; i++)
#pragma unroll
        for (int j = 0; j < WTN; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    unsigned a[2][WTM][4], b[2][WTN][2];  // fragments of k16 steps ks (in use) and ks + 1 (arriving)
    // A: lanes 0-15 rows 0-15 at k, lanes 16-31 the same rows at k + 8. B (.trans): two n8 tiles a
    // load, lanes 0-7 / 8-15 at rows k..k+7 / k+8..k+15 of column n, lanes 16-31 the same at n + 8.
    // Byte offsets in a stage: an A row's swizzle repeats every 16 rows, so the k16 step picks the
    // chunk and the m16 tile adds 16 rows; a B row's swizzle is its lane % 8 at every k16 step.
    unsigned offA[KSTEPS], offB[WTN / 2];
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ks++) offA[ks] = 2 * swz(wm + lane % 16, 2 * ks + lane / 16, A_CPR);
#pragma unroll
    for (int j = 0; j < WTN; j += 2) offB[j / 2] = 2 * swz(lane % 8 + 8 * ((lane / 8) % 2), (wn + 8 * j) / 8 + lane / 16, B_CPR);
    auto load = [&](int buf, int s, int ks) {
#pragma unroll
        for (int i = 0; i < WTM; i++)
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(a[buf][i][0]), "=r"(a[buf][i][1]), "=r"(a[buf][i][2]), "=r"(a[buf][i][3])
                         : "r"(sA + s * (2 * BM * BK) + offA[ks] + i * (2 * 16 * BK)));
#pragma unroll
        for (int j = 0; j < WTN; j += 2)
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(b[buf][j][0]), "=r"(b[buf][j][1]), "=r"(b[buf][j + 1][0]), "=r"(b[buf][j + 1][1])
                         : "r"(sB + s * (2 * BK * BN) + offB[j / 2] + ks * (2 * 16 * BN)));
    };

    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles) fill(s, s);
        else asm volatile("cp.async.commit_group;");  // empty groups keep the wait count uniform
    }
    asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 2));  // tile 0 has landed...
    __syncthreads();                                               // ...for every thread's copies
    if (tiles > 0) load(0, 0, 0);
    for (int t = 0; t < tiles; t++) {
        // Stage (t - 1) % STAGES was last read before the barrier that ended step t - 1: refill it.
        if (t + STAGES - 1 < tiles) fill(t + STAGES - 1, (t + STAGES - 1) % STAGES);
        else asm volatile("cp.async.commit_group;");
        const int s = t % STAGES;
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ks++) {
            if (ks + 1 < KSTEPS) {
                load((ks + 1) % 2, s, ks + 1);
            } else if (t + 1 < tiles) {  // the next tile's first fragments: wait for it to land first
                asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 2));
                __syncthreads();
                load(0, (t + 1) % STAGES, 0);
            }
#pragma unroll
            for (int i = 0; i < WTM; i++)
#pragma unroll
                for (int j = 0; j < WTN; j++)
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                                 : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                                 : "r"(a[ks % 2][i][0]), "r"(a[ks % 2][i][1]), "r"(a[ks % 2][i][2]), "r"(a[ks % 2][i][3]),
                                   "r"(b[ks % 2][j][0]), "r"(b[ks % 2][j][1]));
        }
    }
    asm volatile("cp.async.wait_all;");

    // Accumulator c0..c3 of lane (g, q): rows g and g + 8, columns 2q and 2q + 1 of its 16×8 tile.
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
