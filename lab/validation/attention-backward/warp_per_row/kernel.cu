// Design: one warp per key row (grad_kv) and one warp per query row (grad_q); lanes split D, shuffle sums for every dot product.
__device__ float warp_sum(float s)
{
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
    return s;
}
extern "C" __global__ void grad_kv(const float* Q, const float* K, const float* V, const float* O, const float* dO,
                                   const float* LSE, float* dK, float* dV, int S, int D, int causal)
{
    int j = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (j >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    const float* lse = LSE + (size_t)blockIdx.y * S;
    float scale = 1.0f / sqrtf((float)D);
    int per = D / 32;
    float k[4], v[4], dk[4], dv[4];
    for (int t = 0; t < per; t++) {
        k[t] = K[base + (size_t)j * D + lane + 32 * t]; v[t] = V[base + (size_t)j * D + lane + 32 * t];
        dk[t] = 0.0f; dv[t] = 0.0f;
    }
    for (int i = causal ? j : 0; i < S; i++) {
        float s = 0.0f, dp = 0.0f, di = 0.0f, q[4], g[4];
        for (int t = 0; t < per; t++) {
            size_t e = base + (size_t)i * D + lane + 32 * t;
            q[t] = Q[e]; g[t] = dO[e];
            s += q[t] * k[t]; dp += g[t] * v[t]; di += g[t] * O[e];
        }
        s = warp_sum(s); dp = warp_sum(dp); di = warp_sum(di);
        float p = expf(s * scale - lse[i]), ds = p * (dp - di) * scale;
        for (int t = 0; t < per; t++) { dv[t] += p * g[t]; dk[t] += ds * q[t]; }
    }
    for (int t = 0; t < per; t++) {
        dK[base + (size_t)j * D + lane + 32 * t] = dk[t];
        dV[base + (size_t)j * D + lane + 32 * t] = dv[t];
    }
}
extern "C" __global__ void grad_q(const float* Q, const float* K, const float* V, const float* O, const float* dO,
                                  const float* LSE, float* dQ, int S, int D, int causal)
{
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (i >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    float scale = 1.0f / sqrtf((float)D);
    int per = D / 32;
    float q[4], g[4], dq[4], di = 0.0f;
    for (int t = 0; t < per; t++) {
        size_t e = base + (size_t)i * D + lane + 32 * t;
        q[t] = Q[e]; g[t] = dO[e]; dq[t] = 0.0f; di += g[t] * O[e];
    }
    di = warp_sum(di);
    float lse = LSE[(size_t)blockIdx.y * S + i];
    int last = causal ? i : S - 1;
    for (int j = 0; j <= last; j++) {
        float s = 0.0f, dp = 0.0f, kk[4];
        for (int t = 0; t < per; t++) {
            size_t e = base + (size_t)j * D + lane + 32 * t;
            kk[t] = K[e];
            s += q[t] * kk[t]; dp += g[t] * V[e];
        }
        s = warp_sum(s); dp = warp_sum(dp);
        float ds = expf(s * scale - lse) * (dp - di) * scale;
        for (int t = 0; t < per; t++) dq[t] += ds * kk[t];
    }
    for (int t = 0; t < per; t++) dQ[base + (size_t)i * D + lane + 32 * t] = dq[t];
}
