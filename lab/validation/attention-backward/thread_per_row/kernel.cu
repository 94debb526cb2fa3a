// Design: grad_kv with one thread per key row looping over the queries, grad_q with one thread per query row looping over the keys; D_i = dO_i . O_i recomputed for every pair.
#define MAX_D 128
extern "C" __global__ void grad_kv(const float* Q, const float* K, const float* V, const float* O, const float* dO,
                                   const float* LSE, float* dK, float* dV, int S, int D, int causal)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    const float* lse = LSE + (size_t)blockIdx.y * S;
    float scale = 1.0f / sqrtf((float)D);
    float dk[MAX_D], dv[MAX_D];
    for (int d = 0; d < D; d++) { dk[d] = 0.0f; dv[d] = 0.0f; }
    for (int i = causal ? j : 0; i < S; i++) {
        float s = 0.0f, dp = 0.0f, di = 0.0f;
        for (int d = 0; d < D; d++) {
            s += Q[base + (size_t)i * D + d] * K[base + (size_t)j * D + d];
            dp += dO[base + (size_t)i * D + d] * V[base + (size_t)j * D + d];
            di += dO[base + (size_t)i * D + d] * O[base + (size_t)i * D + d];
        }
        float p = expf(s * scale - lse[i]);
        float ds = p * (dp - di);
        for (int d = 0; d < D; d++) {
            dv[d] += p * dO[base + (size_t)i * D + d];
            dk[d] += ds * Q[base + (size_t)i * D + d] * scale;
        }
    }
    for (int d = 0; d < D; d++) { dK[base + (size_t)j * D + d] = dk[d]; dV[base + (size_t)j * D + d] = dv[d]; }
}
extern "C" __global__ void grad_q(const float* Q, const float* K, const float* V, const float* O, const float* dO,
                                  const float* LSE, float* dQ, int S, int D, int causal)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    const float* lse = LSE + (size_t)blockIdx.y * S;
    float scale = 1.0f / sqrtf((float)D);
    float dq[MAX_D];
    for (int d = 0; d < D; d++) dq[d] = 0.0f;
    int last = causal ? i : S - 1;
    for (int j = 0; j <= last; j++) {
        float s = 0.0f, dp = 0.0f, di = 0.0f;
        for (int d = 0; d < D; d++) {
            s += Q[base + (size_t)i * D + d] * K[base + (size_t)j * D + d];
            dp += dO[base + (size_t)i * D + d] * V[base + (size_t)j * D + d];
            di += dO[base + (size_t)i * D + d] * O[base + (size_t)i * D + d];
        }
        float ds = expf(s * scale - lse[i]) * (dp - di);
        for (int d = 0; d < D; d++) dq[d] += ds * K[base + (size_t)j * D + d] * scale;
    }
    for (int d = 0; d < D; d++) dQ[base + (size_t)i * D + d] = dq[d];
}
