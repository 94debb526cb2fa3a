// Variant of solutions/qgemv testing bytes in flight per lane: a 256-thread block takes 32 rows
// (two 16-row mma tiles) instead of 16, and a warp's round loads 4 groups of both tiles, 16 uint4
// a lane (8 KB a warp, 64 KB a block) before its first mma; each x value loaded serves both tiles.
// __launch_bounds__(256, 2) holds it to 128 registers, so an SM keeps 2 blocks, 128 KB of weights
// a round (the solution: 2 blocks of 32 KB); half the blocks, so half the block starts,
// barriers and tails a row.
// The SASS (lab/sass_dump.py) shows ptxas issuing 8 of the 16 loads, the first mmas, then the
// other 8 (as it splits the solution's 8 into 4 + 4): twice the solution's bytes a lane in flight
// in each half of a round. 128 registers, 56 B of spills (row pointers, reloaded once a round).
// Predicted (H200, µs at 4096², 14336×4096, 28672×8192): ~8 / ~15 / ~42: faster than the solution
// at the two larger shapes if bytes in flight are what limits it, in spite of a worse tail (896
// blocks on 264 slots: 3.4 waves); at 4096² 128 blocks leave 4 SMs idle and 1 block an SM.
// y = W·x for decode: W is N×K int4 (eight signed nibbles per int32, low nibble first), one fp16
// scale per 128 weights of a row, x fp16, y float32. The arithmetic (LOP3 + HSUB2/HFMA2 to exact
// half2, 8 chained mma.sync m16n8k16 per group of 128, the scale once per group in float32) and
// the ragged-shape handling are the solution's (see its header).
#include <cuda_fp16.h>

#define WARPS 8   // warps per 32-row block, splitting its groups
#define UNROLL 4  // groups a warp loads before it computes
#define TILES 2   // 16-row mma tiles per block
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


extern "C" __global__ void __launch_bounds__(WARPS * 32, 2)
qgemv(const int* __restrict__ Wq, const __half* __restrict__ scales, const __half* __restrict__ x,
      float* __restrict__ y, int N, int K)
{
    __shared__ float part[WARPS][16 * TILES];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const int words = (K + 7) / 8, ngroups = (words + 15) / 16;
    const int srow = (K + 127) / 128;  // a row of scales
    const unsigned* W = reinterpret_cast<const unsigned*>(Wq);
    const bool aligned = words % 4 == 0;  // rows start on 16 bytes: whole groups as uint4
    const uint4* xq = reinterpret_cast<const uint4*>(x) + 4 * t;
    int r[TILES][2];  // the lane's rows: g and g + 8 of each tile
    float acc[TILES][2];
#pragma unroll
    for (int m = 0; m < TILES; m++) {
        r[m][0] = (blockIdx.x * TILES + m) * 16 + g;
        r[m][1] = r[m][0] + 8;
        acc[m][0] = acc[m][1] = 0.0f;
    }
    // A round: UNROLL groups of this warp for every tile, every load before any use; a fast round
    // (all its groups inside K, rows aligned) is one branch-free block.
    auto round = [&](const int base, const bool fast) {
        unsigned w[TILES][2][UNROLL][4];
        float sc[TILES][2][UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int grp = base + u * WARPS + warp;
#pragma unroll
            for (int m = 0; m < TILES; m++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int row = r[m][h];
                    if (fast) {
                        const uint4* q = reinterpret_cast<const uint4*>(W + (size_t)min(row, N - 1) * words) + t;
                        const uint4 a = row < N ? __ldcs(q + 4 * grp) : make_uint4(0u, 0u, 0u, 0u);
                        w[m][h][u][0] = a.x; w[m][h][u][1] = a.y; w[m][h][u][2] = a.z; w[m][h][u][3] = a.w;
                    } else {
#pragma unroll
                        for (int i = 0; i < 4; i++) w[m][h][u][i] = word_at(W, row, 16 * grp + 4 * t + i, N, K, words);
                    }
                    const bool in = fast || grp < ngroups;
                    sc[m][h][u] = row < N && in ? __half2float(__ldg(scales + (size_t)row * srow + grp)) : 0.0f;
                }
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int grp = base + u * WARPS + warp;
            if (!fast && grp >= ngroups) continue;  // warp-uniform: mma.sync needs the whole warp
            uint4 xv[4];
#pragma unroll
            for (int i = 0; i < 4; i++) xv[i] = fast ? __ldg(xq + 16 * grp + i) : x_at(x, 16 * grp + 4 * t + i, K);
#pragma unroll
            for (int m = 0; m < TILES; m++) {
                float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                for (int i = 0; i < 4; i++) word_mma(d, w[m][0][u][i], w[m][1][u][i], xv[i]);
                acc[m][0] = fmaf(d[0], sc[m][0][u], acc[m][0]);  // d[0]: row g, d[2]: row g + 8
                acc[m][1] = fmaf(d[2], sc[m][1][u], acc[m][1]);
            }
        }
    };
    for (int base = 0; base < ngroups; base += WARPS * UNROLL) {
        if (aligned && 128 * (base + WARPS * UNROLL) <= K)
            round(base, true);
        else
            round(base, false);
    }
    if (t == 0) {
#pragma unroll
        for (int m = 0; m < TILES; m++) {
            part[warp][16 * m + g] = acc[m][0];
            part[warp][16 * m + g + 8] = acc[m][1];
        }
    }
    __syncthreads();
    if (threadIdx.x < 16 * TILES) {
        const int row = blockIdx.x * 16 * TILES + threadIdx.x;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; w++) s += part[w][threadIdx.x];
        if (row < N) y[row] = s;
    }
}
