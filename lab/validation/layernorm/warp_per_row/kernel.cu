// Design: one warp per row, shuffle sums for the mean and the variance (two reads of the row from global), then the write.
extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                                     float* mean, float* rstd, int R, int C, float eps)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (r >= R) return;
    const float* row = x + (size_t)r * C;
    float acc = 0.0f;
    for (int c = lane; c < C; c += 32) acc += row[c];
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffff, acc, o);
    float mu = acc / C;
    acc = 0.0f;
    for (int c = lane; c < C; c += 32) { float d = row[c] - mu; acc += d * d; }
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffff, acc, o);
    float rs = rsqrtf(acc / C + eps);
    for (int c = lane; c < C; c += 32) y[(size_t)r * C + c] = (row[c] - mu) * rs * gamma[c] + beta[c];
    if (lane == 0) { mean[r] = mu; rstd[r] = rs; }
}
