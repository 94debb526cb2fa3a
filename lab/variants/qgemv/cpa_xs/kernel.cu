// y = W·x for decode: W is N×K int4 (eight signed nibbles per int32, low nibble first), one fp16
// scale per 128 weights of a row, x fp16, y float32.
// Floor: the packed weights are read once, 4·N·ceil(K/8) bytes, plus 2·N·ceil(K/128) of scales:
//   4096² 8.7 MB (2.0 µs at 4.3 TB/s), 14336×4096 30 MB (7.1 µs), 28672×8192 118 MB (27.5 µs).
//   Measured (H200): 8.2 / 17.0 / 47.6 µs at 4096², 14336×4096, 28672×8192, about 60 % of a
//   roofline that counts the 3 µs empty launch (lab/tc_notes.md: what may still limit it).
// Why tensor cores: on CUDA cores each weight costs a dequantise (shift, convert: I2F runs at a
//   quarter of the integer rate) and an FFMA, ~6 instructions a weight, which is what bounded the
//   one-warp-per-row kernel at 1.5 TB/s. Here a weight costs ~1.8 instructions: two nibbles become
//   an exact half2 with one LOP3 and one HSUB2/HFMA2 (0x6400 magic number), and mma.sync m16n8k16
//   multiplies 256 of them by x in one instruction (products exact, float32 accumulation).
// Layout: a block is a 16-row tile; its 8 warps split the groups of 128 along K (warp w takes
//   groups w, w+8, ...: at any moment the 8 warps read 512 contiguous bytes of each row), and a
//   warp loads UNROLL groups (2·UNROLL uint4 a lane, UNROLL KB a warp) before using any, so a
//   4096-deep row is in flight in one go. Lane (g, t) = (lane/4, lane%4) holds rows g and g+8 and
//   words 4t..4t+3 of the group. The order of k inside an mma is ours to choose as long as A and
//   B agree: A's register pair (k 2t, 2t+1) holds nibbles (p, p+4) of a word and B's pair holds
//   (x[p], x[p+4]) of the same word, built by a byte permute. Every column of B is x, so each
//   lane's d0 and d2 are the group sums of rows g and g+8; the group's scale is applied once in
//   float32, then the warps' sums meet in shared memory.
// Ragged shapes: rows past N and words past a row's end are zero words (a zero nibble XOR 8 minus
//   8 is 0); the nibbles past K in the last word are masked off and x past K is never read. Rows
//   are 16-byte aligned only when ceil(K/8) % 4 == 0; otherwise words are read one at a time.
// cpa_xs (variant): cpa_linear's stream with fewer instructions a weight (it was issue-bound on
//   the H200: 64 % issue-active, ~165 instructions a warp a group): x staged once a block in shared
//   memory already in mma B-pair order (one conflict-free LDS.128 a word, no PRMT), GPS groups a
//   warp a stage (one barrier, wait and copy issue per GPS groups), copy addresses advanced rather
//   than recomputed, dynamic shared memory (ring and x). Taken when K % (1024 GPS) == 0 and the
//   shared memory fits; other K take the solution's rounds.
#include <cuda_fp16.h>

#define WARPS 8   // warps per 16-row tile, splitting its groups
#define UNROLL 4  // groups a warp loads before it computes
#ifndef MINB
#define MINB 3  // blocks an SM the stream kernel is built for
#endif
#ifndef STAGES
#define STAGES 3  // cp.async ring depth (STAGES - 1 stages in flight)
#endif
#ifndef GPS
#define GPS 2  // groups of 128 a warp computes a stage: a stage is 16 rows x 512 GPS bytes
#endif

// A stage of the ring: 16 rows x 32 GPS uint4 of weights (chunk c of row r at c ^ 4 (r & 1)) and
// the 16 rows' 8 GPS scales.
struct __align__(16) Stage {
    uint4 w[16][32 * GPS];
    uint4 s[16][GPS];
};

__device__ __forceinline__ void cp16(void* dst, const void* src, bool inside) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(d), "l"(src), "r"(inside ? 16 : 0));
}

// Nibbles (p, p+4) of w as an exact half2 (p = 0, 1 from w; 2, 3 from w >> 8). XOR 8 makes a
// signed nibble n the unsigned n + 8, OR 0x6400 makes a half 1024 + (n + 8) (or 1024 + 16 (n + 8)
// one nibble up): both folded into one constant, then one HSUB2 (HFMA2) leaves n.
__device__ __forceinline__ __half2 nib_lo(unsigned w) {
    unsigned h;  // (w & mask) ^ c as one LOP3 (0x6A: (a & b) ^ c)
    asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(h) : "r"(w), "n"(0x000F000F), "n"(0x64086408));
    return __hsub2(*reinterpret_cast<const __half2*>(&h), __half2half2(__ushort_as_half(0x6408)));
}
__device__ __forceinline__ __half2 nib_hi(unsigned w) {
    unsigned h;
    asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(h) : "r"(w), "n"(0x00F000F0), "n"(0x64806480));
    return __hfma2(*reinterpret_cast<const __half2*>(&h), __half2half2(__ushort_as_half(0x2C00)),
                   __half2half2(__ushort_as_half(0xD480)));  // h / 16 - 72
}
__device__ __forceinline__ unsigned bits(__half2 h) { return *reinterpret_cast<const unsigned*>(&h); }

__device__ __forceinline__ void mma(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                    unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// One word of rows g and g+8 (a, b) times its 8 x values: two k16 mmas. A's pair for k (2t, 2t+1)
// is nibbles (p, p+4) and B's the matching (x[p], x[p+4]), p = 0, 1 and then 2, 3.
__device__ __forceinline__ void word_mma(float (&d)[4], unsigned a, unsigned b, uint4 xv) {
    const unsigned a8 = a >> 8, b8 = b >> 8;
    mma(d, bits(nib_lo(a)), bits(nib_lo(b)), bits(nib_hi(a)), bits(nib_hi(b)),
        __byte_perm(xv.x, xv.z, 0x5410), __byte_perm(xv.x, xv.z, 0x7632));
    mma(d, bits(nib_lo(a8)), bits(nib_lo(b8)), bits(nib_hi(a8)), bits(nib_hi(b8)),
        __byte_perm(xv.y, xv.w, 0x5410), __byte_perm(xv.y, xv.w, 0x7632));
}

// Word wd of a row holds k = 8 wd .. 8 wd + 7; only a row's last word can reach past K.
__device__ __forceinline__ bool whole_word(int wd, int K) { return 8 * wd + 8 <= K; }

// Word `wd` of row r (0 past N or past the row), its padding nibbles past K cleared.
__device__ __forceinline__ unsigned word_at(const unsigned* Wq, int r, int wd, int N, int K, int words) {
    if (r >= N || wd >= words) return 0u;
    const unsigned w = __ldcs(Wq + (size_t)r * words + wd);
    return whole_word(wd, K) ? w : w & ((1u << (4 * (K % 8))) - 1u);
}

// The 8 halves of x for word wd (zeros past K), as a uint4.
__device__ __forceinline__ uint4 x_at(const __half* x, int wd, int K) {
    if (whole_word(wd, K)) return __ldg(reinterpret_cast<const uint4*>(x) + wd);
    unsigned short h[8];
#pragma unroll
    for (int j = 0; j < 8; j++) h[j] = 8 * wd + j < K ? __half_as_ushort(x[8 * wd + j]) : 0;
    return make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
qgemv(const int* __restrict__ Wq, const __half* __restrict__ scales, const __half* __restrict__ x,
      float* __restrict__ y, int N, int K)
{
    __shared__ float part[WARPS][16];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const int r0 = blockIdx.x * 16 + g, r1 = r0 + 8;
    const int words = (K + 7) / 8, ngroups = (words + 15) / 16;
    const int srow = (K + 127) / 128;  // a row of scales
    const unsigned* W = reinterpret_cast<const unsigned*>(Wq);
    // Rows start on 16 bytes when their word count is a multiple of 4: then whole groups are read
    // as one uint4 per row and lane, x as a uint4 per word.
    const bool aligned = words % 4 == 0;
    const uint4* qa = reinterpret_cast<const uint4*>(W + (size_t)min(r0, N - 1) * words) + t;
    const uint4* qb = reinterpret_cast<const uint4*>(W + (size_t)min(r1, N - 1) * words) + t;
    const uint4* xq = reinterpret_cast<const uint4*>(x) + 4 * t;
    const __half* sa_row = scales + (size_t)min(r0, N - 1) * srow;
    const __half* sb_row = scales + (size_t)min(r1, N - 1) * srow;
    float acc0 = 0.0f, acc1 = 0.0f;
    // A round: UNROLL groups of this warp, every load before any use. A fast round (all its groups
    // inside K, rows aligned) is one branch-free block: 2·UNROLL uint4 loads leave together and
    // the UNROLL mma chains interleave. Otherwise (the last round of a ragged K) every word and x
    // value is checked.
    auto round = [&](const int base, const bool fast) {
        unsigned wa[UNROLL][4], wb[UNROLL][4];
        float sa[UNROLL], sb[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int grp = base + u * WARPS + warp;
            if (fast) {
                const uint4 z = make_uint4(0u, 0u, 0u, 0u);
                const uint4 a = r0 < N ? __ldcs(qa + 4 * grp) : z, b = r1 < N ? __ldcs(qb + 4 * grp) : z;
                wa[u][0] = a.x; wa[u][1] = a.y; wa[u][2] = a.z; wa[u][3] = a.w;
                wb[u][0] = b.x; wb[u][1] = b.y; wb[u][2] = b.z; wb[u][3] = b.w;
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++) {  // zero past the row, hence past the last group
                    wa[u][i] = word_at(W, r0, 16 * grp + 4 * t + i, N, K, words);
                    wb[u][i] = word_at(W, r1, 16 * grp + 4 * t + i, N, K, words);
                }
            }
            const bool in = fast || grp < ngroups;
            sa[u] = r0 < N && in ? __half2float(sa_row[grp]) : 0.0f;
            sb[u] = r1 < N && in ? __half2float(sb_row[grp]) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int grp = base + u * WARPS + warp;
            if (!fast && grp >= ngroups) continue;  // warp-uniform: mma.sync needs the whole warp
            float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int i = 0; i < 4; i++)
                word_mma(d, wa[u][i], wb[u][i], fast ? __ldg(xq + 16 * grp + i) : x_at(x, 16 * grp + 4 * t + i, K));
            acc0 = fmaf(d[0], sa[u], acc0);  // d[0]: row g, d[2]: row g + 8 (every column is x)
            acc1 = fmaf(d[2], sb[u], acc1);
        }
    };
    for (int base = 0; base < ngroups; base += WARPS * UNROLL) {
        if (aligned && 128 * (base + WARPS * UNROLL) <= K)
            round(base, true);
        else
            round(base, false);
    }
    if (t == 0) {
        part[warp][g] = acc0;
        part[warp][g + 8] = acc1;
    }
    __syncthreads();
    if (threadIdx.x < 16) {
        const int r = blockIdx.x * 16 + threadIdx.x;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; w++) s += part[w][threadIdx.x];
        if (r < N) y[r] = s;
    }
}

// Word wd = 16 G + 4 t + i of x (group G, lane t's word i), as the B registers of its two mmas,
// sits at uint4 16 G + 4 i + t of the staged x: the 4 words an LDS.128 phase reads (t = 0..3)
// are 64 contiguous bytes, conflict-free, and lane t's word i is at a constant offset 4 i from its
// base.
__device__ __forceinline__ int xpos(int wd) { return (wd & ~15) | (wd & 3) << 2 | (wd >> 2 & 3); }

// K % (1024 GPS) == 0: the tile streams through the cp.async ring (the launch plan picks this
// kernel and passes STAGES * sizeof(Stage) + 2K bytes of dynamic shared memory).
extern "C" __global__ void __launch_bounds__(WARPS * 32, MINB)
qgemv_stream(const int* __restrict__ Wq, const __half* __restrict__ scales, const __half* __restrict__ x,
             float* __restrict__ y, int N, int K)
{
    extern __shared__ uint4 dyn[];
    Stage* ring = reinterpret_cast<Stage*>(dyn);
    uint4* xs = dyn + STAGES * sizeof(Stage) / 16;
    __shared__ float part[WARPS][16];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4, tid = threadIdx.x;
    const int words = K / 8, srow = K / 128, stages = K / (1024 * GPS), row0 = blockIdx.x * 16;
    // This thread's copy sources: rows warp and warp + 8 of the tile (clamped; zero-filled past N),
    // and for threads 0-(16 GPS - 1) the scales of row tid % 16; each moves on by one stage's bytes.
    const int ra = row0 + warp, rb = ra + 8, rs = row0 + tid % 16;
    const uint4* srca = reinterpret_cast<const uint4*>(Wq + (size_t)min(ra, N - 1) * words) + lane;
    const uint4* srcb = reinterpret_cast<const uint4*>(Wq + (size_t)min(rb, N - 1) * words) + lane;
    const uint4* srcs = reinterpret_cast<const uint4*>(scales + (size_t)min(rs, N - 1) * srow);
    const bool ina = ra < N, inb = rb < N, ins = rs < N;
    int wslot = 0;  // the slot the next issue fills: issues come in stage order
    auto issue = [&]() {
        Stage& slot = ring[wslot];
        wslot = wslot == STAGES - 1 ? 0 : wslot + 1;
#pragma unroll
        for (int j = 0; j < GPS; j++) {
            const int c = (32 * j + lane) ^ ((warp & 1) << 2);
            cp16(&slot.w[warp][c], srca + 32 * j, ina);
            cp16(&slot.w[warp + 8][c], srcb + 32 * j, inb);
        }
        if (tid < 16 * GPS) cp16(&slot.s[tid % 16][tid / 16], srcs + tid / 16, ins);
        srca += 32 * GPS, srcb += 32 * GPS, srcs += GPS;
    };
#pragma unroll
    for (int p = 0; p < STAGES - 1; p++) {
        if (p < stages) issue();
        asm volatile("cp.async.commit_group;");  // empty groups keep the wait count uniform
    }
    // x into shared memory as B pairs (its loads overlap the ring's first copies).
    for (int wd = tid; wd < words; wd += WARPS * 32) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(x) + wd);
        xs[xpos(wd)] = make_uint4(__byte_perm(v.x, v.z, 0x5410), __byte_perm(v.x, v.z, 0x7632),
                                  __byte_perm(v.y, v.w, 0x5410), __byte_perm(v.y, v.w, 0x7632));
    }
    float acc0 = 0.0f, acc1 = 0.0f;
    const int ca = (g & 1) << 2;  // the swizzle of rows g and g + 8 (same parity)
    const uint4* xt = xs + t;     // lane t's word i of group G at xt[16 G + 4 i]
    int rslot = 0;
    for (int st = 0; st < stages; st++) {
        asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 2));  // stage st has landed
        __syncthreads();  // ... for every thread (and x); slot (st - 1) % STAGES is free
        if (st + STAGES - 1 < stages) issue();
        asm volatile("cp.async.commit_group;");
        const Stage& slot = ring[rslot];
        rslot = rslot == STAGES - 1 ? 0 : rslot + 1;
        const __half* sc = reinterpret_cast<const __half*>(slot.s);
#pragma unroll
        for (int j = 0; j < GPS; j++) {
            const int q = 8 * j + warp;  // the warp's group within the stage
            const int c = (4 * q + t) ^ ca;
            const uint4 a = slot.w[g][c], b = slot.w[g + 8][c];
            const uint4* xg = xt + 16 * (8 * GPS * st + q);
            float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            const unsigned aw[4] = {a.x, a.y, a.z, a.w}, bw[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const uint4 xv = xg[4 * i];
                const unsigned a8 = aw[i] >> 8, b8 = bw[i] >> 8;
                mma(d, bits(nib_lo(aw[i])), bits(nib_lo(bw[i])), bits(nib_hi(aw[i])), bits(nib_hi(bw[i])), xv.x, xv.y);
                mma(d, bits(nib_lo(a8)), bits(nib_lo(b8)), bits(nib_hi(a8)), bits(nib_hi(b8)), xv.z, xv.w);
            }
            acc0 = fmaf(d[0], __half2float(sc[8 * GPS * g + q]), acc0);
            acc1 = fmaf(d[2], __half2float(sc[8 * GPS * (g + 8) + q]), acc1);
        }
    }
    asm volatile("cp.async.wait_all;");
    if (t == 0) {
        part[warp][g] = acc0;
        part[warp][g + 8] = acc1;
    }
    __syncthreads();
    if (threadIdx.x < 16) {
        const int r = row0 + threadIdx.x;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; w++) s += part[w][threadIdx.x];
        if (r < N) y[r] = s;
    }
}
