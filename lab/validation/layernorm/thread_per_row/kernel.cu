// Design: one thread per row, two-pass mean then variance, then the write (uncoalesced: a warp reads 32 rows).
extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                                     float* mean, float* rstd, int R, int C, float eps)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    const float* row = x + (size_t)r * C;
    float s = 0.0f;
    for (int c = 0; c < C; c++) s += row[c];
    float mu = s / C;
    float v = 0.0f;
    for (int c = 0; c < C; c++) { float d = row[c] - mu; v += d * d; }
    float rs = rsqrtf(v / C + eps);
    for (int c = 0; c < C; c++) y[(size_t)r * C + c] = (row[c] - mu) * rs * gamma[c] + beta[c];
    mean[r] = mu;
    rstd[r] = rs;
}
