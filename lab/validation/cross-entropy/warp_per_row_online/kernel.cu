// Design: one warp per row: online max-and-sum in one pass with shuffles, then the gradient pass; each warp counts the valid rows over all targets.
extern "C" __global__ void cross_entropy(const float* logits, const int* targets, float* loss, float* dlogits,
                                         int N, int V, int ignore_index)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (r >= N) return;
    const float* row = logits + (size_t)r * V;
    float* grad = dlogits + (size_t)r * V;
    int t = targets[r];
    if (t == ignore_index) {
        for (int j = lane; j < V; j += 32) grad[j] = 0.0f;
        if (lane == 0) loss[r] = 0.0f;
        return;
    }
    int valid = 0;
    for (int i = lane; i < N; i += 32) valid += targets[i] != ignore_index;
    for (int o = 16; o > 0; o /= 2) valid += __shfl_xor_sync(0xffffffff, valid, o);
    float m = -1e30f, s = 0.0f;
    for (int j = lane; j < V; j += 32) {
        float v = row[j];
        if (v > m) { s = s * expf(m - v) + 1.0f; m = v; } else s += expf(v - m);
    }
    for (int o = 16; o > 0; o /= 2) {
        float om = __shfl_xor_sync(0xffffffff, m, o), os = __shfl_xor_sync(0xffffffff, s, o);
        float nm = fmaxf(m, om);
        s = s * expf(m - nm) + os * expf(om - nm);
        m = nm;
    }
    float inv = 1.0f / (float)valid;
    for (int j = lane; j < V; j += 32) grad[j] = (expf(row[j] - m) / s - (j == t ? 1.0f : 0.0f)) * inv;
    if (lane == 0) loss[r] = m + logf(s) - row[t];
}
