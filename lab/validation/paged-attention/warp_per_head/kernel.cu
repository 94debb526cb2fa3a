// Design: one warp per (query head, sequence), 4 dimensions per lane, shuffle sums for the scores, online softmax.
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
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (w >= B * Hq) return;  // whole warps: B * Hq warps exactly
    int h = w % Hq, b = w / Hq, kvh = h / G;
    int L = seq_lens[b];
    float scale = 1.0f / sqrtf((float)D);
    float qd[4], acc[4];
    for (int t = 0; t < 4; t++) { qd[t] = q[((size_t)b * Hq + h) * D + lane + 32 * t] * scale; acc[t] = 0.0f; }
    float m = -1e30f, l = 0.0f;
    for (int tok = 0; tok < L; tok++) {
        size_t slot = (((size_t)block_table[b * max_blocks + tok / BLOCK] * Hkv + kvh) * BLOCK + tok % BLOCK) * D;
        float sc = 0.0f;
        for (int t = 0; t < 4; t++) sc += qd[t] * h2f(k_cache[slot + lane + 32 * t]);
        for (int o = 16; o > 0; o /= 2) sc += __shfl_xor_sync(0xffffffff, sc, o);
        float mn = fmaxf(m, sc), corr = expf(m - mn), p = expf(sc - mn);
        l = l * corr + p;
        for (int t = 0; t < 4; t++) acc[t] = acc[t] * corr + p * h2f(v_cache[slot + lane + 32 * t]);
        m = mn;
    }
    for (int t = 0; t < 4; t++) out[((size_t)b * Hq + h) * D + lane + 32 * t] = acc[t] / l;
}
