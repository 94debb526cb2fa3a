// Design: one warp per row, online max-and-sum in one pass (shuffles merge the lanes), then the write pass.
extern "C" __global__ void softmax(const float* x, float* y, int R, int C)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= R) return;
    const float* row = x + (size_t)warp * C;
    float* out = y + (size_t)warp * C;
    float m = -1e30f, s = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float v = row[c];
        if (v > m) { s = s * expf(m - v) + 1.0f; m = v; }
        else s += expf(v - m);
    }
    for (int off = 16; off > 0; off /= 2) {
        float om = __shfl_xor_sync(0xffffffff, m, off);
        float os = __shfl_xor_sync(0xffffffff, s, off);
        float nm = fmaxf(m, om);
        s = (m == -1e30f ? 0.0f : s * expf(m - nm)) + (om == -1e30f ? 0.0f : os * expf(om - nm));
        m = nm;
    }
    for (int c = lane; c < C; c += 32) out[c] = expf(row[c] - m) / s;
}
