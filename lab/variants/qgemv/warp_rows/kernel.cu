// Variant of solutions/qgemv testing the K split: no split at all. A warp owns a 16-row tile and
// all of its K (one mma.sync tile, rows g and g + 8 of lane (g, t); every column of B is x, so
// each lane's d[0] and d[2] are already the row sums and no reduction is needed), 4 independent
// warps a 128-thread block: no shared memory, no barrier, and a warp's weight loads run as a ring
// of DEPTH groups, the next group's loads issued as soon as a group is computed (DEPTH - 1 = 3 KB a
// warp always in flight; the solution's SASS: 2 KB, wait, compute while 2 KB more leave, wait,
// compute, then nothing until the next round). At 28672 rows the 1792 warps (13.6 an SM, 5 blocks
// of 4 fit at 96 registers) are all resident at once: no tail, no block turnover.
// Predicted (H200, µs at 4096², 14336×4096, 28672×8192): ~12 / ~14 / ~36. Slow at 4096², where
// 256 warps (2 an SM, 6 KB in flight an SM) are latency-bound; best of the set at 28672×8192 if
// the bursts and the block barrier are what hold the solution to 2.5 TB/s. A confound: each row is
// streamed by one warp 64 B at a time (the solution's 8 warps read 512 B of a row together), so a
// slow result here with a fast persist_ring points at the DRAM access pattern. 96 registers.
// y = W·x for decode: W is N×K int4 (eight signed nibbles per int32, low nibble first), one fp16
// scale per 128 weights of a row, x fp16, y float32. The arithmetic (LOP3 + HSUB2/HFMA2 to exact
// half2, 8 chained mma.sync m16n8k16 per group of 128, the scale once per group in float32) and
// the ragged-shape handling are the solution's (see its header).
#include <cuda_fp16.h>

#define WPB 4    // warps (independent 16-row tiles) per block
#define DEPTH 4  // groups of 128 a warp has loaded or in flight
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


// One group of 128 weights of rows r0, r1 (= r0 + 8) held by a lane: its 4 words of each row and
// the two scales. A ring of DEPTH of these keeps DEPTH - 1 groups in flight while one is computed.
struct Grp { unsigned a[4], b[4]; float sa, sb; };

// Issue the loads of group grp (zeros when !valid: a step past the warp's work, or grp >= ngroups).
__device__ __forceinline__ void load_group(Grp& q, const unsigned* W, const __half* scales, int r0,
                                           int grp, bool valid, int N, int K, int words, int srow) {
    const int t = threadIdx.x % 4, r1 = r0 + 8;
    if (!valid) {
#pragma unroll
        for (int i = 0; i < 4; i++) q.a[i] = q.b[i] = 0u;
        q.sa = q.sb = 0.0f;
        return;
    }
    if (words % 4 == 0 && 128 * (grp + 1) <= K) {  // rows 16-byte aligned, the group inside K
        const uint4 z = make_uint4(0u, 0u, 0u, 0u);
        const uint4 a = r0 < N ? __ldcs(reinterpret_cast<const uint4*>(W + (size_t)r0 * words) + 4 * grp + t) : z;
        const uint4 b = r1 < N ? __ldcs(reinterpret_cast<const uint4*>(W + (size_t)r1 * words) + 4 * grp + t) : z;
        q.a[0] = a.x; q.a[1] = a.y; q.a[2] = a.z; q.a[3] = a.w;
        q.b[0] = b.x; q.b[1] = b.y; q.b[2] = b.z; q.b[3] = b.w;
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            q.a[i] = word_at(W, r0, 16 * grp + 4 * t + i, N, K, words);
            q.b[i] = word_at(W, r1, 16 * grp + 4 * t + i, N, K, words);
        }
    }
    q.sa = r0 < N ? __half2float(__ldg(scales + (size_t)r0 * srow + grp)) : 0.0f;
    q.sb = r1 < N ? __half2float(__ldg(scales + (size_t)r1 * srow + grp)) : 0.0f;
}

// The group's 8 chained mmas (the solution's order of operations), its scale applied in float32.
// Called by the whole warp (mma.sync), for a grp < ngroups.
__device__ __forceinline__ void compute_group(const Grp& q, const __half* x, int grp, int K,
                                              float& acc0, float& acc1) {
    const int t = threadIdx.x % 4;
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (128 * (grp + 1) <= K) {  // one branch a group, not one a word
        const uint4* xq = reinterpret_cast<const uint4*>(x) + 16 * grp + 4 * t;
        uint4 xv[4];
#pragma unroll
        for (int i = 0; i < 4; i++) xv[i] = __ldg(xq + i);
#pragma unroll
        for (int i = 0; i < 4; i++) word_mma(d, q.a[i], q.b[i], xv[i]);
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) word_mma(d, q.a[i], q.b[i], x_at(x, 16 * grp + 4 * t + i, K));
    }
    acc0 = fmaf(d[0], q.sa, acc0);  // d[0]: row g, d[2]: row g + 8 (every column is x)
    acc1 = fmaf(d[2], q.sb, acc1);
}

extern "C" __global__ void __launch_bounds__(WPB * 32)
qgemv(const int* __restrict__ Wq, const __half* __restrict__ scales, const __half* __restrict__ x,
      float* __restrict__ y, int N, int K)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const int r0 = (blockIdx.x * WPB + warp) * 16 + g;
    if (r0 - g >= N) return;  // a whole warp past the last tile (warp-uniform; no barriers here)
    const int words = (K + 7) / 8, ngroups = (words + 15) / 16, srow = (K + 127) / 128;
    const unsigned* W = reinterpret_cast<const unsigned*>(Wq);
    float acc0 = 0.0f, acc1 = 0.0f;
    Grp q[DEPTH];
#pragma unroll
    for (int u = 0; u < DEPTH; u++) load_group(q[u], W, scales, r0, u, u < ngroups, N, K, words, srow);
    // Step s computes group s from q[s % DEPTH], then refills that slot with group s + DEPTH.
    for (int s0 = 0; s0 < ngroups; s0 += DEPTH) {
#pragma unroll
        for (int u = 0; u < DEPTH; u++) {
            const int s = s0 + u;
            if (s < ngroups) compute_group(q[u], x, s, K, acc0, acc1);  // warp-uniform
            load_group(q[u], W, scales, r0, s + DEPTH, s + DEPTH < ngroups, N, K, words, srow);
        }
    }
    if (t == 0) {
        if (r0 < N) y[r0] = acc0;
        if (r0 + 8 < N) y[r0 + 8] = acc1;
    }
}
