// qgemv on CUDA cores only (no tensor cores): the comparison for the mma variants.
// Floor: 4·N·ceil(K/8) + 2·N·ceil(K/128) bytes (28672×8192: 118 MB, 27.5 µs at 4.3 TB/s).
// Predicted: ~40 µs at 28672×8192, ~12 µs at 14336×4096, ~6 µs at 4096²: ~3.5 issued
//   instructions a weight (LOP3, FADD, FFMA, a quarter of an x conversion) put the issue time at
//   ~26 µs for the largest shape, close to the memory time, so the two do not fully overlap.
// Dequantise without I2F (a quarter-rate conversion): OR a nibble into the mantissa of 2^23,
//   0x4B000000 | u << 4j is the float 2^23 + u·16^j exactly; with XOR 8 folded into the same LOP3
//   (u = n + 8 for a signed nibble n), subtracting 2^23 + 8·16^j leaves n·16^j exactly. Nibbles
//   0-3 come from w, 4-7 from w >> 16, so j is 0..3; the 16^j is taken out once per chunk by
//   keeping a partial sum per j and combining them with 16^-j (exact powers of two).
// Layout: a block of 4 warps owns 4 rows; lane l of warp w reads uint4 chunk 32·s + l of every
//   row for spans s = w, w+4, ... (coalesced: 512 bytes a row per warp instruction), two spans
//   (8 uint4 a lane) before any use; x for a chunk (32 halves) is converted once for the 4 rows.
//   A chunk of 4 words never straddles a group of 128, so its scale is applied once.
#include <cuda_fp16.h>

#define WARPS 4
#define ROWS 4
#define UNROLL 2

__device__ __forceinline__ float magic(unsigned w, unsigned mask, unsigned c) {
    unsigned h;  // (w & mask) ^ c: the nibble, XOR 8, OR 2^23's exponent, in one LOP3
    asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(h) : "r"(w), "r"(mask), "r"(c));
    return __uint_as_float(h);
}

// p[j] += n_j·16^j · x_j over the 8 nibbles of w (nibble j and j+4 share p[j]).
__device__ __forceinline__ void word_fma(float (&p)[4], unsigned w, const float (&xf)[8]) {
    const unsigned hi = w >> 16;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const unsigned m = 0xFu << (4 * j), c = 0x4B000000u | (0x8u << (4 * j));
        const float off = 8388608.0f + 8.0f * (float)(1 << (4 * j));
        p[j] = fmaf(magic(w, m, c) - off, xf[j], p[j]);
        p[j] = fmaf(magic(hi, m, c) - off, xf[j + 4], p[j]);
    }
}

__device__ __forceinline__ unsigned word_at(const unsigned* W, int r, int wd, int N, int K, int words) {
    if (r >= N || wd >= words) return 0u;  // a zero word is eight zero weights after XOR 8 - 8
    const unsigned w = __ldcs(W + (size_t)r * words + wd);
    return 8 * wd + 8 <= K ? w : w & ((1u << (4 * (K % 8))) - 1u);
}

__device__ __forceinline__ void x_word(const __half* x, int wd, int K, float (&xf)[8]) {
    if (8 * wd + 8 <= K) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(x) + wd);
        const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&u[i]));
            xf[2 * i] = f.x;
            xf[2 * i + 1] = f.y;
        }
    } else {
#pragma unroll
        for (int j = 0; j < 8; j++) xf[j] = 8 * wd + j < K ? __half2float(x[8 * wd + j]) : 0.0f;
    }
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
qgemv(const int* __restrict__ Wq, const __half* __restrict__ scales, const __half* __restrict__ x,
      float* __restrict__ y, int N, int K)
{
    __shared__ float part[WARPS][ROWS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, row0 = blockIdx.x * ROWS;
    const int words = (K + 7) / 8, chunks = (words + 3) / 4, srow = (K + 127) / 128;
    const unsigned* W = reinterpret_cast<const unsigned*>(Wq);
    const bool aligned = words % 4 == 0;
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) acc[r] = 0.0f;
    for (int base = 32 * warp; base < chunks; base += 32 * WARPS * UNROLL) {
        unsigned w[UNROLL][ROWS][4];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {  // every load of the step before any use
            const int c = base + 32 * WARPS * u + lane;
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int row = row0 + r;
                if (aligned && 32 * c + 32 <= K && row < N) {
                    const uint4 q = __ldcs(reinterpret_cast<const uint4*>(W + (size_t)row * words) + c);
                    w[u][r][0] = q.x; w[u][r][1] = q.y; w[u][r][2] = q.z; w[u][r][3] = q.w;
                } else {
#pragma unroll
                    for (int i = 0; i < 4; i++) w[u][r][i] = c < chunks ? word_at(W, row, 4 * c + i, N, K, words) : 0u;
                }
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int c = base + 32 * WARPS * u + lane;
            if (c >= chunks) continue;
            float p[ROWS][4];
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                for (int j = 0; j < 4; j++) p[r][j] = 0.0f;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float xf[8];
                x_word(x, 4 * c + i, K, xf);
#pragma unroll
                for (int r = 0; r < ROWS; r++) word_fma(p[r], w[u][r][i], xf);
            }
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const int row = row0 + r;
                const float s = row < N ? __half2float(scales[(size_t)row * srow + c / 4]) : 0.0f;
                const float chunk = p[r][0] + p[r][1] * 0x1p-4f + p[r][2] * 0x1p-8f + p[r][3] * 0x1p-12f;
                acc[r] = fmaf(chunk, s, acc[r]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        for (int off = 16; off > 0; off /= 2) acc[r] += __shfl_xor_sync(0xffffffff, acc[r], off);
        if (lane == 0) part[warp][r] = acc[r];
    }
    __syncthreads();
    if (threadIdx.x < ROWS && row0 + threadIdx.x < N) {
        float s = 0.0f;
        for (int i = 0; i < WARPS; i++) s += part[i][threadIdx.x];
        y[row0 + threadIdx.x] = s;
    }
}
