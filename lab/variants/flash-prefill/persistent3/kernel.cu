// O = softmax(Q·Kᵀ/√D, optional causal mask)·V on Hopper's tensor cores: FlashAttention-3's forward
//   pass for prefill. Q, K, V, O are bf16 B×H×S×D (D = 64 or 128); scores and sums are float32.
// A block owns BM = 128 query rows of one (batch, head) and has three warpgroups:
//   - warpgroup 0 produces: one thread loads the Q tile once, then walks the key blocks, filling a
//     ring of `stages` stages (the launch plan's argument) of K and V tiles (BN keys each) by TMA (cp.async.bulk.tensor, 3-D maps
//     (d, s, b·h) so rows past S arrive as zeros, 128-byte swizzle), each tile signalling its own
//     "full" mbarrier (expect_tx of its bytes); before refilling a stage it waits on the stage's
//     "empty" mbarrier. setmaxnreg gives its registers to the consumers.
//   - warpgroups 1 and 2 consume, 64 query rows each. Per key block: S = Q·Kᵀ with
//     wgmma.m64nBNk16 (Q and K both K-major in shared memory, D / 16 k steps), the online softmax
//     on S in registers, then O += P·V with wgmma's register-A form: the accumulator layout of the
//     first wgmma (mma.sync's C fragment repeated every 8 columns) packed to bf16 pairs is exactly
//     the register-A fragment (mma.sync's m16n8k16 A) of the second, so P never leaves registers.
//     V is the B operand "MN-major" (d contiguous: the transposed descriptor, imm-trans-b = 1).
//     After the P·V wgmmas retire (wait_group 0) each warp releases the stage (empty mbarrier).
// Softmax: scores in log2 units (scale = log2(e) / sqrt(D) folded into one FFMA before exp2f); per
//   row a running max m (two quad shuffles a block) and a per-thread partial sum l (reduced over the
//   quad once at the end: the quad shares m, so its partial sums rescale alike). Masking (keys past
//   S, keys past the row with causal) only in the blocks that need it. Causal: key blocks past the
//   tile's last row are never loaded; tiles are scheduled longest first (blockIdx.y reversed).
// Shared memory (dynamic, 1024-aligned for the 128-byte swizzle atoms): Q, then stages × (K, V);
//   each tile stored as D / 64 column panels of (rows × 128 bytes), one TMA box each.
#include <cuda_bf16.h>

#ifndef BN
#define BN 128        // keys per block (the S wgmma is m64nBNk16): 64 or 128
#endif
#define MAX_STAGES 4  // the K/V ring's depth is the launch plan's `stages` argument, 1..MAX_STAGES
#define BM 128        // query rows a block: two consumer warpgroups of 64
#define THREADS 384
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
#define NEG_INF __int_as_float(0xff800000)
#define STR_(x) #x
#define STR(x) STR_(x)

struct __align__(64) TensorMap { unsigned long long words[16]; };  // a CUtensorMap, by value

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// wgmma shared-memory matrix descriptor, 128-byte swizzle: start, leading and stride byte offsets (>> 4).
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

__device__ __forceinline__ void expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void tma_3d(unsigned dst, const TensorMap* map, int x, int y, int z, unsigned bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3, %4}], [%5];"
                 :: "r"(dst), "l"(map), "r"(x), "r"(y), "r"(z), "r"(bar) : "memory");
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&v);
}

#define R4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define R16(i) R4(i), R4(i + 4), R4(i + 8), R4(i + 12)
#define L32 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
            "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define L64 L32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
            "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"

// S (+)= A·B, A and B K-major in shared memory; accumulate = 0 overwrites d.
__device__ __forceinline__ void wgmma_ss_n128(float* d, unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" L64 "}, %64, %65, p, 1, 1, 0, 0; }"
                 : R16(0), R16(16), R16(32), R16(48) : "l"(da), "l"(db), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_ss_n64(float* d, unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" L32 "}, %32, %33, p, 1, 1, 0, 0; }"
                 : R16(0), R16(16) : "l"(da), "l"(db), "r"(accumulate));
}
// O += A·B, A from registers (mma.sync's A fragment per warp), B MN-major in shared memory.
__device__ __forceinline__ void wgmma_rs_n128(float* d, const unsigned* a, unsigned long long db) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" L64 "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1; }"
                 : R16(0), R16(16), R16(32), R16(48) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}
__device__ __forceinline__ void wgmma_rs_n64(float* d, const unsigned* a, unsigned long long db) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" L32 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1; }"
                 : R16(0), R16(16) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

template <int D>
__device__ __forceinline__ void flash_block(const TensorMap* mapQ, const TensorMap* mapK, const TensorMap* mapV,
                                            unsigned short* __restrict__ O, int S, int causal, int stages, int BH)
{
    constexpr int PANELS = D / 64;                 // 128-byte column panels of a tile
    constexpr int Q_BYTES = BM * D * 2, KV_BYTES = BN * D * 2;
    constexpr int STAGE_BYTES = 2 * KV_BYTES;      // K then V
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full_k[MAX_STAGES], full_v[MAX_STAGES], empty[MAX_STAGES], q_full, q_empty;
    const unsigned base = (smem_addr(raw) + 1023) & ~1023u;
    const unsigned sq = base, ring = base + Q_BYTES;
    const int tid = threadIdx.x, wg = tid / 128;
    // Persistent: gridDim.x blocks walk the BH × nq tiles, longest first (tile index i: row tile
    // nq - 1 - i / BH of (b, h) = i % BH), in a snake (round r takes r·G + b, or r·G + G - 1 - b for
    // odd r), which balances the causal tiles as well as the hardware's own longest-first would.
    const int nq = (S + BM - 1) / BM, tiles = nq * BH, G = gridDim.x;
    auto tile_of = [&](int r) { return r * G + ((r & 1) ? G - 1 - (int)blockIdx.x : (int)blockIdx.x); };
    auto blocks_of = [&](int q0) { return ((causal ? min(S, q0 + BM) : S) + BN - 1) / BN; };
    if (tid == 0) {
        for (int s = 0; s < stages; s++) {
            bar_init(smem_addr(&full_k[s]), 1);
            bar_init(smem_addr(&full_v[s]), 1);
            bar_init(smem_addr(&empty[s]), 8);  // one arrival per consumer warp
        }
        bar_init(smem_addr(&q_full), 1);
        bar_init(smem_addr(&q_empty), 8);  // the consumers are done with Q (all S wgmmas retired)
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {  // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 " STR(PRODUCER_REGS) ";");
        if (tid == 0) {
            int s = 0, phase = 0, loads = 0;  // stage s, its phase-th use; K/V tiles loaded so far
            for (int r = 0, i; (i = tile_of(r)) < tiles; r++) {
            const int bh = i % BH, q0 = (nq - 1 - i / BH) * BM, blocks = blocks_of(q0);
            if (r > 0) bar_wait(smem_addr(&q_empty), (r - 1) & 1);
            expect_tx(smem_addr(&q_full), Q_BYTES);
            for (int p = 0; p < PANELS; p++) tma_3d(sq + p * BM * 128, mapQ, 64 * p, q0, bh, smem_addr(&q_full));
            for (int j = 0; j < blocks; j++, loads++) {
                const unsigned st = ring + s * STAGE_BYTES;
                if (loads >= stages) bar_wait(smem_addr(&empty[s]), phase ^ 1);  // the consumers freed it
                expect_tx(smem_addr(&full_k[s]), KV_BYTES);
                for (int p = 0; p < PANELS; p++) tma_3d(st + p * BN * 128, mapK, 64 * p, j * BN, bh, smem_addr(&full_k[s]));
                expect_tx(smem_addr(&full_v[s]), KV_BYTES);
                for (int p = 0; p < PANELS; p++)
                    tma_3d(st + KV_BYTES + p * BN * 128, mapV, 64 * p, j * BN, bh, smem_addr(&full_v[s]));
                if (++s == stages) s = 0, phase ^= 1;
            }
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 " STR(CONSUMER_REGS) ";");
    const int c = wg - 1, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const float scale = 1.44269504f * rsqrtf((float)D);
    int row0, first_row;  // this thread's rows (row0 and row0 + 8), the warpgroup's first row: per tile
    const unsigned qc = sq + c * 64 * 128;         // this warpgroup's 64 rows of each Q panel

    float o[D / 2], m[2], l[2], alpha[2];
    float d[BN / 2];          // S of the current block, then its probabilities (float) in place
    unsigned pa[BN / 16][4];  // P of the previous block as register-A fragments

    // S = Q·K_jᵀ into d (issued, not waited)
    auto issue_s = [&](unsigned sk) {
#pragma unroll
        for (int ks = 0; ks < D / 16; ks++) {
            // Q and K: 128-byte rows, 8-row groups 1024 B apart; k16 = 32 B along a row of panel ks / 4
            const unsigned long long da = desc(qc + (ks / 4) * BM * 128 + (ks % 4) * 32, 16, 1024);
            const unsigned long long db = desc(sk + (ks / 4) * BN * 128 + (ks % 4) * 32, 16, 1024);
#if BN == 128
            wgmma_ss_n128(d, da, db, ks);
#else
            wgmma_ss_n64(d, da, db, ks);
#endif
        }
        wg_commit();
    };
    // O += P·V_j from pa (issued, not waited)
    auto issue_pv = [&](unsigned sv) {
        wg_fence();  // (as FA3 does before each GEMM; the emulator wants one per accumulator set)
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            // V [key][d] is B MN-major: 64-d panels BN·128 B apart (LBO), 8-key groups 1024 B apart (SBO)
            const unsigned long long db = desc(sv + kk * 16 * 128, BN * 128, 1024);
            if constexpr (D == 128) wgmma_rs_n128(o, pa[kk], db);
            else wgmma_rs_n64(o, pa[kk], db);
        }
        wg_commit();
    };
    // the online softmax of block k0 on d: mask, new max, alpha, probabilities in place, partial sums
    auto softmax = [&](int k0) {
        // d[e]: row row0 + 8 ((e / 2) % 2), key k0 + 8 (e / 4) + 2 t + e % 2
        if (k0 + BN > S || (causal && k0 + BN - 1 > first_row)) {
#pragma unroll
            for (int e = 0; e < BN / 2; e++) {
                const int key = k0 + 8 * (e / 4) + 2 * t + (e & 1), row = row0 + 8 * ((e >> 1) & 1);
                if (key >= S || (causal && key > row)) d[e] = NEG_INF;
            }
        }
        float ms[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float mt = m[h];
#pragma unroll
            for (int e = 2 * h; e < BN / 2; e += 4) mt = fmaxf(mt, fmaxf(d[e], d[e + 1]));
            mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
            mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
            // a row with nothing unmasked yet keeps max -inf: subtract 0 instead (no inf - inf)
            alpha[h] = mt == NEG_INF ? 1.0f : exp2f((m[h] - mt) * scale);
            ms[h] = mt == NEG_INF ? 0.0f : mt * scale;
            m[h] = mt;
            l[h] *= alpha[h];
        }
#pragma unroll
        for (int e = 0; e < BN / 2; e++) {
            d[e] = exp2f(fmaf(d[e], scale, -ms[(e >> 1) & 1]));
            l[(e >> 1) & 1] += d[e];
        }
    };
    // P as register-A fragments: k step kk is n8 tiles 2kk and 2kk + 1
    auto pack_p = [&]() {
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++) pa[kk][r] = pack_bf16(d[8 * kk + 2 * r], d[8 * kk + 2 * r + 1]);
    };
    auto release = [&](int s) {
        if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(&empty[s])) : "memory");
    };

    // FlashAttention-3's intra-warpgroup overlap: S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1} are issued
    // together; the softmax of S_j runs while the P·V wgmmas do; O is rescaled once they retire.
    int s = 0, parity = 0;  // stage of the K/V tile in use, its parity-th use (across tiles)
    for (int r = 0, i; (i = tile_of(r)) < tiles; r++) {
    const int bh = i % BH, q0 = (nq - 1 - i / BH) * BM, blocks = blocks_of(q0);
    row0 = q0 + 64 * c + 16 * warp + g;
    first_row = q0 + 64 * c;
#pragma unroll
    for (int e = 0; e < D / 2; e++) o[e] = 0.0f;
    m[0] = m[1] = NEG_INF;
    l[0] = l[1] = 0.0f;
    bar_wait(smem_addr(&q_full), r & 1);
    bar_wait(smem_addr(&full_k[s]), parity);
    wg_fence();
    issue_s(ring + s * STAGE_BYTES);
    wg_wait0();
    softmax(0);
    pack_p();
    for (int j = 1; j < blocks; j++) {
        const int sp = s;  // the previous block's stage
        const unsigned svp = ring + sp * STAGE_BYTES + KV_BYTES, pp = parity;
        if (++s == stages) s = 0, parity ^= 1;
        bar_wait(smem_addr(&full_k[s]), parity);
        wg_fence();
        issue_s(ring + s * STAGE_BYTES);
        bar_wait(smem_addr(&full_v[sp]), pp);
        issue_pv(svp);
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");  // S_j is in d
        softmax(j * BN);
        wg_wait0();  // P_{j-1}·V_{j-1} retired: its stage is free, O and pa may change
        release(sp);
#pragma unroll
        for (int i = 0; i < D / 2; i++) o[i] *= alpha[(i >> 1) & 1];
        pack_p();
    }
    if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(&q_empty)) : "memory");
    bar_wait(smem_addr(&full_v[s]), parity);
    issue_pv(ring + s * STAGE_BYTES + KV_BYTES);
    wg_wait0();
    release(s);
    if (++s == stages) s = 0, parity ^= 1;

#pragma unroll
    for (int h = 0; h < 2; h++) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
        const int row = row0 + 8 * h;
        if (row >= S) continue;
        const float inv = 1.0f / l[h];
        unsigned short* out = O + ((size_t)bh * S + row) * D + 2 * t;
#pragma unroll
        for (int jn = 0; jn < D / 8; jn++)
            *reinterpret_cast<unsigned*>(out + 8 * jn) = pack_bf16(o[4 * jn + 2 * h] * inv, o[4 * jn + 2 * h + 1] * inv);
    }
    }
}

// One kernel per head dimension.
extern "C" __global__ void __launch_bounds__(THREADS, 1) flash_prefill_d64(
    const __grid_constant__ TensorMap mapQ, const __grid_constant__ TensorMap mapK,
    const __grid_constant__ TensorMap mapV, unsigned short* __restrict__ O, int S, int causal, int stages, int BH)
{
    flash_block<64>(&mapQ, &mapK, &mapV, O, S, causal, stages, BH);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) flash_prefill_d128(
    const __grid_constant__ TensorMap mapQ, const __grid_constant__ TensorMap mapK,
    const __grid_constant__ TensorMap mapV, unsigned short* __restrict__ O, int S, int causal, int stages, int BH)
{
    flash_block<128>(&mapQ, &mapK, &mapV, O, S, causal, stages, BH);
}
