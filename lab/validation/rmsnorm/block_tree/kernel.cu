// Design: one 256-thread block per row, a shared-memory tree for the sum of squares; y re-reads h from global memory.
extern "C" __global__ void rmsnorm(const float* x, const float* r, const float* gamma, float* h, float* y,
                                   int R, int C, float eps)
{
    __shared__ float s[256];
    size_t base = (size_t)blockIdx.x * C;
    int tid = threadIdx.x;
    float ss = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) { float v = x[base + c] + r[base + c]; h[base + c] = v; ss += v * v; }
    s[tid] = ss;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    float inv = rsqrtf(s[0] / C + eps);
    for (int c = tid; c < C; c += blockDim.x) y[base + c] = h[base + c] * inv * gamma[c];
}
