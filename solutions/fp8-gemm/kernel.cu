// C = (A·As) (B·Bs)^T with DeepSeek-V3's block scales: A (M×K) and B (N×K) e4m3, As one float per
//   1×128 group of A (a row's 128 k), Bs one float per 128×128 block of B; C bf16, M×N.
// Hopper pipeline: TMA (cp.async.bulk.tensor, 128-byte swizzle) fills a ring of STAGES stages, one
//   128-wide k group each (a 128×128-byte box of A and one of B), each signalled by a "full"
//   mbarrier; warpgroup 0 is the producer (one thread; setmaxnreg gives its registers away),
//   warpgroups 1-2 consume 64 rows × 128 columns of the 128×128 tile each.
// Per k group a consumer runs four wgmma.m64n128k32 (e4m3, both operands K-major from
//   descriptors) into a fresh float partial (the first with scale-d false: D = A·B, no zeroing), waits for them (wgmma.wait_group 0), releases the
//   stage (one arrival per warp on its "empty" mbarrier) and promotes: acc += partial ·
//   As[m][g] · Bs[n/128][g] on the CUDA cores (DeepSeek-V3's promotion, which also keeps the
//   tensor cores' limited-precision fp8 sums short). While one warpgroup promotes, the other's
//   wgmmas keep the tensor cores busy.
// Why 128×128: the partial and the accumulators take 2 × 64 registers a thread; a 128×256 tile
//   would need 256. BN = 128 also makes Bs one scalar per tile and group.
// Shapes: K is a multiple of 128 (the kata's), so every row stride is a multiple of TMA's 16
//   bytes; the maps zero-fill rows past M and N, and the stores are bounds-checked.
#include <cuda_bf16.h>

#ifndef STAGES
#define STAGES 4
#endif
#define CONSUMERS 2
#define BM 128
#define BN 128
#define BK 128        // one scale group, one 128-byte swizzle row
#define GROUP_M 8     // tile rows per rasterisation group
#define A_BYTES (BM * BK)
#define B_BYTES (BN * BK)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define THREADS (128 * (CONSUMERS + 1))

struct __align__(64) TensorMap { unsigned long long words[16]; };  // a CUtensorMap, by value

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// A K-major wgmma descriptor, 128-byte swizzle: 8-row groups 1024 bytes apart (SBO).
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
    return (unsigned long long)((addr >> 4) & 0x3FFF) | 1ull << 16 | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
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

// One warpgroup's m64n128k32 e4m3 × e4m3 into 64 float accumulators a thread, both operands
// K-major from descriptors (8-bit wgmma has no transposed form; B is stored [n][k], so it is);
// accumulate 0 is scale-d false: D = A·B, the accumulators' old values ignored.
__device__ __forceinline__ void wgmma_e4m3(float* d, unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
                 "}, %64, %65, p, 1, 1; }"
                 : R16(0), R16(16), R16(32), R16(48) : "l"(da), "l"(db), "r"(accumulate));
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) fp8_gemm(
    const __grid_constant__ TensorMap mapA, const float* __restrict__ As, const __grid_constant__ TensorMap mapB,
    const float* __restrict__ Bs, __nv_bfloat16* __restrict__ C, int M, int N, int K)
{
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned base = (smem_addr(raw) + 1023) & ~1023u;  // 128-byte swizzle atoms are 1024-aligned
    const int tid = threadIdx.x, wg = tid / 128, groups = K / BK;
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
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            for (int kg = 0; kg < groups; kg++) {
                const int s = kg % STAGES;
                const unsigned st = base + s * STAGE_BYTES, bar = smem_addr(&full[s]);
                if (kg >= STAGES) bar_wait(smem_addr(&empty[s]), (kg / STAGES - 1) & 1);
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(STAGE_BYTES) : "memory");
                tma_2d(st, &mapA, kg * BK, m0, bar);
                tma_2d(st + A_BYTES, &mapB, kg * BK, n0, bar);
            }
        }
    } else {  // consumer warpgroups
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int c = wg - 1, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
        const int row = m0 + c * 64 + 16 * warp + g;  // this thread's rows: row and row + 8
        const float* as0 = As + (size_t)min(row, M - 1) * groups;      // clamped: rows past M are not stored
        const float* as1 = As + (size_t)min(row + 8, M - 1) * groups;
        const float* bs = Bs + (size_t)(n0 / 128) * groups;
        float acc[64], part[64];
#pragma unroll
        for (int i = 0; i < 64; i++) acc[i] = 0.0f;
        for (int kg = 0; kg < groups; kg++) {
            const int s = kg % STAGES;
            const unsigned st = base + s * STAGE_BYTES;
            const float sb = bs[kg], s0 = as0[kg] * sb, s1 = as1[kg] * sb;  // loads in flight during the wgmmas
            bar_wait(smem_addr(&full[s]), (kg / STAGES) & 1);
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
            for (int ks = 0; ks < BK / 32; ks++)  // k32 = 32 bytes along the swizzled 128-byte rows
                wgmma_e4m3(part, desc(st + c * 64 * 128 + ks * 32), desc(st + A_BYTES + ks * 32), ks);
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            if (lane == 0)  // this warp's wgmmas have retired: the stage may be refilled
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(&empty[s])) : "memory");
            // part[i]: row 16 warp + g (+8 for i % 4 >= 2), column 8 (i / 4) + 2 t4 + i % 2
#pragma unroll
            for (int i = 0; i < 64; i++) acc[i] += part[i] * ((i % 4) < 2 ? s0 : s1);
        }
#pragma unroll
        for (int i = 0; i < 64; i += 2) {
            const int r = row + 8 * ((i % 4) / 2), col = n0 + 8 * (i / 4) + 2 * t4;
            if (r >= M) continue;
            __nv_bfloat16* out = C + (size_t)r * N + col;
            if (col + 1 < N && N % 2 == 0) {  // 4-byte aligned pair
                *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(acc[i], acc[i + 1]);
            } else {
                if (col < N) out[0] = __float2bfloat16_rn(acc[i]);
                if (col + 1 < N) out[1] = __float2bfloat16_rn(acc[i + 1]);
            }
        }
    }
}
