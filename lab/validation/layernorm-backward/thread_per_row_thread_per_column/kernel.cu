// Design: two kernels: dx with one thread per row (uncoalesced), dgamma/dbeta with one thread per column looping over all rows.
extern "C" __global__ void grad_x(const float* dy, const float* x, const float* mean, const float* rstd,
                                  const float* gamma, float* dx, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    size_t base = (size_t)r * C;
    float mu = mean[r], rs = rstd[r];
    float a = 0.0f, b = 0.0f;
    for (int c = 0; c < C; c++) {
        float g = gamma[c] * dy[base + c];
        a += g;
        b += g * (x[base + c] - mu) * rs;
    }
    a /= C; b /= C;
    for (int c = 0; c < C; c++)
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
