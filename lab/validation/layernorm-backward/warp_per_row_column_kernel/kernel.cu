// Design: dx with one warp per row (shuffle sums); dgamma/dbeta by a second kernel, one thread per column over all rows.
extern "C" __global__ void grad_x(const float* dy, const float* x, const float* mean, const float* rstd,
                                  const float* gamma, float* dx, int R, int C)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (r >= R) return;
    size_t base = (size_t)r * C;
    float mu = mean[r], rs = rstd[r];
    float a = 0.0f, b = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float g = gamma[c] * dy[base + c];
        a += g;
        b += g * (x[base + c] - mu) * rs;
    }
    for (int o = 16; o > 0; o /= 2) { a += __shfl_xor_sync(0xffffffff, a, o); b += __shfl_xor_sync(0xffffffff, b, o); }
    a /= C; b /= C;
    for (int c = lane; c < C; c += 32)
        dx[base + c] = rs * (gamma[c] * dy[base + c] - a - (x[base + c] - mu) * rs * b);
}
extern "C" __global__ void grad_params(const float* dy, const float* x, const float* mean, const float* rstd,
                                       float* dgamma, float* dbeta, int R, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float dg = 0.0f, db = 0.0f;
    for (int r = 0; r < R; r++) {
        float d = dy[(size_t)r * C + c];
        dg += d * (x[(size_t)r * C + c] - mean[r]) * rstd[r];
        db += d;
    }
    dgamma[c] = dg;
    dbeta[c] = db;
}
