// Row softmax, one block per row, online (single-pass) max and rescaled sum, then a write pass.
#include <math_constants.h>
#define THREADS 128

__device__ __forceinline__ void combine(float& m, float& d, float m2, float d2) {
    float mx = fmaxf(m, m2);
    d = d * __expf(m - mx) + d2 * __expf(m2 - mx);
    m = mx;
}

extern "C" __global__ void softmax(const float* x, float* y, int cols) {
    __shared__ float sm[THREADS / 32], sd[THREADS / 32];
    __shared__ float row_max, row_sum;
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float m = -CUDART_INF_F, d = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        float v = in[c];
        if (v > m) { d = d * expf(m - v) + 1.0f; m = v; }
        else d += expf(v - m);
    }
    for (int off = 16; off > 0; off >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffff, m, off);
        float d2 = __shfl_xor_sync(0xffffffff, d, off);
        if (m2 != -CUDART_INF_F) combine(m, d, m2, d2);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sm[warp] = m; sd[warp] = d; }
    __syncthreads();
    if (threadIdx.x == 0) {
        float M = sm[0], D = sd[0];
        for (int w = 1; w < THREADS / 32; ++w)
            if (sm[w] != -CUDART_INF_F) combine(M, D, sm[w], sd[w]);
        row_max = M;
        row_sum = D;
    }
    __syncthreads();
    float M = row_max, inv = 1.0f / row_sum;
    for (int c = threadIdx.x; c < cols; c += THREADS) out[c] = expf(in[c] - M) * inv;
}
