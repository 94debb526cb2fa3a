// C = A·B on Hopper's tensor cores: A (M×K) and B (K×N) bf16 row-major, C float32.
//   TMA (cp.async.bulk.tensor, 128-byte swizzle) fills a ring of STAGES shared-memory stages, each
//   signalled by a "full" mbarrier (expect_tx of the stage's bytes); wgmma.mma_async reads A
//   K-major and B MN-major (N contiguous, the .trans form) straight from those stages through
//   matrix descriptors, and each consumer warp releases a stage on its "empty" mbarrier once the
//   wgmma that read it has retired (wait_group 1: one group stays in flight).
//   Warp specialisation: warpgroup 0 is the producer (one thread issues the copies; setmaxnreg
//   gives its registers away), warpgroups 1..CONSUMERS each own 64 rows × BN columns of the
//   BM × BN block tile in BN / 2 float accumulators a thread (setmaxnreg raises them to 232).
// Why: wgmma reads its operands from shared memory itself, with no ldmatrix and no register
//   fragments, so the issue path that capped mma.sync at ~0.47x cuBLAS is gone; a 128×256 tile
//   with BK = 64 moves (128 + 256) × 64 × 2 = 48 KB per 2·128·256·64 = 4.2 MFLOP (85 FLOP a byte
//   of L2 traffic), and the producer keeps STAGES - 1 stages in flight while the consumers compute.
// Block order: grouped (GROUP_M tile rows walked column by column) so blocks running together
//   share A and B panels in L2.
// Shapes: TMA needs 16-byte global strides, so this path needs K and N multiples of 8 (the launch
//   plan checks); the maps zero-fill past M, N and K, so ragged tiles need no special code until
//   the bounds-checked stores. Other K, N take tc_gemm_any, one thread per element of C.
#include <cuda_bf16.h>

#ifndef BN
#define BN 256        // block tile columns (128 or 256: the wgmma is m64nBNk16)
#endif
#ifndef STAGES
#define STAGES 4      // shared-memory ring depth
#endif
#ifndef CONSUMERS
#define CONSUMERS 2   // consumer warpgroups, 64 rows each: BM = 64 * CONSUMERS
#endif
#define BM (64 * CONSUMERS)
#define BK 64         // one 128-byte swizzle row of bf16 per row of an A tile
#define GROUP_M 8     // tile rows per rasterisation group
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BK * BN * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define THREADS (128 * (CONSUMERS + 1))
// setmaxnreg: the producer keeps 40 registers a thread, the consumers share the rest of the SM's
// 64K (128 threads a warpgroup): 40 + 2 × 232 <= 512 a thread of a warpgroup.
#define PRODUCER_REGS 40
#if CONSUMERS == 1
#define CONSUMER_REGS 240
#elif CONSUMERS == 2
#define CONSUMER_REGS 232
#else
#define CONSUMER_REGS 152
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

struct __align__(64) TensorMap { unsigned long long words[16]; };  // a CUtensorMap, by value

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// A wgmma shared-memory matrix descriptor with the 128-byte swizzle: start address, leading and
// stride byte offsets, all >> 4.
__device__ __forceinline__ unsigned long long desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr >> 4) & 0x3FFF) | (unsigned long long)((lbo >> 4) & 0x3FFF) << 16 |
           (unsigned long long)((sbo >> 4) & 0x3FFF) << 32 | 1ull << 62;
}

__device__ __forceinline__ void bar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity) {
    unsigned ok = 0;
    while (!ok)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ void tma_2d(unsigned dst, const TensorMap* map, int x, int y, unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
}

#define R4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define R16(i) R4(i), R4(i + 4), R4(i + 8), R4(i + 12)

__device__ __forceinline__ void wgmma_n128(float* d, unsigned long long da, unsigned long long db) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
                 "}, %64, %65, p, 1, 1, 0, 1; }"
                 : R16(0), R16(16), R16(32), R16(48) : "l"(da), "l"(db));
}

__device__ __forceinline__ void wgmma_n256(float* d, unsigned long long da, unsigned long long db) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
                 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
                 "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
                 "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
                 "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
                 "}, %128, %129, p, 1, 1, 0, 1; }"
                 : R16(0), R16(16), R16(32), R16(48), R16(64), R16(80), R16(96), R16(112) : "l"(da), "l"(db));
}

__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da, unsigned long long db) {
#if BN == 256
    wgmma_n256(d, da, db);
#else
    wgmma_n128(d, da, db);
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) tc_gemm(const __grid_constant__ TensorMap mapA,
                                                                 const __grid_constant__ TensorMap mapB,
                                                                 float* __restrict__ C, int M, int N, int K) {
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned base = (smem_addr(raw) + 1023) & ~1023u;  // 128-byte swizzle atoms are 1024-aligned
    const int tid = threadIdx.x, wg = tid / 128, tiles = (K + BK - 1) / BK;
    // grouped rasterisation: GROUP_M tile rows, walked column by column
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int group = blockIdx.x / (GROUP_M * tiles_n), rows = min(GROUP_M, tiles_m - group * GROUP_M);
    const int in_group = blockIdx.x % (GROUP_M * tiles_n);
    const int m0 = (group * GROUP_M + in_group % rows) * BM, n0 = (in_group / rows) * BN;
    if (tid == 0) {
        for (int s = 0; s < STAGES; s++) {
            bar_init(smem_addr(&full[s]), 1);                 // the producer's expect_tx arrival
            bar_init(smem_addr(&empty[s]), 4 * CONSUMERS);    // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) {  // producer warpgroup
        asm volatile("setmaxnreg.dec.sync.aligned.u32 " STR(PRODUCER_REGS) ";");
        if (tid == 0) {
            for (int t = 0; t < tiles; t++) {
                const int s = t % STAGES;
                const unsigned st = base + s * STAGE_BYTES, bar = smem_addr(&full[s]);
                if (t >= STAGES) bar_wait(smem_addr(&empty[s]), (t / STAGES - 1) & 1);
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(STAGE_BYTES) : "memory");
                tma_2d(st, &mapA, t * BK, m0, bar);
                for (int j = 0; j < BN / 64; j++)  // B: BN / 64 boxes of 64 n × BK k, 8 KB apart
                    tma_2d(st + A_BYTES + j * (BK * 128), &mapB, n0 + 64 * j, t * BK, bar);
            }
        }
    } else {  // consumer warpgroups
        asm volatile("setmaxnreg.inc.sync.aligned.u32 " STR(CONSUMER_REGS) ";");
        const int c = wg - 1, warp = (tid % 128) / 32, lane = tid % 32;
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
        for (int t = 0; t < tiles; t++) {
            const int s = t % STAGES;
            const unsigned st = base + s * STAGE_BYTES;
            bar_wait(smem_addr(&full[s]), (t / STAGES) & 1);
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
            for (int ks = 0; ks < BK / 16; ks++) {
                // A: this warpgroup's 64 rows of 128 bytes, 8-row groups 1024 B apart; k16 = 32 B along a row.
                // B: 64-n blocks BK * 128 B apart (LBO), 8-k groups 1024 B apart (SBO); k16 = 2 groups.
                wgmma_tile(d, desc(st + c * 64 * 128 + ks * 32, 16, 1024),
                           desc(st + A_BYTES + ks * 16 * 128, BK * 128, 1024));
            }
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            // one group stays in flight: the previous tile's wgmmas have retired, so its stage is free
            asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
            if (t > 0 && lane == 0)
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(&empty[(t - 1) % STAGES])) : "memory");
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        // d[i]: row 16 warp + g (+8 for i % 4 >= 2), column 8 (i / 4) + 2 t4 + i % 2, as mma.sync's C
        const int g = lane / 4, t4 = lane % 4, row0 = m0 + c * 64 + 16 * warp + g;
#pragma unroll
        for (int i = 0; i < BN / 2; i += 2) {
            const int row = row0 + 8 * ((i % 4) / 2), col = n0 + 8 * (i / 4) + 2 * t4;
            if (row < M && col < N)  // N is even here, so col + 1 < N too
                *reinterpret_cast<float2*>(C + (size_t)row * N + col) = make_float2(d[i], d[i + 1]);
        }
    }
}

// Any M, N, K (K or N not a multiple of 8, where TMA cannot address the rows): one thread per
// element of C, products of bf16 values exact in float32.
extern "C" __global__ void tc_gemm_any(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += __bfloat162float(A[(size_t)row * K + k]) * __bfloat162float(B[(size_t)k * N + col]);
    C[(size_t)row * N + col] = sum;
}
