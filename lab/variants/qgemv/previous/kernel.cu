// The first qgemv solution, kept to time old against new in one run (H200, 2026-12-01: 11 / 25 /
// 76 µs at 4096², 14336×4096, 28672×8192; bound by I2F and by one DRAM round trip per loop step).
// y = W·x for decode: W is N×K int4 (eight signed nibbles per int32, low nibble first), one fp16
// scale per 128 weights of a row, x fp16, y float32.
//   One warp per row, 8 rows per 256-thread block. The bound is reading the packed weights once
//   (K/2 bytes a row), so each lane loads 16 bytes (32 weights) at a time and a warp's loads cover
//   512 contiguous bytes; x (a few KB, the same for every row) stays in L1/L2.
//   A nibble becomes a signed int by shifting it to the top of the word and shifting back
//   arithmetically (sign extension); nibble * x is exact in float32, summed per word, and the
//   word's group scale is applied once per word (a word never straddles two groups of 128).
// Ragged K: rows hold ceil(K/8) words; when that is a multiple of 4 every row is 16-byte aligned
//   and the vector path reads whole rows, else words are read one at a time. Nibbles past K in the
//   last word are padding and must not be used (nor x past its end).
#include <cuda_fp16.h>

#define WARPS 8

__device__ __forceinline__ float word_dot(unsigned w, const __half* x, int k, int K) {
    float s = 0.0f;
    if (k + 8 <= K) {
        const uint4 xv = *reinterpret_cast<const uint4*>(x + k);  // 8 halves, 16-byte aligned
        const __half2* h = reinterpret_cast<const __half2*>(&xv);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const float2 f = __half22float2(h[j]);
            s += (float)((int)(w << (28 - 8 * j)) >> 28) * f.x;
            s += (float)((int)(w << (24 - 8 * j)) >> 28) * f.y;
        }
    } else {
        for (int j = 0; k + j < K; j++)
            s += (float)((int)(w << (28 - 4 * j)) >> 28) * __half2float(x[k + j]);
    }
    return s;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
qgemv(const int* __restrict__ Wq, const __half* __restrict__ scales, const __half* __restrict__ x,
      float* __restrict__ y, int N, int K)
{
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= N) return;  // whole warps leave together: no barrier follows
    const int words = (K + 7) / 8, groups = (K + 127) / 128;
    const unsigned* w = reinterpret_cast<const unsigned*>(Wq) + (size_t)row * words;
    const __half* s = scales + (size_t)row * groups;
    float acc = 0.0f;
    if (words % 4 == 0) {
        for (int v = lane; v < words / 4; v += 32) {
            const uint4 q = reinterpret_cast<const uint4*>(w)[v];
            const unsigned qs[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int word = 4 * v + i;
                acc += word_dot(qs[i], x, 8 * word, K) * __half2float(s[word / 16]);
            }
        }
    } else {
        for (int word = lane; word < words; word += 32)
            acc += word_dot(w[word], x, 8 * word, K) * __half2float(s[word / 16]);
    }
    for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffff, acc, off);
    if (lane == 0) y[row] = acc;
}
