// A learner's first correct attention: one thread per query row, two passes over the keys (the
// row's max, then exp-sums and the weighted V rows), the output row kept in a local array.
// lab/grade_times.py grades it (--folder lab/learner/attention_naive:attention) to measure how
// long a CPU grade of a slow but correct kernel takes.
extern "C" __global__ void attention(const float* __restrict__ Q, const float* __restrict__ K,
                                     const float* __restrict__ V, float* __restrict__ O,
                                     int S, int D, int causal)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= S) return;
    const size_t base = (size_t)blockIdx.y * S * D;
    const float scale = rsqrtf((float)D);
    const int last = causal ? q : S - 1;

    float m = -3.402823466e38f;  // -FLT_MAX: NVRTC has no <math.h> INFINITY
    for (int j = 0; j <= last; ++j) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) s += Q[base + (size_t)q * D + d] * K[base + (size_t)j * D + d];
        m = fmaxf(m, s * scale);
    }

    float acc[128];
    for (int d = 0; d < D; ++d) acc[d] = 0.0f;
    float l = 0.0f;
    for (int j = 0; j <= last; ++j) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) s += Q[base + (size_t)q * D + d] * K[base + (size_t)j * D + d];
        const float p = expf(s * scale - m);
        l += p;
        for (int d = 0; d < D; ++d) acc[d] += p * V[base + (size_t)j * D + d];
    }
    for (int d = 0; d < D; ++d) O[base + (size_t)q * D + d] = acc[d] / l;
}
