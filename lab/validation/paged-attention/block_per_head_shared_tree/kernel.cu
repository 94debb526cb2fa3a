// Design: one 128-thread block per (query head, sequence), a thread per dimension; every token's score by a shared-memory tree, online softmax.
#define BLOCK 16
#define D 128
__device__ float h2f(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
extern "C" __global__ void paged_attention(const float* q, const unsigned short* k_cache, const unsigned short* v_cache,
                                           const int* block_table, const int* seq_lens, float* out, int Hkv, int G, int max_blocks)
{
    __shared__ float s[D];
    int h = blockIdx.x, b = blockIdx.y, Hq = gridDim.x, kvh = h / G, d = threadIdx.x;
    int L = seq_lens[b];
    float qd = q[((size_t)b * Hq + h) * D + d] / sqrtf((float)D);
    float m = -1e30f, l = 0.0f, acc = 0.0f;
    for (int t = 0; t < L; t++) {
        size_t slot = (((size_t)block_table[b * max_blocks + t / BLOCK] * Hkv + kvh) * BLOCK + t % BLOCK) * D;
        s[d] = qd * h2f(k_cache[slot + d]);
        __syncthreads();
        for (int st = D / 2; st > 0; st /= 2) {
            if (d < st) s[d] += s[d + st];
            __syncthreads();
        }
        float score = s[0];
        __syncthreads();
        float mn = fmaxf(m, score), corr = expf(m - mn), p = expf(score - mn);
        l = l * corr + p;
        acc = acc * corr + p * h2f(v_cache[slot + d]);
        m = mn;
    }
    out[((size_t)b * Hq + h) * D + d] = acc / l;
}
