// Design: one 256-thread block per row (shared trees for the two row sums); dgamma and dbeta by one global atomicAdd per element.
extern "C" __global__ void layernorm_backward(const float* dy, const float* x, const float* mean, const float* rstd,
                                              const float* gamma, float* dx, float* dgamma, float* dbeta, int R, int C)
{
    __shared__ float sa[256], sb[256];
    int r = blockIdx.x, tid = threadIdx.x;
    size_t base = (size_t)r * C;
    float mu = mean[r], rs = rstd[r];
    float a = 0.0f, b = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) {
        float xh = (x[base + c] - mu) * rs;
        float g = gamma[c] * dy[base + c];
        a += g;
        b += g * xh;
        atomicAdd(&dgamma[c], dy[base + c] * xh);
        atomicAdd(&dbeta[c], dy[base + c]);
    }
    sa[tid] = a; sb[tid] = b;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) { sa[tid] += sa[tid + st]; sb[tid] += sb[tid + st]; }
        __syncthreads();
    }
    a = sa[0] / C; b = sb[0] / C;
    for (int c = tid; c < C; c += blockDim.x) {
        float xh = (x[base + c] - mu) * rs;
        dx[base + c] = rs * (gamma[c] * dy[base + c] - a - xh * b);
    }
}
