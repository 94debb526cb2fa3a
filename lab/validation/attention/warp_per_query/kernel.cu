// Design: one warp per query row: lanes split the D dimensions, a shuffle sum per score, online softmax.
extern "C" __global__ void attention(const float* Q, const float* K, const float* V, float* O, int S, int D, int causal)
{
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (i >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    float q[4], acc[4];
    int per = D / 32;  // 1, 2 or 4 dims per lane
    for (int t = 0; t < per; t++) { q[t] = Q[base + (size_t)i * D + lane + 32 * t]; acc[t] = 0.0f; }
    float scale = 1.0f / sqrtf((float)D);
    float m = -1e30f, l = 0.0f;
    int last = causal ? i : S - 1;
    for (int j = 0; j <= last; j++) {
        float s = 0.0f;
        for (int t = 0; t < per; t++) s += q[t] * K[base + (size_t)j * D + lane + 32 * t];
        for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
        s *= scale;
        float mn = fmaxf(m, s), corr = expf(m - mn), p = expf(s - mn);
        l = l * corr + p;
        for (int t = 0; t < per; t++) acc[t] = acc[t] * corr + p * V[base + (size_t)j * D + lane + 32 * t];
        m = mn;
    }
    for (int t = 0; t < per; t++) O[base + (size_t)i * D + lane + 32 * t] = acc[t] / l;
}
