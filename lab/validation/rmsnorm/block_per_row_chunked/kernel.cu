// Design: one 256-thread block per row, each thread owning a contiguous chunk of C/256 columns (neighbouring threads far apart), a shared-memory tree for the sum of squares.
extern "C" __global__ void rmsnorm(const float* x, const float* r, const float* gamma, float* h, float* y,
                                   int R, int C, float eps)
{
    __shared__ float s[256];
    size_t base = (size_t)blockIdx.x * C;
    int tid = threadIdx.x;
    int chunk = (C + blockDim.x - 1) / blockDim.x;
    int lo = tid * chunk, hi = min(C, lo + chunk);
    float ss = 0.0f;
    for (int c = lo; c < hi; c++) { float v = x[base + c] + r[base + c]; h[base + c] = v; ss += v * v; }
    s[tid] = ss;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    float inv = rsqrtf(s[0] / C + eps);
    for (int c = lo; c < hi; c++) y[base + c] = h[base + c] * inv * gamma[c];
}
