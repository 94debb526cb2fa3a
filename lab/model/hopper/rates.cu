// Calibration kernels for the H200 model's Hopper terms (lab/model/hopper/rates.py times them):
//   wgmma_rate: two warpgroups a block issue wgmma.mma_async m64n256 back to back (one group in
//     flight, as a GEMM's main loop) from a fixed shared tile of pseudo-random values: the tensor
//     cores' sustained FLOP rate under the power cap, bf16 (k16) or e4m3 (k32);
//   tma_rate: one thread a block streams 32 KB tensor boxes (256 rows × 128 bytes, 128-byte swizzle)
//     through a 4-stage mbarrier ring that one consumer warp drains: the copy engine's bytes per
//     second from DRAM (a tensor far past the L2) or from L2 (a small one read again and again).
#define R4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define R16(i) R4(i), R4(i + 4), R4(i + 8), R4(i + 12)

struct __align__(64) TensorMap { unsigned long long words[16]; };

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ unsigned long long desc(unsigned addr) {  // K-major, 128-byte swizzle
    return (unsigned long long)((addr >> 4) & 0x3FFF) | 1ull << 16 | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
}

__device__ __forceinline__ void mma_bf16(float* d, unsigned long long da, unsigned long long db) {
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
                 "}, %128, %129, p, 1, 1, 0, 0; }"
                 : R16(0), R16(16), R16(32), R16(48), R16(64), R16(80), R16(96), R16(112) : "l"(da), "l"(db));
}

__device__ __forceinline__ void mma_e4m3(float* d, unsigned long long da, unsigned long long db) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
                 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
                 "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
                 "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
                 "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
                 "}, %128, %129, p, 1, 1; }"
                 : R16(0), R16(16), R16(32), R16(48), R16(64), R16(80), R16(96), R16(112) : "l"(da), "l"(db));
}

// 256 threads; 49 KB of dynamic shared memory: A 2 × 64 rows and B 256 rows of 128 bytes.
extern "C" __global__ void __launch_bounds__(256, 1) wgmma_rate(float* out, int iters, int fp8) {
    extern __shared__ unsigned char raw[];
    const unsigned base = (smem_addr(raw) + 1023) & ~1023u;
    unsigned char* tile = raw + (base - smem_addr(raw));
    // values of either type near 1 in magnitude, different per byte: the tensor cores' power (and so
    // the capped clock) depends on the data, so not zeros
    for (int i = threadIdx.x; i < 49152 / 4; i += blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u;
        reinterpret_cast<unsigned*>(tile)[i] = fp8 ? (h & 0x37373737u) | 0x30303030u : (h & 0x807F807Fu) | 0x3F003F00u;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // ordinary stores, then the tensor cores read
    __syncthreads();
    const int wg = threadIdx.x / 128;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; i++) d[i] = 0.0f;
    const unsigned a = base + wg * 64 * 128, b = base + 2 * 64 * 128;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            if (fp8) mma_e4m3(d, desc(a + ks * 32), desc(b + ks * 32));
            else mma_bf16(d, desc(a + ks * 32), desc(b + ks * 32));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; i++) s += d[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// 64 threads (warp 0 produces, warp 1 consumes); 4 × 32 KB stages + 1 KB of dynamic shared memory.
// Block b copies boxes b, b + gridDim.x, ... (each `boxes` of them) of a map over rows × 64 bf16.
extern "C" __global__ void __launch_bounds__(64, 1) tma_rate(const __grid_constant__ TensorMap map, float* out,
                                                              int box_rows_total, int boxes) {
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full[4], empty[4];
    const unsigned base = (smem_addr(raw) + 1023) & ~1023u;
    const unsigned char* tile = raw + (base - smem_addr(raw));
    if (threadIdx.x == 0) {
        for (int s = 0; s < 4; s++) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(&empty[s])));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    float acc = 0.0f;
    for (int i = 0; i < boxes; i++) {
        const int s = i % 4;
        const unsigned bar_full = smem_addr(&full[s]), bar_empty = smem_addr(&empty[s]);
        unsigned ok = 0;
        if (threadIdx.x == 0) {
            if (i >= 4)
                while (!ok)
                    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                                 : "=r"(ok) : "r"(bar_empty), "r"((i / 4 - 1) & 1) : "memory");
            const int row = ((blockIdx.x + i * gridDim.x) % box_rows_total) * 256;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 32768;" :: "r"(bar_full) : "memory");
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         :: "r"(base + s * 32768), "l"(&map), "r"(0), "r"(row), "r"(bar_full) : "memory");
        } else if (threadIdx.x == 32) {
            while (!ok)
                asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                             : "=r"(ok) : "r"(bar_full), "r"((i / 4) & 1) : "memory");
            acc += *reinterpret_cast<const float*>(tile + s * 32768 + (i % 64) * 16);
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar_empty) : "memory");
        }
    }
    if (threadIdx.x == 32) out[blockIdx.x] = acc;
}
