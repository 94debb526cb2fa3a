// Flash-attention-style forward: one block per (batch*head, 32-query tile), one thread per query.
// K and V tiles are staged in shared memory; each thread keeps an online softmax (running max,
// running sum) and a D-wide accumulator, so the S x S score matrix never exists.
#include <math_constants.h>
#define BQ 32
#define BK 32
#define D 32

extern "C" __global__ void attention(const float* Q, const float* K, const float* V, float* O, int S,
                                     float scale, int causal) {
    __shared__ float Ks[BK][D + 1];
    __shared__ float Vs[BK][D];
    int bh = blockIdx.y;
    int qi = blockIdx.x * BQ + threadIdx.x;
    const float* q = Q + ((size_t)bh * S + qi) * D;
    float qr[D], acc[D];
    for (int d = 0; d < D; ++d) { qr[d] = qi < S ? q[d] * scale : 0.0f; acc[d] = 0.0f; }
    float m = -CUDART_INF_F, l = 0.0f;
    for (int k0 = 0; k0 < S; k0 += BK) {
        for (int r = 0; r < BK; ++r) {  // each thread loads one column of the tile
            int kr = k0 + r;
            Ks[r][threadIdx.x] = kr < S ? K[((size_t)bh * S + kr) * D + threadIdx.x] : 0.0f;
            Vs[r][threadIdx.x] = kr < S ? V[((size_t)bh * S + kr) * D + threadIdx.x] : 0.0f;
        }
        __syncthreads();
        for (int r = 0; r < BK; ++r) {
            int kr = k0 + r;
            if (kr >= S || (causal && kr > qi)) break;
            float s = 0.0f;
            for (int d = 0; d < D; ++d) s += qr[d] * Ks[r][d];
            float m_new = fmaxf(m, s);
            float corr = expf(m - m_new), p = expf(s - m_new);
            l = l * corr + p;
            for (int d = 0; d < D; ++d) acc[d] = acc[d] * corr + p * Vs[r][d];
            m = m_new;
        }
        __syncthreads();
    }
    if (qi < S)
        for (int d = 0; d < D; ++d) O[((size_t)bh * S + qi) * D + d] = acc[d] / l;
}
