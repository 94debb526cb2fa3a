// A Hopper GEMM pipeline end to end: C (M×N, float32) = A (M×K) · B (K×N), bf16 row-major, with
// TMA tensor maps (128-byte swizzle) filling a 2-stage ring signalled by mbarriers, and
// wgmma.mma_async m64n64k16 reading A K-major and B MN-major (N contiguous) from descriptors.
// One warpgroup (128 threads) per 64×64 tile of C; thread 0 is the producer. K and N are
// multiples of 8 (TMA's 16-byte strides); M is anything; the maps zero-fill past the edges.
#define STAGES 2
#define BK 64
#define STAGE_BYTES (64 * BK * 2 + BK * 64 * 2)  // an A box and a B box, 64 × 64 each

struct __align__(64) TensorMap { unsigned long long words[16]; };

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ unsigned long long desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr >> 4) & 0x3FFF) | (unsigned long long)((lbo >> 4) & 0x3FFF) << 16 |
           (unsigned long long)((sbo >> 4) & 0x3FFF) << 32 | 1ull << 62;  // 128-byte swizzle
}

__device__ __forceinline__ void load_stage(const TensorMap* a, const TensorMap* b, unsigned st, unsigned bar,
                                           int k0, int m0, int n0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(STAGE_BYTES) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(st), "l"(a), "r"(k0), "r"(m0), "r"(bar) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(st + 64 * BK * 2), "l"(b), "r"(n0), "r"(k0), "r"(bar) : "memory");
}

#define D16(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
    "+f"(d[i + 6]), "+f"(d[i + 7]), "+f"(d[i + 8]), "+f"(d[i + 9]), "+f"(d[i + 10]), "+f"(d[i + 11]), \
    "+f"(d[i + 12]), "+f"(d[i + 13]), "+f"(d[i + 14]), "+f"(d[i + 15])

extern "C" __global__ void __launch_bounds__(128) tma_wgmma_gemm(const __grid_constant__ TensorMap mapA,
                                                                 const __grid_constant__ TensorMap mapB,
                                                                 float* __restrict__ C, int M, int N, int K) {
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full[STAGES];
    const unsigned base = (smem_addr(raw) + 1023) & ~1023u;  // 128-byte swizzle atoms: 1024-aligned
    const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64, tiles = (K + BK - 1) / BK;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    if (tid == 0) {
        for (int s = 0; s < STAGES; s++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < STAGES && s < tiles; s++)
            load_stage(&mapA, &mapB, base + s * STAGE_BYTES, smem_addr(&full[s]), s * BK, m0, n0);
    }
    __syncthreads();
    float d[32];
    for (int i = 0; i < 32; i++) d[i] = 0.0f;
    for (int t = 0; t < tiles; t++) {
        const int s = t % STAGES;
        const unsigned st = base + s * STAGE_BYTES, bar = smem_addr(&full[s]);
        unsigned ok = 0;
        while (!ok)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(ok) : "r"(bar), "r"((t / STAGES) & 1) : "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        for (int ks = 0; ks < BK / 16; ks++) {
            // A: K-major, 128-byte rows, 8-row groups 1024 bytes apart; a k16 step is 32 bytes along a row.
            // B: MN-major, 128-byte rows of 64 n per k, 8-k groups 1024 apart.
            unsigned long long da = desc(st + ks * 32, 16, 1024);
            unsigned long long db = desc(st + 64 * BK * 2 + ks * 16 * 128, 64 * BK * 2, 1024);
            asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                         "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                         "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"
                         "%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 1; }"
                         : D16(0), D16(16) : "l"(da), "l"(db));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        __syncthreads();  // every warp has finished reading stage s: it may be refilled
        if (tid == 0 && t + STAGES < tiles)
            load_stage(&mapA, &mapB, st, bar, (t + STAGES) * BK, m0, n0);
    }
    const int g = lane / 4, t4 = lane % 4;
    for (int i = 0; i < 32; i++) {
        int row = m0 + 16 * warp + g + 8 * ((i % 4) / 2), col = n0 + 8 * (i / 4) + 2 * t4 + i % 2;
        if (row < M && col < N) C[(size_t)row * N + col] = d[i];
    }
}
