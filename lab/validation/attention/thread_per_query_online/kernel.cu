// Design: one thread per query row, online softmax over every key, the output row accumulated in a local array.
#define MAX_D 128
extern "C" __global__ void attention(const float* Q, const float* K, const float* V, float* O, int S, int D, int causal)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    const float* q = Q + base + (size_t)i * D;
    float scale = 1.0f / sqrtf((float)D);
    float acc[MAX_D];
    for (int d = 0; d < D; d++) acc[d] = 0.0f;
    float m = -1e30f, l = 0.0f;
    int last = causal ? i : S - 1;
    for (int j = 0; j <= last; j++) {
        const float* k = K + base + (size_t)j * D;
        float s = 0.0f;
        for (int d = 0; d < D; d++) s += q[d] * k[d];
        s *= scale;
        float mn = fmaxf(m, s);
        float corr = expf(m - mn), p = expf(s - mn);
        l = l * corr + p;
        const float* v = V + base + (size_t)j * D;
        for (int d = 0; d < D; d++) acc[d] = acc[d] * corr + p * v[d];
        m = mn;
    }
    for (int d = 0; d < D; d++) O[base + (size_t)i * D + d] = acc[d] / l;
}
