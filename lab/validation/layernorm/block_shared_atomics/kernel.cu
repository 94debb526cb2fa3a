// Design: one 1024-thread block per row; every thread atomically adds its partial sums into shared words (mean, then variance).
extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                                     float* mean, float* rstd, int R, int C, float eps)
{
    __shared__ float ssum, ssq;
    int r = blockIdx.x, tid = threadIdx.x;
    const float* row = x + (size_t)r * C;
    if (tid == 0) { ssum = 0.0f; ssq = 0.0f; }
    __syncthreads();
    float acc = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) acc += row[c];
    atomicAdd(&ssum, acc);
    __syncthreads();
    float mu = ssum / C;
    acc = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) { float d = row[c] - mu; acc += d * d; }
    atomicAdd(&ssq, acc);
    __syncthreads();
    float rs = rsqrtf(ssq / C + eps);
    for (int c = tid; c < C; c += blockDim.x) y[(size_t)r * C + c] = (row[c] - mu) * rs * gamma[c] + beta[c];
    if (tid == 0) { mean[r] = mu; rstd[r] = rs; }
}
