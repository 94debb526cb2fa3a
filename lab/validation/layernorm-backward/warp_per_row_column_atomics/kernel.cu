// Design: one warp per row (eight rows per 256-thread block), shuffles for the two row sums; every lane adds its dgamma and dbeta terms with global atomics.
extern "C" __global__ void layernorm_backward(const float* dy, const float* x, const float* mean, const float* rstd,
                                              const float* gamma, float* dx, float* dgamma, float* dbeta, int R, int C)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= R) return;
    const float* dyr = dy + (size_t)row * C;
    const float* xr = x + (size_t)row * C;
    float mu = mean[row], rs = rstd[row];
    float a = 0.0f, b = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float xh = (xr[c] - mu) * rs;
        float g = gamma[c] * dyr[c];
        a += g;
        b += g * xh;
        atomicAdd(&dgamma[c], dyr[c] * xh);
        atomicAdd(&dbeta[c], dyr[c]);
    }
    for (int o = 16; o > 0; o /= 2) {
        a += __shfl_xor_sync(0xffffffff, a, o);
        b += __shfl_xor_sync(0xffffffff, b, o);
    }
    a /= C;
    b /= C;
    float* dxr = dx + (size_t)row * C;
    for (int c = lane; c < C; c += 32) {
        float xh = (xr[c] - mu) * rs;
        dxr[c] = rs * (gamma[c] * dyr[c] - a - xh * b);
    }
}
