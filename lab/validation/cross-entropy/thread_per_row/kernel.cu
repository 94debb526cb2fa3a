// Design: one thread per row: every thread counts the valid rows itself, then max, sum and gradient passes over its row (a warp reads 32 rows: uncoalesced).
extern "C" __global__ void cross_entropy(const float* logits, const int* targets, float* loss, float* dlogits,
                                         int N, int V, int ignore_index)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float* row = logits + (size_t)r * V;
    float* grad = dlogits + (size_t)r * V;
    int t = targets[r];
    if (t == ignore_index) {
        for (int j = 0; j < V; j++) grad[j] = 0.0f;
        loss[r] = 0.0f;
        return;
    }
    int valid = 0;
    for (int i = 0; i < N; i++) valid += targets[i] != ignore_index;
    float m = -1e30f;
    for (int j = 0; j < V; j++) m = fmaxf(m, row[j]);
    float sum = 0.0f;
    for (int j = 0; j < V; j++) sum += expf(row[j] - m);
    for (int j = 0; j < V; j++) grad[j] = (expf(row[j] - m) / sum - (j == t ? 1.0f : 0.0f)) / valid;
    loss[r] = m + logf(sum) - row[t];
}
