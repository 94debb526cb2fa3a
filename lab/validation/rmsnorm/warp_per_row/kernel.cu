// Design: one warp per row, shuffle sum of squares; y recomputed from x and r (read twice).
extern "C" __global__ void rmsnorm(const float* x, const float* r, const float* gamma, float* h, float* y,
                                   int R, int C, float eps)
{
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (row >= R) return;
    size_t base = (size_t)row * C;
    float ss = 0.0f;
    for (int c = lane; c < C; c += 32) { float v = x[base + c] + r[base + c]; h[base + c] = v; ss += v * v; }
    for (int o = 16; o > 0; o /= 2) ss += __shfl_xor_sync(0xffffffff, ss, o);
    float inv = rsqrtf(ss / C + eps);
    for (int c = lane; c < C; c += 32) y[base + c] = (x[base + c] + r[base + c]) * inv * gamma[c];
}
