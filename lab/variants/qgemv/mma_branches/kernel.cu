// The second qgemv solution (per-group branches), kept to time against the promoted one (H200,
// 2026-12-01: 9.9 / 21.1 / 55.3 µs at 4096², 14336×4096, 28672×8192, against mma_rounds' 8.2 /
// 17.0 / 47.6 µs, which is now solutions/qgemv).
// y = W·x for decode: W is N×K int4 (eight signed nibbles per int32, low nibble first), one fp16
// scale per 128 weights of a row, x fp16, y float32.
// Floor: the packed weights are read once, 4·N·ceil(K/8) bytes, plus 2·N·ceil(K/128) of scales:
//   4096² 8.7 MB (2.0 µs at 4.3 TB/s), 14336×4096 30 MB (7.1 µs), 28672×8192 118 MB (27.5 µs).
//   Predicted: ~34 µs (80 %) at 28672×8192, ~11 µs (65 %) at 14336×4096, ~5.5 µs at 4096² (launch).
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
#include <cuda_fp16.h>

#define WARPS 8   // warps per 16-row tile, splitting its groups
#define UNROLL 4  // groups a warp loads before it computes

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
    // Rows start on 16 bytes when their word count is a multiple of 4: then whole groups (those
    // below K / 128) are read as one uint4 per row and lane, x as a uint4 per word.
    const bool aligned = words % 4 == 0;
    const uint4* qa = reinterpret_cast<const uint4*>(W + (size_t)min(r0, N - 1) * words) + t;
    const uint4* qb = reinterpret_cast<const uint4*>(W + (size_t)min(r1, N - 1) * words) + t;
    const uint4* xq = reinterpret_cast<const uint4*>(x) + 4 * t;
    const __half* sa_row = scales + (size_t)min(r0, N - 1) * srow;
    const __half* sb_row = scales + (size_t)min(r1, N - 1) * srow;
    float acc0 = 0.0f, acc1 = 0.0f;
    for (int base = 0; base < ngroups; base += WARPS * UNROLL) {
        unsigned wa[UNROLL][4], wb[UNROLL][4];
        float sa[UNROLL], sb[UNROLL];
        // Every load of UNROLL groups before any use. The per-group branches matter: they keep
        // ptxas from sinking weight loads below the first mmas (in one branch-free block it
        // hoists the x loads instead and issues half the weights a DRAM round trip later).
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int grp = base + u * WARPS + warp;
            if (grp >= ngroups) continue;
            if (aligned && 128 * (grp + 1) <= K) {
                const uint4 z = make_uint4(0u, 0u, 0u, 0u);
                const uint4 a = r0 < N ? __ldcs(qa + 4 * grp) : z, b = r1 < N ? __ldcs(qb + 4 * grp) : z;
                wa[u][0] = a.x; wa[u][1] = a.y; wa[u][2] = a.z; wa[u][3] = a.w;
                wb[u][0] = b.x; wb[u][1] = b.y; wb[u][2] = b.z; wb[u][3] = b.w;
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    wa[u][i] = word_at(W, r0, 16 * grp + 4 * t + i, N, K, words);
                    wb[u][i] = word_at(W, r1, 16 * grp + 4 * t + i, N, K, words);
                }
            }
            sa[u] = r0 < N ? __half2float(sa_row[grp]) : 0.0f;
            sb[u] = r1 < N ? __half2float(sb_row[grp]) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int grp = base + u * WARPS + warp;
            if (grp >= ngroups) continue;  // warp-uniform: mma.sync needs the whole warp
            const bool whole = 128 * (grp + 1) <= K;
            float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (whole) {
                uint4 xv[4];  // the group's x first: four loads in flight, not one
#pragma unroll
                for (int i = 0; i < 4; i++) xv[i] = __ldg(xq + 16 * grp + i);
#pragma unroll
                for (int i = 0; i < 4; i++) word_mma(d, wa[u][i], wb[u][i], xv[i]);
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++) word_mma(d, wa[u][i], wb[u][i], x_at(x, 16 * grp + 4 * t + i, K));
            }
            acc0 = fmaf(d[0], sa[u], acc0);  // d[0]: row g, d[2]: row g + 8 (every column is x)
            acc1 = fmaf(d[2], sb[u], acc1);
        }
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
