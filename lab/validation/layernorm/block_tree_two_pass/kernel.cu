// Design: one 256-thread block per row, shared-memory tree for the mean, again for the variance, then the write.
extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                                     float* mean, float* rstd, int R, int C, float eps)
{
    __shared__ float s[256];
    int r = blockIdx.x, tid = threadIdx.x;
    const float* row = x + (size_t)r * C;
    float acc = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) acc += row[c];
    s[tid] = acc;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    float mu = s[0] / C;
    __syncthreads();
    acc = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) { float d = row[c] - mu; acc += d * d; }
    s[tid] = acc;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    float rs = rsqrtf(s[0] / C + eps);
    for (int c = tid; c < C; c += blockDim.x) y[(size_t)r * C + c] = (row[c] - mu) * rs * gamma[c] + beta[c];
    if (tid == 0) { mean[r] = mu; rstd[r] = rs; }
}
