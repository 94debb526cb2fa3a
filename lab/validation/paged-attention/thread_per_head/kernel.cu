// Design: one thread per (query head, sequence): the thread walks every token and all 128 dimensions itself (score, online softmax, output row in a local array).
#define BLOCK 16
#define D 128
__device__ float h2f(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
extern "C" __global__ void paged_attention(const float* q, const unsigned short* k_cache, const unsigned short* v_cache,
                                           const int* block_table, const int* seq_lens, float* out, int Hkv, int G, int max_blocks, int B, int Hq)
{
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= B * Hq) return;
    int h = w % Hq, b = w / Hq, kvh = h / G;
    int L = seq_lens[b];
    const float* qh = q + ((size_t)b * Hq + h) * D;
    float scale = 1.0f / sqrtf((float)D);
    float acc[D];
    for (int d = 0; d < D; d++) acc[d] = 0.0f;
    float m = -1e30f, l = 0.0f;
    for (int tok = 0; tok < L; tok++) {
        size_t slot = (((size_t)block_table[b * max_blocks + tok / BLOCK] * Hkv + kvh) * BLOCK + tok % BLOCK) * D;
        float sc = 0.0f;
        for (int d = 0; d < D; d++) sc += qh[d] * h2f(k_cache[slot + d]);
        sc *= scale;
        float mn = fmaxf(m, sc), corr = expf(m - mn), p = expf(sc - mn);
        l = l * corr + p;
        for (int d = 0; d < D; d++) acc[d] = acc[d] * corr + p * h2f(v_cache[slot + d]);
        m = mn;
    }
    for (int d = 0; d < D; d++) out[((size_t)b * Hq + h) * D + d] = acc[d] / l;
}
