// Design: a counting kernel (one thread per row, atomicAdd of the valid rows), then one 256-thread block per row: shared trees for the max and the sum, then the gradient pass (three reads of the row).
extern "C" __global__ void count_valid(const int* targets, int* valid, int N, int ignore_index)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < N && targets[r] != ignore_index) atomicAdd(valid, 1);
}
extern "C" __global__ void cross_entropy(const float* logits, const int* targets, float* loss, float* dlogits,
                                         const int* valid, int N, int V, int ignore_index)
{
    __shared__ float s[256];
    int r = blockIdx.x, tid = threadIdx.x;
    const float* row = logits + (size_t)r * V;
    float* grad = dlogits + (size_t)r * V;
    int t = targets[r];
    if (t == ignore_index) {
        for (int j = tid; j < V; j += blockDim.x) grad[j] = 0.0f;
        if (tid == 0) loss[r] = 0.0f;
        return;
    }
    float m = -1e30f;
    for (int j = tid; j < V; j += blockDim.x) m = fmaxf(m, row[j]);
    s[tid] = m;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] = fmaxf(s[tid], s[tid + st]);
        __syncthreads();
    }
    m = s[0];
    __syncthreads();
    float sum = 0.0f;
    for (int j = tid; j < V; j += blockDim.x) sum += expf(row[j] - m);
    s[tid] = sum;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    sum = s[0];
    float inv_n = 1.0f / (float)valid[0];
    for (int j = tid; j < V; j += blockDim.x)
        grad[j] = (expf(row[j] - m) / sum - (j == t ? 1.0f : 0.0f)) * inv_n;
    if (tid == 0) loss[r] = m + logf(sum) - row[t];
}
