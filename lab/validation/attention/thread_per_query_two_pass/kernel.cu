// Design: one thread per query row, two passes over the keys: max and normaliser first, then the weighted sum of V (scores computed twice).
extern "C" __global__ void attention(const float* Q, const float* K, const float* V, float* O, int S, int D, int causal)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    const float* q = Q + base + (size_t)i * D;
    float* o = O + base + (size_t)i * D;
    float scale = 1.0f / sqrtf((float)D);
    int last = causal ? i : S - 1;
    float m = -1e30f;
    for (int j = 0; j <= last; j++) {
        float s = 0.0f;
        for (int d = 0; d < D; d++) s += q[d] * K[base + (size_t)j * D + d];
        m = fmaxf(m, s * scale);
    }
    float l = 0.0f;
    for (int d = 0; d < D; d++) o[d] = 0.0f;
    for (int j = 0; j <= last; j++) {
        float s = 0.0f;
        for (int d = 0; d < D; d++) s += q[d] * K[base + (size_t)j * D + d];
        float p = expf(s * scale - m);
        l += p;
        for (int d = 0; d < D; d++) o[d] += p * V[base + (size_t)j * D + d];
    }
    for (int d = 0; d < D; d++) o[d] /= l;
}
